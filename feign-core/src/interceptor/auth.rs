//! Ready-made credential interceptors. Their header values are marked sensitive.

use std::fmt;

use async_trait::async_trait;
use http::header::{HeaderValue, AUTHORIZATION};

use super::{RequestInterceptor, RequestTemplate};
use crate::Error;

/// Sets `Authorization: Bearer <token>` on every request, replacing any earlier value.
#[derive(Clone)]
pub struct BearerAuth {
    value: Option<HeaderValue>,
}

impl BearerAuth {
    /// An interceptor sending a fixed token. A token that is not a valid header value makes
    /// every call fail with an interceptor error, before anything is sent.
    pub fn new(token: impl AsRef<str>) -> Self {
        BearerAuth {
            value: credential(&format!("Bearer {}", token.as_ref())),
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

fn credential(value: &str) -> Option<HeaderValue> {
    if !crate::pipeline::is_clean_header_value(value.as_bytes()) {
        return None;
    }
    let mut value = HeaderValue::try_from(value).ok()?;
    value.set_sensitive(true);
    Some(value)
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
        set_authorization(request, &self.value)
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
        f.write_str("BearerAuth(***)")
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
