//! The headers a call adds, parsed and checked once, with the error a caller sees.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use http::HeaderMap;

use super::validate::{header_name, is_clean_header_value, is_forbidden_header};
use crate::meta::MethodMeta;
use crate::Error;

/// A method's `#[headers]` as a map, or the first invalid one's error.
pub(crate) fn static_headers(meta: &MethodMeta) -> Result<HeaderMap, Error> {
    let mut headers = HeaderMap::new();
    for (name, value) in meta.headers {
        let (name, value) = parse_header(name, Bytes::from_static(value.as_bytes()))?;
        insert_header(&mut headers, name, value);
    }
    Ok(headers)
}

/// Adds a header; `Content-Type` replaces an earlier one, other names accumulate.
pub(crate) fn insert_header(headers: &mut HeaderMap, name: HeaderName, value: HeaderValue) {
    if name == CONTENT_TYPE {
        headers.insert(name, value);
    } else {
        headers.append(name, value);
    }
}

/// Parses one header a call adds, with the error a caller sees when it is invalid.
pub(crate) fn parse_header(name: &str, value: Bytes) -> Result<(HeaderName, HeaderValue), Error> {
    let shown_name = || {
        name.chars()
            .filter(char::is_ascii_graphic)
            .take(64)
            .collect::<String>()
    };
    let Some(parsed) = header_name(name) else {
        return Err(Error::request(format!(
            "invalid header name `{}`",
            shown_name()
        )));
    };
    if is_forbidden_header(&parsed) {
        return Err(Error::request(format!(
            "header `{parsed}` cannot be set by a parameter"
        )));
    }
    if !is_clean_header_value(&value) {
        return Err(Error::request(format!(
            "invalid value for header `{parsed}`: control or non-ASCII bytes"
        )));
    }
    let value = HeaderValue::from_maybe_shared(value)
        .map_err(|_| Error::request(format!("invalid value for header `{parsed}`")))?;
    Ok((parsed, value))
}

/// Checks every header about to be sent, whatever route it took (a parameter, `#[headers]`,
/// an interceptor's `insert_header` or `headers_mut()`, a layer): no header the transport
/// owns (`Host`, `Content-Length`, ...), and values of visible ASCII, space and tab only.
pub(crate) fn check_headers(headers: &HeaderMap) -> Result<(), Error> {
    for (name, value) in headers {
        if header_name(name.as_str()).is_none() {
            return Err(Error::request(format!("invalid header name `{name}`")));
        }
        if is_forbidden_header(name) {
            return Err(Error::request(format!(
                "header `{name}` is set by the transport and cannot be sent by a request"
            )));
        }
        if !is_clean_header_value(value.as_bytes()) {
            return Err(Error::request(format!(
                "invalid value for header `{name}`: control or non-ASCII bytes"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::{HttpMethod, MethodOptions};

    const fn meta(headers: &'static [(&'static str, &'static str)]) -> MethodMeta {
        MethodMeta {
            key: "Api#get",
            name: "get",
            method: HttpMethod::Get,
            route: "GET /",
            path: &[],
            query: &[],
            headers,
            idempotent: true,
            options: MethodOptions::NONE,
        }
    }

    #[test]
    fn static_headers_become_one_map_with_content_type_replaced() {
        let headers = static_headers(&meta(&[
            ("Accept", "application/json"),
            ("X-Tag", "a"),
            ("X-Tag", "b"),
            ("Content-Type", "text/plain"),
            ("Content-Type", "application/json"),
        ]))
        .expect("valid headers");
        assert_eq!(headers["accept"], "application/json");
        assert_eq!(headers.get_all("x-tag").iter().count(), 2);
        assert_eq!(headers.get_all("content-type").iter().count(), 1);
        assert_eq!(headers["content-type"], "application/json");
    }

    #[test]
    fn an_invalid_static_header_is_an_error_naming_it() {
        for (bad, shown) in [
            (
                meta(&[("X-Ok", "1"), ("X-Bad", "a\r\nInjected: 1")]),
                "x-bad",
            ),
            (meta(&[("Bad Name", "1")]), "BadName"),
            (meta(&[("Host", "elsewhere")]), "host"),
        ] {
            let error = static_headers(&bad).expect_err("an invalid header");
            assert!(error.to_string().contains(shown), "{error}");
        }
    }
}
