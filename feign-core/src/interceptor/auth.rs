//! Ready-made credential interceptors. Their header values are marked sensitive.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http::header::{HeaderValue, AUTHORIZATION};

use super::credential::{bearer, credential};
use super::token::{Refresher, TokenProvider};
use super::{RequestInterceptor, RequestTemplate};
use crate::Error;

/// Sets `Authorization: Bearer <token>` on every request, replacing any earlier value.
///
/// The token is fixed ([`BearerAuth::new`]) or fetched by an async [`TokenProvider`]
/// ([`BearerAuth::refreshing`]): then it is cached, refreshed ahead of its expiry by one call
/// while the others keep sending the current one, and calls that find no valid token wait for
/// a single refresh together. A failed refresh keeps a token that is still valid; otherwise the
/// call fails with an interceptor error before anything is sent. Neither `Debug` nor errors
/// ever show the token.
#[derive(Clone)]
pub struct BearerAuth {
    source: Source,
}

#[derive(Clone)]
enum Source {
    Fixed(Option<HeaderValue>),
    Refreshing(Arc<Refresher>),
}

impl BearerAuth {
    /// How long before its expiry a refreshing token is renewed, unless set otherwise.
    pub const DEFAULT_REFRESH_AHEAD: Duration = Duration::from_secs(30);

    /// An interceptor sending a fixed token. A token that is not a valid header value makes
    /// every call fail with an interceptor error, before anything is sent.
    pub fn new(token: impl AsRef<str>) -> Self {
        BearerAuth {
            source: Source::Fixed(bearer(token.as_ref())),
        }
    }

    /// An interceptor sending tokens fetched by `provider`, renewed
    /// [`DEFAULT_REFRESH_AHEAD`](Self::DEFAULT_REFRESH_AHEAD) before they expire.
    pub fn refreshing(provider: impl TokenProvider) -> Self {
        BearerAuth {
            source: Source::Refreshing(Arc::new(Refresher::new(
                Arc::new(provider),
                Self::DEFAULT_REFRESH_AHEAD,
            ))),
        }
    }

    /// Sets how long before its expiry a refreshing token is renewed (default 30 s; a token
    /// valid for less than that is renewed on every call). No effect on a fixed token.
    #[must_use]
    pub fn refresh_ahead(self, ahead: Duration) -> Self {
        match self.source {
            Source::Refreshing(refresher) => BearerAuth {
                source: Source::Refreshing(Arc::new(refresher.with_refresh_ahead(ahead))),
            },
            fixed => BearerAuth { source: fixed },
        }
    }
}

/// Sets `Authorization: Basic <base64(user:password)>` on every request.
#[derive(Clone)]
pub struct BasicAuth {
    value: Option<HeaderValue>,
}

impl BasicAuth {
    /// An interceptor sending fixed credentials.
    pub fn new(user: impl AsRef<str>, password: impl AsRef<str>) -> Self {
        BasicAuth {
            value: credential(&basic_value(user.as_ref(), password.as_ref())),
        }
    }
}

/// `Basic <base64(user:password)>`.
pub(crate) fn basic_value(user: &str, password: &str) -> String {
    format!("Basic {}", base64(format!("{user}:{password}").as_bytes()))
}

fn set_authorization(
    request: &mut RequestTemplate,
    value: &Option<HeaderValue>,
) -> Result<(), Error> {
    match value {
        Some(value) => {
            request.headers.insert(AUTHORIZATION, value.clone());
            Ok(())
        }
        None => Err(Error::interceptor("credential is not a valid header value")),
    }
}

#[async_trait]
impl RequestInterceptor for BearerAuth {
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error> {
        match &self.source {
            Source::Fixed(value) => set_authorization(request, value),
            Source::Refreshing(refresher) => {
                let value = refresher.value().await?;
                request.headers.insert(AUTHORIZATION, value);
                Ok(())
            }
        }
    }
}

#[async_trait]
impl RequestInterceptor for BasicAuth {
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error> {
        set_authorization(request, &self.value)
    }
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::Fixed(_) => f.write_str("BearerAuth(***)"),
            Source::Refreshing(refresher) => f
                .debug_struct("BearerAuth")
                .field("token", &"***")
                .field("refresh_ahead", &refresher.refresh_ahead())
                .finish_non_exhaustive(),
        }
    }
}

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BasicAuth(***)")
    }
}

/// Standard base64 with padding.
fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (input, expected) in cases {
            assert_eq!(base64(input.as_bytes()), expected);
        }
        assert_eq!(
            basic_value("Aladdin", "open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
    }
}
