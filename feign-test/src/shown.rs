//! How a body is shown in `Debug` output and failure messages.

use std::fmt;

/// How much of a body is shown before it stops.
const BODY_SHOWN: usize = 1024;

/// A body as a failure message shows it: text up to [`BODY_SHOWN`] bytes, or its size.
pub(crate) struct BodyShown<'a>(pub(crate) &'a [u8]);

impl fmt::Debug for BodyShown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let body = self.0;
        if body.is_empty() {
            return f.write_str("(empty)");
        }
        let shown = &body[..body.len().min(BODY_SHOWN)];
        match std::str::from_utf8(shown) {
            Ok(text) if shown.len() == body.len() => write!(f, "{text:?}"),
            Ok(text) => write!(f, "{text:?}... ({} bytes)", body.len()),
            Err(_) => write!(f, "({} bytes, not UTF-8)", body.len()),
        }
    }
}
