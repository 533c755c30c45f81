//! The builder's default request headers and query parameters (OpenFeign's
//! `defaultRequestHeaders` and `defaultQueryParameters`).

use async_trait::async_trait;
use http::header::{HeaderName, HeaderValue};

use super::{RequestInterceptor, RequestTemplate};
use crate::Error;

/// Adds each default header to requests that lack it (every value, in order), and each
/// default query parameter to requests whose query lacks that name.
#[derive(Debug)]
pub(crate) struct Defaults {
    headers: Vec<(HeaderName, Vec<HeaderValue>)>,
    query: Vec<(String, Vec<String>)>,
}

impl Defaults {
    /// Checks the pairs and groups the values of one name; `None` when there are none.
    pub(crate) fn new(
        headers: &[(String, String)],
        query: &[(String, String)],
    ) -> Result<Option<Defaults>, Error> {
        let mut defaults = Defaults {
            headers: Vec::new(),
            query: Vec::new(),
        };
        for (name, value) in headers {
            let invalid =
                || Error::builder(format!("default header `{}` is invalid", printable(name)));
            let name = crate::headers::name(name).ok_or_else(invalid)?;
            if crate::headers::is_forbidden(&name)
                || !crate::headers::is_clean_value(value.as_bytes())
            {
                return Err(invalid());
            }
            let value = HeaderValue::try_from(value.as_str()).map_err(|_| invalid())?;
            match defaults.headers.iter_mut().find(|(n, _)| *n == name) {
                Some((_, values)) => values.push(value),
                None => defaults.headers.push((name, vec![value])),
            }
        }
        for (name, value) in query {
            if name.is_empty() {
                return Err(Error::builder("a default query parameter has no name"));
            }
            match defaults.query.iter_mut().find(|(n, _)| n == name) {
                Some((_, values)) => values.push(value.clone()),
                None => defaults.query.push((name.clone(), vec![value.clone()])),
            }
        }
        let empty = defaults.headers.is_empty() && defaults.query.is_empty();
        Ok((!empty).then_some(defaults))
    }
}

/// A name safe to show in an error: printable ASCII, at most 64 characters.
fn printable(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_graphic)
        .take(64)
        .collect()
}

/// Whether the query of `path_and_query` has a parameter called `name` (decoded).
fn has_query_param(path_and_query: &str, name: &str) -> bool {
    let Some((_, query)) = path_and_query.split_once('?') else {
        return false;
    };
    query.split('&').any(|pair| {
        let raw = pair.split_once('=').map_or(pair, |(n, _)| n);
        percent_encoding::percent_decode_str(&raw.replace('+', " ")).decode_utf8_lossy() == name
    })
}

#[async_trait]
impl RequestInterceptor for Defaults {
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error> {
        for (name, values) in &self.headers {
            if !request.headers.contains_key(name) {
                for value in values {
                    request.headers.append(name.clone(), value.clone());
                }
            }
        }
        for (name, values) in &self.query {
            if !has_query_param(&request.path_and_query, name) {
                for value in values {
                    request.append_query(name, value);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_names_are_compared_decoded() {
        assert!(has_query_param("/a?x%20y=1&b", "x y"));
        assert!(has_query_param("/a?x+y=1", "x y"));
        assert!(has_query_param("/a?b", "b"));
        assert!(!has_query_param("/a?bb=1", "b"));
        assert!(!has_query_param("/a", "a"));
    }

    #[test]
    fn invalid_defaults_are_builder_errors() {
        let bad_header = [("Bad Name".to_owned(), "v".to_owned())];
        assert!(Defaults::new(&bad_header, &[]).is_err());
        let bad_value = [("X-Ok".to_owned(), "a\r\nb".to_owned())];
        assert!(Defaults::new(&bad_value, &[]).is_err());
        let framing = [("Content-Length".to_owned(), "1".to_owned())];
        assert!(Defaults::new(&framing, &[]).is_err());
        assert!(Defaults::new(&[], &[(String::new(), "v".to_owned())]).is_err());
        assert!(Defaults::new(&[], &[]).unwrap().is_none());
    }
}
