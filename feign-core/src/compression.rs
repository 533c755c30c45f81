//! gzip on the wire: request bodies compressed above a size for chosen media types, and gzip
//! responses decoded when the transport hands them over still compressed.
//!
//! [`RequestCompression`] is set with
//! [`Builder::request_compression`](crate::Builder::request_compression).

use std::io::{Read as _, Write as _};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue};

use crate::error::Kind;
use crate::Error;

/// Spring Cloud OpenFeign's default `compression.request.mime-types`.
const DEFAULT_MIME_TYPES: [&str; 3] = ["text/xml", "application/xml", "application/json"];

/// Spring Cloud OpenFeign's default `compression.request.min-request-size`, in bytes.
pub const DEFAULT_MIN_REQUEST_SIZE: usize = 2048;

const GZIP: HeaderValue = HeaderValue::from_static("gzip");

/// Which request bodies are sent gzipped (Spring Cloud OpenFeign's
/// `spring.cloud.openfeign.compression.request.*`): a buffered body longer than
/// [`min_request_size`](RequestCompression::min_request_size) whose `Content-Type` is one of
/// [`mime_types`](RequestCompression::mime_types), on a request without a `Content-Encoding`
/// of its own. A streamed body is sent as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestCompression {
    mime_types: Vec<String>,
    min_request_size: usize,
}

impl Default for RequestCompression {
    /// Spring's defaults: `text/xml`, `application/xml`, `application/json`; over 2048 bytes.
    fn default() -> Self {
        RequestCompression {
            mime_types: DEFAULT_MIME_TYPES.map(str::to_owned).to_vec(),
            min_request_size: DEFAULT_MIN_REQUEST_SIZE,
        }
    }
}

impl RequestCompression {
    /// Spring's defaults, as [`RequestCompression::default`].
    pub fn new() -> Self {
        RequestCompression::default()
    }

    /// The media types compressed, compared without parameters (`; charset=..`) and case;
    /// an empty list compresses every type, as in Spring. Default: `text/xml`,
    /// `application/xml`, `application/json`.
    #[must_use]
    pub fn mime_types<I, S>(mut self, types: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.mime_types = types.into_iter().map(Into::into).collect();
        self
    }

    /// Bodies of more than this many bytes are compressed. Default 2048.
    #[must_use]
    pub fn min_request_size(mut self, bytes: usize) -> Self {
        self.min_request_size = bytes;
        self
    }

    /// Whether a body of `len` bytes with these headers is to be compressed.
    fn applies(&self, headers: &HeaderMap, len: usize) -> bool {
        if len <= self.min_request_size || headers.contains_key(CONTENT_ENCODING) {
            return false;
        }
        let Some(content_type) = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        self.mime_types.is_empty()
            || self
                .mime_types
                .iter()
                .any(|t| t.trim().eq_ignore_ascii_case(essence))
    }

    /// Gzips `body` and marks it `Content-Encoding: gzip` when the settings call for it.
    pub(crate) fn apply(&self, headers: &mut HeaderMap, body: &mut Bytes) -> Result<(), Error> {
        if !self.applies(headers, body.len()) {
            return Ok(());
        }
        let mut encoder = flate2::write::GzEncoder::new(
            Vec::with_capacity(body.len() / 4),
            flate2::Compression::default(),
        );
        encoder
            .write_all(body)
            .and_then(|()| encoder.finish())
            .map(|compressed| {
                *body = Bytes::from(compressed);
                headers.insert(CONTENT_ENCODING, GZIP);
            })
            .map_err(|e| Error::request("request body could not be compressed").with_source(e))
    }
}

/// Asks for gzip responses, unless the request already says what it accepts.
pub(crate) fn accept_gzip(headers: &mut HeaderMap) {
    headers.entry(ACCEPT_ENCODING).or_insert(GZIP);
}

/// Decodes a body the transport left gzipped (`Content-Encoding: gzip`), within `limit` bytes
/// after decoding; the encoding and length headers go, as reqwest removes them. Over the limit
/// `truncate` keeps the first `limit` bytes, else it is an error. Other bodies pass unchanged.
pub(crate) fn gunzip_response(
    headers: &mut HeaderMap,
    body: Bytes,
    limit: usize,
    truncate: bool,
) -> Result<Bytes, Error> {
    let gzipped = headers
        .get(CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("gzip"));
    if !gzipped {
        return Ok(body);
    }
    let mut decoded = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    flate2::read::GzDecoder::new(&body[..])
        .take(cap)
        .read_to_end(&mut decoded)
        .map_err(|e| Error::body_error("gzip response body could not be decoded").with_source(e))?;
    if decoded.len() > limit {
        if !truncate {
            return Err(Error::new(
                Kind::BodyTooLarge,
                format!("response body over the {limit}-byte limit once decompressed"),
            ));
        }
        decoded.truncate(limit);
    }
    headers.remove(CONTENT_ENCODING);
    headers.remove(CONTENT_LENGTH);
    Ok(Bytes::from(decoded))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(content_type: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
        headers
    }

    #[test]
    fn only_listed_types_over_the_size_are_compressed() {
        let settings = RequestCompression::default();
        let json = headers("Application/JSON; charset=utf-8");
        assert!(settings.applies(&json, 2049));
        assert!(
            !settings.applies(&json, 2048),
            "Spring compresses above the size"
        );
        assert!(!settings.applies(&headers("text/plain"), 10_000));
        assert!(!settings.applies(&HeaderMap::new(), 10_000));
        let mut encoded = json;
        encoded.insert(CONTENT_ENCODING, HeaderValue::from_static("br"));
        assert!(!settings.applies(&encoded, 10_000));
        let any = RequestCompression::new()
            .mime_types(Vec::<String>::new())
            .min_request_size(0);
        assert!(any.applies(&headers("image/png"), 1));
    }

    #[test]
    fn a_gzip_body_round_trips_and_a_bomb_stops_at_the_limit() {
        let mut headers = headers("application/json");
        let mut body = Bytes::from(vec![b'a'; 100_000]);
        RequestCompression::default()
            .apply(&mut headers, &mut body)
            .unwrap();
        assert_eq!(headers[CONTENT_ENCODING], "gzip");
        assert!(body.len() < 1000);
        let decoded = gunzip_response(&mut headers.clone(), body.clone(), 100_000, false).unwrap();
        assert_eq!(decoded.len(), 100_000);
        let error = gunzip_response(&mut headers.clone(), body.clone(), 1000, false).unwrap_err();
        assert!(error.is_too_large(), "{error}");
        let kept = gunzip_response(&mut headers, body, 1000, true).unwrap();
        assert_eq!(kept.len(), 1000);
        assert!(!headers.contains_key(CONTENT_ENCODING));
        let error = gunzip_response(
            &mut {
                let mut h = HeaderMap::new();
                h.insert(CONTENT_ENCODING, GZIP);
                h
            },
            Bytes::from_static(b"not gzip"),
            1000,
            false,
        )
        .unwrap_err();
        assert!(error.is_body(), "{error}");
    }
}
