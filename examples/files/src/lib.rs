//! The files example, as a library so a test can run what `cargo run -p files` runs.
//!
//! It makes a CA in memory, starts the embedded Eureka registry and three `files` instances
//! over mutual TLS (each serves a certificate the CA signed and asks for the client's), and
//! moves one large generated file through `#[feign_client("files")]`, a client with no URL
//! that is balanced across the instances it finds through Eureka: uploaded as a streamed body
//! and as a multipart file part, described by a `ResponseEntity`, downloaded as a stream to
//! disk. It checks the size and SHA-256 on both sides of each transfer, prints the throughput
//! and the process's peak resident memory, and removes everything it wrote.
//!
//! The steps' scaffolding (`StepResult`, `expect`, `wait_for`, the registry's short refresh
//! interval) is the quickstart's.

mod data;
mod https;
mod pki;
mod service;
mod steps;

pub use service::FileInfo;
pub use steps::{run, Files, FilesClient, Options, Report};
