//! The client whose OpenAPI document the `openapi-example` command writes and checks, and the
//! command's steps: read the arguments, write the document, read a server's spec from a file or
//! a URL, list the mismatches.

use std::error::Error as StdError;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use feign_core::codec::DefaultErrorDecoder;
use feign_core::http::StatusCode;
use feign_core::openapi::{compare, DeclaresResponses, ErrorResponse, Mismatch};
use feign_core::{feign_client, Error, ErrorDecoder, Response};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An order, as the client reads it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Order {
    /// Its id.
    pub id: u64,
    /// What was ordered.
    pub item: String,
    /// A note, when there is one.
    pub note: Option<String>,
}

/// An order to place.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NewOrder {
    /// What to order.
    pub item: String,
    /// How many.
    pub quantity: u32,
}

/// The error body the order service answers with.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Problem {
    /// What went wrong.
    pub title: String,
    /// The status again.
    pub status: u16,
}

/// Orders of the order service.
#[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
pub trait OrderService {
    /// One order; `None` when there is no such order.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Option<Order>, Error>;

    /// Orders of a status, a page at a time.
    #[get("/orders")]
    async fn list(
        &self,
        #[query] status: Option<String>,
        #[query] page: u32,
    ) -> Result<Vec<Order>, Error>;

    /// Places an order.
    #[post("/orders")]
    async fn create(
        &self,
        #[body] order: &NewOrder,
        #[header("X-Request-Id")] request_id: &str,
    ) -> Result<Order, Error>;

    /// Cancels an order.
    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64) -> Result<(), Error>;
}

/// The client's error decoder: the default one, declaring what the service answers on failure.
pub struct OrderErrors;

impl ErrorDecoder for OrderErrors {
    fn decode(&self, method_key: &str, response: Response) -> Error {
        DefaultErrorDecoder::default().decode(method_key, response)
    }
}

impl DeclaresResponses for OrderErrors {
    fn declared_responses(&self, method_key: &str) -> Vec<ErrorResponse> {
        let mut declared = vec![ErrorResponse::server_errors("the service failed; retried")];
        if method_key == "OrderService#create" {
            declared.push(
                ErrorResponse::new(StatusCode::UNPROCESSABLE_ENTITY, "the order was refused")
                    .json::<Problem>(),
            );
        }
        declared
    }
}

/// The client's document, with the responses its error decoder declares.
pub fn document() -> Value {
    OrderServiceClient::openapi()
        .error_decoder(&OrderErrors)
        .to_json()
}

/// What the command was asked to do.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// `--out FILE`: where the document goes (standard output when absent).
    pub out: Option<PathBuf>,
    /// `--check SPEC`: a server's spec, a JSON file or an `http://` URL.
    pub check: Option<String>,
}

/// How to call the command.
pub const USAGE: &str =
    "usage: openapi-example [--out FILE] [--check SPEC.json | --check http://host/v3/api-docs]";

/// Arguments the command does not understand.
#[derive(Debug)]
pub struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{USAGE}", self.0)
    }
}

impl StdError for UsageError {}

/// Reads the arguments after the program's name.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Args, UsageError> {
    let mut parsed = Args::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| UsageError(format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--out" => parsed.out = Some(PathBuf::from(value("--out")?)),
            "--check" => parsed.check = Some(value("--check")?),
            other => return Err(UsageError(format!("unknown argument `{other}`"))),
        }
    }
    Ok(parsed)
}

/// Any failure of the command but mismatches.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// The server's spec: fetched when `source` is an `http://` or `https://` URL, read from the
/// file it names otherwise.
pub async fn read_spec(source: &str) -> Result<Value, BoxError> {
    let text = if source.starts_with("http://") || source.starts_with("https://") {
        let (connect, total) = (Duration::from_secs(5), Duration::from_secs(30));
        let response = feign_core::client::reqwest_builder(connect, None, Some(total))
            .build()?
            .get(source)
            .send()
            .await?
            .error_for_status()?;
        response.text().await?
    } else {
        tokio::fs::read_to_string(source)
            .await
            .map_err(|err| format!("cannot read {source}: {err}"))?
    };
    serde_json::from_str(&text).map_err(|err| format!("{source} is not JSON: {err}").into())
}

/// The mismatches between the client and the spec at `source`.
pub async fn check(source: &str) -> Result<Vec<Mismatch>, BoxError> {
    let server = read_spec(source).await?;
    Ok(compare(&document(), &server)?)
}
