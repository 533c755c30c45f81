//! feign-eureka's integration tests, one binary: the client against Eureka-speaking servers
//! on 127.0.0.1 (`feign_test_support::eureka::FakeEureka`), and the wire model against golden
//! documents.

#[cfg(feature = "config")]
mod config;
mod deadline;
mod discovery;
mod metrics;
mod model;
mod model_props;
mod outage;
mod registration;
mod server_tries;
mod shutdown;
