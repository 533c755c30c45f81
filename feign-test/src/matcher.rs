//! Which requests a script answers or an expectation counts.

use std::fmt;

use bytes::Bytes;
use http::{HeaderName, HeaderValue};

use crate::request::RecordedRequest;
use crate::shown::BodyShown;

/// A description of requests: a method, a path, query pairs, headers, a body. A request
/// matches when every part given matches; a part not given matches anything.
///
/// The path is compared as sent, still percent-encoded (`/files/a%20b`); query values and
/// bodies after decoding. A query pair or header given must be present with that value;
/// others may be there too.
///
/// ```
/// use feign_test::Matcher;
///
/// let matcher = Matcher::get("/orders/42")
///     .query("expand", "items")
///     .header("x-tenant", "acme");
/// assert_eq!(
///     matcher.to_string(),
///     "GET /orders/42 with query expand=items, header x-tenant: acme"
/// );
/// ```
#[derive(Clone, Debug, Default)]
pub struct Matcher {
    method: Option<String>,
    path: Option<PathRule>,
    query: Vec<(String, String)>,
    headers: Vec<(String, Option<String>)>,
    body: Option<BodyRule>,
}

#[derive(Clone, Debug)]
enum PathRule {
    Exact(String),
    Prefix(String),
}

#[derive(Clone, Debug)]
enum BodyRule {
    Bytes(Bytes),
    Json(serde_json::Value),
}

impl Matcher {
    /// Every request.
    pub fn any() -> Matcher {
        Matcher::default()
    }

    /// `method` (as written on the wire: `GET`, `POST`...) requests for exactly `path`.
    pub fn new(method: &str, path: &str) -> Matcher {
        Matcher::any().method(method).path(path)
    }

    /// `GET path`.
    pub fn get(path: &str) -> Matcher {
        Matcher::new("GET", path)
    }

    /// `POST path`.
    pub fn post(path: &str) -> Matcher {
        Matcher::new("POST", path)
    }

    /// `PUT path`.
    pub fn put(path: &str) -> Matcher {
        Matcher::new("PUT", path)
    }

    /// `PATCH path`.
    pub fn patch(path: &str) -> Matcher {
        Matcher::new("PATCH", path)
    }

    /// `DELETE path`.
    pub fn delete(path: &str) -> Matcher {
        Matcher::new("DELETE", path)
    }

    /// Only requests of this method.
    pub fn method(mut self, method: &str) -> Matcher {
        self.method = Some(method.to_owned());
        self
    }

    /// Only requests for exactly this path (as sent, percent-encoded).
    pub fn path(mut self, path: &str) -> Matcher {
        self.path = Some(PathRule::Exact(path.to_owned()));
        self
    }

    /// Only requests whose path (as sent) starts with `prefix`.
    pub fn path_prefix(mut self, prefix: &str) -> Matcher {
        self.path = Some(PathRule::Prefix(prefix.to_owned()));
        self
    }

    /// Only requests whose query holds the pair `name=value`, both compared decoded.
    pub fn query(mut self, name: &str, value: &str) -> Matcher {
        self.query.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Only requests with a header `name` (any case) of exactly `value`.
    pub fn header(mut self, name: &str, value: &str) -> Matcher {
        self.headers
            .push((name.to_ascii_lowercase(), Some(value.to_owned())));
        self
    }

    /// Only requests with a header `name` (any case), whatever its value.
    pub fn header_present(mut self, name: &str) -> Matcher {
        self.headers.push((name.to_ascii_lowercase(), None));
        self
    }

    /// Only requests whose body is exactly these bytes.
    pub fn body(mut self, body: impl Into<Bytes>) -> Matcher {
        self.body = Some(BodyRule::Bytes(body.into()));
        self
    }

    /// Only requests whose body is JSON equal to `json` (whatever the spacing and key order).
    pub fn json_body(mut self, json: serde_json::Value) -> Matcher {
        self.body = Some(BodyRule::Json(json));
        self
    }

    /// Whether `request` matches.
    pub fn matches(&self, request: &RecordedRequest) -> bool {
        self.mismatches(request).is_empty()
    }

    /// Why `request` does not match, a reason per part that differs; empty when it matches.
    pub fn mismatches(&self, request: &RecordedRequest) -> Vec<String> {
        let mut reasons = Vec::new();
        if let Some(method) = &self.method {
            if request.method.as_str() != method {
                reasons.push(format!("method is {}, not {method}", request.method));
            }
        }
        match &self.path {
            Some(PathRule::Exact(path)) if request.path != *path => {
                reasons.push(format!("path is {}, not {path}", request.path));
            }
            Some(PathRule::Prefix(prefix)) if !request.path.starts_with(prefix.as_str()) => {
                reasons.push(format!(
                    "path {} does not start with {prefix}",
                    request.path
                ));
            }
            _ => {}
        }
        let pairs = request.query_pairs();
        for (name, value) in &self.query {
            if !pairs.iter().any(|(n, v)| n == name && v == value) {
                reasons.push(format!("no query pair {}", Pair(name, value)));
            }
        }
        for (name, value) in &self.headers {
            let present = request.header_values(name);
            match value {
                None if present.is_empty() => reasons.push(format!("no header {name}")),
                Some(value) if !present.contains(&value.as_str()) => {
                    reasons.push(format!("no header {}", Header(name, Some(value))));
                }
                _ => {}
            }
        }
        if let Some(rule) = &self.body {
            if !rule.matches(&request.body) {
                reasons.push(format!(
                    "body is {:?}, not {rule}",
                    BodyShown(&request.body)
                ));
            }
        }
        reasons
    }
}

impl BodyRule {
    fn matches(&self, body: &[u8]) -> bool {
        match self {
            BodyRule::Bytes(expected) => body == expected.as_ref(),
            BodyRule::Json(expected) => {
                serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|v| v == *expected)
            }
        }
    }
}

impl fmt::Display for BodyRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyRule::Bytes(bytes) => write!(f, "{:?}", BodyShown(bytes)),
            BodyRule::Json(json) => write!(f, "JSON {json}"),
        }
    }
}

/// `GET /orders/42 with query expand=items, header x-tenant: acme, JSON body {...}`, the
/// values of secret headers and query parameters hidden as feign-core hides them.
impl fmt::Display for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method.as_deref().unwrap_or("any method"))?;
        match &self.path {
            Some(PathRule::Exact(path)) => write!(f, " {path}")?,
            Some(PathRule::Prefix(prefix)) => write!(f, " {prefix}*")?,
            None => f.write_str(" any path")?,
        }
        let mut parts = Vec::new();
        parts.extend(
            self.query
                .iter()
                .map(|(n, v)| format!("query {}", Pair(n, v))),
        );
        parts.extend(
            self.headers
                .iter()
                .map(|(n, v)| format!("header {}", Header(n, v.as_deref()))),
        );
        if let Some(body) = &self.body {
            parts.push(format!("body {body}"));
        }
        if !parts.is_empty() {
            write!(f, " with {}", parts.join(", "))?;
        }
        Ok(())
    }
}

/// A query pair as feign-core's URL redaction shows it.
struct Pair<'a>(&'a str, &'a str);

impl fmt::Display for Pair<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pair = format!("{}={}", self.0, self.1);
        let shown = feign_core::redact::url(&format!("?{pair}")).to_string();
        f.write_str(shown.strip_prefix('?').unwrap_or(&shown))
    }
}

/// A header as feign-core's logs show it: a secret's value as `***`.
struct Header<'a>(&'a str, Option<&'a str>);

impl fmt::Display for Header<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Header(name, value) = *self;
        let Some(value) = value else {
            return f.write_str(name);
        };
        let secret = HeaderName::try_from(name)
            .is_ok_and(|n| feign_core::redact::is_sensitive(&n, &HeaderValue::from_static("")));
        if secret {
            write!(f, "{name}: ***")
        } else {
            write!(f, "{name}: {value}")
        }
    }
}
