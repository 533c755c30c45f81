//! What the dashboard's pages share: HTML escaping, ages and status badges.

use feign_eureka::model::InstanceStatus;

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn escape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `raw` escaped, cut after `max_chars` characters with a visible `…`: a value from a
/// registration never takes more than about six bytes a character it shows.
pub(crate) fn shown(raw: &str, max_chars: usize) -> String {
    match raw.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}&hellip;", escape(&raw[..cut])),
        None => escape(raw),
    }
}

/// A duration as the dashboard shows it: `42s`, `3m 07s`, `2h 05m`.
pub(crate) fn age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The badge class of a status.
pub(crate) fn status_class(status: InstanceStatus) -> &'static str {
    match status {
        InstanceStatus::Up => "up",
        InstanceStatus::Down => "down",
        InstanceStatus::Starting => "starting",
        InstanceStatus::OutOfService => "oos",
        InstanceStatus::Unknown => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_visibly() {
        assert_eq!(shown("abc", 3), "abc");
        assert_eq!(shown("abcd", 3), "abc&hellip;");
        assert_eq!(shown("<é<é", 2), "&lt;é&hellip;");
    }

    #[test]
    fn escape_neutralizes_markup() {
        assert_eq!(
            escape("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
    }
}
