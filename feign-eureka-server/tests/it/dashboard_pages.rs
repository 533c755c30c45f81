//! The dashboard at 10,000 instances: each request answers one bounded page quickly, the
//! pages together list every instance once, and a change shows at once; and a page of large
//! instances stays bounded in bytes.

use std::time::{Duration, Instant};

use crate::support::{http, instance, large_instance, register, unlimited};

const LDT: u64 = 1_732_881_099_990;
const INSTANCES: usize = 10_000;

/// `GET /?page=N` (the first page without `page`): the body and how long it took.
async fn dashboard(url: &str, page: Option<usize>) -> (String, Duration) {
    let url = match page {
        Some(page) => format!("{url}?page={page}"),
        None => url.to_owned(),
    };
    let started = Instant::now();
    let response = http().get(url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    (body, started.elapsed())
}

#[tokio::test]
async fn the_dashboard_at_10000_instances_answers_bounded_pages() {
    let server = unlimited().start().await.unwrap();
    let base = server.url().to_owned();
    let workers: Vec<_> = (0..16)
        .map(|worker| {
            let base = base.clone();
            tokio::spawn(async move {
                for i in (worker..INSTANCES).step_by(16) {
                    let app = format!("SVC-{:02}", i % 100);
                    let body = instance(&app, &format!("i-{i:05}"), 8080, "UP", LDT);
                    assert_eq!(register(&base, &app, &body).await, 204);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    assert_eq!(server.instance_count(), INSTANCES);

    let page_url = server.dashboard_url();
    let (first, took) = dashboard(&page_url, None).await;
    assert!(first.contains(r#"id="instance-count">10000<"#));
    assert!(
        first.contains("page 1 of 50"),
        "{:.3000}",
        &first[first.len() - 3000..]
    );
    // The whole registry's page was about 2.5 MB; one page of 200 rows is a small part.
    assert!(first.len() < 150_000, "{} bytes", first.len());
    assert!(took < Duration::from_secs(2), "first build took {took:?}");
    let (again, took) = dashboard(&page_url, None).await;
    assert!(
        took < Duration::from_millis(500),
        "a kept page took {took:?}"
    );
    assert_eq!(again.matches("class=\"instance\"").count(), 200);

    // Every instance on exactly one page.
    let mut listed = 0;
    for page in 1..=50 {
        let (html, took) = dashboard(&page_url, Some(page)).await;
        assert!(html.len() < 150_000, "page {page}: {} bytes", html.len());
        assert!(took < Duration::from_secs(2), "page {page} took {took:?}");
        listed += html.matches("class=\"instance\"").count();
    }
    assert_eq!(listed, INSTANCES);
    let (last, _) = dashboard(&page_url, Some(50)).await;
    assert!(
        last.contains("i-09999"),
        "the last instance is on the last page"
    );
    let (past, _) = dashboard(&page_url, Some(999)).await;
    assert!(
        past.contains("page 50 of 50"),
        "a page past the end shows the last"
    );

    // A registration shows on the next request, kept page or not.
    let body = instance("SVC-00", "i-new", 8080, "UP", LDT);
    assert_eq!(register(&base, "SVC-00", &body).await, 204);
    let (changed, _) = dashboard(&page_url, None).await;
    assert!(changed.contains(r#"id="instance-count">10001<"#));
    server.shutdown().await;
}

/// Twenty instances of 512 KB each (128 metadata values of 4,000 characters that each escape
/// to six bytes, a host name of 2,000): a page shows each value cut with a visible `…` and at
/// most eight metadata entries, and stays within about a megabyte (it was 20 times larger).
#[tokio::test]
async fn a_page_of_large_instances_stays_bounded_in_bytes() {
    let server = unlimited()
        .max_instance_bytes(2 << 20)
        .start()
        .await
        .unwrap();
    let base = server.url().to_owned();
    for i in 0..20 {
        let mut body = large_instance("BIG", &format!("big-{i:02}"), 128, "\"");
        body["instance"]["hostName"] = "&".repeat(2000).into();
        assert_eq!(register(&base, "BIG", &body).await, 204);
    }
    let (page, _) = dashboard(&server.dashboard_url(), None).await;
    assert!(page.len() < 1_100_000, "{} bytes", page.len());
    assert_eq!(
        page.matches("class=\"instance\"").count(),
        20,
        "every instance has its row"
    );
    assert!(page.contains("&hellip;"), "cut values are marked");
    assert!(page.contains("+120 more"), "left-out metadata is counted");
    server.shutdown().await;
}

/// Beside "Renewals last minute" and a higher "Renewal threshold", the page says what the
/// threshold is and when self-preservation starts, with this registry's own numbers.
#[tokio::test]
async fn the_dashboard_explains_the_renewal_threshold() {
    let guarded = feign_eureka_server::EurekaServer::builder()
        .bind("127.0.0.1:0")
        .expected_clients(3)
        .start()
        .await
        .unwrap();
    let (page, _) = dashboard(&guarded.dashboard_url(), None).await;
    let note = page
        .split(r#"id="threshold-note">"#)
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .expect("a note under the figures");
    assert!(
        note.contains("85% of the renewals expected a minute: 3 clients expected to renew, 2 times a minute each"),
        "{note}"
    );
    assert!(
        note.contains("self-preservation keeps expired leases"),
        "{note}"
    );
    assert!(note.contains("last complete minute"), "{note}");

    let unguarded = feign_eureka_server::EurekaServer::builder()
        .bind("127.0.0.1:0")
        .self_preservation(false)
        .start()
        .await
        .unwrap();
    let (page, _) = dashboard(&unguarded.dashboard_url(), None).await;
    assert!(
        page.contains(
            "Self-preservation is off, so expired leases are evicted whatever the count."
        ),
        "{page:.3000}"
    );
}
