//! The known key nearest an unknown one, for "did you mean" in the error.

/// How alike (Jaro-Winkler) the segments where two keys differ must be for one to be
/// suggested for the other, unless they are a few edits apart.
const NEAR_ENOUGH: f64 = 0.8;

/// A known key, its wildcards filled from the unknown key: its segments as Spring writes them
/// (for the message) and relaxed (to compare).
pub(crate) struct Candidate {
    pub(crate) written: Vec<String>,
    pub(crate) relaxed: Vec<String>,
}

impl Candidate {
    /// `pattern`'s segments (`*` one segment, `**` the rest) with the wildcards filled from
    /// `key` (its segments as written): from the same places when `key` has as many segments
    /// as the pattern, otherwise `<name>`, since the places do not line up.
    pub(crate) fn fill(pattern: &str, key: &[&str]) -> Candidate {
        let segments: Vec<&str> = pattern.split('.').collect();
        let aligned = key.len() >= segments.len();
        let mut written = Vec::with_capacity(segments.len());
        for (i, segment) in segments.iter().enumerate() {
            match *segment {
                "*" if aligned => written.push(key[i].to_owned()),
                "**" if aligned => written.extend(key[i..].iter().map(|s| (*s).to_owned())),
                "*" | "**" => written.push("<name>".to_owned()),
                literal => written.push(literal.to_owned()),
            }
        }
        let relaxed = written.iter().map(|s| crate::relaxed(s)).collect();
        Candidate { written, relaxed }
    }
}

/// The candidate nearest `key` (relaxed segments), if one is near enough; the first of equals.
pub(crate) fn nearest(key: &[String], candidates: Vec<Candidate>) -> Option<Candidate> {
    let mut best: Option<(Likeness, Candidate)> = None;
    for candidate in candidates {
        let Some(likeness) = likeness(key, &candidate.relaxed) else {
            continue;
        };
        if best.as_ref().is_none_or(|(top, _)| likeness.beats(top)) {
            best = Some((likeness, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// How near two keys are: first how many leading segments they share (the more, the more
/// specific the match: `timeout` for `timeout-duration` in the same section beats a sibling
/// section spelt alike), then, over the segments between those they share at the start and at
/// the end (the rest of a long key says nothing about a typo), their Jaro-Winkler likeness and
/// their edit distance (a transposition is one edit).
struct Likeness {
    front: usize,
    jaro_winkler: f64,
    edits: usize,
}

impl Likeness {
    fn beats(&self, other: &Likeness) -> bool {
        if self.front != other.front {
            return self.front > other.front;
        }
        if self.jaro_winkler != other.jaro_winkler {
            return self.jaro_winkler > other.jaro_winkler;
        }
        self.edits < other.edits
    }
}

/// `None` when the keys are not near: more edits apart than a third of the differing part of
/// `a` (at least one), and less alike than [`NEAR_ENOUGH`]. Whole segments added or left out
/// (`compression.enabled` for `compression.request.enabled`) are near.
fn likeness(a: &[String], b: &[String]) -> Option<Likeness> {
    let front = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let back = a[front..]
        .iter()
        .rev()
        .zip(b[front..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a, b) = (
        a[front..a.len() - back].join("."),
        b[front..b.len() - back].join("."),
    );
    let edits = strsim::osa_distance(&a, &b);
    if a.is_empty() || b.is_empty() {
        return Some(Likeness {
            front,
            jaro_winkler: NEAR_ENOUGH,
            edits,
        });
    }
    let jaro_winkler = strsim::jaro_winkler(&a, &b);
    let few_edits = edits <= (a.chars().count() / 3).max(1);
    (few_edits || jaro_winkler >= NEAR_ENOUGH).then_some(Likeness {
        front,
        jaro_winkler,
        edits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggest(key: &str, patterns: &[&str]) -> Option<String> {
        let written: Vec<&str> = key.split('.').collect();
        let relaxed: Vec<String> = written.iter().map(|s| crate::relaxed(s)).collect();
        let candidates = patterns
            .iter()
            .map(|p| Candidate::fill(p, &written))
            .collect();
        nearest(&relaxed, candidates).map(|c| c.written.join("."))
    }

    #[test]
    fn typos_find_their_key_and_strangers_find_none() {
        let keys = [
            "compression.request.enabled",
            "compression.response.enabled",
            "client.config.*.read-timeout",
            "client.config.*.connect-timeout",
            "client.config.*.url",
            "client.config.*.default-request-headers.**",
            "oauth2.enabled",
        ];
        assert_eq!(
            suggest("compresion.request.enabled", &keys).as_deref(),
            Some("compression.request.enabled")
        );
        assert_eq!(
            suggest("client.config.Orders.readTimout", &keys).as_deref(),
            Some("client.config.Orders.read-timeout")
        );
        assert_eq!(
            suggest("compression.enabled", &keys).as_deref(),
            Some("compression.request.enabled")
        );
        assert_eq!(
            suggest("client.config.read-timeout", &keys).as_deref(),
            Some("client.config.<name>.read-timeout")
        );
        assert_eq!(
            suggest("client.config.orders.default-request-header.X-Team", &keys).as_deref(),
            Some("client.config.orders.default-request-headers.X-Team")
        );
        assert_eq!(suggest("client.config.orders.foo.bar", &keys), None);
        assert_eq!(suggest("client.config.orders.colour", &keys), None);
        assert_eq!(suggest("lazy", &keys), None);
        assert_eq!(
            suggest(
                "timelimiter.instances.orders.timeout",
                &["ratelimiter.**", "timelimiter.instances.*.timeout-duration"]
            )
            .as_deref(),
            Some("timelimiter.instances.orders.timeout-duration")
        );
        assert_eq!(
            suggest("client.config.orders.ulr", &keys).as_deref(),
            Some("client.config.orders.url")
        );
        assert_eq!(
            suggest(
                "retry.max-retries",
                &[
                    "retry.enabled",
                    "retry.max-retries-on-same-service-instance",
                    "retry.max-retries-on-next-service-instance"
                ]
            )
            .as_deref(),
            Some("retry.max-retries-on-same-service-instance")
        );
        assert_eq!(
            suggest(
                "client.registry-fetch-interval",
                &["client.registry-fetch-interval-seconds", "client.region"]
            )
            .as_deref(),
            Some("client.registry-fetch-interval-seconds")
        );
    }
}
