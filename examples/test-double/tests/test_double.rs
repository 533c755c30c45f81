//! Runs the example exactly as `cargo run -p test-double` does and checks what it reports, then
//! tests the checkout the way an application's own test would.

use std::sync::Arc;

use feign_core::http::StatusCode;
use test_double::{Checkout, CheckoutError, Order, OrderServiceDouble};

#[tokio::test]
async fn the_example_runs_every_step() {
    let report = test_double::run()
        .await
        .expect("every step behaves as it prints");
    assert_eq!(
        report.reordered,
        Order {
            id: 100,
            items: vec!["book".to_owned()]
        }
    );
    assert_eq!(report.unknown, "no order 8");
    assert_eq!(report.place_calls, 2, "the refused place is retried once");
    assert_eq!(report.placed.len(), 2);
    assert!(
        report
            .unanswered
            .starts_with("no rule of the test double answers OrderService::get_order(9)"),
        "{}",
        report.unanswered
    );
}

#[tokio::test]
async fn a_place_refused_twice_is_not_tried_a_third_time() {
    let orders = OrderServiceDouble::new();
    orders.on_get_order().returns(Some(Order {
        id: 1,
        items: vec!["pen".to_owned()],
    }));
    orders
        .on_place_order()
        .fails_with_status(StatusCode::SERVICE_UNAVAILABLE);
    let checkout = Checkout::new(Arc::new(orders.clone()));

    match checkout.reorder(1).await {
        Err(CheckoutError::Service(error)) => {
            assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
        }
        other => panic!("expected the service's refusal, got {other:?}"),
    }
    assert_eq!(orders.on_place_order().calls(), 2);
    assert_eq!(orders.on_get_order().arguments(), [1]);
}
