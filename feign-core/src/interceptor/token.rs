//! Bearer tokens fetched by an async provider: cached, refreshed ahead of expiry, one refresh at
//! a time however many calls need it (checked by the `token` models of `tests/loom/`).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http::HeaderValue;
use tokio::time::Instant;

use crate::credential::bearer;
use crate::sync::{AsyncMutex, Mutex, MutexGuard};
use crate::{BoxError, Error};

/// A bearer token and how long it stays valid, as a [`TokenProvider`] returns it.
///
/// Its `Debug` output never shows the token.
#[derive(Clone)]
pub struct AccessToken {
    token: String,
    expires_in: Option<Duration>,
}

impl AccessToken {
    /// A token valid for `expires_in` from now (an OAuth2 token response's `expires_in`).
    pub fn new(token: impl Into<String>, expires_in: Duration) -> Self {
        AccessToken {
            token: token.into(),
            expires_in: Some(expires_in),
        }
    }

    /// A token with no known expiry: fetched once and kept.
    pub fn without_expiry(token: impl Into<String>) -> Self {
        AccessToken {
            token: token.into(),
            expires_in: None,
        }
    }

    /// How long the token stays valid from when it was fetched, if known.
    pub fn expires_in(&self) -> Option<Duration> {
        self.expires_in
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessToken")
            .field("token", &"***")
            .field("expires_in", &self.expires_in)
            .finish()
    }
}

/// Fetches bearer tokens for [`BearerAuth::refreshing`](crate::BearerAuth::refreshing): from an
/// OAuth2 token endpoint, a secrets manager, a file a sidecar rewrites...
///
/// The future is boxed (through `async_trait`) so the trait stays object-safe. For a closure
/// returning a future use [`token_provider_fn`].
#[async_trait]
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not provide bearer tokens",
    note = "implement `feign_core::interceptor::TokenProvider`, or wrap an async closure with `feign_core::interceptor::token_provider_fn`"
)]
pub trait TokenProvider: Send + Sync + 'static {
    /// Fetches a fresh token. Its error is kept as the source of the call's error, so it
    /// should not contain the secret it failed to get.
    async fn token(&self) -> Result<AccessToken, BoxError>;
}

/// Makes a [`TokenProvider`] of a closure returning a future.
///
/// ```
/// use std::time::Duration;
/// use feign_core::BearerAuth;
/// use feign_core::interceptor::{token_provider_fn, AccessToken};
///
/// let auth = BearerAuth::refreshing(token_provider_fn(|| async {
///     // e.g. a client-credentials grant against the identity provider
///     Ok(AccessToken::new("eyJhbGciOi...", Duration::from_secs(300)))
/// }));
/// # let _ = auth;
/// ```
pub fn token_provider_fn<F, Fut>(f: F) -> FnTokenProvider<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AccessToken, BoxError>> + Send + 'static,
{
    FnTokenProvider(f)
}

/// A [`TokenProvider`] made by [`token_provider_fn`].
#[derive(Clone)]
pub struct FnTokenProvider<F>(F);

#[async_trait]
impl<F, Fut> TokenProvider for FnTokenProvider<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AccessToken, BoxError>> + Send + 'static,
{
    async fn token(&self) -> Result<AccessToken, BoxError> {
        (self.0)().await
    }
}

impl<F> fmt::Debug for FnTokenProvider<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnTokenProvider")
    }
}

/// The header value made of the last token, and until when it may be sent.
#[derive(Clone)]
struct Cached {
    value: HeaderValue,
    expires_at: Option<Instant>,
}

impl Cached {
    fn valid_at(&self, now: Instant) -> bool {
        self.expires_at.is_none_or(|at| now < at)
    }

    fn fresh_at(&self, now: Instant, ahead: Duration) -> bool {
        self.expires_at.is_none_or(|at| now + ahead < at)
    }
}

#[derive(Default)]
struct State {
    cached: Option<Cached>,
    /// Bumped by every finished refresh, so calls that waited for one use its result.
    refreshes: u64,
    /// Whether the last refresh failed.
    failed: bool,
}

/// The token cache behind a refreshing [`BearerAuth`](crate::BearerAuth).
pub(super) struct Refresher {
    provider: Arc<dyn TokenProvider>,
    refresh_ahead: Duration,
    state: Mutex<State>,
    /// Held while a refresh runs: one refresh at a time.
    flight: AsyncMutex<()>,
}

impl Refresher {
    pub(super) fn new(provider: Arc<dyn TokenProvider>, refresh_ahead: Duration) -> Self {
        Refresher {
            provider,
            refresh_ahead,
            state: Mutex::new(State::default()),
            flight: AsyncMutex::new(()),
        }
    }

    /// A refresher of the same provider renewing `refresh_ahead` before expiry; it starts with
    /// an empty cache.
    pub(super) fn with_refresh_ahead(&self, refresh_ahead: Duration) -> Self {
        Refresher::new(self.provider.clone(), refresh_ahead)
    }

    pub(super) fn refresh_ahead(&self) -> Duration {
        self.refresh_ahead
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `Authorization` value to send now, refreshing the token when it is due.
    pub(super) async fn value(&self) -> Result<HeaderValue, Error> {
        let now = Instant::now();
        let (cached, seen) = {
            let state = self.state();
            (state.cached.clone(), state.refreshes)
        };
        if let Some(cached) = &cached {
            if cached.fresh_at(now, self.refresh_ahead) {
                return Ok(cached.value.clone());
            }
            // Due for refresh but still valid: one call refreshes, the others keep sending it.
            if cached.valid_at(now) {
                return match self.flight.try_lock() {
                    Ok(_flight) => self.refresh(Some(cached.clone())).await,
                    Err(_) => Ok(cached.value.clone()),
                };
            }
        }
        let _flight = self.flight.lock().await;
        {
            let state = self.state();
            if state.refreshes != seen {
                // A refresh finished while this call waited: share its result.
                match &state.cached {
                    Some(cached) if cached.valid_at(Instant::now()) => {
                        return Ok(cached.value.clone())
                    }
                    _ if state.failed => {
                        return Err(Error::interceptor(
                            "bearer token refresh failed in a concurrent call",
                        ))
                    }
                    _ => {}
                }
            }
        }
        self.refresh(cached).await
    }

    /// Asks the provider for a token; the caller holds `flight`.
    async fn refresh(&self, previous: Option<Cached>) -> Result<HeaderValue, Error> {
        let result = self.provider.token().await;
        let now = Instant::now();
        let mut state = self.state();
        state.refreshes += 1;
        let error = match result {
            Ok(token) => match bearer(&token.token) {
                Some(value) => {
                    state.cached = Some(Cached {
                        value: value.clone(),
                        expires_at: token.expires_in.map(|d| now + d),
                    });
                    state.failed = false;
                    return Ok(value);
                }
                None => Error::interceptor(
                    "token provider returned a token that is not a valid header value",
                ),
            },
            Err(source) => Error::interceptor("bearer token refresh failed").with_source(source),
        };
        state.failed = true;
        match previous {
            Some(cached) if cached.valid_at(now) => {
                tracing::warn!(target: "feign_core", error = %error, "keeping the current bearer token until it expires");
                Ok(cached.value)
            }
            _ => Err(error),
        }
    }
}
