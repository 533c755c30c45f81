//! The generated `{Trait}Double` (feign-core feature `test-double`): code that takes
//! `Arc<dyn Trait>` runs against it unchanged, as against the real client and a server; rules
//! answer by arguments, in order and within their uses; unanswered calls are errors naming the
//! call (or panics when strict); calls and arguments are recorded, secrets masked.

use std::fmt;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use bytes::Bytes;
use feign_core::double::UnansweredCall;
use feign_core::http::HeaderMap;
use feign_core::{feign_client, Error, Response, ResponseEntity, StreamingResponse};
use feign_test_support::{recording_server, Recorded};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Item {
    sku: String,
    stock: u32,
}

#[feign_client("catalog", url = "http://127.0.0.1:1")]
trait Catalog {
    #[get("/shelves/{shelf}/items/{sku}")]
    async fn item(&self, #[path] shelf: &str, #[path] sku: &str) -> Result<Option<Item>, Error>;

    #[get("/items/{id}")]
    async fn by_id(&self, #[path] id: u64) -> Result<Item, Error>;

    #[put("/items/{id}/stock")]
    async fn restock(&self, #[path] id: u64, #[body] count: u32) -> Result<(), Error>;

    #[get("/search")]
    async fn search(
        &self,
        #[header("Authorization")] token: &str,
        #[header("X-Tenant")] tenant: &str,
        #[query("api_key")] key: &str,
        #[query("q")] text: &str,
    ) -> Result<Vec<Item>, Error>;

    #[get("/export")]
    async fn export(&self) -> Result<StreamingResponse, Error>;

    #[get("/raw")]
    async fn raw(&self) -> Result<Response, Error>;

    #[get("/entity/{id}")]
    async fn entity(&self, #[path] id: u64) -> Result<ResponseEntity<Item>, Error>;

    /// Not an HTTP method: the double keeps the default body, as the client does.
    async fn in_stock(&self, id: u64) -> Result<bool, Error> {
        Ok(self.by_id(id).await?.stock > 0)
    }
}

/// The code under test: it only knows `dyn Catalog`.
async fn shelf_report(catalog: Arc<dyn Catalog>, shelf: &str, skus: &[&str]) -> String {
    let mut lines = Vec::new();
    for sku in skus {
        lines.push(match catalog.item(shelf, sku).await {
            Ok(Some(item)) => format!("{}: {}", item.sku, item.stock),
            Ok(None) => format!("{sku}: unknown"),
            Err(error) => format!("{sku}: {}", error.status().map_or(0, |s| s.as_u16())),
        });
    }
    lines.join("; ")
}

fn item(sku: &str, stock: u32) -> Item {
    Item {
        sku: sku.to_owned(),
        stock,
    }
}

fn shelf_server(request: &Recorded) -> axum::response::Response {
    match request.path.as_str() {
        "/shelves/a/items/pen" => axum::Json(item("pen", 3)).into_response(),
        "/shelves/a/items/ink" => StatusCode::SERVICE_UNAVAILABLE.into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

#[tokio::test]
async fn the_code_under_test_runs_the_same_on_the_double_as_on_the_client() {
    let (base, recorder) = recording_server(shelf_server).await;
    let client = CatalogClient::builder()
        .url(base)
        .retryer(feign_core::Retryer::never())
        .build()
        .unwrap();
    let from_server = shelf_report(Arc::new(client), "a", &["pen", "cap", "ink"]).await;
    assert_eq!(recorder.len(), 3);

    let double = CatalogDouble::new();
    double
        .on_item()
        .when(|(shelf, sku)| *shelf == "a" && *sku == "pen")
        .returns(Some(item("pen", 3)));
    double
        .on_item()
        .when(|(_, sku)| *sku == "ink")
        .fails_with_status(StatusCode::SERVICE_UNAVAILABLE);
    double.on_item().returns(None);
    let from_double = shelf_report(Arc::new(double.clone()), "a", &["pen", "cap", "ink"]).await;

    assert_eq!(from_double, "pen: 3; cap: unknown; ink: 503");
    assert_eq!(from_double, from_server);
    assert_eq!(double.on_item().calls(), 3);
    assert_eq!(
        double.on_item().argument_texts(),
        [r#""a", "pen""#, r#""a", "cap""#, r#""a", "ink""#]
    );
}

#[tokio::test]
async fn the_first_matching_rule_with_uses_left_answers() {
    let double = CatalogDouble::new();
    double.on_by_id().times(2).returns(item("first", 1));
    double
        .on_by_id()
        .when(|id| *id == 7)
        .returns(item("seven", 7));
    double
        .on_by_id()
        .answers(|id| Ok(item(&format!("any-{id}"), 0)));
    let catalog: Arc<dyn Catalog> = Arc::new(double.clone());

    let mut skus = Vec::new();
    for id in [7, 7, 7, 8] {
        skus.push(catalog.by_id(id).await.unwrap().sku);
    }
    assert_eq!(skus, ["first", "first", "seven", "any-8"]);
    assert_eq!(double.on_by_id().arguments(), [7, 7, 7, 8]);
}

#[tokio::test]
async fn two_conditions_on_one_rule_must_both_hold() {
    let double = CatalogDouble::new();
    double
        .on_restock()
        .when(|(id, _)| *id == 1)
        .when(|(_, count)| *count > 10)
        .returns(());
    let catalog: Arc<dyn Catalog> = Arc::new(double.clone());
    assert!(catalog.restock(1, 20).await.is_ok());
    assert!(catalog.restock(1, 5).await.is_err());
    assert!(catalog.restock(2, 20).await.is_err());
    assert_eq!(double.on_restock().arguments(), [(1, 20), (1, 5), (2, 20)]);
}

#[tokio::test]
async fn a_call_no_rule_answers_is_an_error_naming_the_call() {
    let double = CatalogDouble::new();
    let catalog: Arc<dyn Catalog> = Arc::new(double.clone());
    let error = catalog.item("a", "pen").await.unwrap_err();
    assert!(error.is_custom());
    assert_eq!(error.method_key(), Some("Catalog#item"));
    let unanswered = error.downcast_ref::<UnansweredCall>().unwrap();
    assert_eq!(
        (unanswered.trait_name(), unanswered.method()),
        ("Catalog", "item")
    );
    assert_eq!(unanswered.arguments(), r#""a", "pen""#);
    assert_eq!(
        error.to_string(),
        r#"no rule of the test double answers Catalog::item("a", "pen"): the method has no rule; add one with `on_item()` in Catalog#item"#
    );

    double
        .on_by_id()
        .when(|id| *id == 1)
        .returns(item("one", 1));
    let error = catalog.by_id(2).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("by_id(2): its one rule does not match these arguments or is used up"),
        "{error}"
    );
}

#[tokio::test]
#[should_panic(expected = "no rule of the test double answers Catalog::by_id(3)")]
async fn a_strict_double_panics_on_a_call_no_rule_answers() {
    let double = CatalogDouble::strict();
    let catalog: Arc<dyn Catalog> = Arc::new(double);
    let _ = catalog.by_id(3).await;
}

#[tokio::test]
async fn secrets_in_arguments_are_masked_as_in_the_client_logs() {
    let double = CatalogDouble::new();
    let catalog: Arc<dyn Catalog> = Arc::new(double.clone());
    let error = catalog
        .search("Bearer s3cr3t", "acme", "k3y", "pens")
        .await
        .unwrap_err();
    let texts = double.on_search().argument_texts();
    assert_eq!(texts, [r#"***, "acme", ***, "pens""#]);
    assert!(!error.to_string().contains("s3cr3t"), "{error}");
    assert!(!error.to_string().contains("k3y"), "{error}");
    // Borrowed arguments cannot be kept, only shown.
    assert!(double.on_search().arguments().is_empty());
}

#[tokio::test]
async fn failures_look_like_the_client_s() {
    let double = CatalogDouble::new();
    double
        .on_by_id()
        .times(1)
        .fails(|| Error::timeout("read timed out"));
    double.on_by_id().fails_with_status(StatusCode::NOT_FOUND);
    let catalog: Arc<dyn Catalog> = Arc::new(double);

    let timeout = catalog.by_id(1).await.unwrap_err();
    assert!(timeout.is_timeout());
    assert_eq!(timeout.method_key(), Some("Catalog#by_id"));
    let missing = catalog.by_id(1).await.unwrap_err();
    assert!(missing.is_status());
    assert_eq!(missing.status(), Some(StatusCode::NOT_FOUND));
    assert_eq!(missing.method_key(), Some("Catalog#by_id"));
}

#[tokio::test]
async fn every_return_shape_can_be_answered() {
    let double = CatalogDouble::new();
    double.on_export().answers(|()| {
        Ok(StreamingResponse::from_bytes(
            StatusCode::OK,
            HeaderMap::new(),
            Bytes::from_static(b"a,b\n"),
        ))
    });
    double.on_raw().returns(Response::new(
        StatusCode::ACCEPTED,
        HeaderMap::new(),
        Bytes::from_static(b"raw"),
    ));
    double.on_entity().answers(|id| {
        Ok(ResponseEntity::new(
            StatusCode::CREATED,
            HeaderMap::new(),
            item("e", u32::try_from(id).unwrap_or_default()),
        ))
    });
    double.on_by_id().returns(item("x", 0));
    let catalog: Arc<dyn Catalog> = Arc::new(double.clone());

    let export = catalog.export().await.unwrap();
    assert_eq!(export.bytes().await.unwrap(), Bytes::from_static(b"a,b\n"));
    let raw = catalog.raw().await.unwrap();
    assert_eq!(
        (raw.status(), raw.body().as_ref()),
        (StatusCode::ACCEPTED, &b"raw"[..])
    );
    let entity = catalog.entity(4).await.unwrap();
    assert_eq!(
        (entity.status(), entity.body()),
        (StatusCode::CREATED, &item("e", 4))
    );
    // A default method runs its own body, over the double's answers.
    assert!(!catalog.in_stock(9).await.unwrap());
    assert_eq!(double.on_by_id().arguments(), [9]);
    assert_eq!(double.on_export().argument_texts(), [""]);
}

/// An application's own error type for a client's methods.
#[derive(Debug)]
enum ShopError {
    Closed,
    Client(Error),
}

impl From<Error> for ShopError {
    fn from(error: Error) -> Self {
        ShopError::Client(error)
    }
}

impl fmt::Display for ShopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShopError::Closed => f.write_str("closed"),
            ShopError::Client(error) => write!(f, "{error}"),
        }
    }
}

#[feign_client("shop", url = "http://127.0.0.1:1")]
trait Shop {
    #[get("/open")]
    async fn open(&self) -> Result<bool, ShopError>;
}

#[tokio::test]
async fn a_method_s_own_error_type_is_answered_whole_or_through_from() {
    let double = ShopDouble::new();
    double
        .on_open()
        .times(1)
        .answers(|()| Err(ShopError::Closed));
    let shop: Arc<dyn Shop> = Arc::new(double.clone());
    assert!(matches!(shop.open().await, Err(ShopError::Closed)));
    match shop.open().await {
        Err(ShopError::Client(error)) => assert!(error.is_custom()),
        other => panic!("expected the unanswered call's error, got {other:?}"),
    }
}

#[tokio::test]
async fn verify_names_the_rules_that_answered_fewer_calls_than_set() {
    let double = CatalogDouble::new();
    double.on_by_id().times(2).returns(item("a", 1));
    double.on_restock().times(1).returns(());
    let catalog: Arc<dyn Catalog> = Arc::new(double.clone());
    catalog.by_id(1).await.unwrap();
    catalog.restock(1, 1).await.unwrap();

    let unmet = double.verify().unwrap_err();
    assert_eq!(unmet.len(), 1);
    assert_eq!(
        unmet[0].to_string(),
        "rule 0 of Catalog#by_id was set for 2 calls and answered 1"
    );
    catalog.by_id(1).await.unwrap();
    assert!(double.verify().is_ok());
}

#[tokio::test]
async fn reset_forgets_rules_and_calls() {
    let double = CatalogDouble::new();
    double.on_by_id().returns(item("a", 1));
    let catalog: Arc<dyn Catalog> = Arc::new(double.clone());
    catalog.by_id(1).await.unwrap();
    double.on_by_id().reset();
    assert_eq!(double.on_by_id().calls(), 0);
    assert!(catalog.by_id(1).await.is_err());
}

fn assert_shareable<T: Send + Sync + Clone + 'static>(_: &T) {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limited_rule_answers_exactly_its_calls_under_concurrent_callers() {
    let double = CatalogDouble::default();
    assert_shareable(&double);
    double.on_by_id().times(25).returns(item("limited", 1));
    double.on_by_id().returns(item("rest", 0));
    let catalog: Arc<dyn Catalog> = Arc::new(double.clone());

    let tasks: Vec<_> = (0..100)
        .map(|id| {
            let catalog = Arc::clone(&catalog);
            tokio::spawn(async move { catalog.by_id(id).await.unwrap().sku })
        })
        .collect();
    let mut limited = 0;
    for task in tasks {
        if task.await.unwrap() == "limited" {
            limited += 1;
        }
    }
    assert_eq!(limited, 25);
    assert_eq!(double.on_by_id().calls(), 100);
    assert!(double.verify().is_ok());
    assert!(format!("{double:?}").contains("calls: 100"), "{double:?}");
}
