//! Cross-crate tests live in `tests/`; this library holds what they share.
//!
//! [`interop`] starts the Java fixtures (a real Spring Cloud Eureka server and a Spring Boot
//! Eureka client app) that the interop tests run against.

pub mod interop;
