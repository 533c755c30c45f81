//! Eureka's XML, as the real server reads and writes it (XStream with Eureka's converters).
//!
//! The XML and JSON forms map onto each other by fixed rules, so XML goes through the JSON model
//! rather than beside it: the exact output and the tolerant input stay in one place.
//!
//! | JSON | XML |
//! |---|---|
//! | `{"instance":{...}}` | `<instance>...</instance>` (the wrapper key is the root element) |
//! | `"hostName":"h"` | `<hostName>h</hostName>` |
//! | `"port":{"$":8080,"@enabled":"true"}` | `<port enabled="true">8080</port>` |
//! | `"@class":"..."` in `dataCenterInfo` or `metadata` | a `class` attribute |
//! | `"instance":[a,b]` | `<instance>a</instance><instance>b</instance>`, nothing for `[]` |
//! | `"overriddenStatus"` | `<overriddenstatus>` |
//! | `"a_b"`, `"c$d"` (metadata keys) | `<a__b>`, `<c_-d>` (XStream's name coding) |
//!
//! Output is indented by two spaces per level, each element on a line of its own, no
//! declaration and no final line break, with `&`, `<`, `>`, `"`, `'` and carriage returns
//! escaped, byte for byte what the server writes. Input is any well-formed document (a
//! declaration, comments, CDATA, entity and character references, single-quoted attributes);
//! a repeated element becomes a JSON array, an element with attributes and text an object with
//! `"$"`, an element with children an object, and any other element its text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write as _};

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::{Application, Applications, InstanceInfo};

/// The media type of Eureka's XML documents.
pub const XML_MEDIA_TYPE: &str = "application/xml";

/// Why a document could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum XmlError {
    /// The XML is not well-formed, or not one root element.
    #[error("malformed xml: {0}")]
    Syntax(String),
    /// The JSON is malformed or not an object with one key.
    #[error("malformed json: {0}")]
    Json(#[from] serde_json::Error),
    /// The document holds more elements than the reader allows ([`xml_to_json_within`]).
    #[error("more than {0} XML elements")]
    TooManyElements(usize),
}

/// A JSON element name and the XML one, where they differ.
const RENAMED: &[(&str, &str)] = &[("overriddenStatus", "overriddenstatus")];

/// Names the JSON form already writes as XStream codes them (`versions_delta` in Java).
const CODED: &[&str] = &["versions__delta", "apps__hashcode"];

/// The element name for a JSON key, as XStream's name coder writes a Java name: `_` as `__`
/// and `$` as `_-` (metadata keys such as `a_b` become `<a__b>`).
fn xml_name(json_key: &str) -> Cow<'_, str> {
    if let Some((_, xml)) = RENAMED.iter().find(|(json, _)| *json == json_key) {
        return Cow::Borrowed(xml);
    }
    if CODED.contains(&json_key) || !json_key.contains(['_', '$']) {
        return Cow::Borrowed(json_key);
    }
    Cow::Owned(json_key.replace('_', "__").replace('$', "_-"))
}

/// The JSON key for an element name: XStream's name coding undone (`__` is `_`, `_-` is `$`).
fn json_key(xml_name: String) -> String {
    if CODED.contains(&xml_name.as_str()) || !xml_name.contains('_') {
        return xml_name;
    }
    let mut key = String::with_capacity(xml_name.len());
    let mut chars = xml_name.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('_', Some('_')) => {
                chars.next();
                key.push('_');
            }
            ('_', Some('-')) => {
                chars.next();
                key.push('$');
            }
            (c, _) => key.push(c),
        }
    }
    key
}

/// One JSON value, its keys kept in document order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Null,
    Text(String),
    /// A number the JSON form writes as one (the compact form's `lastUpdatedTimestamp`).
    Number(u64),
    List(Vec<Value>),
    Object(Vec<(String, Value)>),
}

/// Writes `json` (one object with one key, the root wrapper) as Eureka's XML.
///
/// ```
/// use feign_eureka::model::json_to_xml;
///
/// let xml = json_to_xml(br#"{"port":{"$":8080,"@enabled":"true"}}"#)?;
/// assert_eq!(xml, r#"<port enabled="true">8080</port>"#);
/// # Ok::<(), feign_eureka::model::XmlError>(())
/// ```
pub fn json_to_xml(json: &[u8]) -> Result<String, XmlError> {
    let (name, value) = read_json(json)?;
    Ok(write_xml(&name, &value, &PRETTY))
}

/// `json`'s root key and value, keys in document order.
pub(super) fn read_json(json: &[u8]) -> Result<(String, Value), XmlError> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let value = ValueSeed.deserialize(&mut de)?;
    de.end()?;
    let Value::Object(mut root) = value else {
        return Err(XmlError::Syntax("the document is not an object".into()));
    };
    if root.len() != 1 {
        return Err(XmlError::Syntax(
            "the document needs exactly one root key".into(),
        ));
    }
    Ok(root.remove(0))
}

/// How a document is laid out and escaped.
pub(super) struct Style {
    /// Each element on a line of its own, two spaces per level (XStream), or one line.
    pub(super) indent: bool,
    /// Escapes text content.
    pub(super) text: fn(&mut String, &str),
    /// Escapes attribute values.
    pub(super) attribute: fn(&mut String, &str),
}

/// XStream's pretty printer, which writes the full documents.
const PRETTY: Style = Style {
    indent: true,
    text: escape,
    attribute: escape,
};

/// `<name>value</name>` in `style`.
pub(super) fn write_xml(name: &str, value: &Value, style: &Style) -> String {
    let mut out = String::new();
    write_element(&mut out, &xml_name(name), value, 0, style);
    out
}

/// Reads Eureka's XML into the JSON the model reads: `{"root":{...}}`.
///
/// ```
/// use feign_eureka::model::xml_to_json;
///
/// let json = xml_to_json(br#"<port enabled="true">8080</port>"#)?;
/// assert_eq!(json, br#"{"port":{"@enabled":"true","$":"8080"}}"#);
/// # Ok::<(), feign_eureka::model::XmlError>(())
/// ```
pub fn xml_to_json(xml: &[u8]) -> Result<Vec<u8>, XmlError> {
    xml_to_json_within(xml, usize::MAX)
}

/// [`xml_to_json`] for a document of at most `max_elements` elements: a bigger one is refused
/// with [`XmlError::TooManyElements`] as soon as the reader passes the limit, before anything
/// is converted. A server reading documents from clients bounds them so.
///
/// ```
/// use feign_eureka::model::{xml_to_json_within, XmlError};
///
/// assert!(xml_to_json_within(b"<a><b/><c/></a>", 3).is_ok());
/// let refused = xml_to_json_within(b"<a><b/><c/><d/></a>", 3);
/// assert!(matches!(refused, Err(XmlError::TooManyElements(3))));
/// ```
pub fn xml_to_json_within(xml: &[u8], max_elements: usize) -> Result<Vec<u8>, XmlError> {
    let (name, element) = parse(xml, max_elements)?;
    let root = Value::Object(vec![(name, element.into_value())]);
    Ok(serde_json::to_vec(&root)?)
}

macro_rules! xml_document {
    ($type:ident, $root:literal) => {
        impl $type {
            #[doc = concat!("Reads `<", $root, ">...</", $root, ">` (the root element is required).")]
            pub fn from_xml(xml: &[u8]) -> Result<$type, XmlError> {
                Ok($type::from_json(&xml_to_json(xml)?)?)
            }

            #[doc = concat!("Writes `<", $root, ">...</", $root, ">` as Eureka does.")]
            pub fn to_xml(&self) -> String {
                // The model's own JSON always converts.
                json_to_xml(self.to_json().as_bytes()).unwrap_or_default()
            }
        }
    };
}

xml_document!(InstanceInfo, "instance");
xml_document!(Application, "application");
xml_document!(Applications, "applications");

// ---- writing ----------------------------------------------------------------------------

fn indent(out: &mut String, depth: usize, style: &Style) {
    if !style.indent {
        return;
    }
    if depth > 0 || !out.is_empty() {
        out.push('\n');
    }
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// XStream's escaping: the five markup characters and carriage returns.
fn escape(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xd;"),
            c => out.push(c),
        }
    }
}

fn write_element(out: &mut String, name: &str, value: &Value, depth: usize, style: &Style) {
    match value {
        Value::Null => {}
        Value::List(items) => {
            for item in items {
                write_element(out, name, item, depth, style);
            }
        }
        Value::Text(text) => {
            indent(out, depth, style);
            let _ = write!(out, "<{name}>");
            (style.text)(out, text);
            let _ = write!(out, "</{name}>");
        }
        Value::Number(n) => {
            indent(out, depth, style);
            let _ = write!(out, "<{name}>{n}</{name}>");
        }
        Value::Object(fields) => {
            indent(out, depth, style);
            out.push('<');
            out.push_str(name);
            let mut text = None;
            for (key, value) in fields {
                match (key.strip_prefix('@'), value) {
                    (Some(attribute), Value::Text(v)) => {
                        let _ = write!(out, " {attribute}=\"");
                        (style.attribute)(out, v);
                        out.push('"');
                    }
                    _ if key == "$" => text = Some(value),
                    _ => {}
                }
            }
            let children: Vec<_> = fields
                .iter()
                .filter(|(key, value)| {
                    key != "$" && !(key.starts_with('@') && matches!(value, Value::Text(_)))
                })
                .filter(|(_, value)| !is_empty_list(value) && *value != Value::Null)
                .collect();
            if let Some(Value::Text(text)) = text {
                out.push('>');
                (style.text)(out, text);
                let _ = write!(out, "</{name}>");
            } else if let Some(Value::Number(n)) = text {
                let _ = write!(out, ">{n}</{name}>");
            } else if children.is_empty() {
                out.push_str("/>");
            } else {
                out.push('>');
                for (key, value) in children {
                    write_element(out, &xml_name(key), value, depth + 1, style);
                }
                indent(out, depth, style);
                let _ = write!(out, "</{name}>");
            }
        }
    }
}

fn is_empty_list(value: &Value) -> bool {
    matches!(value, Value::List(items) if items.iter().all(|i| *i == Value::Null))
}

/// Reads any JSON value into a [`Value`], keeping key order, natural numbers as numbers and other
/// scalars as text.
pub(super) struct ValueSeed;

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Text(v.to_string()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(u64::try_from(v).map_or_else(|_| Value::Text(v.to_string()), Value::Number))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Text(v.to_string()))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Text(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Text(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ValueSeed)? {
            items.push(item);
        }
        Ok(Value::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            fields.push((key, map.next_value_seed(ValueSeed)?));
        }
        Ok(Value::Object(fields))
    }
}

// ---- reading ----------------------------------------------------------------------------

/// An element being read: its attributes, text and children in order.
#[derive(Default)]
struct Element {
    attributes: Vec<(String, String)>,
    text: String,
    children: Vec<(String, Element)>,
}

impl Element {
    /// The JSON form (see the module docs).
    fn into_value(self) -> Value {
        if self.children.is_empty() && self.attributes.is_empty() {
            return Value::Text(self.text);
        }
        let mut fields: Vec<(String, Value)> = self
            .attributes
            .into_iter()
            .map(|(name, value)| (format!("@{name}"), Value::Text(value)))
            .collect();
        if self.children.is_empty() {
            if !self.text.trim().is_empty() {
                fields.push(("$".to_owned(), Value::Text(self.text)));
            }
            return Value::Object(fields);
        }
        // Where each child name's value is in `fields`, so that a repeated name is found
        // without searching: the conversion stays linear in the number of children.
        let mut index: HashMap<String, usize> = HashMap::with_capacity(self.children.len());
        for (name, child) in self.children {
            let value = match (name.as_str(), child.into_value()) {
                // Eureka's converter enables a secure port only when told `enabled="true"`; the
                // JSON reader takes a bare port as enabled, right only for `port`.
                ("securePort", Value::Text(port)) => Value::Object(vec![
                    ("$".to_owned(), Value::Text(port)),
                    ("@enabled".to_owned(), Value::Text("false".to_owned())),
                ]),
                // Its converter reads statuses ignoring case (`Down` is `DOWN`), the JSON one
                // does not.
                ("status" | "overriddenstatus" | "overriddenStatus", Value::Text(status)) => {
                    Value::Text(status.to_ascii_uppercase())
                }
                (_, value) => value,
            };
            match index.get(&name).map(|&at| &mut fields[at].1) {
                Some(Value::List(items)) => items.push(value),
                Some(first) => {
                    let earlier = std::mem::replace(first, Value::Null);
                    *first = Value::List(vec![earlier, value]);
                }
                None => {
                    index.insert(name.clone(), fields.len());
                    fields.push((name, value));
                }
            }
        }
        Value::Object(fields)
    }
}

fn syntax(error: impl fmt::Display) -> XmlError {
    XmlError::Syntax(error.to_string())
}

fn start(e: &BytesStart<'_>) -> Result<(String, Element), XmlError> {
    let name = json_key(String::from_utf8(e.name().as_ref().to_vec()).map_err(syntax)?);
    let mut element = Element::default();
    for attribute in e.attributes() {
        let attribute = attribute.map_err(syntax)?;
        let key = String::from_utf8(attribute.key.as_ref().to_vec()).map_err(syntax)?;
        if key == "xmlns" || key.starts_with("xmlns:") {
            continue;
        }
        let value = attribute
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(syntax)?;
        element.attributes.push((key, value.into_owned()));
    }
    Ok((name, element))
}

fn reference(r: &BytesRef<'_>) -> Result<Cow<'static, str>, XmlError> {
    if let Some(c) = r.resolve_char_ref().map_err(syntax)? {
        return Ok(Cow::Owned(c.to_string()));
    }
    let name = r.decode().map_err(syntax)?;
    quick_xml::escape::resolve_predefined_entity(&name)
        .map(Cow::Borrowed)
        .ok_or_else(|| XmlError::Syntax(format!("unknown entity &{name};")))
}

/// Deepest element nesting read. Eureka's documents nest six deep; the limit keeps the
/// recursive conversion of a hostile document from exhausting the stack, as serde_json's does.
const MAX_DEPTH: usize = 64;

/// Parses one root element of at most `max_elements` elements.
fn parse(xml: &[u8], max_elements: usize) -> Result<(String, Element), XmlError> {
    let mut reader = Reader::from_reader(xml);
    let mut stack: Vec<(String, Element)> = Vec::new();
    let mut root = None;
    let mut elements = 0usize;
    loop {
        let event = reader.read_event().map_err(syntax)?;
        if root.is_some() && !matches!(event, Event::Eof | Event::Comment(_) | Event::PI(_)) {
            let blank = matches!(&event, Event::Text(t) if t.iter().all(u8::is_ascii_whitespace));
            if !blank {
                return Err(syntax("content after the root element"));
            }
            continue;
        }
        if matches!(event, Event::Start(_) | Event::Empty(_)) {
            elements += 1;
            if elements > max_elements {
                return Err(XmlError::TooManyElements(max_elements));
            }
        }
        match event {
            Event::Start(e) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(syntax(format!("elements nested deeper than {MAX_DEPTH}")));
                }
                stack.push(start(&e)?);
            }
            Event::Empty(e) => {
                let element = start(&e)?;
                match stack.last_mut() {
                    Some((_, parent)) => parent.children.push(element),
                    None => root = Some(element),
                }
            }
            Event::End(_) => {
                // quick-xml checks that end tags match their start tags.
                let element = stack.pop().ok_or_else(|| syntax("unexpected end tag"))?;
                match stack.last_mut() {
                    Some((_, parent)) => parent.children.push(element),
                    None => root = Some(element),
                }
            }
            Event::Text(t) => {
                if let Some((_, element)) = stack.last_mut() {
                    element
                        .text
                        .push_str(&t.xml_content(XmlVersion::Implicit1_0).map_err(syntax)?);
                } else if !t.iter().all(u8::is_ascii_whitespace) {
                    return Err(syntax("text outside the root element"));
                }
            }
            Event::CData(t) => {
                let (_, element) = stack.last_mut().ok_or_else(|| syntax("stray CDATA"))?;
                element.text.push_str(&t.decode().map_err(syntax)?);
            }
            Event::GeneralRef(r) => {
                let (_, element) = stack.last_mut().ok_or_else(|| syntax("stray reference"))?;
                element.text.push_str(&reference(&r)?);
            }
            Event::Eof => break,
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err(syntax("the document ends inside an element"));
    }
    root.ok_or_else(|| syntax("no root element"))
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Text(text) => serializer.serialize_str(text),
            Value::Number(n) => serializer.serialize_u64(*n),
            Value::List(items) => serializer.collect_seq(items),
            Value::Object(fields) => {
                let mut map = serializer.serialize_map(Some(fields.len()))?;
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_as_xstream_does() {
        let json = br#"{"applications":{"versions__delta":"1","apps__hashcode":"","application":[{"name":"A","instance":[{"status":"UP","overriddenStatus":"UNKNOWN","port":{"$":80,"@enabled":"true"},"dataCenterInfo":{"@class":"c","name":"MyOwn"},"metadata":{"@class":"java.util.Collections$EmptyMap"},"x":"a<&>\"'\r\nb"}]}]}}"#;
        let expected = "<applications>\n  <versions__delta>1</versions__delta>\n  <apps__hashcode></apps__hashcode>\n  <application>\n    <name>A</name>\n    <instance>\n      <status>UP</status>\n      <overriddenstatus>UNKNOWN</overriddenstatus>\n      <port enabled=\"true\">80</port>\n      <dataCenterInfo class=\"c\">\n        <name>MyOwn</name>\n      </dataCenterInfo>\n      <metadata class=\"java.util.Collections$EmptyMap\"/>\n      <x>a&lt;&amp;&gt;&quot;&apos;&#xd;\nb</x>\n    </instance>\n  </application>\n</applications>";
        assert_eq!(json_to_xml(json).unwrap(), expected);
    }

    #[test]
    fn empty_lists_write_nothing() {
        let json =
            br#"{"applications":{"versions__delta":"-1","apps__hashcode":"","application":[]}}"#;
        assert_eq!(
            json_to_xml(json).unwrap(),
            "<applications>\n  <versions__delta>-1</versions__delta>\n  <apps__hashcode></apps__hashcode>\n</applications>"
        );
    }

    #[test]
    fn reads_repeated_elements_as_arrays_and_references_as_text() {
        let xml = br#"<?xml version="1.0"?>
            <!-- a comment -->
            <application><name>A&amp;B&#x41;</name>
              <instance><port enabled='true'>80</port></instance>
              <instance><![CDATA[<x>]]></instance>
            </application>"#;
        let json = String::from_utf8(xml_to_json(xml).unwrap()).unwrap();
        assert_eq!(
            json,
            r#"{"application":{"name":"A&BA","instance":[{"port":{"@enabled":"true","$":"80"}},"<x>"]}}"#
        );
    }

    #[test]
    fn refuses_malformed_documents() {
        for xml in [
            &b"<instance><hostName>h</hostName>"[..],
            b"<a></b>",
            b"",
            b"text",
            b"<a/><b/>",
            b"<a>&nope;</a>",
        ] {
            assert!(
                xml_to_json(xml).is_err(),
                "{}",
                String::from_utf8_lossy(xml)
            );
        }
    }

    #[test]
    fn names_are_coded_as_xstream_codes_them() {
        let json = br#"{"instance":{"metadata":{"a_b":"x_y","c$d":"1","e__f":"2"}}}"#;
        let xml = json_to_xml(json).unwrap();
        assert_eq!(
            xml,
            "<instance>\n  <metadata>\n    <a__b>x_y</a__b>\n    <c_-d>1</c_-d>\n    <e____f>2</e____f>\n  </metadata>\n</instance>"
        );
        assert_eq!(xml_to_json(xml.as_bytes()).unwrap(), json.to_vec());
        // A lone underscore reads as itself, as XStream reads it.
        assert_eq!(
            xml_to_json(b"<m><p_q>3</p_q></m>").unwrap(),
            br#"{"m":{"p_q":"3"}}"#.to_vec()
        );
    }

    #[test]
    fn a_secure_port_without_enabled_is_disabled_as_eureka_reads_it() {
        let xml = br#"<instance><hostName>h</hostName><port>8080</port><securePort>8443</securePort></instance>"#;
        let info = InstanceInfo::from_xml(xml).unwrap();
        assert_eq!((info.port.port, info.port.enabled), (8080, true));
        assert_eq!(
            (info.secure_port.port, info.secure_port.enabled),
            (8443, false)
        );
    }

    #[test]
    fn statuses_read_ignoring_case_as_eureka_reads_them() {
        let xml = br#"<instance><status>Down</status><overriddenstatus>out_of_service</overriddenstatus></instance>"#;
        let info = InstanceInfo::from_xml(xml).unwrap();
        assert_eq!(info.status, crate::model::InstanceStatus::Down);
        assert_eq!(
            info.overridden_status,
            crate::model::InstanceStatus::OutOfService
        );
    }

    #[test]
    fn refuses_deep_nesting_without_exhausting_the_stack() {
        let deep = format!("{}{}", "<a>".repeat(100_000), "</a>".repeat(100_000));
        assert!(xml_to_json(deep.as_bytes()).is_err());
        let fine = format!("{}{}", "<a>".repeat(MAX_DEPTH), "</a>".repeat(MAX_DEPTH));
        assert!(xml_to_json(fine.as_bytes()).is_ok());
    }

    #[test]
    fn many_distinct_children_convert_in_linear_time() {
        // 200,000 distinct names: a search of the names seen for each would take minutes.
        let children: String = (0..200_000).map(|i| format!("<e{i}/>")).collect();
        let xml = format!("<m>{children}</m>");
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(xml_to_json(xml.as_bytes()).map(|json| json.len()));
        });
        let converted = finished.recv_timeout(std::time::Duration::from_secs(60));
        assert!(converted.expect("converted within a minute").is_ok());
    }

    #[test]
    fn a_document_past_its_element_limit_is_refused() {
        let xml = format!("<m>{}</m>", "<e/>".repeat(1_000));
        assert!(matches!(
            xml_to_json_within(xml.as_bytes(), 1_000),
            Err(XmlError::TooManyElements(1_000))
        ));
        assert!(xml_to_json_within(xml.as_bytes(), 1_001).is_ok());
    }

    #[test]
    fn round_trips_through_json() {
        let json = br#"{"instance":{"hostName":"h","port":{"$":"80","@enabled":"true"},"metadata":{"a":"1","b":"2"}}}"#;
        let xml = json_to_xml(json).unwrap();
        let back = xml_to_json(xml.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(back).unwrap(),
            r#"{"instance":{"hostName":"h","port":{"@enabled":"true","$":"80"},"metadata":{"a":"1","b":"2"}}}"#
        );
    }

    #[test]
    fn a_registration_reads_as_its_json_twin_does() {
        let xml = br#"<instance><instanceId>x1</instanceId><hostName>h1</hostName><app>xapp</app><ipAddr>127.0.0.1</ipAddr><status>DOWN</status><overriddenstatus>UNKNOWN</overriddenstatus><port enabled="true">8080</port><securePort enabled="false">443</securePort><countryId>1</countryId><dataCenterInfo class="com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"><name>MyOwn</name></dataCenterInfo><leaseInfo><durationInSecs>9</durationInSecs></leaseInfo><metadata class="java.util.Collections$EmptyMap"/><lastDirtyTimestamp>17</lastDirtyTimestamp></instance>"#;
        let info = InstanceInfo::from_xml(xml).unwrap();
        assert_eq!(
            (info.id(), info.app.as_str(), info.port.port),
            ("x1", "XAPP", 8080)
        );
        assert_eq!(info.status, crate::model::InstanceStatus::Down);
        assert!(info.metadata.is_empty() && !info.secure_port.enabled);
        assert_eq!(info.lease_info.unwrap().duration_in_secs, 9);
        assert_eq!(info.last_dirty_timestamp, Some(17));
        let again =
            InstanceInfo::from_xml(InstanceInfo::from_xml(xml).unwrap().to_xml().as_bytes());
        assert_eq!(again.unwrap(), InstanceInfo::from_xml(xml).unwrap());
    }
}
