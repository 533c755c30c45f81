//! The default transport: reqwest with rustls, redirects off.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use http_body_util::BodyExt;

use super::url_cache::UrlCache;
use super::{Client, ResponseBody, SendOptions};
use crate::body::RequestBody;
use crate::transport::HttpClientConfig;
use crate::Error;

/// Most same-origin redirects followed when following is on.
const MAX_REDIRECTS: usize = 5;

/// The default [`Client`]: reqwest (rustls), built with redirects off and the client's connect
/// timeout. A method whose options differ (another connect timeout, redirects on) gets its own
/// reqwest client, built once and kept, with the same [`HttpClientConfig`] (TLS, proxies, pool).
#[derive(Clone)]
pub struct ReqwestClient {
    clients: Arc<Mutex<Vec<(SendOptions, reqwest::Client)>>>,
    fixed: Option<reqwest::Client>,
    http: Arc<HttpClientConfig>,
    urls: Arc<UrlCache>,
}

impl ReqwestClient {
    /// A client whose reqwest clients are built from each call's options.
    pub fn new() -> Self {
        ReqwestClient::with_config(HttpClientConfig::default())
    }

    /// Like [`ReqwestClient::new`], every reqwest client built with `http`'s TLS, proxy,
    /// pool and protocol settings.
    pub fn with_config(http: HttpClientConfig) -> Self {
        ReqwestClient {
            clients: Arc::default(),
            fixed: None,
            http: Arc::new(http),
            urls: Arc::default(),
        }
    }

    /// Uses `client` as configured for every call.
    ///
    /// **The reqwest client's own settings win** for what is set when a reqwest client is
    /// built: its connect timeout and redirect policy are used for every call, and a client's
    /// or method's `connect_timeout` and `follow_redirects` options have no effect (reqwest
    /// cannot change them per request). The read timeout, total timeout and body limits still
    /// apply: the pipeline enforces them. To keep per-method connect timeouts and redirects,
    /// give the settings to the feign builder ([`HttpClientConfig`], `Builder::tls`,
    /// `Builder::proxy`, ...) instead of building reqwest yourself.
    pub fn from_reqwest(client: reqwest::Client) -> Self {
        ReqwestClient {
            clients: Arc::default(),
            fixed: Some(client),
            http: Arc::default(),
            urls: Arc::default(),
        }
    }

    /// Builds (once) the reqwest client for `options`.
    pub(crate) fn client_for(&self, options: &SendOptions) -> Result<reqwest::Client, Error> {
        if let Some(client) = &self.fixed {
            return Ok(client.clone());
        }
        let mut clients = self
            .clients
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, client)) = clients.iter().find(|(o, _)| o == options) {
            return Ok(client.clone());
        }
        let client = build(options, &self.http)?;
        clients.push((*options, client.clone()));
        Ok(client)
    }
}

impl Default for ReqwestClient {
    fn default() -> Self {
        ReqwestClient::new()
    }
}

/// A `reqwest::ClientBuilder` with the defaults every HTTP client of feign-rs starts from:
/// rustls, redirects not followed, gzip responses decoded, idle connections kept 90 s, and the
/// given timeouts (`None`: no read or total timeout).
///
/// Add what a client needs on top (a user agent, [`HttpClientConfig::apply`] for TLS, proxies
/// and the pool, a redirect policy) and build it; [`ReqwestClient::from_reqwest`] takes the
/// result.
///
/// ```
/// use std::time::Duration;
///
/// let client = feign_core::client::reqwest_builder(Duration::from_secs(2), None, Some(Duration::from_secs(10)))
///     .user_agent("my-service")
///     .build()?;
/// let transport = feign_core::client::ReqwestClient::from_reqwest(client);
/// # Ok::<(), reqwest::Error>(())
/// ```
pub fn reqwest_builder(
    connect_timeout: Duration,
    read_timeout: Option<Duration>,
    timeout: Option<Duration>,
) -> reqwest::ClientBuilder {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .redirect(reqwest::redirect::Policy::none())
        .gzip(true)
        .pool_idle_timeout(Duration::from_secs(90))
        .connect_timeout(connect_timeout);
    if let Some(read_timeout) = read_timeout {
        builder = builder.read_timeout(read_timeout);
    }
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    builder
}

fn build(options: &SendOptions, http: &HttpClientConfig) -> Result<reqwest::Client, Error> {
    let mut builder = http.apply(reqwest_builder(options.connect_timeout, None, None))?;
    if options.follow_redirects {
        builder = builder.redirect(reqwest::redirect::Policy::custom(|attempt| {
            let first = attempt.previous().first();
            let same_origin = first.is_some_and(|f| f.origin() == attempt.url().origin());
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else if same_origin {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }));
    }
    builder
        .build()
        .map_err(|e| Error::builder("http client could not be built").with_source(e.without_url()))
}

/// Maps a reqwest error to ours, dropping the URL reqwest keeps (it may hold a password).
fn map_error(e: reqwest::Error) -> Error {
    let e = e.without_url();
    if e.is_connect() {
        Error::connect(e)
    } else if e.is_timeout() {
        Error::timeout("").with_source(e)
    } else if e.is_builder() {
        Error::request("request could not be built").with_source(e)
    } else {
        Error::transport(e)
    }
}

/// A buffered body as reqwest's own (which it can clone); a stream wrapped, its exact size
/// hint giving `Content-Length` when the length is known.
fn into_reqwest(body: RequestBody) -> reqwest::Body {
    match body.into_bytes() {
        Ok(bytes) => reqwest::Body::from(bytes),
        Err(streamed) => reqwest::Body::wrap(streamed),
    }
}

impl ReqwestClient {
    /// What `reqwest::Request::try_from` makes of `request`, without parsing the origin again.
    fn to_reqwest(&self, request: http::Request<RequestBody>) -> Result<reqwest::Request, Error> {
        if !request.extensions().is_empty() {
            // reqwest's own conversion is the only one that keeps extensions.
            return reqwest::Request::try_from(request.map(into_reqwest)).map_err(map_error);
        }
        let url = self
            .urls
            .url(request.uri())
            .map_err(|e| Error::request("request could not be built").with_source(e))?;
        let (parts, body) = request.into_parts();
        let mut converted = reqwest::Request::new(parts.method, url);
        *converted.headers_mut() = parts.headers;
        *converted.version_mut() = parts.version;
        *converted.body_mut() = Some(into_reqwest(body));
        Ok(converted)
    }

    /// What [`Client::send`] does, as a future of a known type (not boxed).
    pub(crate) async fn execute(
        &self,
        request: http::Request<RequestBody>,
        options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error> {
        let client = self.client_for(options)?;
        let request = self.to_reqwest(request)?;
        let response = client.execute(request).await.map_err(map_error)?;
        let response: http::Response<reqwest::Body> = response.into();
        Ok(response.map(|body| {
            body.map_err(|e| Box::new(e.without_url()) as crate::error::BoxError)
                .boxed_unsync()
        }))
    }
}

#[async_trait]
impl Client for ReqwestClient {
    async fn send(
        &self,
        request: http::Request<RequestBody>,
        options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error> {
        self.execute(request, options).await
    }
}

impl std::fmt::Debug for ReqwestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReqwestClient")
            .field("custom", &self.fixed.is_some())
            .field("http", &self.http)
            .finish()
    }
}
