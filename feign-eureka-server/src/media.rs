//! Content negotiation as the real server does it: which of JSON and XML a request body is and
//! a response should be, and what Spring's error pages answer in.

use http::{header, HeaderMap};

/// The two forms of a Eureka document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Format {
    /// `application/json`.
    Json,
    /// `application/xml`.
    Xml,
}

impl Format {
    /// The response's `Content-Type`.
    pub(crate) fn media_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Xml => feign_eureka::model::XML_MEDIA_TYPE,
        }
    }
}

/// What the `Accept` header allows: each range's lower-case `type/subtype` and quality, in the
/// header's order; `None` without the header.
fn accept_ranges(headers: &HeaderMap) -> Option<Vec<(String, f32)>> {
    let mut values = headers.get_all(header::ACCEPT).iter().peekable();
    values.peek()?;
    let mut ranges = Vec::new();
    for value in values {
        let Ok(value) = value.to_str() else { continue };
        for range in value.split(',') {
            let mut parts = range.split(';');
            let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            if essence.is_empty() {
                continue;
            }
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            ranges.push((essence, q));
        }
    }
    // Highest quality first; equal ones keep the client's order, as Jersey and Spring sort.
    // A quality of 0 still accepts, as Jersey takes it.
    ranges.sort_by(|a, b| b.1.total_cmp(&a.1));
    Some(ranges)
}

fn matches(range: &str, media_type: &str) -> bool {
    range == "*/*"
        || range == media_type
        || range
            .strip_suffix("/*")
            .is_some_and(|ty| media_type.split('/').next() == Some(ty))
}

/// The first of `offered` (the server's order breaks ties, as for `*/*`) the client accepts;
/// the first offered one without an `Accept` header; `None` when it accepts none (406).
fn choose<T: Copy>(headers: &HeaderMap, offered: &[(&str, T)]) -> Option<Option<T>> {
    let Some(ranges) = accept_ranges(headers) else {
        return Some(offered.first().map(|(_, t)| *t));
    };
    for (range, _) in &ranges {
        if let Some((_, t)) = offered.iter().find(|(ty, _)| matches(range, ty)) {
            return Some(Some(*t));
        }
    }
    None
}

/// The form of a Eureka document answer, as Jersey picks among the resources' `application/xml`
/// and `application/json` (XML first: no `Accept`, `*/*` and `application/*` get XML); `None`
/// when the client accepts neither (`text/xml` included), which the real server answers 406.
pub(crate) fn document(headers: &HeaderMap) -> Option<Format> {
    choose(
        headers,
        &[
            ("application/xml", Format::Xml),
            ("application/json", Format::Json),
        ],
    )
    .flatten()
}

/// The form of a cached document (registry, delta, application, VIPs): JSON whenever the
/// `Accept` header mentions `json`, as Eureka's resources test it, else as [`document`].
pub(crate) fn cached_document(headers: &HeaderMap) -> Option<Format> {
    let format = document(headers)?;
    let mentions_json = headers
        .get_all(header::ACCEPT)
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| v.contains("json")));
    Some(if mentions_json { Format::Json } else { format })
}

/// How Spring Boot's error page answers: JSON, or its `<Map>` XML under the accepted XML type;
/// `None` when the client accepts neither (the error then has no body).
pub(crate) fn error_page(headers: &HeaderMap) -> Option<(Format, &'static str)> {
    choose(
        headers,
        &[
            ("application/json", (Format::Json, "application/json")),
            (
                "application/xml",
                (Format::Xml, "application/xml;charset=UTF-8"),
            ),
            ("text/xml", (Format::Xml, "text/xml;charset=UTF-8")),
        ],
    )
    .flatten()
}

/// Why a request body cannot be read (415).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// No `Content-Type`.
    Missing,
    /// Neither JSON nor XML, or a charset other than UTF-8 and ISO-8859-1.
    Unsupported,
}

/// The form of a request body, as Eureka's reader takes it: `application/json` or
/// `application/xml` (parameters allowed, case ignored), with no charset or UTF-8 or ISO-8859-1.
pub(crate) fn body(headers: &HeaderMap) -> Result<Format, Unreadable> {
    let value = headers
        .get(header::CONTENT_TYPE)
        .ok_or(Unreadable::Missing)?
        .to_str()
        .map_err(|_| Unreadable::Unsupported)?;
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset_ok = parts
        .filter_map(|p| {
            let (name, value) = p.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| value.trim().trim_matches('"').to_ascii_lowercase())
        })
        .all(|charset| matches!(charset.as_str(), "utf-8" | "iso-8859-1"));
    match essence.as_str() {
        _ if !charset_ok => Err(Unreadable::Unsupported),
        "application/json" => Ok(Format::Json),
        "application/xml" => Ok(Format::Xml),
        _ => Err(Unreadable::Unsupported),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(name: header::HeaderName, value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn documents_default_to_xml_and_follow_the_client_order() {
        assert_eq!(document(&HeaderMap::new()), Some(Format::Xml));
        let accept = |v| headers(header::ACCEPT, v);
        assert_eq!(document(&accept("*/*")), Some(Format::Xml));
        assert_eq!(document(&accept("application/json")), Some(Format::Json));
        assert_eq!(
            document(&accept("application/json, application/xml")),
            Some(Format::Json)
        );
        assert_eq!(
            document(&accept("application/xml;q=0.5, application/json")),
            Some(Format::Json)
        );
        assert_eq!(
            document(&accept("application/json;q=0")),
            Some(Format::Json)
        );
        assert_eq!(document(&accept("text/xml")), None);
        assert_eq!(document(&accept("text/plain")), None);
        assert_eq!(
            cached_document(&accept("application/xml, application/json")),
            Some(Format::Json)
        );
    }

    #[test]
    fn error_pages_prefer_json() {
        assert_eq!(error_page(&HeaderMap::new()).unwrap().0, Format::Json);
        assert_eq!(
            error_page(&headers(header::ACCEPT, "text/xml")),
            Some((Format::Xml, "text/xml;charset=UTF-8"))
        );
        assert_eq!(error_page(&headers(header::ACCEPT, "text/plain")), None);
    }

    #[test]
    fn bodies_are_json_or_xml_in_a_readable_charset() {
        let ct = |v| headers(header::CONTENT_TYPE, v);
        assert_eq!(body(&ct("application/json")), Ok(Format::Json));
        assert_eq!(body(&ct("Application/XML; charset=utf-8")), Ok(Format::Xml));
        assert_eq!(body(&ct("text/xml")), Err(Unreadable::Unsupported));
        assert_eq!(
            body(&ct("application/xml;charset=UTF-16")),
            Err(Unreadable::Unsupported)
        );
        assert_eq!(body(&HeaderMap::new()), Err(Unreadable::Missing));
    }
}
