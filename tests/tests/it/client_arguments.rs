//! How each parameter attribute of `#[feign_client]` shapes the request, checked on the bytes a
//! real loopback server receives.

use std::collections::{BTreeMap, HashMap};

use axum::extract::Path;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use feign_core::{feign_client, Error, Response, Retryer};
use feign_test_support::{ok, recording_server, Recorded};
use serde::Serialize;

#[derive(Serialize)]
struct Filter {
    status: Option<String>,
    owner: String,
    tags: Vec<String>,
}

#[derive(Serialize)]
struct Login {
    user: String,
    note: String,
}

#[feign_client("echo", path = "/v1")]
trait Echo {
    #[get("/search?view=full&empty")]
    async fn search(
        &self,
        #[query] q: &str,
        #[query("page-size")] size: Option<u32>,
        #[query] tags: Vec<String>,
        #[query] ids: &[u64],
        #[query] flags: Option<Vec<bool>>,
    ) -> Result<(), Error>;

    #[get("/filter")]
    async fn filter(
        &self,
        #[query_map] filter: &Filter,
        #[query_map] extra: BTreeMap<String, String>,
    ) -> Result<(), Error>;

    #[get("/headers")]
    #[headers("X-Method: yes")]
    async fn headers(
        &self,
        #[header("X-Request-Id")] rid: &str,
        #[header("X-Retry")] attempt: u32,
        #[header("X-Maybe")] maybe: Option<&str>,
        #[header_map] extra: &HashMap<String, String>,
    ) -> Result<(), Error>;

    #[post("/form")]
    async fn form(&self, #[form] login: &Login) -> Result<(), Error>;

    #[put("/raw/string")]
    async fn raw_string(&self, #[body] body: String) -> Result<(), Error>;

    #[put("/raw/str")]
    async fn raw_str(&self, #[body] body: &str) -> Result<(), Error>;

    #[put("/raw/vec")]
    async fn raw_vec(&self, #[body] body: Vec<u8>) -> Result<(), Error>;

    #[put("/raw/slice")]
    async fn raw_slice(&self, #[body] body: &[u8]) -> Result<(), Error>;

    #[put("/raw/bytes")]
    async fn raw_bytes(&self, #[body] body: Bytes) -> Result<(), Error>;

    #[patch("/json")]
    async fn json(&self, #[body] body: &BTreeMap<&str, u32>) -> Result<(), Error>;

    #[get("/files/{dir}/{name}.txt")]
    async fn file(&self, #[path] dir: &str, #[path("name")] file_name: &str) -> Result<(), Error>;
}

async fn echo() -> (EchoClient, feign_test_support::Recorder) {
    let (base, recorder) = recording_server(ok).await;
    let client = EchoClient::builder()
        .url(base)
        .retryer(Retryer::never())
        .build()
        .unwrap();
    (client, recorder)
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

#[tokio::test]
async fn query_parameters_omit_none_and_explode_collections() {
    let (client, recorder) = echo().await;
    let tags = vec!["a b".to_owned(), "x&y=z".to_owned()];
    client
        .search(
            "caf\u{e9} & co",
            Some(20),
            tags,
            &[1, 2],
            Some(vec![true, false]),
        )
        .await
        .unwrap();
    let request = recorder.only();
    assert_eq!(request.path, "/v1/search");
    assert_eq!(
        request.query_pairs(),
        pairs(&[
            ("view", "full"),
            ("empty", ""),
            ("q", "caf\u{e9} & co"),
            ("page-size", "20"),
            ("tags", "a b"),
            ("tags", "x&y=z"),
            ("ids", "1"),
            ("ids", "2"),
            ("flags", "true"),
            ("flags", "false"),
        ])
    );

    recorder.clear();
    client
        .search("", None, Vec::new(), &[], None)
        .await
        .unwrap();
    assert_eq!(
        recorder.only().query_pairs(),
        pairs(&[("view", "full"), ("empty", ""), ("q", "")])
    );
}

#[tokio::test]
async fn query_maps_send_every_field_but_none() {
    let (client, recorder) = echo().await;
    let filter = Filter {
        status: None,
        owner: "ann&bob".to_owned(),
        tags: vec!["1".to_owned(), "2".to_owned()],
    };
    let extra = BTreeMap::from([("sort".to_owned(), "desc".to_owned())]);
    client.filter(&filter, extra).await.unwrap();
    let mut received = recorder.only().query_pairs();
    received.sort();
    assert_eq!(
        received,
        pairs(&[
            ("owner", "ann&bob"),
            ("sort", "desc"),
            ("tags", "1"),
            ("tags", "2")
        ])
    );
}

#[tokio::test]
async fn header_parameters_and_maps_are_sent_and_none_is_omitted() {
    let (client, recorder) = echo().await;
    let extra = HashMap::from([("X-Tenant".to_owned(), "acme".to_owned())]);
    client.headers("rid-7", 2, None, &extra).await.unwrap();
    let request = recorder.only();
    assert_eq!(request.header("x-request-id"), Some("rid-7"));
    assert_eq!(request.header("x-retry"), Some("2"));
    assert_eq!(request.header("x-method"), Some("yes"));
    assert_eq!(request.header("x-tenant"), Some("acme"));
    assert!(request.headers.get("x-maybe").is_none());

    recorder.clear();
    client
        .headers("rid-8", 3, Some("here"), &HashMap::new())
        .await
        .unwrap();
    assert_eq!(recorder.only().header("x-maybe"), Some("here"));
}

#[tokio::test]
async fn a_header_value_with_a_line_break_fails_before_anything_is_sent() {
    let (client, recorder) = echo().await;
    let error = client
        .headers("a\r\nX-Injected: 1", 1, None, &HashMap::new())
        .await
        .unwrap_err();
    assert!(error.is_request(), "{error:?}");
    assert!(recorder.all().is_empty());
}

#[tokio::test]
async fn form_parameters_are_url_encoded() {
    let (client, recorder) = echo().await;
    client
        .form(&Login {
            user: "ann".to_owned(),
            note: "a b&c=d".to_owned(),
        })
        .await
        .unwrap();
    let request = recorder.only();
    assert_eq!(request.method, Method::POST);
    assert_eq!(
        request.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(&request.body).unwrap();
    assert_eq!(fields, pairs(&[("user", "ann"), ("note", "a b&c=d")]));
}

#[tokio::test]
async fn raw_bodies_are_sent_byte_for_byte() {
    let (client, recorder) = echo().await;
    let binary = [0u8, 159, 146, 150, 255];
    client
        .raw_string("text \u{1f600}".to_owned())
        .await
        .unwrap();
    client.raw_str("borrowed \"text\"").await.unwrap();
    client.raw_vec(binary.to_vec()).await.unwrap();
    client.raw_slice(&binary).await.unwrap();
    client
        .raw_bytes(Bytes::from_static(b"{not json"))
        .await
        .unwrap();
    let bodies: Vec<(String, Bytes)> = recorder
        .all()
        .into_iter()
        .map(|request| (request.path, request.body))
        .collect();
    assert_eq!(
        bodies,
        vec![
            ("/v1/raw/string".to_owned(), Bytes::from("text \u{1f600}")),
            ("/v1/raw/str".to_owned(), Bytes::from("borrowed \"text\"")),
            ("/v1/raw/vec".to_owned(), Bytes::copy_from_slice(&binary)),
            ("/v1/raw/slice".to_owned(), Bytes::copy_from_slice(&binary)),
            ("/v1/raw/bytes".to_owned(), Bytes::from_static(b"{not json")),
        ]
    );
}

#[tokio::test]
async fn other_bodies_are_json() {
    let (client, recorder) = echo().await;
    client
        .json(&BTreeMap::from([("a", 1), ("b", 2)]))
        .await
        .unwrap();
    let request = recorder.only();
    assert_eq!(request.method, Method::PATCH);
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.body, Bytes::from_static(br#"{"a":1,"b":2}"#));
}

#[tokio::test]
async fn path_values_are_one_encoded_segment_each() {
    let (client, recorder) = echo().await;
    client.file("a/b c", "{name}?#%").await.unwrap();
    assert_eq!(
        recorder.only().path,
        "/v1/files/a%2Fb%20c/%7Bname%7D%3F%23%25.txt"
    );

    recorder.clear();
    let error = client.file("..", "x").await.unwrap_err();
    assert!(error.is_request(), "{error:?}");
    let error = client.file("x", "").await.unwrap_err();
    assert!(error.is_request(), "{error:?}");
    assert!(
        recorder.all().is_empty(),
        "nothing is sent for a dot or empty segment"
    );
}

#[feign_client("files")]
trait Files {
    #[get("/files/{name}")]
    async fn get(&self, #[path] name: &str) -> Result<String, Error>;
}

#[tokio::test]
async fn a_server_decodes_each_path_value_back_to_the_input() {
    let router = Router::new().route(
        "/files/{name}",
        get(|Path(name): Path<String>| async move { name }),
    );
    let base = feign_test_support::serve(router).await;
    let files = FilesClient::builder().url(base).build().unwrap();
    for name in ["a/b c", "100%", "caf\u{e9}", "?q=1#frag", "{name}", "..."] {
        assert_eq!(files.get(name).await.unwrap(), name);
    }
}

#[feign_client("kinds")]
trait Kinds {
    #[get("/text")]
    async fn text(&self) -> Result<String, Error>;

    #[get("/text")]
    async fn bytes(&self) -> Result<Bytes, Error>;

    #[get("/text")]
    async fn response(&self) -> Result<Response, Error>;

    #[get("/missing")]
    async fn maybe_text(&self) -> Result<Option<String>, Error>;

    #[get("/missing")]
    async fn maybe_bytes(&self) -> Result<Option<Bytes>, Error>;

    #[get("/missing")]
    async fn maybe_response(&self) -> Result<Option<Response>, Error>;

    #[head("/text")]
    async fn exists(&self) -> Result<Option<()>, Error>;

    #[head("/missing")]
    async fn missing(&self) -> Result<Option<()>, Error>;

    #[get("/redirect")]
    async fn redirect(&self) -> Result<String, Error>;

    #[get("/redirect")]
    #[options(follow_redirects = true)]
    async fn redirect_followed(&self) -> Result<String, Error>;
}

fn kinds_response(request: &Recorded) -> axum::response::Response {
    match request.path.as_str() {
        "/text" => {
            let mut headers = HeaderMap::new();
            headers.insert("x-kind", "text".parse().unwrap());
            (StatusCode::OK, headers, "plain \u{e9}").into_response()
        }
        "/redirect" => (StatusCode::FOUND, [("location", "/text")]).into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

#[tokio::test]
async fn return_types_choose_the_decoding() {
    let (base, _) = recording_server(kinds_response).await;
    let kinds = KindsClient::builder().url(base).build().unwrap();
    assert_eq!(kinds.text().await.unwrap(), "plain \u{e9}");
    assert_eq!(kinds.bytes().await.unwrap(), Bytes::from("plain \u{e9}"));
    let response = kinds.response().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["x-kind"], "text");
    assert_eq!(response.body(), &Bytes::from("plain \u{e9}"));
    assert_eq!(kinds.maybe_text().await.unwrap(), None);
    assert_eq!(kinds.maybe_bytes().await.unwrap(), None);
    assert!(kinds.maybe_response().await.unwrap().is_none());
    assert_eq!(kinds.exists().await.unwrap(), Some(()));
    assert_eq!(kinds.missing().await.unwrap(), None);
}

#[tokio::test]
async fn method_options_reach_the_transport() {
    let (base, recorder) = recording_server(kinds_response).await;
    let kinds = KindsClient::builder().url(base).build().unwrap();
    let error = kinds.redirect().await.unwrap_err();
    assert_eq!(
        error.status(),
        Some(StatusCode::FOUND),
        "redirects are not followed by default"
    );
    assert_eq!(kinds.redirect_followed().await.unwrap(), "plain \u{e9}");
    let paths: Vec<String> = recorder
        .all()
        .into_iter()
        .map(|request| request.path)
        .collect();
    assert_eq!(paths, ["/redirect", "/redirect", "/text"]);
}
