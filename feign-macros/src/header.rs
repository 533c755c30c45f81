//! Compile-time checks of header names and values (RFC 9110 section 5), by the rules of
//! `feign_header_rules`, the ones the runtime applies to every header it sends.

use std::fmt;

use feign_header_rules::{NameError, ValueError};

/// Why a header literal was refused: the rule it breaks, with the header's name for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// A `#[headers]` line without the `:` of `"Name: value"`; holds the line.
    MissingColon(String),
    /// The name breaks a rule of `feign_header_rules`.
    Name { name: String, error: NameError },
    /// The value of header `name` breaks a rule of `feign_header_rules`.
    Value { name: String, error: ValueError },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::MissingColon(line) => {
                write!(f, "expected \"Name: value\", found {line:?}")
            }
            HeaderError::Name { name, error } => match error {
                NameError::Empty => f.write_str("empty header name"),
                NameError::InvalidChar(bad) => write!(
                    f,
                    "invalid character {bad:?} in header name `{}`",
                    name.escape_debug()
                ),
                NameError::Forbidden => write!(
                    f,
                    "header `{name}` is set by the HTTP client and cannot be set by a method"
                ),
            },
            HeaderError::Value { name, error } => match error {
                ValueError::Control(bad) => {
                    write!(
                        f,
                        "invalid control character {bad:?} in the value of header `{name}`"
                    )
                }
                ValueError::NonAscii(bad) => write!(
                    f,
                    "non-ASCII character {bad:?} in the value of header `{name}`: \
                     header values are visible ASCII, space and tab"
                ),
            },
        }
    }
}

impl std::error::Error for HeaderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HeaderError::MissingColon(_) => None,
            HeaderError::Name { error, .. } => Some(error),
            HeaderError::Value { error, .. } => Some(error),
        }
    }
}

/// Checks a header name: a non-empty token that is not one the transport owns.
pub(crate) fn check_name(name: &str) -> Result<(), HeaderError> {
    feign_header_rules::check_name(name).map_err(|error| HeaderError::Name {
        name: name.to_owned(),
        error,
    })
}

/// Checks a header value: visible ASCII, space and tab only, so no CR, LF, NUL or non-ASCII
/// character.
pub(crate) fn check_value(name: &str, value: &str) -> Result<(), HeaderError> {
    feign_header_rules::check_value(value).map_err(|error| HeaderError::Value {
        name: name.to_owned(),
        error,
    })
}

/// Splits and checks `"Name: value"`, returning the name and the value without surrounding
/// whitespace.
pub(crate) fn parse_line(line: &str) -> Result<(String, String), HeaderError> {
    let Some((name, value)) = line.split_once(':') else {
        return Err(HeaderError::MissingColon(line.to_owned()));
    };
    check_name(name)?;
    let value = value.trim_matches([' ', '\t']);
    check_value(name, value)?;
    Ok((name.to_owned(), value.to_owned()))
}

/// A piece of a `#[headers]` value: literal text, or a `{name}` filled from a parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Literal(String),
    Var(String),
}

/// Splits a header value into literals and `{name}` variables, where a name is a Rust
/// identifier (`[A-Za-z_][A-Za-z0-9_]*`); any other brace is literal text, so a JSON value
/// stays as written.
pub(crate) fn split_template(value: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut rest = value;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let var = after.find('}').map(|close| &after[..close]).filter(|name| {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        match var {
            Some(name) => {
                literal.push_str(&rest[..open]);
                if !literal.is_empty() {
                    pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                }
                pieces.push(Piece::Var(name.to_owned()));
                rest = &after[name.len() + 1..];
            }
            None => {
                literal.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    literal.push_str(rest);
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_plain_line_and_trims_the_value() {
        assert_eq!(
            parse_line("Accept:  application/json ").unwrap(),
            ("Accept".into(), "application/json".into())
        );
        assert_eq!(
            parse_line("X-Empty:").unwrap(),
            ("X-Empty".into(), String::new())
        );
    }

    fn name_error(line: &str) -> NameError {
        match parse_line(line) {
            Err(HeaderError::Name { error, .. }) => error,
            other => panic!("{line:?}: {other:?}"),
        }
    }

    fn value_error(line: &str) -> ValueError {
        match parse_line(line) {
            Err(HeaderError::Value { error, .. }) => error,
            other => panic!("{line:?}: {other:?}"),
        }
    }

    #[test]
    fn rejects_bad_names_values_and_forbidden_headers() {
        assert_eq!(
            parse_line("no colon"),
            Err(HeaderError::MissingColon("no colon".into()))
        );
        assert_eq!(name_error("Bad Name: x"), NameError::InvalidChar(' '));
        assert_eq!(name_error(": x"), NameError::Empty);
        assert_eq!(value_error("X-A: a\r\nX-B: b"), ValueError::Control('\r'));
        assert_eq!(value_error("X-A: a\0"), ValueError::Control('\0'));
        assert_eq!(name_error("host: example.com"), NameError::Forbidden);
        assert_eq!(name_error("Content-Length: 3"), NameError::Forbidden);
        assert!(check_name("Transfer-Encoding").is_err());
        assert!(check_name("CONNECTION").is_err());
        assert_eq!(name_error("TE: trailers"), NameError::Forbidden);
        assert_eq!(name_error("Keep-Alive: timeout=5"), NameError::Forbidden);
        assert_eq!(
            value_error("X-Name: caf\u{e9}"),
            ValueError::NonAscii('\u{e9}')
        );
        assert_eq!(value_error("X-A: a\x7f"), ValueError::Control('\x7f'));
        assert!(check_value("X-A", "a\tb").is_ok());
    }

    #[test]
    fn templates_split_into_literals_and_identifier_variables() {
        use Piece::{Literal, Var};
        assert_eq!(
            split_template("v{version}; tenant={tenant_id}"),
            [
                Literal("v".into()),
                Var("version".into()),
                Literal("; tenant=".into()),
                Var("tenant_id".into()),
            ]
        );
        assert_eq!(
            split_template("{\"a\":1} {} {1x} {"),
            [Literal("{\"a\":1} {} {1x} {".into())]
        );
        assert_eq!(split_template("{a}{b}"), [Var("a".into()), Var("b".into())]);
    }

    #[test]
    fn messages_name_the_header_at_fault() {
        let message = |line: &str| parse_line(line).unwrap_err().to_string();
        assert_eq!(
            message("no colon"),
            "expected \"Name: value\", found \"no colon\""
        );
        assert_eq!(message(": x"), "empty header name");
        assert_eq!(
            message("Bad\tName: x"),
            "invalid character '\\t' in header name `Bad\\tName`"
        );
        assert_eq!(
            message("Host: h"),
            "header `Host` is set by the HTTP client and cannot be set by a method"
        );
        assert_eq!(
            message("X-A: a\nb"),
            "invalid control character '\\n' in the value of header `X-A`"
        );
        assert_eq!(
            message("X-A: \u{e9}"),
            "non-ASCII character '\u{e9}' in the value of header `X-A`: \
             header values are visible ASCII, space and tab"
        );
    }
}
