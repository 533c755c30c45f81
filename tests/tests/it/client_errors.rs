//! Errors through `#[feign_client]` methods: the default error, a user's `ErrorDecoder` turning a
//! 409 body into a typed error, and a method error type that is the user's own.

use std::fmt;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use feign_core::codec::{error_decoder_fn, DefaultErrorDecoder};
use feign_core::{feign_client, Error, ErrorDecoder, Response, Retryer};
use feign_test_support::{recording_server, Recorded};
use serde::Deserialize;

/// The body the service sends with a 409.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Conflict {
    code: String,
    current_version: u32,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "conflict {} at version {}",
            self.code, self.current_version
        )
    }
}

impl std::error::Error for Conflict {}

/// The application's own error type for the orders API.
#[derive(Debug)]
enum OrderError {
    Conflict(Conflict),
    Other(Error),
}

impl From<Error> for OrderError {
    fn from(error: Error) -> Self {
        match error.downcast_ref::<Conflict>() {
            Some(conflict) => OrderError::Conflict(conflict.clone()),
            None => OrderError::Other(error),
        }
    }
}

#[feign_client("orders")]
trait Orders {
    #[put("/orders/{id}")]
    async fn update(&self, #[path] id: u64, #[body] body: &str) -> Result<(), OrderError>;

    #[get("/orders/{id}")]
    async fn get(&self, #[path] id: u64) -> Result<u32, Error>;
}

/// 409 with a JSON body for id 1, 500 for id 2, a 200 with a body that is not a number otherwise.
fn respond(request: &Recorded) -> axum::response::Response {
    match request.path.as_str() {
        "/orders/1" => (
            StatusCode::CONFLICT,
            r#"{"code":"stale","current_version":7}"#,
        )
            .into_response(),
        "/orders/2" => (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        _ => (StatusCode::OK, "not a number").into_response(),
    }
}

/// Reads 409 bodies as [`Conflict`], leaves everything else to the default decoder.
struct ConflictDecoder;

impl ErrorDecoder for ConflictDecoder {
    fn decode(&self, method_key: &str, response: Response) -> Error {
        if response.status() == StatusCode::CONFLICT {
            if let Ok(conflict) = response.json::<Conflict>() {
                return Error::custom(conflict);
            }
        }
        DefaultErrorDecoder::default().decode(method_key, response)
    }
}

async fn orders(decoder: impl ErrorDecoder) -> OrdersClient {
    let (base, _) = recording_server(respond).await;
    OrdersClient::builder()
        .url(base)
        .error_decoder(decoder)
        .retryer(Retryer::never())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_user_error_decoder_hands_the_caller_a_typed_error() {
    let client = orders(ConflictDecoder).await;
    match client.update(1, "v2").await {
        Err(OrderError::Conflict(conflict)) => {
            assert_eq!(
                conflict,
                Conflict {
                    code: "stale".to_owned(),
                    current_version: 7
                }
            );
        }
        other => panic!("expected the typed conflict, got {other:?}"),
    }
    match client.update(2, "v2").await {
        Err(OrderError::Other(error)) => {
            assert!(error.is_status());
            assert_eq!(error.status(), Some(StatusCode::INTERNAL_SERVER_ERROR));
            assert_eq!(error.body().map(|body| &body[..]), Some(&b"boom"[..]));
            assert_eq!(error.method_key(), Some("Orders#update"));
        }
        other => panic!("expected the default status error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_closure_error_decoder_sees_the_method_key() {
    let client = orders(error_decoder_fn(|method_key, response| {
        Error::custom(Conflict {
            code: method_key.to_owned(),
            current_version: u32::from(response.status().as_u16()),
        })
    }))
    .await;
    match client.update(2, "v2").await {
        Err(OrderError::Conflict(conflict)) => {
            assert_eq!(
                conflict,
                Conflict {
                    code: "Orders#update".to_owned(),
                    current_version: 500
                }
            );
        }
        other => panic!("expected the closure's error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_body_that_does_not_decode_is_a_decode_error() {
    let client = orders(DefaultErrorDecoder::default()).await;
    let error = client.get(3).await.unwrap_err();
    assert!(error.is_decode(), "{error:?}");
    assert_eq!(error.method_key(), Some("Orders#get"));
}
