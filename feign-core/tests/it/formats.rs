//! Query collection formats and `#[headers]` templates, against a real server on 127.0.0.1
//! that records what it receives.

use feign_core::{feign_client, Error, Retryer};
use feign_test_support::recording_server;

#[feign_client("search")]
trait Search {
    #[get("/exploded")]
    async fn exploded(&self, #[query] ids: &[u32]) -> Result<(), Error>;

    #[get("/csv")]
    async fn csv(&self, #[query(format = "csv")] tags: Vec<String>) -> Result<(), Error>;

    #[get("/ssv")]
    async fn ssv(&self, #[query("t", format = "ssv")] tags: &[&str]) -> Result<(), Error>;

    #[get("/tsv")]
    async fn tsv(&self, #[query(format = "tsv")] tags: Option<Vec<String>>) -> Result<(), Error>;

    #[get("/pipes")]
    async fn pipes(
        &self,
        #[query(format = "pipes")] tags: &[&str],
        #[query(format = "pipes")] one: u32,
    ) -> Result<(), Error>;

    #[get("/items/{id}")]
    #[headers(
        "X-Api-Version: v{version}",
        "X-Item: {id}",
        "Accept: application/json"
    )]
    async fn item(&self, #[path] id: u32, #[param] version: &str) -> Result<(), Error>;

    #[get("/tenant")]
    #[headers("X-Tenant: {tenant}-{region}")]
    async fn tenant(
        &self,
        #[param] tenant: Option<String>,
        #[param("region")] zone: &str,
    ) -> Result<(), Error>;
}

fn client(url: &str) -> SearchClient {
    SearchClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .build()
        .unwrap()
}

#[tokio::test]
async fn collections_are_sent_in_their_format_values_encoded_separators_not() {
    let (url, recorder) = recording_server(|_| "").await;
    let client = client(&url);
    client.exploded(&[1, 2]).await.unwrap();
    client
        .csv(vec!["a".into(), "b,c".into(), "d e".into()])
        .await
        .unwrap();
    client.ssv(&["a", "b c"]).await.unwrap();
    client
        .tsv(Some(vec!["a".into(), "b".into()]))
        .await
        .unwrap();
    client.tsv(None).await.unwrap();
    client.tsv(Some(Vec::new())).await.unwrap();
    client.pipes(&["a", "b|c"], 7).await.unwrap();
    let targets: Vec<String> = recorder.all().into_iter().map(|r| r.target).collect();
    assert_eq!(
        targets,
        [
            "/exploded?ids=1&ids=2",
            "/csv?tags=a,b%2Cc,d%20e",
            "/ssv?t=a%20b%20c",
            "/tsv?tags=a%09b",
            "/tsv",
            "/tsv",
            "/pipes?tags=a|b%7Cc&one=7",
        ]
    );
    // What a server reads back: one value holding the separators, which split the list.
    let csv = &recorder.all()[1];
    assert_eq!(csv.query_value("tags").as_deref(), Some("a,b,c,d e"));
}

#[tokio::test]
async fn header_templates_are_filled_from_parameters_and_checked() {
    let (url, recorder) = recording_server(|_| "").await;
    let client = client(&url);
    client.item(42, "2").await.unwrap();
    let sent = recorder.only();
    assert_eq!(sent.header("x-api-version"), Some("v2"));
    assert_eq!(sent.header("x-item"), Some("42"));
    assert_eq!(sent.header("accept"), Some("application/json"));

    client.tenant(Some("acme".into()), "eu").await.unwrap();
    client.tenant(None, "eu").await.unwrap();
    let all = recorder.all();
    assert_eq!(all[1].header("x-tenant"), Some("acme-eu"));
    assert_eq!(
        all[2].header("x-tenant"),
        None,
        "a None leaves the header out"
    );

    // CR/LF and non-ASCII in a filled value are refused, not stripped, before sending.
    for bad in ["2\r\nX-Injected: 1", "2\n", "caf\u{e9}"] {
        let error = client.item(1, bad).await.unwrap_err();
        assert!(error.is_request(), "{error:?}");
        assert!(error.to_string().contains("x-api-version"), "{error}");
        assert!(!error.to_string().contains("Injected"), "{error}");
    }
    assert_eq!(recorder.len(), 3, "nothing more was sent");
}
