//! Addresses on the loopback interface.

/// A port on 127.0.0.1 that was free a moment ago: bound, then released.
///
/// Another process could in principle take it before the test uses it; on a test machine that
/// does not happen in practice.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

/// A URL on 127.0.0.1 where nothing listens (a [`free_port`]): connecting is refused.
pub fn closed_port_url() -> String {
    format!("http://127.0.0.1:{}", free_port())
}
