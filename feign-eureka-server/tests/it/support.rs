//! Helpers shared by the `server_*` integration tests: a dev-configured registry on a free
//! loopback port, register bodies as Java clients send them, and a plain HTTP client.
use feign_eureka_server::{EurekaServer, EurekaServerBuilder};
use serde_json::Value;

/// A builder for a registry on a free port that shows changes at once and evicts freely.
pub(crate) fn dev() -> EurekaServerBuilder {
    EurekaServer::builder()
        .bind("127.0.0.1:0")
        .self_preservation(false)
        .read_only_cache(false)
}

/// [`dev`] without the registration limits per address (requests and bytes), for tests that
/// register many or large instances from 127.0.0.1.
pub(crate) fn unlimited() -> EurekaServerBuilder {
    dev()
        .registration_rate_limit(None)
        .registration_bytes_limit(None)
}

/// Starts [`dev`].
pub(crate) async fn start() -> EurekaServer {
    dev().start().await.expect("registry starts")
}

/// A client that neither decompresses nor follows redirects, so tests see the wire.
pub(crate) fn http() -> reqwest::Client {
    http_builder().build().expect("client")
}

/// What [`http`] builds from, for a test that sets more (a source address, say).
pub(crate) fn http_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_gzip()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
}

/// A register body like §3.11 of the protocol notes.
pub(crate) fn instance(app: &str, id: &str, port: u16, status: &str, ldt: u64) -> Value {
    serde_json::json!({"instance": {
        "instanceId": id,
        "hostName": "127.0.0.1",
        "app": app,
        "ipAddr": "127.0.0.1",
        "status": status,
        "overriddenStatus": "UNKNOWN",
        "port": {"$": port, "@enabled": "true"},
        "securePort": {"$": 443, "@enabled": "false"},
        "countryId": 1,
        "dataCenterInfo": {
            "@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
            "name": "MyOwn"
        },
        "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 90},
        "metadata": {"zone": "zone-a"},
        "homePageUrl": format!("http://127.0.0.1:{port}/"),
        "statusPageUrl": format!("http://127.0.0.1:{port}/info"),
        "healthCheckUrl": format!("http://127.0.0.1:{port}/health"),
        "vipAddress": app.to_ascii_lowercase(),
        "secureVipAddress": app.to_ascii_lowercase(),
        "isCoordinatingDiscoveryServer": "false",
        "lastUpdatedTimestamp": ldt.to_string(),
        "lastDirtyTimestamp": ldt.to_string()
    }})
}

/// A register body of `app` / `id` with `entries` metadata values of 4,000 times `fill`: about
/// 4 KB an entry (as JSON; more once escaped, for a `fill` that needs it).
pub(crate) fn large_instance(app: &str, id: &str, entries: usize, fill: &str) -> Value {
    let mut body = instance(app, id, 8080, "UP", 1_732_881_099_990);
    let metadata: serde_json::Map<String, Value> = (0..entries)
        .map(|k| (format!("k{k:03}"), Value::from(fill.repeat(4000))))
        .collect();
    body["instance"]["metadata"] = Value::Object(metadata);
    body
}

/// POSTs `body` to `{base}apps/{app}`; returns the status.
pub(crate) async fn register(base: &str, app: &str, body: &Value) -> u16 {
    http()
        .post(format!("{base}apps/{app}"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("register")
        .status()
        .as_u16()
}

/// `POST {base}{path}` with `body` as JSON; returns status and body.
pub(crate) async fn post_raw(base: &str, path: &str, body: Vec<u8>) -> (u16, String) {
    let response = http()
        .post(format!("{base}{path}"))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// Sends `method` to `{base}{path}` and returns status and body.
pub(crate) async fn call(method: reqwest::Method, base: &str, path: &str) -> (u16, String) {
    let response = http()
        .request(method, format!("{base}{path}"))
        .header("Accept", "application/json")
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

/// `GET {base}{path}` parsed as JSON (asserting 200).
pub(crate) async fn get_json(base: &str, path: &str) -> Value {
    let (status, body) = call(reqwest::Method::GET, base, path).await;
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).expect("json")
}

/// The instances of every application of a `{"applications":...}` document.
pub(crate) fn instances(doc: &Value) -> Vec<Value> {
    doc["applications"]["application"]
        .as_array()
        .expect("application is an array")
        .iter()
        .flat_map(|a| {
            a["instance"]
                .as_array()
                .expect("instance is an array")
                .clone()
        })
        .collect()
}
