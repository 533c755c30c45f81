//! Addresses on the loopback interface.

/// A URL on 127.0.0.1 where nothing listens: connecting is refused.
///
/// The port was free a moment ago (bound, then released), so another process could in principle
/// take it; on a test machine that does not happen in practice.
pub fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let address = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{address}")
}
