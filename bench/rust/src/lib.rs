//! Benchmarks of feign-rs, each a binary that starts its own servers on 127.0.0.1, stops by
//! itself and prints Markdown tables:
//!
//! | binary | measures |
//! |---|---|
//! | `overhead` | requests/s and latency of raw reqwest, a feign client, feign + load balancer, feign + load balancer + Eureka |
//! | `vs-java` | the feign + load balancer client against Spring Cloud OpenFeign + LoadBalancer (`bench/java/`) |
//! | `lb-resilience` | an instance killed, or one slow, under open-loop traffic, per balancing policy |
//! | `freshness` | how long registering, deregistering and dying take to reach a client |
//! | `adaptive` | goodput and p99 under overload of a server whose latency grows with its load: no limit, fixed bulkheads, the adaptive concurrency limit |
//! | `hedging` | tail latency and extra load with and without hedged requests, one of five instances slow on a share of its calls |
//! | `download` | peak resident memory and throughput of a 1 GiB download through a `StreamingResponse` |
//! | `per-call` | instructions, CPU time and allocations per call, client and server in processes pinned to their own cores, against raw reqwest and the Rust alternatives |
//! | `render-tables` | not a benchmark: renders BENCHMARKS.md's and the README's figures from the raw outputs under `bench/results/raw/` ([`figures`]) |
//!
//! Run one with `cargo run --release -p feign-bench --bin <name> -- --help`. This library holds
//! what they share: the order server, the clients, load generators, statistics, process CPU
//! and memory readings, and output, and ([`figures`]) each benchmark's lines and the tables
//! made from them.

pub mod backend;
pub mod chart;
pub mod client;
pub mod cpu;
pub mod figures;
pub mod load;
pub mod memory;
pub mod peers;
pub mod per_call;
pub mod stats;
pub mod table;
pub mod topology;
