//! Properties of the Eureka wire model's XML form over generated documents, as
//! `model_props.rs` holds them for JSON: every valid instance, application and listing written
//! as XML reads back as written and is written again byte for byte; what any XML writer may
//! write differently (a declaration, comments, CDATA, character references, single-quoted
//! attributes, other whitespace) reads as Eureka's own form; and no mutation of a valid
//! document (truncation, byte flips, inserted markup) makes the reader panic, while what it
//! reads it writes and reads again unchanged.
//!
//! The generated documents are `model_props.rs`'s, less what XML 1.0 cannot carry: control
//! characters other than tab, line feed and carriage return have no representation in an XML
//! document (not even as a character reference), so text here leaves them out; and metadata
//! keys become element names, so keys that are not XML names (`a b`, `1st`, `<`) are left out.
//!
//! Case counts come from `PROPTEST_CASES` when set (see `feign_test_support::proptest_cases`).

use feign_eureka::model::{Application, Applications, InstanceInfo, XmlError};
use feign_test_support::proptest_cases;
use proptest::prelude::*;
use proptest::sample::Index;

use crate::model_props::{applications, Choices};

/// What XML 1.0 can carry of `apps`: its strings without the control characters it has no
/// form for, its metadata without the keys that are no element names.
fn xml_safe(apps: Applications) -> Applications {
    let mut json: serde_json::Value =
        serde_json::from_str(&apps.to_json()).expect("the model's own JSON");
    strip_controls(&mut json);
    keep_named_metadata(&mut json);
    Applications::from_json(json.to_string().as_bytes()).expect("still a listing")
}

/// Whether `key` names an element (ASCII names only; `$` is XStream's to code) or, with `@`,
/// an attribute.
fn is_xml_name(key: &str) -> bool {
    let name = key.strip_prefix('@').unwrap_or(key);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '$'))
}

fn keep_named_metadata(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Array(items) => items.iter_mut().for_each(keep_named_metadata),
        serde_json::Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match child {
                    serde_json::Value::Object(entries) if key == "metadata" => {
                        entries.retain(|key, _| is_xml_name(key));
                    }
                    _ => keep_named_metadata(child),
                }
            }
        }
        _ => {}
    }
}

fn strip_controls(value: &mut serde_json::Value) {
    let strip = |s: &str| {
        s.chars()
            .filter(|&c| c >= ' ' || matches!(c, '\t' | '\n' | '\r'))
            .collect::<String>()
    };
    match value {
        serde_json::Value::String(s) => *s = strip(s),
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_controls),
        serde_json::Value::Object(map) => {
            let entries: Vec<_> = std::mem::take(map).into_iter().collect();
            for (key, mut child) in entries {
                strip_controls(&mut child);
                map.insert(strip(&key), child);
            }
        }
        _ => {}
    }
}

/// The pieces of an XML text: markup (`<...>`) and the character data between.
fn pieces(xml: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut rest = xml;
    while !rest.is_empty() {
        match rest.find('<') {
            Some(0) => {
                let end = rest.find('>').map_or(rest.len(), |i| i + 1);
                out.push((true, rest[..end].to_owned()));
                rest = &rest[end..];
            }
            Some(start) => {
                out.push((false, rest[..start].to_owned()));
                rest = &rest[start..];
            }
            None => {
                out.push((false, rest.to_owned()));
                rest = "";
            }
        }
    }
    out
}

/// Rewrites Eureka's XML as another writer may: a declaration, comments between elements,
/// CDATA sections and character references for text, single-quoted attributes, spaces before
/// a tag's end and line ends of another kind between elements.
fn lenient(xml: &str, choices: &mut Choices<'_>) -> String {
    let mut out = String::new();
    if choices.take() {
        out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n");
    }
    if choices.take() {
        out.push_str("<!-- written by another server -->");
    }
    for (markup, text) in pieces(xml) {
        if markup {
            let mut tag = text;
            if tag.contains('"') && choices.take() {
                tag = tag.replace('"', "'");
            }
            if !tag.starts_with("</") && choices.take() {
                tag = match tag.strip_suffix("/>") {
                    Some(open) => format!("{open} />"),
                    None => format!("{} >", tag.trim_end_matches('>')),
                };
            }
            out.push_str(&tag);
            if choices.take() {
                out.push_str("<!--c-->");
            }
        } else if text.trim().is_empty() {
            // Whitespace between elements.
            out.push_str(&if choices.take() {
                text.replace('\n', "\r\n")
            } else {
                text
            });
        } else if !text.contains('&') && !text.contains("]]>") && choices.take() {
            out.push_str(&format!("<![CDATA[{text}]]>"));
        } else if choices.take() {
            // The first character as a character reference, unless it starts an entity.
            let mut chars = text.chars();
            match chars.next() {
                Some(first) if first != '&' => {
                    out.push_str(&format!("&#x{:x};", u32::from(first)));
                    out.push_str(chars.as_str());
                }
                _ => out.push_str(&text),
            }
        } else {
            out.push_str(&text);
        }
    }
    out
}

/// One change to an XML document's bytes.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    Insert(Index, &'static str),
    Delete(Index, Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (
            any::<Index>(),
            prop::sample::select(vec![
                "<",
                ">",
                "/",
                "&",
                "&amp;",
                "&#0;",
                "&#x110000;",
                "&bogus;",
                "<a>",
                "</a>",
                "<instance>",
                "</instance>",
                "<port enabled=\"x\">",
                "<![CDATA[",
                "]]>",
                "<!--",
                "-->",
                "<?pi?>",
                "<!DOCTYPE x>",
                "\"",
                "'",
                "\u{0}",
                "\u{ffff}",
            ])
        )
            .prop_map(|(i, s)| Mutation::Insert(i, s)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::Delete(a, b)),
    ]
}

fn mutate(xml: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = xml.to_vec();
    for mutation in mutations {
        let len = bytes.len().max(1);
        match mutation {
            Mutation::Truncate(at) => bytes.truncate(at.index(len)),
            Mutation::Flip(at, byte) => {
                if !bytes.is_empty() {
                    let at = at.index(bytes.len());
                    bytes[at] = *byte;
                }
            }
            Mutation::Insert(at, text) => {
                let at = at.index(len).min(bytes.len());
                bytes.splice(at..at, text.bytes());
            }
            Mutation::Delete(a, b) => {
                let (a, b) = (a.index(len).min(bytes.len()), b.index(len).min(bytes.len()));
                bytes.drain(a.min(b)..a.max(b));
            }
        }
    }
    bytes
}

/// Whatever `read` reads of `bytes` (if anything), `write` writes in a form that reads and
/// writes again byte for byte.
fn writes_a_fixed_point<T>(
    bytes: &[u8],
    read: fn(&[u8]) -> Result<T, XmlError>,
    write: fn(&T) -> String,
) -> Result<(), TestCaseError> {
    let Ok(first) = read(bytes) else {
        return Ok(());
    };
    let written = write(&first);
    let again = read(written.as_bytes())
        .map_err(|e| TestCaseError::fail(format!("written again, refused: {e}")))?;
    prop_assert_eq!(write(&again), written);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(proptest_cases(256)))]

    /// An instance, an application and a listing written as XML each read back exactly as they
    /// were, and are written again byte for byte; the XML reads as the JSON does.
    #[test]
    fn valid_documents_round_trip_as_xml(apps in applications()) {
        let apps = xml_safe(apps);
        for app in &apps.applications {
            for info in &app.instances {
                let xml = info.to_xml();
                let read = InstanceInfo::from_xml(xml.as_bytes())
                    .map_err(|e| TestCaseError::fail(format!("{e}: {xml}")))?;
                prop_assert_eq!(&read, info, "{}", xml);
            }
            let xml = app.to_xml();
            let read = Application::from_xml(xml.as_bytes())
                .map_err(|e| TestCaseError::fail(format!("{e}: {xml}")))?;
            prop_assert_eq!(&read, app, "{}", xml);
        }
        let xml = apps.to_xml();
        let read = Applications::from_xml(xml.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{e}: {xml}")))?;
        prop_assert_eq!(read.to_xml(), xml);
        prop_assert_eq!(&read, &apps);
        let from_json = Applications::from_json(apps.to_json().as_bytes()).expect("own listing");
        prop_assert_eq!(read, from_json);
    }

    /// A declaration, comments, CDATA, character references, single-quoted attributes and
    /// other whitespace read as Eureka's own XML does.
    #[test]
    fn lenient_xml_reads_as_the_strict_form(
        apps in applications(),
        bits in prop::collection::vec(any::<bool>(), 1..64),
    ) {
        let apps = xml_safe(apps);
        let xml = lenient(&apps.to_xml(), &mut Choices::new(&bits));
        let read = Applications::from_xml(xml.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{e}: {xml}")))?;
        prop_assert_eq!(read, apps, "{}", xml);
    }

    /// A mutated document is read or refused, never a panic; what is read is written in a form
    /// that reads and writes again byte for byte (the writer may put a mutated value in its
    /// canonical form, e.g. the class of an `Amazon` data center, but only once).
    #[test]
    fn mutated_xml_is_read_or_refused(
        apps in applications(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let apps = xml_safe(apps);
        let bytes = mutate(apps.to_xml().as_bytes(), &mutations);
        writes_a_fixed_point(&bytes, Applications::from_xml, Applications::to_xml)?;
        for info in apps.applications.iter().flat_map(|a| &a.instances) {
            let bytes = mutate(info.to_xml().as_bytes(), &mutations);
            writes_a_fixed_point(&bytes, InstanceInfo::from_xml, InstanceInfo::to_xml)?;
        }
        let _ = Application::from_xml(&bytes);
    }
}
