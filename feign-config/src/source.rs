//! Reading one source (a YAML document, a properties document) into flat entries.

use std::borrow::Cow;
use std::sync::Arc;

use saphyr::{Scalar, ScalarStyle, ScanError, Tag, Yaml, YamlLoader};
use saphyr_parser::Parser;

use crate::profiles::OnProfile;
use crate::ConfigError;

/// Why a value of a source cannot be read; [`yaml`] and [`properties`] put it in a
/// [`ConfigError`] with the key or line at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Malformed {
    /// A YAML node that holds no value: an alias or a node the loader could not read.
    #[error("not a YAML value")]
    NotAValue,
    /// A YAML scalar its tag refuses (`!!int abc`); holds the text.
    #[error("{0:?} does not fit its tag")]
    TagMismatch(String),
    /// A `.properties` `\u` escape without four hex digits of a character.
    #[error("invalid \\u escape")]
    UnicodeEscape,
    /// A `.properties` `key[i]` line whose index is past [`MAX_LIST_INDEX`].
    #[error("list index {0} is larger than {MAX_LIST_INDEX}")]
    ListIndex(usize),
}

/// The largest index a `key[i]` line may have: the list holds every element up to it, so a
/// larger one would make one line of a file allocate without bound.
const MAX_LIST_INDEX: usize = 9_999;

/// A value as its source wrote it: one scalar, or a list (a YAML sequence, or `key[0]`,
/// `key[1]`… lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Scalar(String),
    List(Vec<String>),
}

impl Value {
    /// As a list: a YAML sequence or `key[i]` lines item by item, otherwise split at `,`;
    /// items are trimmed and empty ones dropped.
    pub(crate) fn items(&self) -> Vec<String> {
        let items: Vec<&str> = match self {
            Value::List(items) => items.iter().map(String::as_str).collect(),
            Value::Scalar(s) => s.split(',').collect(),
        };
        items
            .into_iter()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

/// One property of one source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The name as written, dotted.
    pub(crate) key: String,
    /// [`crate::relaxed`] of `key`.
    pub(crate) name: String,
    pub(crate) value: Value,
    pub(crate) origin: Arc<str>,
    /// The profiles its document is for (`spring.config.activate.on-profile`); `None`: every
    /// profile.
    pub(crate) on_profile: Option<Arc<OnProfile>>,
}

impl Entry {
    pub(crate) fn new(key: String, value: Value, origin: &Arc<str>) -> Entry {
        Entry {
            name: crate::relaxed(&key),
            key,
            value,
            origin: origin.clone(),
            on_profile: None,
        }
    }

    fn error(&self, reason: impl Into<String>) -> ConfigError {
        ConfigError::Property {
            key: self.key.clone(),
            origin: self.origin.to_string(),
            reason: reason.into(),
        }
    }
}

/// The entries of one document, each marked with the profiles its
/// `spring.config.activate.on-profile` names, as Spring Boot reads a multi-document file.
/// `spring.config.activate.on-cloud-platform` and the pre-2.4 `spring.profiles` are errors, as
/// is a `spring.profiles.*` key in a document for some profiles (Spring refuses it there too).
fn activated(mut entries: Vec<Entry>) -> Result<Vec<Entry>, ConfigError> {
    let mut on_profile = None;
    for entry in &entries {
        match entry.name.as_str() {
            "spring.config.activate.onprofile" => {
                let profiles =
                    OnProfile::parse(&entry.value.items()).map_err(|why| entry.error(why))?;
                on_profile = Some(Arc::new(profiles));
            }
            "spring.config.activate.oncloudplatform" => {
                return Err(entry.error(
                    "not supported: documents are activated by profile only (spring.config.activate.on-profile)",
                ))
            }
            "spring.profiles" => {
                return Err(entry.error(
                    "Spring Boot 2.4 replaced it: use spring.config.activate.on-profile",
                ))
            }
            _ => {}
        }
    }
    if let Some(on_profile) = on_profile {
        if let Some(entry) = entries
            .iter()
            .find(|e| e.name.starts_with("spring.profiles."))
        {
            return Err(entry.error(
                "not allowed in a document activated by spring.config.activate.on-profile",
            ));
        }
        for entry in &mut entries {
            entry.on_profile = Some(on_profile.clone());
        }
    }
    Ok(entries)
}

/// Flattens a YAML stream: nested maps become dotted names, sequences of scalars lists,
/// sequences of maps `name[i].…`. Documents after a `---` follow the earlier ones, as in
/// Spring Boot, each activated by its `spring.config.activate.on-profile`; a duplicate key is
/// an error.
pub(crate) fn yaml(text: &str, origin: &Arc<str>) -> Result<Vec<Entry>, ConfigError> {
    let malformed = |e: ScanError| ConfigError::source(origin, e.to_string());
    let mut loader = YamlLoader::<Yaml>::default();
    // Scalars keep the text they were written with: `scalar` resolves it.
    loader.early_parse(false);
    Parser::new_from_str(text)
        .load(&mut loader, true)
        .map_err(malformed)?;
    if let Some(error) = loader.error() {
        return Err(malformed(error.clone()));
    }
    let mut out = Vec::new();
    for document in loader.into_documents() {
        let mut entries = Vec::new();
        match document {
            Yaml::BadValue => {}
            map @ Yaml::Mapping(_) => flatten("", &map, origin, &mut entries)?,
            other if scalar(&other) == Some(Ok(String::new())) => {}
            _ => return Err(ConfigError::source(origin, "a document is not a mapping")),
        }
        out.extend(activated(entries)?);
    }
    Ok(out)
}

/// The text of a scalar node as the YAML 1.2 core schema resolves it (`~` and `null` are empty,
/// `True` is `true`, `0x10` is `16`, `1.50` is `1.5`), as serde_yaml 0.9 wrote it before:
/// digits with leading zeros stay as written and `0b11` is `3`. `None` for a sequence or
/// mapping.
fn scalar(value: &Yaml) -> Option<Result<String, Malformed>> {
    match value {
        Yaml::Representation(text, style, tag) => Some(resolve(text, *style, tag.as_ref())),
        Yaml::Value(value) => Some(Ok(scalar_text(value))),
        Yaml::Tagged(_, inner) => scalar(inner),
        Yaml::Sequence(_) | Yaml::Mapping(_) => None,
        Yaml::Alias(_) | Yaml::BadValue => Some(Err(Malformed::NotAValue)),
    }
}

fn resolve(
    text: &str,
    style: ScalarStyle,
    tag: Option<&Cow<'_, Tag>>,
) -> Result<String, Malformed> {
    let Some(value) = Scalar::parse_from_cow_and_metadata(Cow::Borrowed(text), style, tag) else {
        return Err(Malformed::TagMismatch(text.to_owned()));
    };
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.strip_prefix('+').unwrap_or(text)),
    };
    let decimal = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    Ok(match value {
        // `007` is a string, not 7.
        Scalar::Integer(_) if decimal && digits.len() > 1 && digits.starts_with('0') => {
            text.to_owned()
        }
        // An integer too large for an i64 is not a float.
        Scalar::FloatingPoint(_) if decimal => format!("{sign}{digits}"),
        Scalar::String(s) if style == ScalarStyle::Plain && tag.is_none() => {
            let bits = digits
                .strip_prefix("0b")
                .filter(|bits| !bits.starts_with(['+', '-']))
                .and_then(|bits| i64::from_str_radix(bits, 2).ok());
            match bits {
                Some(bits) => format!("{sign}{bits}"),
                None => s.into_owned(),
            }
        }
        other => scalar_text(&other),
    })
}

fn scalar_text(value: &Scalar<'_>) -> String {
    match value {
        Scalar::Null => String::new(),
        Scalar::Boolean(b) => b.to_string(),
        Scalar::Integer(i) => i.to_string(),
        Scalar::FloatingPoint(f) => float_text(f.into_inner()),
        Scalar::String(s) => s.to_string(),
    }
}

/// `.nan`, `.inf`, `-.inf`, or the shortest text that reads back as `f` (`1.0`, `0.5`).
fn float_text(f: f64) -> String {
    if f.is_nan() {
        ".nan".to_owned()
    } else if f.is_infinite() {
        if f < 0.0 { "-.inf" } else { ".inf" }.to_owned()
    } else {
        format!("{f:?}")
    }
}

fn flatten(
    prefix: &str,
    value: &Yaml,
    origin: &Arc<str>,
    out: &mut Vec<Entry>,
) -> Result<(), ConfigError> {
    let invalid = |why: Malformed| ConfigError::source(origin, format!("`{prefix}`: {why}"));
    match value {
        Yaml::Mapping(map) => {
            for (k, v) in map {
                let name = match scalar(k) {
                    Some(Ok(name)) if !name.is_empty() => name,
                    _ => {
                        return Err(ConfigError::source(
                            origin,
                            format!("a key under `{prefix}` is not a name"),
                        ))
                    }
                };
                // Spring's bracket notation keeps dots inside a map key: `"[X.Y]"`.
                let name = name
                    .strip_prefix('[')
                    .and_then(|n| n.strip_suffix(']'))
                    .unwrap_or(&name);
                let key = if prefix.is_empty() {
                    name.to_owned()
                } else {
                    format!("{prefix}.{name}")
                };
                flatten(&key, v, origin, out)?;
            }
        }
        Yaml::Sequence(items) => match items.iter().map(scalar).collect::<Option<Vec<_>>>() {
            Some(list) => {
                let list = list
                    .into_iter()
                    .collect::<Result<_, _>>()
                    .map_err(invalid)?;
                out.push(Entry::new(prefix.to_owned(), Value::List(list), origin));
            }
            None => {
                for (i, item) in items.iter().enumerate() {
                    flatten(&format!("{prefix}[{i}]"), item, origin, out)?;
                }
            }
        },
        Yaml::Tagged(_, inner) => flatten(prefix, inner, origin, out)?,
        other => {
            let text = scalar(other)
                .unwrap_or_else(|| Ok(String::new()))
                .map_err(invalid)?;
            out.push(Entry::new(prefix.to_owned(), Value::Scalar(text), origin));
        }
    }
    Ok(())
}

/// Reads a `.properties` document: `key=value`, `key: value` or `key value` lines, `#` and `!`
/// comments, `\` line continuations, `\t \n \r \\ \uXXXX` escapes; `key[0]`, `key[1]`… lines
/// form one list. A `#---` (or `!---`) line starts another document, as in Spring Boot, each
/// activated by its `spring.config.activate.on-profile`.
pub(crate) fn properties(text: &str, origin: &Arc<str>) -> Result<Vec<Entry>, ConfigError> {
    let mut done: Vec<Entry> = Vec::new();
    let mut out: Vec<Entry> = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, first)) = lines.next() {
        if matches!(first.trim_end(), "#---" | "!---") {
            done.extend(activated(std::mem::take(&mut out))?);
            continue;
        }
        let mut line = first.trim_start().to_owned();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        while ends_with_continuation(&line) {
            line.pop();
            match lines.next() {
                Some((_, next)) => line.push_str(next.trim_start()),
                None => break,
            }
        }
        let (key, value) = split_line(&line);
        let key = unescape(key.trim_end())
            .map_err(|why| ConfigError::source(origin, format!("line {}: {why}", n + 1)))?;
        let value = unescape(value)
            .map_err(|why| ConfigError::source(origin, format!("line {}: {why}", n + 1)))?;
        if key.is_empty() {
            return Err(ConfigError::source(
                origin,
                format!("line {}: empty key", n + 1),
            ));
        }
        push_indexed(&mut out, key, value, origin)
            .map_err(|why| ConfigError::source(origin, format!("line {}: {why}", n + 1)))?;
    }
    done.extend(activated(out)?);
    Ok(done)
}

fn ends_with_continuation(line: &str) -> bool {
    line.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// Splits at the first unescaped `=`, `:` or whitespace, as `java.util.Properties` does.
fn split_line(line: &str) -> (&str, &str) {
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' => return (&line[..i], line[i + 1..].trim_start()),
            c if c.is_whitespace() => {
                let rest = line[i..].trim_start();
                let rest = rest.strip_prefix(['=', ':']).map_or(rest, str::trim_start);
                return (&line[..i], rest);
            }
            _ => {}
        }
    }
    (line, "")
}

fn unescape(text: &str) -> Result<String, Malformed> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .and_then(char::from_u32)
                    .ok_or(Malformed::UnicodeEscape)?;
                out.push(code);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

/// Adds `key=value`, joining `name[i]` lines of one source into the list `name`.
fn push_indexed(
    out: &mut Vec<Entry>,
    key: String,
    value: String,
    origin: &Arc<str>,
) -> Result<(), Malformed> {
    let index = key
        .strip_suffix(']')
        .and_then(|k| k.rsplit_once('['))
        .and_then(|(base, i)| Some((base.to_owned(), i.parse::<usize>().ok()?)));
    let Some((base, index)) = index else {
        out.push(Entry::new(key, Value::Scalar(value), origin));
        return Ok(());
    };
    if index > MAX_LIST_INDEX {
        return Err(Malformed::ListIndex(index));
    }
    let name = crate::relaxed(&base);
    if let Some(Entry {
        value: Value::List(items),
        ..
    }) = out.iter_mut().rev().find(|e| e.name == name)
    {
        if items.len() <= index {
            items.resize(index + 1, String::new());
        }
        items[index] = value;
        return Ok(());
    }
    let mut items = vec![String::new(); index + 1];
    items[index] = value;
    out.push(Entry::new(base, Value::List(items), origin));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Arc<str> {
        Arc::from("test")
    }

    #[test]
    fn properties_lines_follow_java() {
        let text = "a.b=1\na.c: two\na.d   three\n# c\n! c\na.e=x\\\n   y\na.f[0]=p\na.f[1]=q\nurl=http://h:1/x\nk\\=1=v\n";
        let entries = properties(text, &origin()).unwrap();
        let get = |k: &str| {
            entries
                .iter()
                .find(|e| e.key == k)
                .map(|e| e.value.clone())
                .unwrap()
        };
        assert_eq!(get("a.b"), Value::Scalar("1".into()));
        assert_eq!(get("a.c"), Value::Scalar("two".into()));
        assert_eq!(get("a.d"), Value::Scalar("three".into()));
        assert_eq!(get("a.e"), Value::Scalar("xy".into()));
        assert_eq!(get("a.f"), Value::List(vec!["p".into(), "q".into()]));
        assert_eq!(get("url"), Value::Scalar("http://h:1/x".into()));
        assert_eq!(get("k=1"), Value::Scalar("v".into()));
    }

    #[test]
    fn yaml_flattens_maps_lists_and_brackets() {
        let text = "a:\n  b: 1\n  c: [x, y]\n  \"[d.e]\": z\n  f:\n    - g: 1\n";
        let entries = yaml(text, &origin()).unwrap();
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["a.b", "a.c", "a.d.e", "a.f[0].g"]);
        assert!(yaml("- a\n- b\n", &origin()).is_err());
        assert!(yaml("a: [b", &origin()).is_err());
        assert!(yaml("", &origin()).unwrap().is_empty());
    }

    #[test]
    fn yaml_scalars_read_as_before() {
        let text = "a: 007\nb: 0x10\nc: 1.50\nd: ~\ne: True\nf: \"010\"\n\
                    g: 18446744073709551615\nh: .inf\ni: !!str 12\nj: 1e3\nk: +5\nl: -0\n\
                    m: 0o17\nn: 1e-7\no: 123456789012345678.5\np: 0.1\nq: yes\nr: !custom 42\n\
                    s: -007\nt: 1_000\nu: 0b11\nv: .5\nw: 5.\nx: NULL\ny: -.INF\nz: 3.0e2\n\
                    anchor: &x 1\nalias: *x\n";
        let entries = yaml(text, &origin()).unwrap();
        let values: Vec<String> = entries
            .iter()
            .map(|e| match &e.value {
                Value::Scalar(s) => format!("{}={s}", e.key),
                Value::List(_) => unreachable!(),
            })
            .collect();
        assert_eq!(
            values,
            [
                "a=007",
                "b=16",
                "c=1.5",
                "d=",
                "e=true",
                "f=010",
                "g=18446744073709551615",
                "h=.inf",
                "i=12",
                "j=1000.0",
                "k=5",
                "l=0",
                "m=15",
                "n=1e-7",
                "o=1.2345678901234568e17",
                "p=0.1",
                "q=yes",
                "r=42",
                "s=-007",
                "t=1_000",
                "u=3",
                "v=0.5",
                "w=5.0",
                "x=",
                "y=-.inf",
                "z=300.0",
                "anchor=1",
                "alias=1",
            ]
        );
    }

    #[test]
    fn yaml_refuses_duplicates_and_ill_tagged_values() {
        for bad in [
            "a: 1\na: 2\n",
            "a: 1\n---\n- b\n",
            "c: !!int abc\n",
            "a: *nowhere\n",
        ] {
            assert!(yaml(bad, &origin()).is_err(), "{bad:?}");
        }
        assert!(yaml("# nothing\n", &origin()).unwrap().is_empty());
        assert!(yaml("~\n", &origin()).unwrap().is_empty());
        assert!(yaml("true\n", &origin()).is_err());
    }

    #[test]
    fn malformed_values_name_the_key_or_line() {
        let message = |result: Result<Vec<Entry>, ConfigError>| result.unwrap_err().to_string();
        assert_eq!(
            message(yaml("c: !!int abc\n", &origin())),
            "cannot read test: `c`: \"abc\" does not fit its tag"
        );
        assert_eq!(
            message(properties("a=1\nb=\\u00zz\n", &origin())),
            "cannot read test: line 2: invalid \\u escape"
        );
        assert_eq!(
            message(properties("a[9999]=x\nb[10000]=y\n", &origin())),
            "cannot read test: line 2: list index 10000 is larger than 9999"
        );
        // Past usize too: read as a plain key, as before.
        assert!(properties("a[18446744073709551616]=x\n", &origin()).is_ok());
        assert_eq!(unescape("\\u12"), Err(Malformed::UnicodeEscape));
        assert_eq!(unescape("caf\\u00e9"), Ok("caf\u{e9}".to_owned()));
    }
}
