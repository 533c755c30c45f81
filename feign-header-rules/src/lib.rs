//! The rules a header set by a feign-rs client must follow, in one place.
//!
//! `#[feign_client]` applies them to header literals at compile time and feign-core to every
//! header it sends at run time, so a header the macro accepts is one the runtime sends:
//!
//! - a **name** is an RFC 9110 token (`tchar`s, at least one) and not one of
//!   [`FORBIDDEN_NAMES`], the headers that frame or route the message, which only the transport
//!   sets;
//! - a **value** holds visible ASCII, space and tab only: no CR, LF, NUL, other control, DEL or
//!   non-ASCII byte, so nothing can be smuggled into another header or line.
//!
//! The crate has no dependencies, so a proc-macro crate can use it.
//!
//! ```
//! use feign_header_rules::{check_name, check_value, NameError, ValueError};
//!
//! assert_eq!(check_name("X-Request-Id"), Ok(()));
//! assert_eq!(check_name("TE"), Err(NameError::Forbidden));
//! assert_eq!(check_name("Bad Name"), Err(NameError::InvalidChar(' ')));
//! assert_eq!(check_value("Bearer abc\tdef"), Ok(()));
//! assert_eq!(check_value("caf\u{e9}"), Err(ValueError::NonAscii('\u{e9}')));
//! assert_eq!(check_value("a\r\nX-Injected: 1"), Err(ValueError::Control('\r')));
//! ```

use std::fmt;

/// Headers that frame or route the message, lowercase: only the transport sets them, and a
/// client method, interceptor or default may not.
pub const FORBIDDEN_NAMES: [&str; 9] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "te",
    "trailer",
    "upgrade",
    "keep-alive",
    "proxy-connection",
];

/// Whether `name` is one of [`FORBIDDEN_NAMES`], in any case.
pub fn is_forbidden_name(name: &str) -> bool {
    FORBIDDEN_NAMES
        .iter()
        .any(|forbidden| forbidden.eq_ignore_ascii_case(name))
}

/// Whether `b` may appear in a header name: a `tchar` of RFC 9110 section 5.6.2.
pub fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether `name` is a token: not empty, and only [`is_name_byte`] bytes. Forbidden names are
/// valid tokens; ask [`is_forbidden_name`] too.
pub fn is_valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&b| is_name_byte(b))
}

/// Whether `b` may appear in a header value: visible ASCII, space or tab.
pub fn is_value_byte(b: u8) -> bool {
    b == b'\t' || (0x20..0x7f).contains(&b)
}

/// Whether every byte of `value` is an [`is_value_byte`]. An empty value is valid.
pub fn is_valid_value(value: &[u8]) -> bool {
    value.iter().all(|&b| is_value_byte(b))
}

/// Why a header name was refused by [`check_name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name holds this character, which is not a `tchar`.
    InvalidChar(char),
    /// The name is one of [`FORBIDDEN_NAMES`].
    Forbidden,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => f.write_str("empty header name"),
            NameError::InvalidChar(c) => write!(f, "invalid character {c:?} in header name"),
            NameError::Forbidden => f.write_str("header is set by the HTTP transport"),
        }
    }
}

impl std::error::Error for NameError {}

/// Why a header value was refused by [`check_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueError {
    /// The value holds this control character (CR, LF, NUL, DEL…; tab is allowed).
    Control(char),
    /// The value holds this non-ASCII character.
    NonAscii(char),
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueError::Control(c) => write!(f, "invalid control character {c:?} in header value"),
            ValueError::NonAscii(c) => write!(f, "non-ASCII character {c:?} in header value"),
        }
    }
}

impl std::error::Error for ValueError {}

/// Checks a header name as [`is_valid_name`] and [`is_forbidden_name`] do, naming the first
/// character at fault.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some(bad) = name
        .chars()
        .find(|&c| !(c.is_ascii() && is_name_byte(c as u8)))
    {
        return Err(NameError::InvalidChar(bad));
    }
    if is_forbidden_name(name) {
        return Err(NameError::Forbidden);
    }
    Ok(())
}

/// Checks a header value as [`is_valid_value`] does, naming the first character at fault.
pub fn check_value(value: &str) -> Result<(), ValueError> {
    match value
        .chars()
        .find(|&c| !(c.is_ascii() && is_value_byte(c as u8)))
    {
        None => Ok(()),
        Some(bad) if bad.is_ascii() => Err(ValueError::Control(bad)),
        Some(bad) => Err(ValueError::NonAscii(bad)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_tokens_and_not_the_transports() {
        for good in ["X-Request-Id", "accept", "a!#$%&'*+-.^_`|~9"] {
            assert_eq!(check_name(good), Ok(()), "{good}");
            assert!(is_valid_name(good.as_bytes()) && !is_forbidden_name(good));
        }
        assert_eq!(check_name(""), Err(NameError::Empty));
        assert_eq!(check_name("Bad Name"), Err(NameError::InvalidChar(' ')));
        assert_eq!(check_name("X:"), Err(NameError::InvalidChar(':')));
        assert_eq!(
            check_name("Caf\u{e9}"),
            Err(NameError::InvalidChar('\u{e9}'))
        );
        assert!(!is_valid_name(b""));
        assert!(!is_valid_name("Caf\u{e9}".as_bytes()));
        for name in FORBIDDEN_NAMES {
            assert_eq!(check_name(name), Err(NameError::Forbidden));
            assert_eq!(
                check_name(&name.to_ascii_uppercase()),
                Err(NameError::Forbidden)
            );
        }
        assert!(is_forbidden_name("Proxy-Connection") && is_forbidden_name("TE"));
    }

    #[test]
    fn values_are_visible_ascii_space_and_tab() {
        assert_eq!(check_value(""), Ok(()));
        assert_eq!(check_value("Bearer abc.def\tx ~"), Ok(()));
        for (bad, at) in [
            ("ok\r\nX-Injected: 1", ValueError::Control('\r')),
            ("a\nb", ValueError::Control('\n')),
            ("a\0b", ValueError::Control('\0')),
            ("\x7f", ValueError::Control('\x7f')),
            ("\u{010D}\u{010A}", ValueError::NonAscii('\u{010D}')),
            ("caf\u{e9}", ValueError::NonAscii('\u{e9}')),
        ] {
            assert_eq!(check_value(bad), Err(at), "{bad:?}");
            assert!(!is_valid_value(bad.as_bytes()), "{bad:?}");
        }
        assert!(is_valid_value(b"Bearer abc.def\tx"));
        assert!(!is_valid_value(&[0x80]));
    }
}
