//! Compile-time checks of header names and values (RFC 9110 section 5), by the rules of
//! `feign_header_rules`, the ones the runtime applies to every header it sends.

use feign_header_rules::{NameError, ValueError};

/// Checks a header name: a non-empty token that is not one the transport owns.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    feign_header_rules::check_name(name).map_err(|error| match error {
        NameError::Empty => "empty header name".to_owned(),
        NameError::InvalidChar(bad) => format!(
            "invalid character {bad:?} in header name `{}`",
            name.escape_debug()
        ),
        NameError::Forbidden => {
            format!("header `{name}` is set by the HTTP client and cannot be set by a method")
        }
    })
}

/// Checks a header value: visible ASCII, space and tab only, so no CR, LF, NUL or non-ASCII
/// character.
pub(crate) fn check_value(name: &str, value: &str) -> Result<(), String> {
    feign_header_rules::check_value(value).map_err(|error| match error {
        ValueError::Control(bad) => {
            format!("invalid control character {bad:?} in the value of header `{name}`")
        }
        ValueError::NonAscii(bad) => format!(
            "non-ASCII character {bad:?} in the value of header `{name}`: \
             header values are visible ASCII, space and tab"
        ),
    })
}

/// Splits and checks `"Name: value"`, returning the name and the value without surrounding
/// whitespace.
pub(crate) fn parse_line(line: &str) -> Result<(String, String), String> {
    let Some((name, value)) = line.split_once(':') else {
        return Err(format!("expected \"Name: value\", found {line:?}"));
    };
    check_name(name)?;
    let value = value.trim_matches([' ', '\t']);
    check_value(name, value)?;
    Ok((name.to_owned(), value.to_owned()))
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

    #[test]
    fn rejects_bad_names_values_and_forbidden_headers() {
        assert!(parse_line("no colon").is_err());
        assert!(parse_line("Bad Name: x").is_err());
        assert!(parse_line(": x").is_err());
        assert!(parse_line("X-A: a\r\nX-B: b").is_err());
        assert!(parse_line("X-A: a\0").is_err());
        assert!(parse_line("host: example.com").is_err());
        assert!(parse_line("Content-Length: 3").is_err());
        assert!(check_name("Transfer-Encoding").is_err());
        assert!(check_name("CONNECTION").is_err());
        assert!(parse_line("TE: trailers").is_err());
        assert!(parse_line("Keep-Alive: timeout=5").is_err());
        assert!(parse_line("X-Name: caf\u{e9}").is_err());
        assert!(parse_line("X-A: a\x7f").is_err());
        assert!(check_value("X-A", "a\tb").is_ok());
    }
}
