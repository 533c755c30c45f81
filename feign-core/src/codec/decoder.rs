//! Response body decoders.

use http::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;

use crate::error::Kind;
use crate::{Error, Response};

/// Reads a 2xx response into the method's return type.
///
/// Synchronous (the body is already read, within the size limit), so no future is boxed. The
/// target type is erased behind [`DecodeTarget`], so the trait stays object-safe and works for
/// any `T: DeserializeOwned`; the default, [`JsonDecoder`], is called without erasure.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a body decoder",
    note = "implement `feign_core::Decoder`, or wrap a closure with `feign_core::codec::decoder_fn`"
)]
pub trait Decoder: Send + Sync + 'static {
    /// Decodes `response` by handing a `serde` deserializer over its body to `target`.
    fn decode(&self, response: &Response, target: &mut DecodeTarget<'_>) -> Result<(), Error>;
}

type Erased<'a> =
    dyn FnMut(&mut dyn erased_serde::Deserializer<'_>) -> Result<(), erased_serde::Error> + 'a;

/// The value a [`Decoder`] fills: give it any `serde` deserializer.
pub struct DecodeTarget<'a> {
    fill: &'a mut Erased<'a>,
}

impl<'a> DecodeTarget<'a> {
    pub(crate) fn new(fill: &'a mut Erased<'a>) -> Self {
        DecodeTarget { fill }
    }

    /// Deserializes the target value from `deserializer`.
    pub fn deserialize<'de, D>(&mut self, deserializer: D) -> Result<(), Error>
    where
        D: serde::Deserializer<'de>,
    {
        let mut erased = <dyn erased_serde::Deserializer<'de>>::erase(deserializer);
        (self.fill)(&mut erased).map_err(Error::decode)
    }
}

impl std::fmt::Debug for DecodeTarget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DecodeTarget")
    }
}

/// Decodes `response` into `T` through a type-erased decoder.
pub(crate) fn decode_erased<T: DeserializeOwned>(
    decoder: &dyn Decoder,
    response: &Response,
) -> Result<T, Error> {
    let mut out: Option<T> = None;
    let mut fill = |d: &mut dyn erased_serde::Deserializer<'_>| -> Result<(), erased_serde::Error> {
        out = Some(erased_serde::deserialize::<T>(d)?);
        Ok(())
    };
    decoder.decode(response, &mut DecodeTarget::new(&mut fill))?;
    out.ok_or_else(|| Error::new(Kind::Decode, "decoder produced no value"))
}

/// JSON through `serde_json` (the default). A `Content-Type` that is present and not JSON is a
/// decode error naming it; serde_json's nesting limit (128) turns deep input into an error.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonDecoder;

impl Decoder for JsonDecoder {
    fn decode(&self, response: &Response, target: &mut DecodeTarget<'_>) -> Result<(), Error> {
        check_json_content_type(response)?;
        let mut de = serde_json::Deserializer::from_slice(response.body());
        target.deserialize(&mut de)?;
        de.end().map_err(Error::decode)
    }
}

/// The default decoder's fast path, without type erasure.
pub(crate) fn decode_json<T: DeserializeOwned>(response: &Response) -> Result<T, Error> {
    check_json_content_type(response)?;
    serde_json::from_slice(response.body()).map_err(Error::decode)
}

/// Fails when the response declares a content type that is not JSON.
pub(crate) fn check_json_content_type(response: &Response) -> Result<(), Error> {
    let Some(value) = response.headers().get(CONTENT_TYPE) else {
        return Ok(());
    };
    let essence = value
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    let is_json = essence.eq_ignore_ascii_case("application/json")
        || essence.len() > 5
            && essence
                .get(essence.len() - 5..)
                .is_some_and(|s| s.eq_ignore_ascii_case("+json"));
    if is_json {
        Ok(())
    } else {
        let shown: String = essence
            .chars()
            .filter(char::is_ascii_graphic)
            .take(64)
            .collect();
        Err(Error::new(
            Kind::Decode,
            format!("expected content type application/json, got `{shown}`"),
        ))
    }
}

/// Makes a [`Decoder`] of a closure.
pub fn decoder_fn<F>(f: F) -> FnDecoder<F>
where
    F: Fn(&Response, &mut DecodeTarget<'_>) -> Result<(), Error> + Send + Sync + 'static,
{
    FnDecoder(f)
}

/// A [`Decoder`] made by [`decoder_fn`].
#[derive(Clone)]
pub struct FnDecoder<F>(F);

impl<F> Decoder for FnDecoder<F>
where
    F: Fn(&Response, &mut DecodeTarget<'_>) -> Result<(), Error> + Send + Sync + 'static,
{
    fn decode(&self, response: &Response, target: &mut DecodeTarget<'_>) -> Result<(), Error> {
        (self.0)(response, target)
    }
}

impl<F> std::fmt::Debug for FnDecoder<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnDecoder")
    }
}
