//! Several recording servers as the instances of one balanced service.

use std::ops::Index;

use feign_lb::{LoadBalancer, StaticSupplier};

use crate::request::RecordedRequest;
use crate::server::RecordingServer;

/// `n` recording servers standing for the instances of one service, and a feign-lb static
/// list over them.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use feign_test::{Fleet, Matcher, Reply};
///
/// let fleet = Fleet::start("order-service", 3).await;
/// fleet[0].on(Matcher::any()).respond(Reply::status(503));
/// let balancer = fleet.load_balancer(); // round robin over the three
/// assert_eq!(fleet.urls().len(), 3);
/// # drop(balancer);
/// # }
/// ```
#[derive(Debug)]
pub struct Fleet {
    service: String,
    servers: Vec<RecordingServer>,
}

impl Fleet {
    /// Starts `n` servers for `service`.
    pub async fn start(service: &str, n: usize) -> Fleet {
        Fleet {
            service: service.to_owned(),
            servers: RecordingServer::start_many(n).await,
        }
    }

    /// The service the servers are instances of.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// The servers, in the order of [`urls`](Self::urls).
    pub fn servers(&self) -> &[RecordingServer] {
        &self.servers
    }

    /// The servers, to stop some of them.
    pub fn servers_mut(&mut self) -> &mut [RecordingServer] {
        &mut self.servers
    }

    /// Each server's base URL.
    pub fn urls(&self) -> Vec<String> {
        self.servers.iter().map(RecordingServer::url).collect()
    }

    /// The servers as a feign-lb static list of the service: for a balancer of one's own
    /// settings, `LoadBalancer::builder().supplier(fleet.supplier())`.
    pub fn supplier(&self) -> StaticSupplier {
        StaticSupplier::new(&self.service, self.urls())
    }

    /// A balancer with feign-lb's defaults (round robin) over the servers: a client built with
    /// `.load_balancer(fleet.load_balancer())` calls `http://{service}/...` on them.
    pub fn load_balancer(&self) -> LoadBalancer {
        LoadBalancer::builder().supplier(self.supplier()).build()
    }

    /// How many requests each server received, in the order of [`servers`](Self::servers).
    pub fn request_counts(&self) -> Vec<usize> {
        self.servers
            .iter()
            .map(RecordingServer::request_count)
            .collect()
    }

    /// Every request any server received, oldest first, each with its server's index.
    pub fn requests(&self) -> Vec<(usize, RecordedRequest)> {
        let mut all: Vec<(usize, RecordedRequest)> = self
            .servers
            .iter()
            .enumerate()
            .flat_map(|(i, server)| server.requests().into_iter().map(move |r| (i, r)))
            .collect();
        all.sort_by_key(|(_, request)| request.at);
        all
    }
}

impl Index<usize> for Fleet {
    type Output = RecordingServer;

    fn index(&self, index: usize) -> &RecordingServer {
        &self.servers[index]
    }
}
