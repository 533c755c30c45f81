//! Keeps secrets out of logs, `Debug` output and error messages.
//!
//! Headers named `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`, and any value
//! marked sensitive (`HeaderValue::set_sensitive`, which interceptors use), print as `***`.
//! URLs lose the password of their userinfo and the values of query parameters whose names look
//! like credentials.
//!
//! URL userinfo is found by one rule, [`split_userinfo`]'s, whether it is taken out to become
//! credentials or masked for display.

use std::borrow::Cow;
use std::fmt;

use http::header::{HeaderName, AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION, SET_COOKIE};
use http::{HeaderMap, HeaderValue};

pub(crate) const MASK: &str = "***";

/// Formats `url` as it may be shown in logs and error messages: the password of its userinfo
/// and the values of query parameters named like credentials (`token`, `api_key`, `sig`, ...)
/// replaced by `***`.
///
/// ```
/// assert_eq!(
///     feign_core::redact::url("http://user:pw@eureka:8761/eureka?token=t&x=1").to_string(),
///     "http://user:***@eureka:8761/eureka?token=***&x=1"
/// );
/// ```
pub fn url(url: &str) -> impl fmt::Display + fmt::Debug + '_ {
    RedactedUrl(url)
}

/// The user name and password a URL's userinfo held (`http://user:password@host/`),
/// percent-decoded. `Debug` does not show the password.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    username: String,
    password: String,
}

impl Credentials {
    /// Credentials from a user name and a password (empty when the URL had none).
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials {
            username: username.into(),
            password: password.into(),
        }
    }

    /// The user name, percent-decoded.
    pub fn username(&self) -> &str {
        &self.username
    }

    /// The password, percent-decoded; empty when the userinfo had none.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The `Authorization: Basic ...` value these credentials stand for, marked sensitive;
    /// `None` only when the name or password cannot be sent in a header.
    pub fn basic_authorization(&self) -> Option<HeaderValue> {
        crate::credential::basic(&self.username, &self.password)
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &MASK)
            .finish()
    }
}

/// Takes `user:password@` out of `url`: the URL without it, and the credentials it held.
///
/// The userinfo is what precedes the last `@` of the authority, which runs from `://` (or the
/// start) to the first `/`, `?` or `#`. A URL without userinfo comes back borrowed.
///
/// ```
/// let (url, credentials) = feign_core::redact::split_userinfo("http://app:p%40ss@127.0.0.1:8761/eureka/");
/// assert_eq!(url, "http://127.0.0.1:8761/eureka/");
/// let credentials = credentials.unwrap();
/// assert_eq!((credentials.username(), credentials.password()), ("app", "p@ss"));
/// ```
pub fn split_userinfo(url: &str) -> (Cow<'_, str>, Option<Credentials>) {
    let Some(userinfo) = Userinfo::find(url) else {
        return (url.into(), None);
    };
    let (user, password) = userinfo.parts(url);
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let credentials = Credentials::new(decode(user), decode(password.unwrap_or("")));
    let stripped = format!("{}{}", &url[..userinfo.start], &url[userinfo.at + 1..]);
    (stripped.into(), Some(credentials))
}

/// [`split_userinfo`] for a URL a request goes to: the URL without its userinfo, and the
/// credentials as the sensitive Basic `Authorization` value they stand for.
pub fn split_basic_auth(url: &str) -> (Cow<'_, str>, Option<HeaderValue>) {
    let (url, credentials) = split_userinfo(url);
    (url, credentials.and_then(|c| c.basic_authorization()))
}

/// Where a URL's userinfo is: `url[start..at]`, followed by the `@` at `at`.
#[derive(Debug, Clone, Copy)]
struct Userinfo {
    start: usize,
    at: usize,
}

impl Userinfo {
    /// The userinfo as a URL parser reads it: the authority ends at the first `/`, `?` or `#`.
    fn find(url: &str) -> Option<Userinfo> {
        Self::find_before(url, &['/', '?', '#'])
    }

    /// The userinfo as redaction reads it: the authority ends at the first `/` only, so a
    /// password with an unescaped `?` or `#` (a URL no parser accepts, but one a log may still
    /// show) is hidden whole rather than partly.
    fn find_for_redaction(url: &str) -> Option<Userinfo> {
        Self::find_before(url, &['/'])
    }

    fn find_before(url: &str, authority_ends: &[char]) -> Option<Userinfo> {
        let start = url.find("://").map_or(0, |i| i + 3);
        let rest = &url[start..];
        let authority = &rest[..rest.find(authority_ends).unwrap_or(rest.len())];
        authority.rfind('@').map(|at| Userinfo {
            start,
            at: start + at,
        })
    }

    /// The user name and, when there is a `:`, the password, both as written.
    fn parts(self, url: &str) -> (&str, Option<&str>) {
        let userinfo = &url[self.start..self.at];
        match userinfo.split_once(':') {
            Some((user, password)) => (user, Some(password)),
            None => (userinfo, None),
        }
    }
}

/// Formats a header map as it may be shown: the values of `Authorization`,
/// `Proxy-Authorization`, `Cookie`, `Set-Cookie` and of any value marked sensitive replaced by
/// `***`.
///
/// ```
/// let mut headers = http::HeaderMap::new();
/// headers.insert("authorization", "Bearer s3cret".parse().unwrap());
/// headers.insert("x-tenant", "acme".parse().unwrap());
/// let shown = format!("{:?}", feign_core::redact::headers(&headers));
/// assert_eq!(shown, r#"{"authorization": ***, "x-tenant": "acme"}"#);
/// ```
pub fn headers(headers: &HeaderMap) -> impl fmt::Debug + '_ {
    RedactedHeaders(headers)
}

/// True when a header must never be shown: its name is `Authorization`,
/// `Proxy-Authorization`, `Cookie` or `Set-Cookie`, or the value is marked sensitive.
pub fn is_sensitive(name: &HeaderName, value: &HeaderValue) -> bool {
    value.is_sensitive()
        || *name == AUTHORIZATION
        || *name == PROXY_AUTHORIZATION
        || *name == COOKIE
        || *name == SET_COOKIE
}

/// True when a header of this name is always masked, whatever its value (a name that is not
/// a valid header name is not one).
#[cfg_attr(not(feature = "test-double"), allow(dead_code))]
pub(crate) fn is_sensitive_name(name: &str) -> bool {
    [AUTHORIZATION, PROXY_AUTHORIZATION, COOKIE, SET_COOKIE]
        .iter()
        .any(|sensitive| sensitive.as_str().eq_ignore_ascii_case(name))
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
pub(crate) fn is_secret_param(name: &str) -> bool {
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
        let url = write_without_password(f, self.0)?;
        let (before_query, query_and_fragment) = match url.find(['?', '#']) {
            Some(i) => url.split_at(i),
            None => (url, ""),
        };
        f.write_str(before_query)?;
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

/// Writes the scheme and userinfo with the password masked; returns what is left to write.
fn write_without_password<'a>(
    f: &mut fmt::Formatter<'_>,
    url: &'a str,
) -> Result<&'a str, fmt::Error> {
    let Some(userinfo) = Userinfo::find_for_redaction(url) else {
        return Ok(url);
    };
    f.write_str(&url[..userinfo.start])?;
    match userinfo.parts(url) {
        (user, Some(_)) => write!(f, "{user}:{MASK}")?,
        (user, None) => f.write_str(user)?,
    }
    Ok(&url[userinfo.at..])
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
        assert_eq!(
            url("http://u:p@ss@h/x?a=1").to_string(),
            "http://u:***@h/x?a=1"
        );
        assert_eq!(url("http://user@h/").to_string(), "http://user@h/");
        // A password with an unescaped `?` or `#` is still hidden whole.
        assert_eq!(url("http://u:p#ss@h/x").to_string(), "http://u:***@h/x");
        assert_eq!(url("http://u:p?ss@h/x").to_string(), "http://u:***@h/x");
    }

    #[test]
    fn splits_userinfo_into_credentials() {
        let (rest, credentials) = split_userinfo("https://u%3Ax:p@ss@h:1/p?q=a@b");
        assert_eq!(rest, "https://h:1/p?q=a@b");
        let credentials = credentials.unwrap();
        assert_eq!(credentials.username(), "u:x");
        assert_eq!(credentials.password(), "p@ss");
        assert!(!format!("{credentials:?}").contains("p@ss"));
        let header = credentials.basic_authorization().unwrap();
        assert!(header.is_sensitive());

        let (rest, credentials) = split_userinfo("http://h/a@b");
        assert!(matches!(rest, Cow::Borrowed("http://h/a@b")));
        assert!(credentials.is_none());
        let (_, credentials) = split_userinfo("http://user@h/");
        assert_eq!(credentials, Some(Credentials::new("user", "")));
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
