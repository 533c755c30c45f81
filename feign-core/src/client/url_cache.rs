//! reqwest wants a [`url::Url`]; a request carries an [`http::Uri`]. reqwest's own conversion
//! prints the URI and parses the text again, host included, and the host is most of the work
//! (IDNA processing even for `127.0.0.1`). A client talks to few origins, so their parsed base
//! URLs are kept, and each request only sets its path and query on a copy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use url::Url;

use crate::cow_map::QuickHash;

/// Origins kept at most; past that, further origins are parsed whole on every request, so a
/// client that calls ever-new hosts holds bounded memory.
const MAX_ORIGINS: usize = 256;

/// Parsed base URLs by authority, read without a lock; an insert copies the map.
#[derive(Default)]
pub(super) struct UrlCache {
    origins: ArcSwap<HashMap<Box<str>, Url, QuickHash>>,
    inserting: Mutex<()>,
}

impl UrlCache {
    /// The URL of `uri`, the same as `Url::parse(&uri.to_string())`.
    pub(super) fn url(&self, uri: &http::Uri) -> Result<Url, url::ParseError> {
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Url::parse(&uri.to_string());
        };
        let authority = authority.as_str();
        if authority.contains('@') {
            // Credentials in a URL are not kept in a shared cache.
            return Url::parse(&uri.to_string());
        }
        let origins = self.origins.load();
        let base = match origins.get(authority) {
            Some(base) if base.scheme() == scheme => base.clone(),
            Some(_) => return Url::parse(&uri.to_string()),
            None => {
                drop(origins);
                self.insert(scheme, authority)?
            }
        };
        Ok(with_path_and_query(base, uri))
    }

    fn insert(&self, scheme: &str, authority: &str) -> Result<Url, url::ParseError> {
        let base = Url::parse(&format!("{scheme}://{authority}/"))?;
        let _inserting = self
            .inserting
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let current = self.origins.load_full();
        if current.len() < MAX_ORIGINS && !current.contains_key(authority) {
            let mut next = HashMap::clone(&current);
            next.insert(authority.into(), base.clone());
            self.origins.store(Arc::new(next));
        }
        Ok(base)
    }
}

fn with_path_and_query(mut url: Url, uri: &http::Uri) -> Url {
    url.set_path(uri.path());
    url.set_query(uri.query());
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_reparsing(text: &str) {
        let uri: http::Uri = text.parse().expect("a valid URI");
        let cache = UrlCache::default();
        let expected = Url::parse(&uri.to_string()).expect("a valid URL");
        // The first call fills the cache, the second reads it.
        assert_eq!(cache.url(&uri).expect("converted"), expected, "{text}");
        assert_eq!(cache.url(&uri).expect("converted"), expected, "{text}");
    }

    #[test]
    fn paths_and_queries_come_out_as_a_full_parse_gives_them() {
        for text in [
            "http://127.0.0.1:8080/orders/1",
            "http://127.0.0.1:8080/orders/1?expand=items&x=%20y",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:8080",
            "http://127.0.0.1:8080/a/../b/./c",
            "http://127.0.0.1:8080/a%2Fb/%2e%2e/c?",
            "https://Example.COM/x?q=1",
            "http://[::1]:9000/v1/items?ids=1,2",
            "http://example.com:80/default-port",
            "http://example.com/pipe|brace{}?a=b|c",
        ] {
            same_as_reparsing(text);
        }
    }

    #[test]
    fn one_authority_under_two_schemes_is_not_mixed_up() {
        let cache = UrlCache::default();
        let http: http::Uri = "http://example.com:8443/a".parse().unwrap();
        let https: http::Uri = "https://example.com:8443/a".parse().unwrap();
        assert_eq!(
            cache.url(&http).unwrap().as_str(),
            "http://example.com:8443/a"
        );
        assert_eq!(
            cache.url(&https).unwrap().as_str(),
            "https://example.com:8443/a"
        );
    }

    #[test]
    fn credentials_are_never_cached() {
        let cache = UrlCache::default();
        let uri: http::Uri = "http://user:secret@example.com/a".parse().unwrap();
        assert_eq!(cache.url(&uri).unwrap().password(), Some("secret"));
        assert!(cache.origins.load().is_empty());
    }

    #[test]
    fn the_cache_stops_growing_at_its_bound() {
        let cache = UrlCache::default();
        for port in 0..MAX_ORIGINS + 10 {
            let uri: http::Uri = format!("http://127.0.0.1:{}/x", 1000 + port)
                .parse()
                .unwrap();
            assert_eq!(
                cache.url(&uri).unwrap().port(),
                Some(u16::try_from(1000 + port).unwrap())
            );
        }
        assert_eq!(cache.origins.load().len(), MAX_ORIGINS);
    }

    proptest::proptest! {
        #[test]
        fn any_uri_converts_as_a_full_parse_does(
            host in proptest::sample::select(vec!["127.0.0.1:8080", "example.com", "[::1]:1", "xn--bcher-kva.example"]),
            path in "(/[a-zA-Z0-9%._~!$&'()*+,;=:@|{}-]{0,12}){0,4}",
            query in proptest::option::of("[a-zA-Z0-9%._~!$&'()*+,;=:@/?|{}-]{0,16}"),
        ) {
            let text = match &query {
                Some(query) => format!("http://{host}{path}?{query}"),
                None => format!("http://{host}{path}"),
            };
            let uri: http::Uri = text.parse().expect("the generator makes valid URIs");
            let expected = Url::parse(&uri.to_string()).ok();
            let cache = UrlCache::default();
            // The first call fills the cache, the second reads it.
            let (filling, reading) = (cache.url(&uri).ok(), cache.url(&uri).ok());
            proptest::prop_assert_eq!(&filling, &expected);
            proptest::prop_assert_eq!(&reading, &expected);
        }
    }
}
