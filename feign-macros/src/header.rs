//! Compile-time checks of header names and values (RFC 9110 section 5).

/// Headers the transport sets itself: a client method may not set them.
const FORBIDDEN: &[&str] = &["host", "content-length", "transfer-encoding", "connection"];

/// Checks a header name: a non-empty token that is not one the transport owns.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty header name".to_owned());
    }
    if let Some(bad) = name.chars().find(|&c| !is_tchar(c)) {
        return Err(format!(
            "invalid character {bad:?} in header name `{}`",
            name.escape_debug()
        ));
    }
    if FORBIDDEN
        .iter()
        .any(|forbidden| forbidden.eq_ignore_ascii_case(name))
    {
        return Err(format!(
            "header `{name}` is set by the HTTP client and cannot be set by a method"
        ));
    }
    Ok(())
}

/// Checks a header value: no control byte other than tab, so no CR, LF or NUL.
pub(crate) fn check_value(name: &str, value: &str) -> Result<(), String> {
    match value.chars().find(|&c| c != '\t' && (c.is_ascii_control())) {
        Some(bad) => Err(format!(
            "invalid control character {bad:?} in the value of header `{name}`"
        )),
        None => Ok(()),
    }
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

/// `tchar` of RFC 9110 section 5.6.2.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
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
        assert!(check_value("X-A", "a\tb").is_ok());
    }
}
