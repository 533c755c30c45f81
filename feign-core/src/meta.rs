//! Method and client metadata compiled by `#[feign_client]`: no template is parsed at run time.

/// An HTTP method a client method can be declared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpMethod {
    /// `#[get]`
    Get,
    /// `#[post]`
    Post,
    /// `#[put]`
    Put,
    /// `#[delete]`
    Delete,
    /// `#[patch]`
    Patch,
    /// `#[head]`
    Head,
}

impl HttpMethod {
    /// The `http` crate's method.
    pub fn as_http(self) -> http::Method {
        match self {
            HttpMethod::Get => http::Method::GET,
            HttpMethod::Post => http::Method::POST,
            HttpMethod::Put => http::Method::PUT,
            HttpMethod::Delete => http::Method::DELETE,
            HttpMethod::Patch => http::Method::PATCH,
            HttpMethod::Head => http::Method::HEAD,
        }
    }

    /// The method's name, as on the wire: `GET`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Head => "HEAD",
        }
    }

    /// Whether RFC 9110 calls the method idempotent (of those declarable: GET, HEAD, PUT, DELETE).
    pub const fn is_idempotent(self) -> bool {
        !matches!(self, HttpMethod::Post | HttpMethod::Patch)
    }
}

/// One piece of a path template: literal text (already valid in a URL path) or an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathPart {
    /// Text copied as is; the macro has checked it holds only characters valid in a path.
    Literal(&'static str),
    /// The path argument with this index, percent-encoded as one segment at run time.
    Var(usize),
}

/// Per-method overrides of the client's options, from `#[options(...)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MethodOptions {
    /// `connect_timeout_ms`
    pub connect_timeout_ms: Option<u64>,
    /// `read_timeout_ms`
    pub read_timeout_ms: Option<u64>,
    /// `total_timeout_ms`: the deadline for the whole call, retries included.
    pub total_timeout_ms: Option<u64>,
    /// `follow_redirects`
    pub follow_redirects: Option<bool>,
}

impl MethodOptions {
    /// No overrides.
    pub const NONE: MethodOptions = MethodOptions {
        connect_timeout_ms: None,
        read_timeout_ms: None,
        total_timeout_ms: None,
        follow_redirects: None,
    };
}

/// A client method's compiled metadata, one `static` per method.
#[derive(Debug)]
pub struct MethodMeta {
    /// `Trait#method`, as OpenFeign's `Feign.configKey` (without parameter types).
    pub key: &'static str,
    /// The Rust method name.
    pub name: &'static str,
    /// The HTTP method.
    pub method: HttpMethod,
    /// `METHOD /template`, with variables unexpanded: the route for spans and metrics.
    pub route: &'static str,
    /// The path template, split into literals and variables.
    pub path: &'static [PathPart],
    /// Literal query pairs written in the template after `?`, already percent-encoded.
    pub query: &'static [(&'static str, &'static str)],
    /// Trait-level then method-level `#[headers]`, validated at compile time.
    pub headers: &'static [(&'static str, &'static str)],
    /// Idempotent by HTTP method, or marked `#[idempotent]`.
    pub idempotent: bool,
    /// Per-method option overrides.
    pub options: MethodOptions,
}

/// The attribute arguments of `#[feign_client(...)]`.
#[derive(Debug)]
pub struct ClientMeta {
    /// The trait's name, the first half of every method key.
    pub trait_name: &'static str,
    /// The service name, resolved through a load balancer when there is no URL.
    pub service: &'static str,
    /// A fixed URL from `url = "..."`; the builder's `.url()` overrides it.
    pub url: Option<&'static str>,
    /// A path prefix for every method, from `path = "..."`.
    pub path: &'static str,
}
