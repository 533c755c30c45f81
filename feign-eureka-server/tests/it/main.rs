//! feign-eureka-server's integration tests, one binary: the registry on 127.0.0.1 ([`support`])
//! through its REST API, its binary, peer replication, and feign-eureka's client.

mod api;
mod arbitrary;
mod auth;
mod bad_values;
mod cli;
mod client;
mod connections;
mod dashboard_pages;
mod embedded;
mod fd_limit;
mod lifecycle;
mod limits;
mod metadata_limits;
mod peers;
mod replication;
mod safety;
mod support;
mod tls;
mod watch;
