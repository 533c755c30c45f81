//! Compile-time parsing of path templates such as `/orders/{id}?view=full`.
//!
//! Literal text is percent-encoded here where needed, so the runtime copies it as is and no
//! template is parsed at run time.

use std::fmt;

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

/// A mistake in a method's template or in the client's `path` prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TemplateError {
    /// A scheme (`http://`) or an authority (`//host`): the base URL belongs elsewhere.
    AbsoluteUrl,
    /// A `#fragment`, which is never sent.
    Fragment,
    /// A method path that does not start with `/`; holds the path.
    MethodPathWithoutSlash(String),
    /// A `{var}`, query or fragment in the client's `path`.
    PrefixNotLiteral,
    /// A client `path` that does not start with `/`; holds the prefix.
    PrefixWithoutSlash(String),
    /// A `}` without its `{`; holds the path.
    UnmatchedClose(String),
    /// A `{` without its `}`; holds the path.
    Unclosed(String),
    /// A variable whose name is empty or not `[A-Za-z0-9_.-]`; holds the name.
    InvalidVar(String),
    /// A `{var}` after `?`.
    VarInQuery,
    /// A query pair `=value` without a name; holds the pair.
    QueryPairWithoutName(String),
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::AbsoluteUrl => f.write_str(
                "absolute URL in a method path: put the base URL in \
                 #[feign_client(url = \"...\")] or on the builder",
            ),
            TemplateError::Fragment => {
                f.write_str("a path template cannot hold a fragment (`#...`)")
            }
            TemplateError::MethodPathWithoutSlash(path) => {
                write!(f, "a method path starts with `/`: write \"/{path}\"")
            }
            TemplateError::PrefixNotLiteral => f.write_str(
                "the client's `path` is a literal prefix: no `{var}`, query or fragment",
            ),
            TemplateError::PrefixWithoutSlash(prefix) => {
                write!(
                    f,
                    "the client's `path` starts with `/`: write \"/{prefix}\""
                )
            }
            TemplateError::UnmatchedClose(path) => {
                write!(f, "unmatched `}}` in path template \"{path}\"")
            }
            TemplateError::Unclosed(path) => {
                write!(f, "unclosed `{{` in path template \"{path}\"")
            }
            TemplateError::InvalidVar(name) => write!(
                f,
                "invalid variable `{{{name}}}`: expected a name such as `{{id}}`"
            ),
            TemplateError::VarInQuery => f.write_str(
                "variables are expanded in the path only: take the value as a #[query] parameter",
            ),
            TemplateError::QueryPairWithoutName(piece) => {
                write!(f, "query pair `{piece}` has no name")
            }
        }
    }
}

impl std::error::Error for TemplateError {}

/// Parses a method's template.
pub(crate) fn parse_method(template: &str) -> Result<Template, TemplateError> {
    check_relative(template)?;
    if template.contains('#') {
        return Err(TemplateError::Fragment);
    }
    let (path, query) = match template.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (template, None),
    };
    if !path.is_empty() && !path.starts_with('/') {
        return Err(TemplateError::MethodPathWithoutSlash(path.to_owned()));
    }
    let parts = parse_path(path)?;
    let query = match query {
        Some(query) => parse_query(query)?,
        None => Vec::new(),
    };
    Ok(Template { parts, query })
}

/// Parses the `path = "/api"` prefix of a client: literal text only.
pub(crate) fn parse_prefix(prefix: &str) -> Result<String, TemplateError> {
    check_relative(prefix)?;
    if prefix.contains(['{', '}', '?', '#']) {
        return Err(TemplateError::PrefixNotLiteral);
    }
    if !prefix.is_empty() && !prefix.starts_with('/') {
        return Err(TemplateError::PrefixWithoutSlash(prefix.to_owned()));
    }
    Ok(encode(prefix, is_path_char))
}

fn check_relative(template: &str) -> Result<(), TemplateError> {
    if template.contains("://") || template.starts_with("//") {
        return Err(TemplateError::AbsoluteUrl);
    }
    Ok(())
}

fn parse_path(path: &str) -> Result<Vec<Part>, TemplateError> {
    let mut parts = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            None => {
                parts.push(Part::Literal(encode(rest, is_path_char)));
                break;
            }
            Some(at) if rest[at..].starts_with('}') => {
                return Err(TemplateError::UnmatchedClose(path.to_owned()));
            }
            Some(at) => {
                if at > 0 {
                    parts.push(Part::Literal(encode(&rest[..at], is_path_char)));
                }
                let after = &rest[at + 1..];
                let Some(end) = after.find('}') else {
                    return Err(TemplateError::Unclosed(path.to_owned()));
                };
                let name = &after[..end];
                if name.is_empty()
                    || !name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                {
                    return Err(TemplateError::InvalidVar(name.to_owned()));
                }
                parts.push(Part::Var(name.to_owned()));
                rest = &after[end + 1..];
            }
        }
    }
    Ok(parts)
}

fn parse_query(query: &str) -> Result<Vec<(String, String)>, TemplateError> {
    if query.contains(['{', '}']) {
        return Err(TemplateError::VarInQuery);
    }
    let mut pairs = Vec::new();
    for piece in query.split('&').filter(|piece| !piece.is_empty()) {
        let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
        if name.is_empty() {
            return Err(TemplateError::QueryPairWithoutName(piece.to_owned()));
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
        use TemplateError::*;
        for (bad, error) in [
            ("/a/{id", Unclosed("/a/{id".into())),
            ("/a/}", UnmatchedClose("/a/}".into())),
            ("/a/{}", InvalidVar(String::new())),
            ("/a/{b c}", InvalidVar("b c".into())),
            ("http://host/a", AbsoluteUrl),
            ("//host/a", AbsoluteUrl),
            ("a/b", MethodPathWithoutSlash("a/b".into())),
            ("/a#frag", Fragment),
            ("/a?q={q}", VarInQuery),
            ("/a?=x", QueryPairWithoutName("=x".into())),
        ] {
            assert_eq!(parse_method(bad), Err(error), "{bad}");
        }
    }

    #[test]
    fn messages_quote_the_template() {
        let message = |template: &str| parse_method(template).unwrap_err().to_string();
        assert_eq!(
            message("/a/{id"),
            "unclosed `{` in path template \"/a/{id\""
        );
        assert_eq!(message("/a/}"), "unmatched `}` in path template \"/a/}\"");
        assert_eq!(
            message("/a/{b c}"),
            "invalid variable `{b c}`: expected a name such as `{id}`"
        );
        assert_eq!(
            message("a/b"),
            "a method path starts with `/`: write \"/a/b\""
        );
        assert_eq!(message("/a?=x"), "query pair `=x` has no name");
        assert_eq!(
            message("http://host/a"),
            "absolute URL in a method path: put the base URL in \
             #[feign_client(url = \"...\")] or on the builder"
        );
        assert_eq!(
            message("/a#frag"),
            "a path template cannot hold a fragment (`#...`)"
        );
        assert_eq!(
            parse_prefix("/api/{v}").unwrap_err().to_string(),
            "the client's `path` is a literal prefix: no `{var}`, query or fragment"
        );
        assert_eq!(
            parse_prefix("api").unwrap_err().to_string(),
            "the client's `path` starts with `/`: write \"/api\""
        );
    }

    #[test]
    fn checks_the_client_prefix() {
        assert_eq!(parse_prefix("/api/v1").unwrap(), "/api/v1");
        assert_eq!(parse_prefix("").unwrap(), "");
        for (bad, error) in [
            ("api", TemplateError::PrefixWithoutSlash("api".into())),
            ("/api/{v}", TemplateError::PrefixNotLiteral),
            ("/api?x", TemplateError::PrefixNotLiteral),
            ("https://host/api", TemplateError::AbsoluteUrl),
        ] {
            assert_eq!(parse_prefix(bad), Err(error), "{bad}");
        }
    }
}
