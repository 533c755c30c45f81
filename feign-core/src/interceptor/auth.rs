//! Ready-made credential interceptors. Their header values are marked sensitive.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http::header::{HeaderValue, AUTHORIZATION};

use super::token::{Refresher, TokenProvider};
use super::{RequestInterceptor, RequestTemplate};
use crate::credential::{basic, bearer};
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
            value: basic(user.as_ref(), password.as_ref()),
        }
    }
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
