//! Generated requests against a registry on loopback: Eureka's operations under `/eureka/` and
//! `/eureka/v2/` with application names and instance ids of any characters (percent-encoded,
//! some not UTF-8 at all), other methods, odd headers, registrations and replication batches
//! whose JSON is mutated, and random bytes. The registry answers every one without a 5xx (its
//! only documented 5xx is the 503 while shutting down), and after each one its listing is a
//! document feign-eureka's model reads, agreeing with the registry's own count and hash, and
//! naming instances that can each be fetched while their lease is current.
//!
//! Each case is several HTTP exchanges: the default count is small; `PROPTEST_CASES` raises it
//! (see `feign_test_support::proptest_cases`).

use std::time::{SystemTime, UNIX_EPOCH};

use feign_eureka::model::{Applications, InstanceInfo};
use feign_test_support::mutation::{mutate_all, mutation, Mutation};
use feign_test_support::proptest_cases;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use proptest::prelude::*;
use reqwest::Method;
use serde_json::Value;

use crate::support::{dev, http, instance, register};

const LDT: u64 = 1_732_881_099_990;

/// An application name or instance id: the usual ones, or any text.
fn name(usual: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(usual).prop_map(str::to_owned),
        1 => "[ -~]{1,10}",
        1 => "\\PC{1,6}",
        1 => "[\u{0}-\u{1f}/.%?#\u{7f}\u{e9}]{1,4}",
    ]
}

/// A path segment for `name`: percent-encoded, or sometimes bytes that are not UTF-8, an
/// encoded slash or a dot segment written as they are.
fn segment(name: &str, raw: u8) -> String {
    match raw {
        0 => "%FF".to_owned(),
        1 => "%C3%28".to_owned(),
        2 => "..".to_owned(),
        3 => format!("{}%2F", utf8_percent_encode(name, NON_ALPHANUMERIC)),
        _ => utf8_percent_encode(name, NON_ALPHANUMERIC).to_string(),
    }
}

/// The operation a request attempts, before its method, path and body are perturbed.
#[derive(Debug, Clone)]
enum Operation {
    Register,
    Renew,
    Cancel,
    SetStatus,
    DeleteStatus,
    Metadata,
    GetApp,
    GetInstance,
    GetById,
    Vip,
    /// A replication batch of one item with this action.
    Batch(&'static str),
    Listing,
    Delta,
    Elsewhere(Vec<String>),
}

/// What the body holds.
#[derive(Debug, Clone)]
enum Body {
    None,
    /// The operation's valid body (a registration or a batch).
    Valid,
    /// The valid body with these mutations.
    Mutated(Vec<Mutation>),
    /// These bytes.
    Bytes(Vec<u8>),
}

#[derive(Debug, Clone)]
struct Request {
    operation: Operation,
    /// Another method than the operation's, when set.
    method: Option<&'static str>,
    v2: bool,
    app: String,
    id: String,
    raw_segments: (u8, u8),
    query: String,
    headers: Vec<(&'static str, &'static str)>,
    body: Body,
}

fn operation() -> impl Strategy<Value = Operation> {
    prop_oneof![
        4 => Just(Operation::Register),
        2 => Just(Operation::Renew),
        1 => Just(Operation::Cancel),
        1 => Just(Operation::SetStatus),
        1 => Just(Operation::DeleteStatus),
        1 => Just(Operation::Metadata),
        1 => Just(Operation::GetApp),
        1 => Just(Operation::GetInstance),
        1 => Just(Operation::GetById),
        1 => Just(Operation::Vip),
        2 => prop::sample::select(vec![
            "Register", "Heartbeat", "Cancel", "StatusUpdate", "DeleteStatusOverride", "Unknown",
        ])
        .prop_map(Operation::Batch),
        1 => Just(Operation::Listing),
        1 => Just(Operation::Delta),
        1 => prop::collection::vec("[a-zA-Z0-9%._~:-]{0,8}", 0..5).prop_map(Operation::Elsewhere),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    let method = prop_oneof![
        6 => Just(None),
        1 => prop::sample::select(vec!["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
            .prop_map(Some),
    ];
    let query = prop_oneof![
        Just(String::new()),
        Just("?status=OUT_OF_SERVICE&lastDirtyTimestamp=1732881099991".to_owned()),
        Just("?value=UP&lastDirtyTimestamp=1".to_owned()),
        Just("?status=NOPE&lastDirtyTimestamp=-1".to_owned()),
        Just("?lastDirtyTimestamp=99999999999999999999999&overriddenstatus=UP".to_owned()),
        Just("?zone=a&version=%FF&%00=x".to_owned()),
        "\\?[a-zA-Z=&%0-9]{0,20}",
    ];
    let header = prop_oneof![
        Just(None),
        Just(Some(("Content-Type", "application/json"))),
        Just(Some(("Content-Type", "application/xml"))),
        Just(Some(("Content-Type", "text/plain; charset=utf-8"))),
        Just(Some(("Accept", "application/xml"))),
        Just(Some(("Accept", "*/*"))),
        Just(Some(("Accept-Encoding", "gzip"))),
        Just(Some(("Content-Encoding", "gzip"))),
        Just(Some(("x-netflix-discovery-replication", "true"))),
        Just(Some(("x-netflix-discovery-replication", "TRUE"))),
    ];
    let body = prop_oneof![
        1 => Just(Body::None),
        4 => Just(Body::Valid),
        4 => prop::collection::vec(mutation(), 1..4).prop_map(Body::Mutated),
        1 => prop::collection::vec(any::<u8>(), 0..96).prop_map(Body::Bytes),
    ];
    (
        (operation(), method, any::<bool>()),
        (
            name(&["A", "ORDERS", "orders"]),
            name(&["a-1", "a-2", "10.0.0.5:orders:8080"]),
        ),
        (
            prop_oneof![8 => Just(9u8), 1 => 0u8..4],
            prop_oneof![8 => Just(9u8), 1 => 0u8..4],
        ),
        query,
        prop::collection::vec(header, 0..3),
        body,
    )
        .prop_map(
            |((operation, method, v2), (app, id), raw_segments, query, headers, body)| Request {
                operation,
                method,
                v2,
                app,
                id,
                raw_segments,
                query,
                headers: headers.into_iter().flatten().collect(),
                body,
            },
        )
}

impl Request {
    /// The method, the path after the prefix, and the valid body of the operation.
    fn shape(&self) -> (&'static str, Vec<String>, Option<Value>) {
        let app = segment(&self.app, self.raw_segments.0);
        let id = segment(&self.id, self.raw_segments.1);
        let registration = || instance(&self.app, &self.id, 8080, "UP", LDT);
        let path = |parts: &[&str]| parts.iter().map(|p| (*p).to_owned()).collect();
        match &self.operation {
            Operation::Register => ("POST", path(&["apps", &app]), Some(registration())),
            Operation::Renew => ("PUT", path(&["apps", &app, &id]), None),
            Operation::Cancel => ("DELETE", path(&["apps", &app, &id]), None),
            Operation::SetStatus => ("PUT", path(&["apps", &app, &id, "status"]), None),
            Operation::DeleteStatus => ("DELETE", path(&["apps", &app, &id, "status"]), None),
            Operation::Metadata => ("PUT", path(&["apps", &app, &id, "metadata"]), None),
            Operation::GetApp => ("GET", path(&["apps", &app]), None),
            Operation::GetInstance => ("GET", path(&["apps", &app, &id]), None),
            Operation::GetById => ("GET", path(&["instances", &id]), None),
            Operation::Vip => ("GET", path(&["vips", &app]), None),
            Operation::Listing => ("GET", path(&["apps"]), None),
            Operation::Delta => ("GET", path(&["apps", "delta"]), None),
            Operation::Batch(action) => {
                let batch = serde_json::json!({"replicationList": [{
                    "appName": self.app,
                    "id": self.id,
                    "action": action,
                    "lastDirtyTimestamp": LDT,
                    "status": "UP",
                    "overriddenStatus": "OUT_OF_SERVICE",
                    "instanceInfo": registration()["instance"],
                }]});
                ("POST", path(&["peerreplication", "batch"]), Some(batch))
            }
            Operation::Elsewhere(segments) => ("GET", segments.clone(), None),
        }
    }

    fn url(&self, root: &str, path: &[String]) -> String {
        let prefix = if self.v2 { "eureka/v2/" } else { "eureka/" };
        format!("{root}{prefix}{}{}", path.join("/"), self.query)
    }

    fn body(&self, valid: Option<Value>) -> Vec<u8> {
        match (&self.body, valid) {
            (Body::None, _) | (Body::Valid | Body::Mutated(_), None) => Vec::new(),
            (Body::Valid, Some(valid)) => valid.to_string().into_bytes(),
            (Body::Mutated(mutations), Some(valid)) => mutate_all(&valid, mutations),
            (Body::Bytes(bytes), _) => bytes.clone(),
        }
    }
}

/// Sends `request`; the status, or why no answer came.
async fn send(client: &reqwest::Client, root: &str, request: &Request) -> Result<u16, String> {
    let (method, path, valid) = request.shape();
    let method = request.method.unwrap_or(method);
    let url = request.url(root, &path);
    let mut builder = client
        .request(
            Method::from_bytes(method.as_bytes()).expect("a method"),
            &url,
        )
        .body(request.body(valid));
    for (name, value) in &request.headers {
        builder = builder.header(*name, *value);
    }
    let response = builder
        .send()
        .await
        .map_err(|e| format!("no answer to {method} {url}: {e}"))?;
    let status = response.status().as_u16();
    // The whole answer arrives: the connection is not dropped mid-body.
    response
        .bytes()
        .await
        .map_err(|e| format!("answer to {method} {url} cut short: {e}"))?;
    Ok(status)
}

/// Whether `info`'s lease, as listed, was renewed more than a second before it runs out.
fn lease_is_current(info: &InstanceInfo) -> bool {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    info.lease_info.is_some_and(|lease| {
        let ends = lease
            .last_renewal_timestamp
            .saturating_add(u64::from(lease.duration_in_secs) * 1_000);
        lease.eviction_timestamp == 0 && now_ms + 1_000 < ends
    })
}

/// The registry as a client sees it: its listing and delta parse, the listing agrees with the
/// registry's count and its own hash, and every instance it names whose lease is current can be
/// fetched.
async fn check_consistent(
    client: &reqwest::Client,
    base: &str,
    registered: usize,
) -> Result<(), String> {
    let get = |path: String| async move {
        let response = client
            .get(format!("{base}{path}"))
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        let status = response.status().as_u16();
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        Ok::<_, String>((status, body))
    };
    let (status, body) = get("apps".to_owned()).await?;
    if status != 200 {
        return Err(format!("GET apps answered {status}"));
    }
    let listing = Applications::from_json(&body).map_err(|e| format!("listing: {e}"))?;
    if listing.instance_count() != registered {
        return Err(format!(
            "the listing holds {} instances, the registry {registered}",
            listing.instance_count()
        ));
    }
    if listing.apps_hashcode != listing.reconcile_hash_code() {
        return Err(format!(
            "listing hash {} is not its own",
            listing.apps_hashcode
        ));
    }
    let (status, body) = get("apps/delta".to_owned()).await?;
    if status != 200 {
        return Err(format!("GET apps/delta answered {status}"));
    }
    Applications::from_json(&body).map_err(|e| format!("delta: {e}"))?;
    for app in &listing.applications {
        for info in &app.instances {
            let path = format!(
                "apps/{}/{}",
                utf8_percent_encode(&app.name, NON_ALPHANUMERIC),
                utf8_percent_encode(info.id(), NON_ALPHANUMERIC)
            );
            let (status, body) = get(path.clone()).await?;
            // As in Eureka, an expired lease stays listed until the next eviction but is not
            // served on its own; one renewed well within its duration must be.
            if status != 200 && lease_is_current(info) {
                return Err(format!("GET {path} of a listed instance answered {status}"));
            }
            if status != 200 {
                continue;
            }
            let fetched = InstanceInfo::from_json(&body).map_err(|e| format!("{path}: {e}"))?;
            if fetched.id() != info.id() {
                return Err(format!("GET {path} answered instance {}", fetched.id()));
            }
        }
    }
    Ok(())
}

#[test]
fn any_request_is_answered_and_leaves_the_registry_consistent() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // A peer on loopback (where nothing listens), so the batches sent from here are taken.
    let peer = format!("{}/eureka/", feign_test_support::closed_port_url());
    let server = runtime
        .block_on(dev().peer(peer).startup_sync(false).start())
        .expect("registry starts");
    let base = server.url().to_owned();
    let root = base
        .strip_suffix("eureka/")
        .expect("a /eureka/ URL")
        .to_owned();
    let client = http();
    // Instances for renewals, cancellations and status changes to act on, and for the
    // consistency check to fetch.
    runtime.block_on(async {
        for (app, id) in [
            ("A", "a-1"),
            ("ORDERS", "a-2"),
            ("ORDERS", "10.0.0.5:orders:8080"),
        ] {
            assert_eq!(
                register(&base, app, &instance(app, id, 8080, "UP", LDT)).await,
                204
            );
        }
    });
    let config = ProptestConfig {
        // The registry's state carries from case to case: a saved case would not replay.
        failure_persistence: None,
        ..ProptestConfig::with_cases(proptest_cases(128))
    };
    proptest!(config, |(request in request())| {
        let status = runtime
            .block_on(send(&client, &root, &request))
            .map_err(TestCaseError::fail)?;
        prop_assert!(status < 500, "{:?} answered {}", request, status);
        runtime
            .block_on(check_consistent(&client, &base, server.instance_count()))
            .map_err(|e| TestCaseError::fail(format!("after {request:?}: {e}")))?;
    });
    runtime.block_on(server.shutdown());
}
