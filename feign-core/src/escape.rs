//! Percent-encoding of argument values: every byte outside RFC 3986 unreserved is escaped.

use std::fmt;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// Everything but `A-Z a-z 0-9 - . _ ~`.
const NOT_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A `fmt::Write` that percent-encodes what is written into `out`, so a `Display` value is
/// encoded without an intermediate string.
pub(crate) struct Escaper<'a> {
    out: &'a mut String,
}

impl<'a> Escaper<'a> {
    pub(crate) fn new(out: &'a mut String) -> Self {
        Escaper { out }
    }
}

impl fmt::Write for Escaper<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
        {
            self.out.push_str(s);
        } else {
            self.out.extend(utf8_percent_encode(s, NOT_UNRESERVED));
        }
        Ok(())
    }
}

/// Appends `value`'s `Display` output to `out`, percent-encoded.
pub(crate) fn push_display<T: fmt::Display + ?Sized>(out: &mut String, value: &T) -> fmt::Result {
    fmt::write(&mut Escaper::new(out), format_args!("{value}"))
}

/// Appends `value` percent-encoded.
pub(crate) fn push_str(out: &mut String, value: &str) {
    let _ = fmt::Write::write_str(&mut Escaper::new(out), value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_outside_unreserved() {
        let mut out = String::new();
        push_str(&mut out, "a/b%c?d#e f+g&h=i;j:k@l,m{n}é~._-");
        assert_eq!(
            out,
            "a%2Fb%25c%3Fd%23e%20f%2Bg%26h%3Di%3Bj%3Ak%40l%2Cm%7Bn%7D%C3%A9~._-"
        );
    }
}
