//! gzip on the wire against a real server on 127.0.0.1: request bodies compressed as Spring
//! Cloud OpenFeign's `compression.request.*` says, gzip responses decoded.

use std::io::{Read as _, Write as _};
use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use feign_core::compression::RequestCompression;
use feign_core::config::Config;
use feign_core::{feign_client, Error, Retryer};
use feign_test_support::{recording_server, Recorded};

#[feign_client("docs")]
trait Docs {
    #[post("/docs")]
    async fn json(&self, #[body] doc: &serde_json::Value) -> Result<String, Error>;

    #[post("/docs")]
    #[headers("Content-Type: text/plain")]
    async fn text(&self, #[body] text: String) -> Result<String, Error>;

    #[get("/docs")]
    async fn fetch(&self) -> Result<bytes::Bytes, Error>;

    #[post("/docs")]
    #[headers("Content-Type: application/json")]
    async fn streamed(&self, #[body] doc: feign_core::BodyStream) -> Result<String, Error>;
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// What a server that honours `Content-Encoding` does: gunzips a gzip body and answers with
/// the encoding it got and the decoded body's length; a GET is answered with 50,000 bytes,
/// gzipped when the request accepts gzip.
fn server_side(recorded: &Recorded) -> axum::response::Response {
    if recorded.method == "GET" {
        let plain = vec![b'x'; 50_000];
        let accepts = recorded.header("accept-encoding").unwrap_or_default();
        if accepts.contains("gzip") {
            return ([(header::CONTENT_ENCODING, "gzip")], gzip(&plain)).into_response();
        }
        return plain.into_response();
    }
    let encoding = recorded.header("content-encoding").unwrap_or("identity");
    let body = if encoding == "gzip" {
        let mut decoded = Vec::new();
        if flate2::read::GzDecoder::new(&recorded.body[..])
            .read_to_end(&mut decoded)
            .is_err()
        {
            return (StatusCode::BAD_REQUEST, "not gzip").into_response();
        }
        decoded
    } else {
        recorded.body.to_vec()
    };
    format!("{encoding} {}", body.len()).into_response()
}

/// A client gzipping requests with Spring's defaults, never retrying.
fn compressing(url: &str) -> DocsClient {
    DocsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .request_compression(RequestCompression::default())
        .build()
        .unwrap()
}

fn doc(bytes: usize) -> serde_json::Value {
    serde_json::json!({ "text": "a".repeat(bytes) })
}

#[tokio::test]
async fn json_bodies_over_the_size_are_gzipped_and_others_sent_as_they_are() {
    let (url, recorder) = recording_server(server_side).await;
    let client = compressing(&url);
    let big = doc(10_000);
    let big_len = serde_json::to_vec(&big).unwrap().len();
    assert_eq!(client.json(&big).await.unwrap(), format!("gzip {big_len}"));
    let sent = recorder.all().pop().unwrap();
    assert!(
        sent.body.len() < big_len / 10,
        "sent {} bytes",
        sent.body.len()
    );
    assert_eq!(
        sent.header("content-length"),
        Some(&*sent.body.len().to_string())
    );

    // 2048 bytes is not above Spring's 2048-byte threshold.
    let exact = serde_json::json!("a".repeat(2046));
    assert_eq!(serde_json::to_vec(&exact).unwrap().len(), 2048);
    assert_eq!(client.json(&exact).await.unwrap(), "identity 2048");
    // text/plain is not among Spring's default types.
    assert_eq!(
        client.text("a".repeat(10_000)).await.unwrap(),
        "identity 10000"
    );

    let everything = DocsClient::builder()
        .url(&url)
        .request_compression(
            RequestCompression::new()
                .mime_types(["text/plain"])
                .min_request_size(10),
        )
        .build()
        .unwrap();
    assert_eq!(everything.text("a".repeat(100)).await.unwrap(), "gzip 100");
    assert_eq!(everything.json(&doc(100)).await.unwrap(), "identity 111");
}

#[tokio::test]
async fn spring_properties_turn_compression_on_and_shape_it() {
    let (url, _) = recording_server(server_side).await;
    let yaml = "spring.cloud.openfeign.compression:\n  request:\n    enabled: true\n    mime-types: text/plain\n    min-request-size: 10\n  response:\n    enabled: true\n";
    let config = Config::from_yaml_str(yaml, "application.yml").unwrap();
    let client = DocsClient::builder()
        .url(&url)
        .config(&config)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(client.text("a".repeat(100)).await.unwrap(), "gzip 100");
    assert_eq!(client.json(&doc(5000)).await.unwrap(), "identity 5011");

    let off = Config::from_yaml_str(
        "spring.cloud.openfeign.compression.request.enabled: false",
        "application.yml",
    )
    .unwrap();
    let client = DocsClient::builder()
        .url(&url)
        .request_compression(RequestCompression::default())
        .config(&off)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(client.json(&doc(5000)).await.unwrap(), "identity 5011");

    for (yaml, key) in [
        (
            "spring.cloud.openfeign.compression.request.min-request-size: lots",
            "spring.cloud.openfeign.compression.request.min-request-size",
        ),
        (
            "feign.compression.request.level: 9",
            "feign.compression.request.level",
        ),
    ] {
        let config = Config::from_yaml_str(yaml, "application.yml").unwrap();
        let error = DocsClient::builder().config(&config).unwrap_err();
        assert!(error.is_config(), "{error:?}");
        assert!(error.to_string().contains(key), "{error}");
    }
}

/// A reqwest transport that leaves gzip bodies as they came, as a custom transport may.
fn undecoding_transport() -> feign_core::client::ReqwestClient {
    let client = feign_core::client::reqwest_builder(Duration::from_secs(5), None, None)
        .gzip(false)
        .build()
        .unwrap();
    feign_core::client::ReqwestClient::from_reqwest(client)
}

#[tokio::test]
async fn response_compression_asks_for_gzip_and_decodes_within_the_cap() {
    let (url, recorder) = recording_server(server_side).await;
    let plain = DocsClient::builder()
        .url(&url)
        .client(undecoding_transport())
        .build()
        .unwrap();
    assert_eq!(plain.fetch().await.unwrap().len(), 50_000);
    assert_eq!(
        recorder.all().pop().unwrap().header("accept-encoding"),
        None
    );

    let compressed = DocsClient::builder()
        .url(&url)
        .client(undecoding_transport())
        .response_compression(true)
        .build()
        .unwrap();
    assert_eq!(compressed.fetch().await.unwrap(), vec![b'x'; 50_000]);
    assert_eq!(
        recorder.all().pop().unwrap().header("accept-encoding"),
        Some("gzip")
    );

    // The cap counts decoded bytes: 50,000 bytes gzipped are a few hundred on the wire.
    let capped = DocsClient::builder()
        .url(&url)
        .client(undecoding_transport())
        .response_compression(true)
        .max_response_bytes(10_000)
        .retryer(Retryer::never())
        .build()
        .unwrap();
    let error = capped.fetch().await.unwrap_err();
    assert!(error.is_too_large(), "{error:?}");
}

#[tokio::test]
async fn a_streamed_body_is_sent_as_it_is_whatever_its_size_and_type() {
    let (url, _recorder) = recording_server(server_side).await;
    let client = compressing(&url);
    let json = serde_json::to_vec(&doc(10_000)).unwrap();
    let length = json.len();
    let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(json))]);
    let stream = feign_core::BodyStream::new(chunks);
    assert_eq!(
        client.streamed(stream).await.unwrap(),
        format!("identity {length}")
    );
}
