//! Runs the `openapi-example` command as CI would: the document written to a file, and checked
//! against a spec that agrees, one that does not (from a file and from a server on loopback).

use std::path::PathBuf;
use std::process::{Command, Output};

use axum::routing::get;
use axum::Router;
use serde_json::Value;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_openapi-example"))
        .args(args)
        .output()
        .expect("the command runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

const DISAGREEMENTS: [&str; 7] = [
    "GET /api/orders, parameter page (query): the server takes no such parameter",
    "GET /api/orders, parameter pageNumber (query): the server requires it and the client never sends it",
    "GET /api/orders, response 200 body[] .item: the client has string, the server integer",
    "POST /api/orders, request body .customer: required by the reader, never written by the writer",
    "POST /api/orders, response 200 body .item: the client has string, the server integer",
    "GET /api/orders/{id}, response 200 body .item: the client has string, the server integer",
    "DELETE /api/orders/{id}: the server has no such operation",
];

#[test]
fn without_arguments_the_document_goes_to_standard_output() {
    let output = run(&[]);
    assert!(output.status.success(), "{output:?}");
    let document: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(document, openapi_example::document());
    assert_eq!(document["openapi"], "3.1.1");
    assert_eq!(
        document["paths"]["/api/orders"]["post"]["responses"]["422"]["description"],
        "the order was refused"
    );
}

#[test]
fn the_document_is_written_to_a_file_and_agrees_with_the_server() {
    let dir = std::env::temp_dir().join(format!("openapi-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("client.json");
    let output = run(&[
        "--out",
        out.to_str().unwrap(),
        "--check",
        &fixture("server-agrees.json"),
    ]);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).starts_with("the client agrees with "),
        "{output:?}"
    );
    assert_eq!(written, openapi_example::document());
}

#[test]
fn a_server_that_disagrees_fails_the_check() {
    let output = run(&["--check", &fixture("server-disagrees.json")]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    let (last, mismatches) = lines.split_last().unwrap();
    let mut expected = DISAGREEMENTS.to_vec();
    expected.sort_unstable();
    let mut found = mismatches.to_vec();
    found.sort_unstable();
    assert_eq!(found, expected);
    assert!(last.starts_with("7 mismatch(es) with "), "{last}");
}

#[tokio::test]
async fn the_spec_is_fetched_from_the_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let spec = std::fs::read_to_string(fixture("server-disagrees.json")).unwrap();
    let app = Router::new().route("/v3/api-docs", get(move || async move { spec }));
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{address}/v3/api-docs");
    let output = tokio::task::spawn_blocking(move || run(&["--check", &url]))
        .await
        .unwrap();
    server.abort();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(stdout(&output).lines().count(), DISAGREEMENTS.len() + 1);
}

#[test]
fn bad_input_is_a_clear_error() {
    let missing = run(&["--check", "no-such-spec.json"]);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("cannot read no-such-spec.json"), "{stderr}");
    let not_openapi = run(&["--check", &fixture("README.md")]);
    assert_eq!(not_openapi.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_openapi.stderr).contains("is not JSON"));
    let usage = run(&["--verbose"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("unknown argument `--verbose`"));
}
