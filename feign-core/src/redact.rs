//! Keeps secrets out of logs, `Debug` output and error messages.
//!
//! Headers named `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`, and any value
//! marked sensitive (`HeaderValue::set_sensitive`, which interceptors use), print as `***`.
//! URLs lose the password of their userinfo and the values of query parameters whose names look
//! like credentials.

use std::fmt;

use http::header::{HeaderName, AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION, SET_COOKIE};
use http::{HeaderMap, HeaderValue};

const MASK: &str = "***";

/// Formats `url` with its userinfo password and sensitive query values replaced by `***`.
pub(crate) fn url(url: &str) -> impl fmt::Display + fmt::Debug + '_ {
    RedactedUrl(url)
}

/// Formats a header map with sensitive values replaced by `***`.
pub(crate) fn headers(headers: &HeaderMap) -> impl fmt::Debug + '_ {
    RedactedHeaders(headers)
}

/// True when a header must never be shown.
pub(crate) fn is_sensitive(name: &HeaderName, value: &HeaderValue) -> bool {
    value.is_sensitive()
        || *name == AUTHORIZATION
        || *name == PROXY_AUTHORIZATION
        || *name == COOKIE
        || *name == SET_COOKIE
}

/// Formats one header value as it may be shown.
pub(crate) fn header_value<'a>(name: &HeaderName, value: &'a HeaderValue) -> impl fmt::Debug + 'a {
    HeaderValueShown(if is_sensitive(name, value) {
        None
    } else {
        Some(value)
    })
}

struct HeaderValueShown<'a>(Option<&'a HeaderValue>);

impl fmt::Debug for HeaderValueShown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str(MASK),
            Some(value) => match value.to_str() {
                Ok(text) => write!(f, "{text:?}"),
                Err(_) => write!(f, "{:?}", value.as_bytes()),
            },
        }
    }
}

struct RedactedHeaders<'a>(&'a HeaderMap);

impl fmt::Debug for RedactedHeaders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.0
                    .iter()
                    .map(|(name, value)| (name.as_str(), header_value(name, value))),
            )
            .finish()
    }
}

/// Query parameter names whose values are treated as secrets.
fn is_secret_param(name: &str) -> bool {
    const CONTAINS: [&str; 8] = [
        "key",
        "token",
        "secret",
        "pass",
        "auth",
        "signature",
        "credential",
        "session",
    ];
    const EXACT: [&str; 3] = ["sig", "pw", "pwd"];
    let lower = name.to_ascii_lowercase();
    CONTAINS.iter().any(|c| lower.contains(c)) || EXACT.contains(&lower.as_str())
}

struct RedactedUrl<'a>(&'a str);

impl fmt::Debug for RedactedUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

impl fmt::Display for RedactedUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = self.0;
        let (before_query, query_and_fragment) = match url.find(['?', '#']) {
            Some(i) => url.split_at(i),
            None => (url, ""),
        };
        write_without_password(f, before_query)?;
        let (query, fragment) = match query_and_fragment.strip_prefix('?') {
            Some(rest) => match rest.find('#') {
                Some(i) => (Some(&rest[..i]), &rest[i..]),
                None => (Some(rest), ""),
            },
            None => (None, query_and_fragment),
        };
        if let Some(query) = query {
            f.write_str("?")?;
            for (i, pair) in query.split('&').enumerate() {
                if i > 0 {
                    f.write_str("&")?;
                }
                match pair.split_once('=') {
                    Some((name, _)) if is_secret_param(name) => write!(f, "{name}={MASK}")?,
                    _ => f.write_str(pair)?,
                }
            }
        }
        f.write_str(fragment)
    }
}

fn write_without_password(f: &mut fmt::Formatter<'_>, url: &str) -> fmt::Result {
    let authority_start = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[authority_start..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
            f.write_str(&url[..authority_start])?;
            if userinfo.contains(':') {
                write!(f, "{user}:{MASK}")?;
            } else {
                f.write_str(user)?;
            }
            f.write_str(&rest[at..])
        }
        None => f.write_str(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_password_and_secret_query_values() {
        assert_eq!(
            url("http://user:pw@eureka:8761/eureka?x=1").to_string(),
            "http://user:***@eureka:8761/eureka?x=1"
        );
        assert_eq!(
            url("http://h/p?api_key=k3y&page=2#f").to_string(),
            "http://h/p?api_key=***&page=2#f"
        );
        assert_eq!(url("http://h/a@b").to_string(), "http://h/a@b");
        assert_eq!(url("/relative?token=t").to_string(), "/relative?token=***");
    }

    #[test]
    fn masks_sensitive_headers() {
        let mut map = HeaderMap::new();
        map.insert(AUTHORIZATION, HeaderValue::from_static("Bearer s3cr3t"));
        let mut marked = HeaderValue::from_static("k");
        marked.set_sensitive(true);
        map.insert("x-api-key", marked);
        map.insert("accept", HeaderValue::from_static("application/json"));
        let shown = format!("{:?}", headers(&map));
        assert!(
            !shown.contains("s3cr3t") && !shown.contains("\"k\""),
            "{shown}"
        );
        assert!(shown.contains("application/json"));
    }
}
