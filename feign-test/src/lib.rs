//! Test a feign-rs client against real HTTP servers on 127.0.0.1: record the exact requests it
//! sends (method, path, query, headers, body) and script the answers, delays and failures it
//! gets.
//!
//! Nothing is mocked: a [`RecordingServer`] is an HTTP/1 server on a loopback socket, so the
//! client's transport, timeouts, retries and balancer run as in production.
//!
//! | item | what it does |
//! |---|---|
//! | [`RecordingServer`] | starts on `127.0.0.1:0`; [`on`](RecordingServer::on) scripts answers, [`requests`](RecordingServer::requests) reads what came, [`assert_received`](RecordingServer::assert_received), [`expect`](RecordingServer::expect) and [`verify`](RecordingServer::verify) check it |
//! | [`Matcher`] | which requests a script answers or an expectation counts: method, path, query pairs, headers, body |
//! | [`Reply`] | a status, headers and a body, after an optional delay; or a [`Fault`]: the connection closed or reset, a hang, raw bytes |
//! | [`RecordedRequest`], [`Recording`] | a request as received, with its decoded query, headers, and body as bytes, text or JSON; the list they are kept in |
//! | [`Fleet`] | several servers as one service's instances, and a feign-lb balancer over them |
//!
//! A failed assertion prints every request received, with its headers and body and how it
//! differs from what was expected. What it prints hides secrets as feign-core's logs do:
//! `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` values and query
//! parameters named like credentials show as `***` (feign-core's [`redact::headers`] and
//! [`redact::url`] rules, not a copy of them).
//!
//! [`redact::headers`]: feign_core::redact::headers
//! [`redact::url`]: feign_core::redact::url
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//!
//! use feign_core::{feign_client, Error, Options, Retryer};
//! use feign_test::{Matcher, RecordingServer, Reply};
//!
//! #[feign_client("order-service")]
//! trait Orders {
//!     #[get("/orders/{id}")]
//!     async fn get(&self, #[path] id: u64, #[query] expand: &str) -> Result<String, Error>;
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = RecordingServer::start().await;
//! server
//!     .on(Matcher::get("/orders/42").query("expand", "items"))
//!     .respond_in_order([Reply::status(503), Reply::ok().text("order 42")]);
//! server.expect(Matcher::get("/orders/42")).times(2);
//!
//! let client = OrdersClient::builder()
//!     .url(server.url())
//!     .retryer(Retryer::default().period(Duration::from_millis(1)).max_attempts(3))
//!     .options(Options::new().read_timeout(Duration::from_secs(2)))
//!     .build()
//!     .unwrap();
//! assert_eq!(client.get(42, "items").await.unwrap(), "order 42");
//!
//! server.verify(); // two GETs: the 503, then the retry
//! let sent = server.requests().remove(0);
//! assert_eq!(sent.query_value("expand").as_deref(), Some("items"));
//! # }
//! ```

mod conn;
mod expect;
mod fleet;
mod matcher;
mod recording;
mod reply;
mod report;
mod request;
mod script;
mod server;
mod shown;
mod state;
mod sync;

pub use expect::Expectation;
pub use fleet::Fleet;
pub use matcher::Matcher;
pub use recording::Recording;
pub use reply::{Fault, Reply};
pub use request::RecordedRequest;
pub use script::ScriptBuilder;
pub use server::RecordingServer;
