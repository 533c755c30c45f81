//! `#[multipart]` methods against a real multipart parser (axum's `Multipart`, which is
//! multer) on loopback: every kind of part, names and file names encoded as browsers send them,
//! a 50 MiB file part streamed from disk, and a file part that cannot be read.

use std::hash::Hasher as _;
use std::io::Write as _;

use axum::extract::{DefaultBodyLimit, Multipart};
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use feign_core::multipart::{FilePart, Part};
use feign_core::{feign_client, Error};
use feign_test_support::{serve, TempDir};
use serde::{Deserialize, Serialize};

#[derive(Serialize)]
struct Metadata {
    title: String,
    pages: u32,
}

/// One part as the server parsed it.
#[derive(Debug, Deserialize, Serialize, PartialEq)]
struct Seen {
    name: String,
    file_name: Option<String>,
    content_type: Option<String>,
    size: u64,
    hash: u64,
    /// The content, when it is short text.
    text: Option<String>,
}

#[derive(Debug, Deserialize, Serialize)]
struct Echo {
    content_type: String,
    content_length: Option<u64>,
    parts: Vec<Seen>,
}

#[feign_client("files", url = "http://127.0.0.1:1")]
#[allow(clippy::too_many_arguments)]
trait Files {
    #[post("/upload")]
    #[multipart]
    async fn upload(
        &self,
        #[part] title: &str,
        #[part("count")] pages: u32,
        #[part] raw: Vec<u8>,
        #[part] meta: &Metadata,
        #[part("file")] file: FilePart,
        #[part] note: Option<&str>,
        #[part] extra: Option<Part>,
    ) -> Result<Echo, Error>;

    #[put("/upload")]
    #[multipart]
    async fn one_file(&self, #[part("file")] file: FilePart) -> Result<Echo, Error>;

    #[post("/upload")]
    #[multipart]
    async fn many(&self, #[part("files")] files: Vec<FilePart>) -> Result<Echo, Error>;

    #[post("/upload")]
    #[multipart]
    async fn text_only(&self, #[part] a: String, #[part] b: &[u8]) -> Result<Echo, Error>;
}

fn hash(hasher: &mut std::collections::hash_map::DefaultHasher, bytes: &[u8]) {
    hasher.write(bytes);
}

async fn parse(headers: HeaderMap, mut multipart: Multipart) -> Json<Echo> {
    let mut parts = Vec::new();
    while let Some(mut field) = multipart.next_field().await.expect("a well-formed body") {
        let name = field.name().unwrap_or_default().to_owned();
        let file_name = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(str::to_owned);
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        let mut size = 0u64;
        let mut start = Vec::new();
        while let Some(chunk) = field.chunk().await.expect("a readable part") {
            size += chunk.len() as u64;
            hash(&mut hasher, &chunk);
            if start.len() < 256 {
                start.extend_from_slice(&chunk[..chunk.len().min(256)]);
            }
        }
        let text = (size <= 256)
            .then(|| String::from_utf8(start).ok())
            .flatten();
        parts.push(Seen {
            name,
            file_name,
            content_type,
            size,
            hash: hasher.finish(),
            text,
        });
    }
    let header = |name: &str| headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    Json(Echo {
        content_type: header("content-type").unwrap_or_default(),
        content_length: header("content-length").map(|v| v.parse().unwrap()),
        parts,
    })
}

async fn client() -> FilesClient {
    let router = Router::new()
        .route("/upload", post(parse).put(parse))
        .layer(DefaultBodyLimit::disable());
    FilesClient::builder()
        .url(serve(router).await)
        .build()
        .unwrap()
}

fn digest(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    hash(&mut hasher, bytes);
    hasher.finish()
}

fn seen(name: &str, file_name: Option<&str>, content_type: Option<&str>, content: &[u8]) -> Seen {
    Seen {
        name: name.to_owned(),
        file_name: file_name.map(str::to_owned),
        content_type: content_type.map(str::to_owned),
        size: content.len() as u64,
        hash: digest(content),
        text: (content.len() <= 256)
            .then(|| String::from_utf8(content.to_vec()).ok())
            .flatten(),
    }
}

#[tokio::test]
async fn every_kind_of_part_reaches_a_real_parser_as_a_browser_would_send_it() {
    let client = client().await;
    let dir = TempDir::new("multipart-parts");
    let path = dir.write("report.csv", "a,b\n1,2\n");
    let file = FilePart::open(&path)
        .await
        .unwrap()
        .file_name("q\"uo\"te – été.csv")
        .content_type("text/csv");
    let extra = Part::bytes(&b"\x00\x01binary"[..]).file_name("blob.bin");
    let meta = Metadata {
        title: "Q3".to_owned(),
        pages: 12,
    };
    let echo = client
        .upload(
            "Quarterly",
            12,
            vec![1, 2, 3],
            &meta,
            file,
            None,
            Some(extra),
        )
        .await
        .unwrap();
    assert!(
        echo.content_type
            .starts_with("multipart/form-data; boundary="),
        "{}",
        echo.content_type
    );
    assert_eq!(
        echo.parts,
        vec![
            seen("title", None, None, b"Quarterly"),
            seen("count", None, None, b"12"),
            seen("raw", None, Some("application/octet-stream"), &[1, 2, 3]),
            seen(
                "meta",
                None,
                Some("application/json"),
                br#"{"title":"Q3","pages":12}"#
            ),
            // Quotes escaped as %22 (as browsers do; parsers leave the escape as it is), the
            // rest sent as UTF-8.
            seen(
                "file",
                Some("q%22uo%22te – été.csv"),
                Some("text/csv"),
                b"a,b\n1,2\n"
            ),
            seen(
                "extra",
                Some("blob.bin"),
                Some("application/octet-stream"),
                b"\x00\x01binary"
            ),
        ]
    );
    // Every part knew its length, the file's included: the body went with Content-Length.
    assert!(echo.content_length.is_some());
}

#[tokio::test]
async fn a_body_of_parts_in_memory_is_sent_whole_with_a_fresh_boundary_each_time() {
    let client = client().await;
    let first = client.text_only("x".to_owned(), b"y").await.unwrap();
    let second = client.text_only("x".to_owned(), b"y").await.unwrap();
    assert_ne!(first.content_type, second.content_type);
    let boundary = first.content_type.split("boundary=").nth(1).unwrap();
    assert!(boundary.len() >= 30, "{boundary}");
    assert_eq!(first.parts[0], seen("a", None, None, b"x"));
    assert_eq!(
        first.parts[1],
        seen("b", None, Some("application/octet-stream"), b"y")
    );
}

#[tokio::test]
async fn a_50_mib_file_part_streams_from_disk() {
    let client = client().await;
    let dir = TempDir::new("multipart-large");
    let path = dir.0.join("large.bin");
    let mut expected = std::collections::hash_map::DefaultHasher::new();
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let block: Vec<u8> = (0..1024 * 1024u32).map(|i| (i % 251) as u8).collect();
        for n in 0..50u8 {
            let mut block = block.clone();
            block[0] = n;
            hash(&mut expected, &block);
            file.write_all(&block).unwrap();
        }
    }
    let file = FilePart::open(&path).await.unwrap();
    assert_eq!(file.length(), 50 * 1024 * 1024);
    let echo = client.one_file(file).await.unwrap();
    let part = &echo.parts[0];
    assert_eq!(part.file_name.as_deref(), Some("large.bin"));
    assert_eq!(part.size, 50 * 1024 * 1024);
    assert_eq!(part.hash, expected.finish());
    assert!(echo.content_length.unwrap() > 50 * 1024 * 1024);
}

#[tokio::test]
async fn an_unreadable_file_part_is_an_error_before_anything_is_sent() {
    let dir = TempDir::new("multipart-missing");
    let error = FilePart::open(dir.0.join("gone.pdf")).await.unwrap_err();
    assert!(error.is_request(), "{error}");
    assert!(error.to_string().contains("gone.pdf"), "{error}");
    let error = FilePart::open(&dir.0).await.unwrap_err();
    assert!(error.to_string().contains("not a regular file"), "{error}");
}

#[tokio::test]
async fn a_file_part_that_changes_while_sent_fails_the_call() {
    let client = client().await;
    let dir = TempDir::new("multipart-shrinks");
    let path = dir.write("data.bin", &"z".repeat(200_000));
    let file = FilePart::open(&path).await.unwrap();
    std::fs::write(&path, b"short").unwrap();
    let error = client.one_file(file).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("ended after 5 of its declared 200000 bytes"),
        "{error}"
    );
}

#[tokio::test]
async fn a_content_type_that_is_not_a_header_value_fails_before_sending() {
    let client = client().await;
    let dir = TempDir::new("multipart-content-type");
    let path = dir.write("a.txt", "a");
    let file = FilePart::open(&path)
        .await
        .unwrap()
        .content_type("text/plain\r\nX-Injected: yes");
    let error = client.one_file(file).await.unwrap_err();
    assert!(error.is_request(), "{error}");
    assert!(error.to_string().contains("part `file`"), "{error}");
}

#[tokio::test]
async fn a_vec_of_file_parts_sends_one_part_each_under_one_name() {
    let client = client().await;
    let dir = TempDir::new("multipart-many");
    let mut files = Vec::new();
    for name in ["a.txt", "b.txt"] {
        files.push(FilePart::open(dir.write(name, name)).await.unwrap());
    }
    let echo = client.many(files).await.unwrap();
    assert_eq!(
        echo.parts,
        vec![
            seen(
                "files",
                Some("a.txt"),
                Some("application/octet-stream"),
                b"a.txt"
            ),
            seen(
                "files",
                Some("b.txt"),
                Some("application/octet-stream"),
                b"b.txt"
            ),
        ]
    );
}
