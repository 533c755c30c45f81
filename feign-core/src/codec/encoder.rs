//! Request body encoders.

use bytes::Bytes;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::HeaderMap;

use crate::Error;

/// Turns a `#[body]` argument into bytes, setting `Content-Type` unless the method already
/// declared one.
///
/// Synchronous, so no future is boxed; the value arrives type-erased (`erased_serde`) so the
/// trait stays object-safe and clients hold an `Arc<dyn Encoder>`. The default is
/// [`JsonEncoder`], called without type erasure.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a body encoder",
    note = "implement `feign_core::Encoder`, or wrap a closure with `feign_core::codec::encoder_fn`"
)]
pub trait Encoder: Send + Sync + 'static {
    /// Encodes `value`; may set headers such as `Content-Type`.
    fn encode(
        &self,
        value: &dyn erased_serde::Serialize,
        headers: &mut HeaderMap,
    ) -> Result<Bytes, Error>;
}

/// JSON through `serde_json`, `Content-Type: application/json` (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonEncoder;

impl Encoder for JsonEncoder {
    fn encode(
        &self,
        value: &dyn erased_serde::Serialize,
        headers: &mut HeaderMap,
    ) -> Result<Bytes, Error> {
        let bytes = serde_json::to_vec(value)
            .map_err(|e| Error::request("body could not be encoded as json").with_source(e))?;
        set_content_type(headers, "application/json");
        Ok(Bytes::from(bytes))
    }
}

/// `application/x-www-form-urlencoded` through `serde_urlencoded` (flat structs and maps).
#[derive(Debug, Clone, Copy, Default)]
pub struct FormEncoder;

impl Encoder for FormEncoder {
    fn encode(
        &self,
        value: &dyn erased_serde::Serialize,
        headers: &mut HeaderMap,
    ) -> Result<Bytes, Error> {
        let text = serde_urlencoded::to_string(value)
            .map_err(|e| Error::request("body could not be form-encoded").with_source(e))?;
        set_content_type(headers, "application/x-www-form-urlencoded");
        Ok(Bytes::from(text))
    }
}

/// Sets `Content-Type` unless present.
pub(crate) fn set_content_type(headers: &mut HeaderMap, value: &'static str) {
    if !headers.contains_key(CONTENT_TYPE) {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
    }
}

/// Makes an [`Encoder`] of a closure.
pub fn encoder_fn<F>(f: F) -> FnEncoder<F>
where
    F: Fn(&dyn erased_serde::Serialize, &mut HeaderMap) -> Result<Bytes, Error>
        + Send
        + Sync
        + 'static,
{
    FnEncoder(f)
}

/// An [`Encoder`] made by [`encoder_fn`].
#[derive(Clone)]
pub struct FnEncoder<F>(F);

impl<F> Encoder for FnEncoder<F>
where
    F: Fn(&dyn erased_serde::Serialize, &mut HeaderMap) -> Result<Bytes, Error>
        + Send
        + Sync
        + 'static,
{
    fn encode(
        &self,
        value: &dyn erased_serde::Serialize,
        headers: &mut HeaderMap,
    ) -> Result<Bytes, Error> {
        (self.0)(value, headers)
    }
}

impl<F> std::fmt::Debug for FnEncoder<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnEncoder")
    }
}
