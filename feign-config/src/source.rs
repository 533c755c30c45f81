//! Reading one source (a YAML document, a properties document) into flat entries.

use std::sync::Arc;

use crate::ConfigError;

/// A value as its source wrote it: one scalar, or a list (a YAML sequence, or `key[0]`,
/// `key[1]`… lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Scalar(String),
    List(Vec<String>),
}

/// One property of one source.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The name as written, dotted.
    pub(crate) key: String,
    /// [`crate::relaxed`] of `key`.
    pub(crate) name: String,
    pub(crate) value: Value,
    pub(crate) origin: Arc<str>,
}

impl Entry {
    pub(crate) fn new(key: String, value: Value, origin: &Arc<str>) -> Entry {
        Entry {
            name: crate::relaxed(&key),
            key,
            value,
            origin: origin.clone(),
        }
    }
}

/// Flattens a YAML document: nested maps become dotted names, sequences of scalars lists,
/// sequences of maps `name[i].…`.
pub(crate) fn yaml(text: &str, origin: &Arc<str>) -> Result<Vec<Entry>, ConfigError> {
    let value: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| ConfigError::source(origin, e.to_string()))?;
    let mut out = Vec::new();
    if !value.is_null() {
        if !value.is_mapping() {
            return Err(ConfigError::source(origin, "the document is not a mapping"));
        }
        flatten("", &value, origin, &mut out)?;
    }
    Ok(out)
}

fn scalar(value: &serde_yaml::Value) -> Option<String> {
    use serde_yaml::Value;
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some(String::new()),
        Value::Tagged(tagged) => scalar(&tagged.value),
        Value::Sequence(_) | Value::Mapping(_) => None,
    }
}

fn flatten(
    prefix: &str,
    value: &serde_yaml::Value,
    origin: &Arc<str>,
    out: &mut Vec<Entry>,
) -> Result<(), ConfigError> {
    use serde_yaml::Value as Yaml;
    match value {
        Yaml::Mapping(map) => {
            for (k, v) in map {
                let Some(name) = scalar(k).filter(|k| !k.is_empty()) else {
                    return Err(ConfigError::source(
                        origin,
                        format!("a key under `{prefix}` is not a name"),
                    ));
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
            Some(list) => out.push(Entry::new(prefix.to_owned(), Value::List(list), origin)),
            None => {
                for (i, item) in items.iter().enumerate() {
                    flatten(&format!("{prefix}[{i}]"), item, origin, out)?;
                }
            }
        },
        Yaml::Tagged(tagged) => flatten(prefix, &tagged.value, origin, out)?,
        other => {
            let text = scalar(other).unwrap_or_default();
            out.push(Entry::new(prefix.to_owned(), Value::Scalar(text), origin));
        }
    }
    Ok(())
}

/// Reads a `.properties` document: `key=value`, `key: value` or `key value` lines, `#` and `!`
/// comments, `\` line continuations, `\t \n \r \\ \uXXXX` escapes; `key[0]`, `key[1]`… lines
/// form one list.
pub(crate) fn properties(text: &str, origin: &Arc<str>) -> Result<Vec<Entry>, ConfigError> {
    let mut out: Vec<Entry> = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, first)) = lines.next() {
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
        push_indexed(&mut out, key, value, origin);
    }
    Ok(out)
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

fn unescape(text: &str) -> Result<String, String> {
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
                    .ok_or("invalid \\u escape")?;
                out.push(code);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

/// Adds `key=value`, joining `name[i]` lines of one source into the list `name`.
fn push_indexed(out: &mut Vec<Entry>, key: String, value: String, origin: &Arc<str>) {
    let index = key
        .strip_suffix(']')
        .and_then(|k| k.rsplit_once('['))
        .and_then(|(base, i)| Some((base.to_owned(), i.parse::<usize>().ok()?)));
    let Some((base, index)) = index else {
        out.push(Entry::new(key, Value::Scalar(value), origin));
        return;
    };
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
        return;
    }
    let mut items = vec![String::new(); index + 1];
    items[index] = value;
    out.push(Entry::new(base, Value::List(items), origin));
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
}
