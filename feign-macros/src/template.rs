//! Compile-time parsing of path templates such as `/orders/{id}?view=full`.
//!
//! Literal text is percent-encoded here where needed, so the runtime copies it as is and no
//! template is parsed at run time.

/// One piece of a path template.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// Text valid in a URL path.
    Literal(String),
    /// The name between braces.
    Var(String),
}

/// A parsed template: the path pieces and the literal query pairs written after `?`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Template {
    pub(crate) parts: Vec<Part>,
    pub(crate) query: Vec<(String, String)>,
}

impl Template {
    /// The variable names in the order they appear.
    pub(crate) fn vars(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Var(name) => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }
}

/// Parses a method's template.
pub(crate) fn parse_method(template: &str) -> Result<Template, String> {
    check_relative(template)?;
    if template.contains('#') {
        return Err("a path template cannot hold a fragment (`#...`)".to_owned());
    }
    let (path, query) = match template.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (template, None),
    };
    if !path.is_empty() && !path.starts_with('/') {
        return Err(format!("a method path starts with `/`: write \"/{path}\""));
    }
    let parts = parse_path(path)?;
    let query = match query {
        Some(query) => parse_query(query)?,
        None => Vec::new(),
    };
    Ok(Template { parts, query })
}

/// Parses the `path = "/api"` prefix of a client: literal text only.
pub(crate) fn parse_prefix(prefix: &str) -> Result<String, String> {
    check_relative(prefix)?;
    if prefix.contains(['{', '}', '?', '#']) {
        return Err(
            "the client's `path` is a literal prefix: no `{var}`, query or fragment".to_owned(),
        );
    }
    if !prefix.is_empty() && !prefix.starts_with('/') {
        return Err(format!(
            "the client's `path` starts with `/`: write \"/{prefix}\""
        ));
    }
    Ok(encode(prefix, is_path_char))
}

fn check_relative(template: &str) -> Result<(), String> {
    if template.contains("://") || template.starts_with("//") {
        return Err(
            "absolute URL in a method path: put the base URL in #[feign_client(url = \"...\")] or on the builder"
                .to_owned(),
        );
    }
    Ok(())
}

fn parse_path(path: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            None => {
                parts.push(Part::Literal(encode(rest, is_path_char)));
                break;
            }
            Some(at) if rest[at..].starts_with('}') => {
                return Err(format!("unmatched `}}` in path template \"{path}\""));
            }
            Some(at) => {
                if at > 0 {
                    parts.push(Part::Literal(encode(&rest[..at], is_path_char)));
                }
                let after = &rest[at + 1..];
                let Some(end) = after.find('}') else {
                    return Err(format!("unclosed `{{` in path template \"{path}\""));
                };
                let name = &after[..end];
                if name.is_empty()
                    || !name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                {
                    return Err(format!(
                        "invalid variable `{{{name}}}`: expected a name such as `{{id}}`"
                    ));
                }
                parts.push(Part::Var(name.to_owned()));
                rest = &after[end + 1..];
            }
        }
    }
    Ok(parts)
}

fn parse_query(query: &str) -> Result<Vec<(String, String)>, String> {
    if query.contains(['{', '}']) {
        return Err(
            "variables are expanded in the path only: take the value as a #[query] parameter"
                .to_owned(),
        );
    }
    let mut pairs = Vec::new();
    for piece in query.split('&').filter(|piece| !piece.is_empty()) {
        let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
        if name.is_empty() {
            return Err(format!("query pair `{piece}` has no name"));
        }
        pairs.push((encode(name, is_unreserved), encode(value, is_unreserved)));
    }
    Ok(pairs)
}

/// RFC 3986 `unreserved`.
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~".contains(&byte)
}

/// RFC 3986 `pchar` and `/`, without `%` (handled by [`encode`]).
fn is_path_char(byte: u8) -> bool {
    is_unreserved(byte) || b"!$&'()*+,;=:@/".contains(&byte)
}

/// Percent-encodes every byte `keep` rejects, leaving valid `%XX` escapes as they are.
fn encode(text: &str, keep: fn(u8) -> bool) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    for (i, &byte) in bytes.iter().enumerate() {
        let escape = byte == b'%'
            && bytes.len() > i + 2
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit();
        if keep(byte) || escape {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(text: &str) -> Part {
        Part::Literal(text.to_owned())
    }

    fn var(name: &str) -> Part {
        Part::Var(name.to_owned())
    }

    #[test]
    fn splits_literals_and_variables() {
        let template = parse_method("/orders/{id}/items/{item-id}.json").unwrap();
        assert_eq!(
            template.parts,
            vec![
                lit("/orders/"),
                var("id"),
                lit("/items/"),
                var("item-id"),
                lit(".json")
            ]
        );
        assert!(template.query.is_empty());
        assert_eq!(parse_method("").unwrap(), Template::default());
    }

    #[test]
    fn keeps_literal_query_pairs_encoded() {
        let template = parse_method("/search?view=full&flag&q=a b+c").unwrap();
        assert_eq!(template.parts, vec![lit("/search")]);
        let expected = [("view", "full"), ("flag", ""), ("q", "a%20b%2Bc")];
        assert_eq!(
            template.query,
            expected.map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
    }

    #[test]
    fn encodes_what_is_not_valid_in_a_path_but_keeps_escapes() {
        let template = parse_method("/a b/caf\u{e9}/100%/x%2Fy").unwrap();
        assert_eq!(template.parts, vec![lit("/a%20b/caf%C3%A9/100%25/x%2Fy")]);
    }

    #[test]
    fn rejects_malformed_templates() {
        for bad in [
            "/a/{id",
            "/a/}",
            "/a/{}",
            "/a/{b c}",
            "http://host/a",
            "//host/a",
            "a/b",
            "/a#frag",
            "/a?q={q}",
            "/a?=x",
        ] {
            assert!(parse_method(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn checks_the_client_prefix() {
        assert_eq!(parse_prefix("/api/v1").unwrap(), "/api/v1");
        assert_eq!(parse_prefix("").unwrap(), "");
        for bad in ["api", "/api/{v}", "/api?x", "https://host/api"] {
            assert!(parse_prefix(bad).is_err(), "{bad}");
        }
    }
}
