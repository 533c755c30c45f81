//! Several servers behind a feign-lb balancer.

use std::time::Duration;

use feign_core::Options;
use feign_test::{Fleet, Matcher, Reply};

use crate::{Orders, OrdersClient};

/// A client of the fleet's service through `fleet`'s balancer.
fn balanced(fleet: &Fleet) -> OrdersClient {
    OrdersClient::builder()
        .load_balancer(fleet.load_balancer())
        .options(Options::new().read_timeout(Duration::from_secs(2)))
        .build()
        .expect("the client builds")
}

#[tokio::test]
async fn the_balancer_spreads_calls_over_the_fleet() {
    let fleet = Fleet::start("order-service", 3).await;
    for (i, server) in fleet.servers().iter().enumerate() {
        server
            .on(Matcher::get("/text/who"))
            .respond(Reply::ok().text(format!("server {i}")));
    }
    let orders = balanced(&fleet);

    for _ in 0..6 {
        orders.text("who").await.unwrap();
    }

    assert_eq!(fleet.request_counts(), [2, 2, 2]);
    assert_eq!(fleet.requests().len(), 6);
}

#[tokio::test]
async fn a_failing_instance_is_retried_on_another() {
    let mut fleet = Fleet::start("order-service", 2).await;
    fleet[1]
        .on(Matcher::get("/text/x"))
        .respond(Reply::ok().text("from 1"));
    fleet[0]
        .on(Matcher::get("/text/x"))
        .respond(Reply::ok().text("from 0"));
    fleet.servers_mut()[0].stop().await;
    let orders = balanced(&fleet);

    for _ in 0..4 {
        assert_eq!(orders.text("x").await.unwrap(), "from 1");
    }
    assert_eq!(fleet[0].request_count(), 0);
}
