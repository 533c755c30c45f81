//! What a method returns, made from the call's answer: one kind per return type the macro
//! recognises, composed rather than multiplied, as axum composes its responses.
//!
//! | return type | kind |
//! |---|---|
//! | `()` | [`Unit`] |
//! | `String` | [`Text`] |
//! | `Bytes` | [`Raw`] |
//! | `Response` | [`Whole`] |
//! | `StreamingResponse` | [`Stream`] |
//! | `ResponseEntity<T>` | [`Entity`] over `T`'s kind |
//! | `Option<T>` | [`Optional`] over `T`'s kind: a 404 is `None` |
//! | anything else | [`Json`], through the client's Decoder |
//!
//! A kind runs inside the call: its decode error is the call's outcome for the circuit
//! breaker, the bulkhead, the adaptive limit, the span, the metrics and the fallback.

use std::marker::PhantomData;

use bytes::Bytes;
use http::StatusCode;
use serde::de::DeserializeOwned;

use super::receive::Receive;
use crate::codec::Decoder;
use crate::{Error, Response, ResponseEntity, StreamingResponse};

/// What a kind needs to make its value: the client's decoder and the method's key.
pub struct Decoding<'a> {
    /// `None`: the default JSON decoder, called without type erasure.
    pub(crate) decoder: Option<&'a dyn Decoder>,
    pub(crate) key: &'static str,
}

impl Decoding<'_> {
    fn failed(&self, error: impl Into<crate::BoxError>) -> Error {
        Error::decode(error).with_method_key(self.key)
    }
}

/// How a method's return type is made from the call's answer (a 2xx, or a 404 that an
/// [`Optional`] or `decode404` takes as an answer). Implemented by the kinds of this module
/// only; generated code names one per method. A kind is missing only when the decoded value
/// is not `DeserializeOwned + Send + 'static`, so that is what the message says.
#[diagnostic::on_unimplemented(
    message = "the value this client method returns cannot be decoded",
    label = "needs `serde::Deserialize`, `Send` and `'static`",
    note = "the client's Decoder makes the value of `Result<T, E>`: derive `serde::Deserialize` for it, or return `String`, `Bytes`, `Response` or `StreamingResponse`"
)]
pub trait ReturnKind: Send + 'static {
    /// What the method returns in `Ok`.
    type Output: Send;
    /// How the 2xx body is received: read whole, or left streaming.
    type Received: Receive;
    /// Whether a 404 is an answer rather than the error decoder's.
    const NOT_FOUND_IS_ANSWER: bool = false;

    /// The value of `answer`.
    fn make(answer: Self::Received, decoding: &Decoding<'_>) -> Result<Self::Output, Error>;
}

/// A kind that reads a body held in memory: a return type of its own, or the body of a
/// [`ResponseEntity`].
pub trait BodyKind: Send + 'static {
    /// The value read.
    type Output: Send;

    /// The value of `response`'s body.
    fn read(response: &Response, decoding: &Decoding<'_>) -> Result<Self::Output, Error>;

    /// The value of `response`'s body, consuming it (so the body can be taken without a copy).
    fn take(response: Response, decoding: &Decoding<'_>) -> Result<Self::Output, Error> {
        Self::read(&response, decoding)
    }
}

impl<B: BodyKind> ReturnKind for B {
    type Output = B::Output;
    type Received = Response;

    fn make(answer: Response, decoding: &Decoding<'_>) -> Result<B::Output, Error> {
        B::take(answer, decoding)
    }
}

/// `()`: the body is read (so the connection can be reused) and dropped.
pub struct Unit;

impl BodyKind for Unit {
    type Output = ();

    fn read(_: &Response, _: &Decoding<'_>) -> Result<(), Error> {
        Ok(())
    }
}

/// `String`: the body as UTF-8; invalid UTF-8 is a decode error.
pub struct Text;

impl BodyKind for Text {
    type Output = String;

    fn read(response: &Response, decoding: &Decoding<'_>) -> Result<String, Error> {
        Text::take(response.clone(), decoding)
    }

    fn take(response: Response, decoding: &Decoding<'_>) -> Result<String, Error> {
        String::from_utf8(Vec::from(response.into_body())).map_err(|e| decoding.failed(e))
    }
}

/// `Bytes`: the raw body.
pub struct Raw;

impl BodyKind for Raw {
    type Output = Bytes;

    fn read(response: &Response, _: &Decoding<'_>) -> Result<Bytes, Error> {
        Ok(response.body().clone())
    }

    fn take(response: Response, _: &Decoding<'_>) -> Result<Bytes, Error> {
        Ok(response.into_body())
    }
}

/// `Response`: status, headers and body as received.
pub struct Whole;

impl BodyKind for Whole {
    type Output = Response;

    fn read(response: &Response, _: &Decoding<'_>) -> Result<Response, Error> {
        Ok(response.clone())
    }

    fn take(response: Response, _: &Decoding<'_>) -> Result<Response, Error> {
        Ok(response)
    }
}

/// `T` decoded by the client's Decoder (JSON by default).
pub struct Json<T>(PhantomData<fn() -> T>);

impl<T: DeserializeOwned + Send + 'static> BodyKind for Json<T> {
    type Output = T;

    fn read(response: &Response, decoding: &Decoding<'_>) -> Result<T, Error> {
        let decoded = match decoding.decoder {
            // Only a dismissed 404 gets here: the JSON decoder reads its empty body as `null`,
            // OpenFeign's "empty value" of the type (`None`, `Value::Null`, or a decode error).
            None if response.status() == StatusCode::NOT_FOUND && response.body().is_empty() => {
                serde_json::from_slice(b"null").map_err(Error::decode)
            }
            None => crate::codec::decode_json(response),
            Some(decoder) => crate::codec::decode_erased(decoder, response),
        };
        decoded.map_err(|e| e.with_method_key(decoding.key))
    }
}

/// `StreamingResponse`: the 2xx head, its body still streaming. The call ends, for the breaker,
/// the metrics and the balancer, when the head arrives.
pub struct Stream;

impl ReturnKind for Stream {
    type Output = StreamingResponse;
    type Received = StreamingResponse;

    fn make(answer: StreamingResponse, _: &Decoding<'_>) -> Result<StreamingResponse, Error> {
        Ok(answer)
    }
}

/// `ResponseEntity<T>`: `T` read as [`BodyKind`] `B` reads it, with the status and headers.
pub struct Entity<B>(PhantomData<fn() -> B>);

impl<B: BodyKind> ReturnKind for Entity<B> {
    type Output = ResponseEntity<B::Output>;
    type Received = Response;

    fn make(answer: Response, decoding: &Decoding<'_>) -> Result<Self::Output, Error> {
        let body = B::read(&answer, decoding)?;
        let (status, headers, _) = answer.into_parts();
        Ok(ResponseEntity::new(status, headers, body))
    }
}

/// `Option<T>`: a 404 is `None`, any other answer `Some` of `T` as kind `K` makes it.
pub struct Optional<K>(PhantomData<fn() -> K>);

impl<K: ReturnKind> ReturnKind for Optional<K> {
    type Output = Option<K::Output>;
    type Received = K::Received;
    const NOT_FOUND_IS_ANSWER: bool = true;

    fn make(answer: K::Received, decoding: &Decoding<'_>) -> Result<Self::Output, Error> {
        if answer.status() == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        K::make(answer, decoding).map(Some)
    }
}
