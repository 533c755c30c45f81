//! Properties of the sources and readers over generated input: Spring's duration forms read as
//! what they say and any text is read or refused without a panic; generated properties written
//! as a `.properties` file, a YAML file or environment variables read back equal, under every
//! relaxed spelling of their names; any bytes as a file are read or refused without a panic.
//!
//! Case counts come from `PROPTEST_CASES` when set (see `feign_test_support::proptest_cases`).

use std::collections::BTreeMap;
use std::time::Duration;

use feign_config::{relaxed, Config, DurationUnit};
use feign_test_support::{proptest_cases, TempDir};
use proptest::prelude::*;

/// Reads `text` as a duration the way binders do: set in code, read back (`None` when
/// refused, also for an unclosed placeholder).
fn duration(text: &str, unit: DurationUnit) -> Option<Duration> {
    Config::new()
        .set("a.timeout", text)
        .get("a.timeout")
        .ok()??
        .as_duration(unit)
        .ok()
}

/// `amount` of `unit_secs`-second (or `unit_nanos`-nanosecond) units, `None` past
/// `Duration::MAX`.
fn expected(amount: u64, nanos_per_unit: u128) -> Option<Duration> {
    let nanos = u128::from(amount).checked_mul(nanos_per_unit)?;
    let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
    Some(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// Amounts around the sizes that overflow: small, large, and anything.
fn amount() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..10_000,
        Just(u64::MAX),
        Just(u64::MAX / 86_400),
        Just(u64::MAX / 3_600 + 1),
        any::<u64>(),
    ]
}

/// The text of an ISO-8601 duration `P[nD][T[nH][nM][n[.f]S]]` and what it stands for (`None`
/// past `Duration::MAX`), from its parts.
fn iso8601() -> impl Strategy<Value = (String, Option<Duration>)> {
    let part = || prop::option::of(amount());
    let fraction = prop::option::of("[0-9]{1,9}");
    (part(), part(), part(), part(), fraction, any::<bool>()).prop_filter_map(
        "at least one part",
        |(days, hours, minutes, seconds, fraction, lower)| {
            let time = hours.is_some() || minutes.is_some() || seconds.is_some();
            if days.is_none() && !time {
                return None;
            }
            let mut text = String::from("P");
            let mut total = Some(Duration::ZERO);
            let mut add =
                |amount: Option<u64>, secs_per_unit: u128, suffix: &str, text: &mut String| {
                    if let Some(n) = amount {
                        text.push_str(&format!("{n}{suffix}"));
                        total = total
                            .zip(expected(n, secs_per_unit * 1_000_000_000))
                            .and_then(|(a, b)| a.checked_add(b));
                    }
                };
            add(days, 86_400, "D", &mut text);
            if time {
                text.push('T');
                add(hours, 3_600, "H", &mut text);
                add(minutes, 60, "M", &mut text);
                if let Some(s) = seconds {
                    text.push_str(&s.to_string());
                    total = total
                        .zip(expected(s, 1_000_000_000))
                        .and_then(|(a, b)| a.checked_add(b));
                    if let Some(fraction) = &fraction {
                        text.push('.');
                        text.push_str(fraction);
                        let nanos: u64 = format!("{fraction:0<9}").parse().expect("digits");
                        total = total.and_then(|t| t.checked_add(Duration::from_nanos(nanos)));
                    }
                    text.push('S');
                }
            }
            if lower {
                text = text.to_lowercase();
            }
            Some((text, total))
        },
    )
}

/// Text that looks like a duration: digits, units, ISO letters, signs, dots and spaces.
fn duration_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9PTDHMSpmsnu.+ -]{0,24}",
        (
            amount(),
            "[PTDHMSdhmsnu]{0,3}",
            amount(),
            "[PTDHMSdhms.]{0,3}"
        )
            .prop_map(|(a, u, b, v)| format!("{a}{u}{b}{v}")),
        any::<String>(),
    ]
}

/// A dotted property name of lower-case segments, some with a dash (`connect-timeout`).
fn key() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z][a-z0-9]{0,5}(-[a-z0-9]{1,4})?", 1..4).prop_map(|s| s.join("."))
}

/// Any value but a placeholder (`${…}`, which is resolved, not read as written).
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[ -~]{0,16}",
        1 => "\\PC{0,12}",
        1 => "[ \t\\\\=:#!\r\n\u{c}\u{85}\u{3000}a]{0,8}",
    ]
    .prop_filter("no placeholder", |v| !v.contains("${"))
}

/// Properties whose names differ under relaxed binding, none of which is a map above another
/// (`a` and `a.b`), so that they can be written as nested YAML too.
fn properties() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(key(), value(), 0..8).prop_map(|map| {
        let names: Vec<String> = map.keys().map(|k| relaxed(k)).collect();
        map.into_iter()
            .filter(|(key, _)| {
                let name = relaxed(key);
                names.iter().filter(|n| **n == name).count() == 1
                    && !names.iter().any(|n| n.starts_with(&format!("{name}.")))
            })
            .collect()
    })
}

/// `text` escaped for a `.properties` file as `java.util.Properties` reads it.
fn properties_escaped(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_whitespace() || matches!(c, '=' | ':' | '#' | '!') => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as a YAML double-quoted scalar: characters YAML does not allow raw are escaped.
fn yaml_quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        let printable = matches!(c, '\t' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}')
            && c != '\u{feff}';
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if printable => out.push(c),
            c => out.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// The properties as nested YAML mappings.
fn yaml_document(properties: &BTreeMap<String, String>) -> String {
    #[derive(Default)]
    struct Node(BTreeMap<String, Node>, Option<String>);
    fn write(node: &Node, indent: usize, out: &mut String) {
        for (segment, child) in &node.0 {
            out.push_str(&" ".repeat(indent));
            out.push_str(&yaml_quoted(segment));
            match &child.1 {
                Some(value) => {
                    out.push_str(": ");
                    out.push_str(&yaml_quoted(value));
                    out.push('\n');
                }
                None => {
                    out.push_str(":\n");
                    write(child, indent + 2, out);
                }
            }
        }
    }
    let mut root = Node::default();
    for (key, value) in properties {
        let mut node = &mut root;
        for segment in key.split('.') {
            node = node.0.entry(segment.to_owned()).or_default();
        }
        node.1 = Some(value.clone());
    }
    let mut out = String::new();
    write(&root, 0, &mut out);
    out
}

/// The spellings Spring binds to one name: as written, camelCase, snake_case, upper case.
fn spellings(key: &str) -> [String; 4] {
    let camel = key
        .split('.')
        .map(|segment| {
            let mut words = segment.split('-');
            let first = words.next().unwrap_or_default().to_owned();
            words.fold(first, |mut out, word| {
                let mut chars = word.chars();
                if let Some(c) = chars.next() {
                    out.extend(c.to_uppercase());
                    out.push_str(chars.as_str());
                }
                out
            })
        })
        .collect::<Vec<_>>()
        .join(".");
    [
        key.to_owned(),
        camel,
        key.replace('-', "_"),
        key.to_uppercase().replace('-', ""),
    ]
}

/// Every property reads back as written, under each of its spellings, from `origin`.
fn check_reads_back(
    config: &Config,
    properties: &BTreeMap<String, String>,
) -> Result<(), TestCaseError> {
    for (key, value) in properties {
        for spelling in spellings(key) {
            let read = config
                .get(&spelling)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(
                read.map(|p| p.as_str()),
                Some(value.clone()),
                "{}",
                spelling
            );
        }
    }
    // Nothing else is read: the sections of every top-level name hold these properties only.
    let mut tops: Vec<&str> = properties
        .keys()
        .filter_map(|k| k.split('.').next())
        .collect();
    tops.dedup();
    let mut everything = Vec::new();
    for top in tops {
        let section = config
            .section(top)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        everything.extend(section.iter().map(|p| p.name().to_owned()));
    }
    everything.sort();
    everything.dedup();
    // A top-level name with an empty value reads as an empty map, which a section leaves out.
    let mut expected: Vec<String> = properties
        .iter()
        .filter(|(k, v)| k.contains('.') || !v.is_empty())
        .map(|(k, _)| relaxed(k))
        .collect();
    expected.sort();
    prop_assert_eq!(everything, expected);
    Ok(())
}

/// Text for a `.properties` file: lines of keys, list indices (some huge), separators,
/// escapes and continuations.
fn properties_like() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        "[a-z.]{1,6}(\\[[0-9]{1,3}\\])?[=: ][ -~]{0,8}",
        (
            "[a-z]{1,4}",
            prop_oneof![Just(u64::MAX), Just(u64::from(u32::MAX)), any::<u64>()]
        )
            .prop_map(|(k, i)| format!("{k}[{i}]=v")),
        "[\\\\=:#! \tu0-9a-f]{0,10}",
        any::<String>(),
    ];
    prop::collection::vec(line, 0..6).prop_map(|lines| lines.join("\n"))
}

/// Text for a YAML file: YAML's indicators, indentation and scalars.
fn yaml_like() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        "( {0,4})[a-z]{1,4}: ?[-a-z0-9 \\[\\]{},&*!|>'\"#%@`?~.]{0,10}",
        "( {0,4})- ?[-a-z0-9 \\[\\]{},&*!|>'\"#]{0,8}",
        "[-:\\[\\]{},&*!|>'\"#%@` \t?~0-9a-z\\\\]{0,16}",
        any::<String>(),
    ];
    prop::collection::vec(line, 0..8).prop_map(|lines| lines.join("\n"))
}

/// Looks up every name `text` may have set (what comes before a separator on each line, and
/// its dotted prefixes) and reads each property found with every typed reader.
fn read_everything(config: &Config, text: &str) {
    for line in text.lines() {
        let name = line
            .split(['=', ':', ' '])
            .next()
            .unwrap_or_default()
            .trim();
        let mut prefix = String::new();
        for segment in name.split('.') {
            if !prefix.is_empty() {
                prefix.push('.');
            }
            prefix.push_str(segment);
            let found = config.get(&prefix).ok().flatten().into_iter();
            for property in found.chain(config.section(&prefix).unwrap_or_default()) {
                let _ = property.as_duration(DurationUnit::Millis);
                let _ = property.as_positive_duration(DurationUnit::Seconds);
                let _ = property.as_bool();
                let _ = property.as_number::<u64>();
                let _ = property.as_f64();
                let _ = property.as_list();
                let _ = property.rest_as_written(1);
            }
            let _ = config.section_names(&prefix);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(proptest_cases(256)))]

    /// `500`, `500ms`, `5s`, `2m`, `1h`, `1d`, `10us`, `10ns`, in any case and with spaces, read
    /// as what they say; an amount past `Duration::MAX` is refused.
    #[test]
    fn spring_durations_read_as_what_they_say(
        amount in amount(),
        unit in prop::sample::select(vec![("", 0u128), ("ns", 1), ("us", 1_000), ("ms", 1_000_000),
            ("s", 1_000_000_000), ("m", 60_000_000_000), ("h", 3_600_000_000_000),
            ("d", 86_400_000_000_000)]),
        upper in any::<bool>(),
        padding in "[ \t]{0,2}",
    ) {
        let (suffix, nanos) = unit;
        let suffix = if upper { suffix.to_uppercase() } else { suffix.to_owned() };
        let text = format!("{padding}{amount}{padding}{suffix}{padding}");
        for (unit, plain_nanos) in [(DurationUnit::Millis, 1_000_000), (DurationUnit::Seconds, 1_000_000_000)] {
            let nanos = if nanos == 0 { plain_nanos } else { nanos };
            prop_assert_eq!(duration(&text, unit), expected(amount, nanos), "{:?}", text);
        }
    }

    /// ISO-8601 durations read as the sum of their parts; a sum past `Duration::MAX` is refused.
    #[test]
    fn iso8601_durations_read_as_the_sum_of_their_parts((text, total) in iso8601()) {
        prop_assert_eq!(duration(&text, DurationUnit::Millis), total, "{:?}", text);
    }

    /// Any text is read as a duration or refused, in either unit, without a panic.
    #[test]
    fn any_text_is_a_duration_or_refused(text in duration_like()) {
        let _ = duration(&text, DurationUnit::Millis);
        let _ = duration(&text, DurationUnit::Seconds);
    }

    /// Properties written as a `.properties` file read back equal, under every relaxed
    /// spelling of their names.
    #[test]
    fn properties_files_read_back(properties in properties()) {
        let dir = TempDir::new("props-properties");
        let text: String = properties
            .iter()
            .map(|(k, v)| format!("{}={}\n", properties_escaped(k), properties_escaped(v)))
            .collect();
        let path = dir.write("application.properties", &text);
        let config = Config::from_file(&path).map_err(|e| TestCaseError::fail(format!("{e}: {text:?}")))?;
        check_reads_back(&config, &properties)?;
    }

    /// Properties written as nested YAML mappings read back equal.
    #[test]
    fn yaml_files_read_back(properties in properties()) {
        let dir = TempDir::new("props-yaml");
        let text = yaml_document(&properties);
        let path = dir.write("application.yml", &text);
        let config = Config::from_file(&path).map_err(|e| TestCaseError::fail(format!("{e}: {text:?}")))?;
        check_reads_back(&config, &properties)?;
    }

    /// Properties given as environment variables (`FEIGN_CLIENT_CONNECTTIMEOUT` for
    /// `feign.client.connect-timeout`, as Spring maps them) read back equal, and override a
    /// file's values.
    #[test]
    fn environment_variables_read_back(properties in properties()) {
        let file: BTreeMap<String, String> =
            properties.keys().map(|k| (k.clone(), "from the file".to_owned())).collect();
        let text: String = file.iter().map(|(k, v)| format!("{k}={}\n", properties_escaped(v))).collect();
        let vars: Vec<(String, String)> = properties
            .iter()
            .map(|(k, v)| (k.to_uppercase().replace('.', "_").replace('-', ""), v.clone()))
            .collect();
        let config = Config::from_properties_str(&text, "application.properties")
            .map_err(|e| TestCaseError::fail(e.to_string()))?
            .with_env_vars(vars.clone());
        check_reads_back(&config, &properties)?;
        for (name, _) in &vars {
            let key = properties.keys().find(|k| k.to_uppercase().replace('.', "_").replace('-', "") == *name).expect("its key");
            let origin = config.get(key).map_err(|e| TestCaseError::fail(e.to_string()))?.expect("set").origin().to_owned();
            prop_assert_eq!(origin, format!("environment variable {name}"));
        }
    }

    /// Any bytes, and text shaped like either format, as a `.properties` or YAML file are read
    /// or refused without a panic; whatever is read can be looked up and typed.
    #[test]
    fn any_file_is_read_or_refused(
        bytes in prop::collection::vec(any::<u8>(), 0..128),
        properties_text in properties_like(),
        yaml_text in yaml_like(),
    ) {
        let dir = TempDir::new("props-any");
        for name in ["application.properties", "application.yml"] {
            let path = dir.0.join(name);
            std::fs::write(&path, &bytes).expect("write");
            if let Ok(config) = Config::from_file(&path) {
                read_everything(&config, &String::from_utf8_lossy(&bytes));
            }
        }
        if let Ok(config) = Config::from_properties_str(&properties_text, "application.properties") {
            read_everything(&config, &properties_text);
        }
        if let Ok(config) = Config::from_yaml_str(&yaml_text, "application.yml") {
            read_everything(&config, &yaml_text);
        }
        if let Ok(config) = Config::from_yaml_str(&properties_text, "application.yml") {
            read_everything(&config, &properties_text);
        }
    }
}
