//! Failover across more than three Eureka servers on 127.0.0.1: a call tries at most three
//! servers (Eureka's `DEFAULT_NUMBER_OF_RETRIES`), skips the ones quarantined after failing, and
//! clears the quarantine once it holds two thirds of the servers.

use std::time::Duration;

use feign_eureka::EurekaClient;
use feign_test_support::eureka::{instance, FakeEureka, Mode};

const SERVERS: usize = 5;

/// Full fetches each server has received so far.
fn fetches(servers: &[FakeEureka]) -> Vec<usize> {
    servers
        .iter()
        .map(|server| server.requests_matching("GET", "/eureka/apps").len())
        .collect()
}

/// The fetches each server received since `before`.
fn since(servers: &[FakeEureka], before: &[usize]) -> Vec<usize> {
    fetches(servers)
        .iter()
        .zip(before)
        .map(|(now, then)| now - then)
        .collect()
}

/// Server indices in the order the last call tried them, read from the request times.
fn tried_order(servers: &[FakeEureka], before: &[usize]) -> Vec<usize> {
    let mut tried: Vec<(tokio::time::Instant, usize)> = servers
        .iter()
        .enumerate()
        .flat_map(|(n, server)| {
            server.requests_matching("GET", "/eureka/apps")[before[n]..]
                .iter()
                .map(move |request| (request.at, n))
                .collect::<Vec<_>>()
        })
        .collect();
    tried.sort_by_key(|(at, _)| *at);
    tried.into_iter().map(|(_, n)| n).collect()
}

fn set_failing(servers: &[FakeEureka], failing: &[usize]) {
    for (n, server) in servers.iter().enumerate() {
        server.set_mode(if failing.contains(&n) {
            Mode::Status(503)
        } else {
            Mode::Normal
        });
    }
}

#[tokio::test]
async fn a_call_tries_three_of_five_servers_and_skips_the_quarantined_ones() {
    let mut servers = Vec::new();
    for _ in 0..SERVERS {
        let server = FakeEureka::start().await;
        server.put(instance("orders", 1));
        servers.push(server);
    }
    let eureka = EurekaClient::builder()
        .service_urls(servers.iter().map(FakeEureka::url))
        .registry_fetch_interval(Duration::from_secs(3600))
        .disable_delta(true)
        .seed(11)
        .start()
        .await
        .unwrap();

    // Every server fails: the call gives up after three of them, one request each.
    let all: Vec<usize> = (0..SERVERS).collect();
    set_failing(&servers, &all);
    let before = fetches(&servers);
    eureka.refresh().await.expect_err("every server fails");
    let order = tried_order(&servers, &before);
    assert_eq!(order.len(), 3, "at most three tries: {order:?}");
    let hits = since(&servers, &before);
    assert_eq!(hits.iter().filter(|&&n| n == 1).count(), 3, "{hits:?}");
    let (a, b, c) = (order[0], order[1], order[2]);
    let rest: Vec<usize> = all.iter().copied().filter(|n| !order.contains(n)).collect();

    // Three of five quarantined reaches the two-thirds threshold: the quarantine is cleared and
    // the same three are tried again; the third answers and the first two stay quarantined.
    set_failing(&servers, &[a, b]);
    let before = fetches(&servers);
    eureka.refresh().await.expect("the third server answers");
    assert_eq!(tried_order(&servers, &before), [a, b, c]);

    // The server that answered fails too: it is tried first (sticky), then the quarantined two
    // are skipped and one of the two never-tried servers answers.
    set_failing(&servers, &[a, b, c]);
    let before = fetches(&servers);
    eureka.refresh().await.expect("a fourth server answers");
    let order = tried_order(&servers, &before);
    assert_eq!(order.len(), 2, "{order:?}");
    assert_eq!(order[0], c, "the sticky server first");
    assert!(rest.contains(&order[1]), "{order:?} skips {a} and {b}");
    let answered = order[1];

    // The one that answered is kept: the next call goes to it alone.
    let before = fetches(&servers);
    eureka.refresh().await.expect("the sticky server answers");
    assert_eq!(tried_order(&servers, &before), [answered]);
    assert_eq!(eureka.instances("orders").map(|list| list.len()), Some(1));
}
