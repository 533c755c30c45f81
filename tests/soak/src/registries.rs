//! Three embedded registries, peers of each other, on ports fixed at start so that a killed
//! node comes back where its peers and clients expect it. Clients and instances reach each node
//! through its own [`FaultProxy`], which can make it answer slowly; peers talk directly. (Every
//! node behind a proxy, so a client costs the process the same sockets whichever node it
//! sticks to, and the file descriptor check measures leaks, not where the clients went.)

use std::collections::BTreeSet;
use std::time::Duration;

use feign_eureka_server::{EurekaServer, ServerError};
use tokio::net::TcpListener;

use crate::proxy::FaultProxy;
use crate::settings;

/// How many registry nodes run.
pub(crate) const NODES: usize = 3;

/// One registry's view: `(APP, instance id, status)` for every instance it lists.
pub(crate) type View = BTreeSet<(String, String, String)>;

/// The registry nodes.
pub(crate) struct Registries {
    urls: Vec<String>,
    nodes: Vec<Option<EurekaServer>>,
    proxies: Vec<FaultProxy>,
    http: reqwest::Client,
}

impl Registries {
    /// Starts the three nodes, each a peer of the other two.
    pub(crate) async fn start() -> Result<Registries, ServerError> {
        let mut ports = Vec::new();
        // Hold every listener until all ports are known, so the three are distinct.
        let mut held = Vec::new();
        for _ in 0..NODES {
            let listener =
                TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|source| ServerError::Bind {
                        addr: "127.0.0.1:0".to_owned(),
                        source,
                    })?;
            ports.push(listener.local_addr().map(|a| a.port()).unwrap_or(0));
            held.push(listener);
        }
        drop(held);
        let urls: Vec<String> = ports
            .iter()
            .map(|port| format!("http://127.0.0.1:{port}/eureka/"))
            .collect();
        let mut nodes = Vec::new();
        for node in 0..NODES {
            nodes.push(Some(start_node(&urls, node).await?));
        }
        let mut proxies = Vec::new();
        for node in nodes.iter().flatten() {
            let addr = node.local_addr();
            let proxy = FaultProxy::start(addr)
                .await
                .map_err(|source| ServerError::Bind {
                    addr: addr.to_string(),
                    source,
                })?;
            proxies.push(proxy);
        }
        // Keeps no idle connection: reading the views must not change what the process holds.
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|_| ServerError::InvalidSetting("http client"))?;
        Ok(Registries {
            urls,
            nodes,
            proxies,
            http,
        })
    }

    /// Each node's own URL.
    pub(crate) fn urls(&self) -> &[String] {
        &self.urls
    }

    /// The URLs instances and callers use: each node's proxy.
    pub(crate) fn client_urls(&self) -> Vec<String> {
        self.proxies
            .iter()
            .map(|proxy| format!("http://{}/eureka/", proxy.addr()))
            .collect()
    }

    /// The ports of every node and of the proxies in front, named.
    pub(crate) fn ports(&self) -> Vec<(u16, String)> {
        let mut ports = Vec::new();
        for (node, url) in self.urls.iter().enumerate() {
            if let Some(port) = port_of(url) {
                ports.push((port, format!("registry node {node}")));
            }
            ports.push((
                self.proxies[node].addr().port(),
                format!("registry node {node} proxy"),
            ));
        }
        ports
    }

    /// The proxy in front of `node`.
    pub(crate) fn proxy(&self, node: usize) -> &FaultProxy {
        &self.proxies[node]
    }

    /// Stops `node` at once: no grace for requests in progress.
    pub(crate) async fn kill(&mut self, node: usize) {
        if let Some(server) = self.nodes[node].take() {
            server.shutdown().await;
        }
    }

    /// Starts `node` again on its port, with an empty registry.
    pub(crate) async fn restart(&mut self, node: usize) -> Result<(), ServerError> {
        // The port may take a moment to be free again after the kill.
        let mut last = None;
        for _ in 0..50 {
            match start_node(&self.urls, node).await {
                Ok(server) => {
                    self.nodes[node] = Some(server);
                    return Ok(());
                }
                Err(error) => last = Some(error),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(last.unwrap_or(ServerError::InvalidSetting("restart failed")))
    }

    /// Each node's view, read directly (not through the proxy); `None` for a node that is down
    /// or did not answer.
    pub(crate) async fn views(&self) -> Vec<Option<View>> {
        let mut views = Vec::new();
        for (node, url) in self.urls.iter().enumerate() {
            let view = match self.nodes[node] {
                Some(_) => self.view(url).await,
                None => None,
            };
            views.push(view);
        }
        views
    }

    async fn view(&self, url: &str) -> Option<View> {
        let response = self
            .http
            .get(format!("{url}apps"))
            .header("Accept", "application/json")
            .send()
            .await
            .ok()?;
        let body = response.error_for_status().ok()?.bytes().await.ok()?;
        let body: serde_json::Value = serde_json::from_slice(&body).ok()?;
        let mut view = View::new();
        let applications = body["applications"]["application"].as_array()?;
        for application in applications {
            let name = application["name"].as_str().unwrap_or_default();
            for instance in application["instance"].as_array().into_iter().flatten() {
                view.insert((
                    name.to_owned(),
                    instance["instanceId"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    instance["status"].as_str().unwrap_or_default().to_owned(),
                ));
            }
        }
        Some(view)
    }

    /// Stops every node.
    pub(crate) async fn shutdown(mut self) {
        for node in 0..NODES {
            self.kill(node).await;
        }
    }
}

/// The port of `http://127.0.0.1:PORT/eureka/`.
fn port_of(url: &str) -> Option<u16> {
    url.trim_start_matches("http://")
        .split(['/', ':'])
        .nth(1)
        .and_then(|port| port.parse().ok())
}

async fn start_node(urls: &[String], node: usize) -> Result<EurekaServer, ServerError> {
    EurekaServer::builder()
        .bind(
            urls[node]
                .trim_start_matches("http://")
                .trim_end_matches("/eureka/"),
        )
        .peers(urls.iter().cloned())
        .self_preservation(false)
        .read_only_cache(false)
        .eviction_interval(settings::EVICTION_INTERVAL)
        .delta_retention(settings::DELTA_RETENTION)
        .replication_delay(settings::REPLICATION_DELAY)
        .netflix_lease_expiry(false)
        .shutdown_grace(Duration::ZERO)
        .start()
        .await
}
