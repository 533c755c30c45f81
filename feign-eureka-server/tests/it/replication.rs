//! Peer replication between three in-process registries. Every peer link runs through a TCP
//! proxy the test can cut, so a partition is a real loss of connectivity.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{call, dev, get_json, instance, instances, register};
use feign_eureka_server::EurekaServer;
use reqwest::Method;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

const LDT: u64 = 1_732_881_099_990;

/// A one-directional peer link: a loopback proxy that forwards to its target until cut.
struct Link {
    addr: SocketAddr,
    target: Arc<Mutex<Option<SocketAddr>>>,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<JoinHandle<()>>>>,
    _accept: JoinHandle<()>,
}

impl Link {
    async fn new() -> Link {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let target = Arc::new(Mutex::new(None::<SocketAddr>));
        let cut = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let (t, c, o) = (target.clone(), cut.clone(), open.clone());
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let to = *t.lock().unwrap();
                let (Some(to), false) = (to, c.load(Ordering::SeqCst)) else {
                    continue;
                };
                let conn = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(to).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                o.lock().unwrap().push(conn);
            }
        });
        Link {
            addr,
            target,
            cut,
            open,
            _accept: accept,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/eureka/", self.addr)
    }

    fn connect(&self, to: SocketAddr) {
        *self.target.lock().unwrap() = Some(to);
    }

    fn set_cut(&self, cut: bool) {
        self.cut.store(cut, Ordering::SeqCst);
        if cut {
            for conn in self.open.lock().unwrap().drain(..) {
                conn.abort();
            }
        }
    }
}

/// Three nodes, each peered with the other two through its own links.
struct Cluster {
    nodes: Vec<EurekaServer>,
    /// `links[from][to]`.
    links: Vec<Vec<Option<Link>>>,
}

impl Cluster {
    async fn start() -> Cluster {
        let mut links: Vec<Vec<Option<Link>>> = Vec::new();
        for from in 0..3 {
            let mut row = Vec::new();
            for to in 0..3 {
                row.push(if from == to {
                    None
                } else {
                    Some(Link::new().await)
                });
            }
            links.push(row);
        }
        let mut nodes = Vec::new();
        for row in &links {
            let peers: Vec<String> = row.iter().flatten().map(Link::url).collect();
            let node = dev()
                .netflix_lease_expiry(false)
                .eviction_interval(Duration::from_millis(200))
                .replication_delay(Duration::from_millis(20))
                .peers(peers)
                .start()
                .await
                .unwrap();
            nodes.push(node);
        }
        for (from, row) in links.iter().enumerate() {
            for (to, link) in row.iter().enumerate() {
                if let Some(link) = link {
                    assert_ne!(from, to);
                    link.connect(nodes[to].local_addr());
                }
            }
        }
        Cluster { nodes, links }
    }

    fn url(&self, node: usize) -> &str {
        self.nodes[node].url()
    }

    /// Cuts (or restores) every link to and from `node`.
    fn isolate(&self, node: usize, cut: bool) {
        for (from, row) in self.links.iter().enumerate() {
            for (to, link) in row.iter().enumerate() {
                if from == node || to == node {
                    if let Some(link) = link {
                        link.set_cut(cut);
                    }
                }
            }
        }
    }

    async fn ids(&self, node: usize) -> Vec<String> {
        let mut ids: Vec<String> = instances(&get_json(self.url(node), "apps/").await)
            .iter()
            .map(|i| i["instanceId"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    }

    /// Waits until `node` lists exactly `expected`.
    async fn converge(&self, node: usize, expected: &[&str]) {
        let mut ids = Vec::new();
        for _ in 0..100 {
            ids = self.ids(node).await;
            if ids == expected {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("node {node} lists {ids:?}, expected {expected:?}");
    }

    async fn shutdown(self) {
        for node in self.nodes {
            node.shutdown().await;
        }
    }
}

fn lease(app: &str, id: &str, secs: u64) -> serde_json::Value {
    let mut body = instance(app, id, 1, "UP", LDT);
    body["instance"]["leaseInfo"] =
        serde_json::json!({"renewalIntervalInSecs": secs, "durationInSecs": secs});
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_replicate_once_to_every_peer() {
    let cluster = Cluster::start().await;
    assert_eq!(
        register(cluster.url(0), "A", &lease("A", "a-1", 3600)).await,
        204
    );
    for node in 0..3 {
        cluster.converge(node, &["a-1"]).await;
    }
    // A replicated registration is not replicated again: the origin's copy stays untouched.
    // Each node replicates to a peer in order, so once a marker registered on nodes 1 and 2
    // after they got a-1 has reached node 0, an echo of a-1 would have reached it too.
    let stamp = |doc: serde_json::Value| doc["instance"]["lastUpdatedTimestamp"].clone();
    let before = stamp(get_json(cluster.url(0), "apps/A/a-1").await);
    assert_eq!(
        register(cluster.url(1), "B", &lease("B", "b-1", 3600)).await,
        204
    );
    assert_eq!(
        register(cluster.url(2), "C", &lease("C", "c-1", 3600)).await,
        204
    );
    cluster.converge(0, &["a-1", "b-1", "c-1"]).await;
    assert_eq!(stamp(get_json(cluster.url(0), "apps/A/a-1").await), before);
    for (node, path) in [(1, "apps/B/b-1"), (2, "apps/C/c-1")] {
        assert_eq!(call(Method::DELETE, cluster.url(node), path).await.0, 200);
    }

    let set = "apps/A/a-1/status?value=OUT_OF_SERVICE";
    assert_eq!(call(Method::PUT, cluster.url(1), set).await.0, 200);
    for node in [0, 2] {
        let mut status = String::new();
        for _ in 0..100 {
            let doc = get_json(cluster.url(node), "apps/A/a-1").await;
            status = doc["instance"]["status"].as_str().unwrap().to_owned();
            if status == "OUT_OF_SERVICE" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(status, "OUT_OF_SERVICE", "node {node}");
    }
    assert_eq!(
        call(Method::DELETE, cluster.url(2), "apps/A/a-1").await.0,
        200
    );
    for node in 0..3 {
        cluster.converge(node, &[]).await;
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_node_keeps_serving_and_the_cluster_converges_after_healing() {
    let cluster = Arc::new(Cluster::start().await);
    assert_eq!(
        register(cluster.url(0), "A", &lease("A", "gone", 1)).await,
        204
    );
    for node in 0..3 {
        cluster.converge(node, &["gone"]).await;
    }

    cluster.isolate(2, true);
    // Both sides of the partition keep accepting registrations and heartbeats.
    assert_eq!(
        register(cluster.url(0), "A", &lease("A", "x", 1)).await,
        204
    );
    assert_eq!(
        register(cluster.url(2), "A", &lease("A", "y", 1)).await,
        204
    );
    assert_eq!(
        call(Method::DELETE, cluster.url(1), "apps/A/gone").await.0,
        200
    );
    // Clients keep heartbeating to the node they registered with.
    let beats = {
        let cluster = cluster.clone();
        tokio::spawn(async move {
            loop {
                let _ = call(Method::PUT, cluster.url(0), "apps/A/x").await;
                let _ = call(Method::PUT, cluster.url(2), "apps/A/y").await;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    cluster.converge(0, &["x"]).await;
    cluster.converge(1, &["x"]).await;
    assert!(cluster.ids(2).await.contains(&"y".to_owned()));
    assert!(!cluster.ids(2).await.contains(&"x".to_owned()));
    // Long enough for the senders to give up their retries: nothing is delivered late.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(!cluster.ids(2).await.contains(&"x".to_owned()));
    assert!(!cluster.ids(0).await.contains(&"y".to_owned()));

    cluster.isolate(2, false);
    // Replicated heartbeats the peer does not know turn into registrations; the cancelled
    // instance expires on the node that missed the cancel.
    for node in 0..3 {
        cluster.converge(node, &["x", "y"]).await;
    }
    beats.abort();
    let _ = beats.await;
    let cluster = Arc::into_inner(cluster).expect("only owner");
    cluster.shutdown().await;
}

/// A status override and its removal sent without `lastDirtyTimestamp` are replicated with the
/// stored one: a real Eureka peer answers an item without it with 500 and stays apart.
#[tokio::test]
async fn status_changes_replicate_with_the_stored_last_dirty_timestamp() {
    let (peer, batches) = feign_test_support::recording_server(feign_test_support::ok).await;
    let server = dev()
        .peer(format!("{peer}/eureka/"))
        .replication_delay(Duration::from_millis(10))
        .start()
        .await
        .unwrap();
    let base = server.url();
    let ldt = 1_732_881_099_990;
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 8080, "UP", ldt)).await,
        204
    );
    let path = "apps/A/a-1/status";
    let (status, _) = call(Method::PUT, base, &format!("{path}?value=OUT_OF_SERVICE")).await;
    assert_eq!(status, 200);
    let (status, _) = call(Method::DELETE, base, path).await;
    assert_eq!(status, 200);

    let mut items = Vec::new();
    for _ in 0..200 {
        items = batches
            .all()
            .iter()
            .filter(|r| r.is("POST", "/eureka/peerreplication/batch"))
            .flat_map(|r| {
                let list: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
                list["replicationList"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|item| item["action"] != "Register")
            .collect();
        // Under load a batch may be delivered again; what matters is that both arrive.
        if items.iter().any(|i| i["action"] == "DeleteStatusOverride") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut actions: Vec<&str> = items.iter().filter_map(|i| i["action"].as_str()).collect();
    actions.dedup();
    assert_eq!(
        actions,
        ["StatusUpdate", "DeleteStatusOverride"],
        "{items:?}"
    );
    assert_eq!(
        actions,
        ["StatusUpdate", "DeleteStatusOverride"],
        "{items:?}"
    );
    for item in &items {
        assert_eq!(item["lastDirtyTimestamp"], ldt, "{item}");
    }
    server.shutdown().await;
}

/// A node that starts with a peer copies the peer's registry before it answers its first read
/// (Eureka's start-up sync); without the sync it starts empty; an unreachable peer does not hold
/// the start.
#[tokio::test]
async fn a_node_starting_with_peers_copies_their_registry_before_serving() {
    let first = dev().start().await.unwrap();
    for n in 1..=3 {
        let id = format!("a-{n}");
        let body = instance("A", &id, 8000 + n, "UP", 1_732_881_099_990);
        assert_eq!(register(first.url(), "A", &body).await, 204);
    }
    let (status, _) = call(
        Method::PUT,
        first.url(),
        "apps/A/a-2/status?value=OUT_OF_SERVICE",
    )
    .await;
    assert_eq!(status, 200);

    let second = dev().peer(first.url()).start().await.unwrap();
    let doc = get_json(second.url(), "apps/").await;
    let mut copied: Vec<(String, String)> = instances(&doc)
        .iter()
        .map(|i| {
            let id = i["instanceId"].as_str().unwrap().to_owned();
            (id, i["status"].as_str().unwrap().to_owned())
        })
        .collect();
    copied.sort();
    let expected = [("a-1", "UP"), ("a-2", "OUT_OF_SERVICE"), ("a-3", "UP")];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(i, s)| ((*i).to_owned(), (*s).to_owned()))
        .collect();
    assert_eq!(
        copied, expected,
        "the first read already has the peer's registry"
    );

    let unsynced = dev()
        .peer(first.url())
        .startup_sync(false)
        .start()
        .await
        .unwrap();
    assert_eq!(unsynced.instance_count(), 0);

    let started = std::time::Instant::now();
    let lonely = dev()
        .peer(format!("{}/eureka/", feign_test_support::closed_port_url()))
        .start()
        .await
        .unwrap();
    assert_eq!(lonely.instance_count(), 0);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    for server in [first, second, unsynced, lonely] {
        server.shutdown().await;
    }
}
