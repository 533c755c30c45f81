//! Tolerant readers for Eureka JSON (§3.9 of the protocol notes): numbers and booleans as
//! strings, single objects where arrays are expected, and values of the wrong type skipped
//! instead of failing the whole document.
//!
//! Every reader here accepts any JSON value; a value of the wrong shape reads as `None` (its
//! children are skipped), so only malformed JSON fails a parse.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, Visitor};

/// Skips the rest of a sequence.
fn drain_seq<'de, A: de::SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Skips the rest of a map.
fn drain_map<'de, A: de::MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the container and null arms of a lenient visitor: all read as `None`.
macro_rules! none_for_containers_and_null {
    () => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            drain_seq(seq).map(|()| None)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            drain_map(map).map(|()| None)
        }
    };
}

/// A string; numbers and booleans are turned into their text.
pub(crate) struct LenientString(pub(crate) Option<String>);

impl<'de> Deserialize<'de> for LenientString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        LenientText::deserialize(d).map(|t| LenientString(t.0.map(Cow::into_owned)))
    }
}

/// [`LenientString`] borrowed from the document when it holds no escapes (no allocation).
pub(crate) struct LenientText<'de>(pub(crate) Option<Cow<'de, str>>);

impl<'de> Deserialize<'de> for LenientText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v.to_string())))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v.to_string())))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v.to_string())))
            }
            none_for_containers_and_null!();
        }
        d.deserialize_any(V).map(LenientText)
    }
}

/// A non-negative integer, as a number or a numeric string.
pub(crate) struct LenientU64(pub(crate) Option<u64>);

impl<'de> Deserialize<'de> for LenientU64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<u64>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(v.trim().parse().ok())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(u64::try_from(v).ok())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Some(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                let integral = v.fract() == 0.0 && v >= 0.0 && v <= u64::MAX as f64;
                Ok(integral.then_some(v as u64))
            }
            none_for_containers_and_null!();
        }
        d.deserialize_any(V).map(LenientU64)
    }
}

/// An integer that may be negative, as a number or a numeric string.
pub(crate) struct LenientI64(pub(crate) Option<i64>);

impl<'de> Deserialize<'de> for LenientI64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<i64>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(v.trim().parse().ok())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Some(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(i64::try_from(v).ok())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                let integral = v.fract() == 0.0 && v.abs() <= i64::MAX as f64;
                Ok(integral.then_some(v as i64))
            }
            none_for_containers_and_null!();
        }
        d.deserialize_any(V).map(LenientI64)
    }
}

/// A boolean, as `true`/`false` or the strings `"true"`/`"false"` (any case).
pub(crate) struct LenientBool(pub(crate) Option<bool>);

impl<'de> Deserialize<'de> for LenientBool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<bool>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                let v = v.trim();
                Ok(if v.eq_ignore_ascii_case("true") {
                    Some(true)
                } else if v.eq_ignore_ascii_case("false") {
                    Some(false)
                } else {
                    None
                })
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Some(v))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            none_for_containers_and_null!();
        }
        d.deserialize_any(V).map(LenientBool)
    }
}

/// A flat string map: the `@class` key is dropped, scalar values become text, nested values and
/// nulls are skipped. Anything but an object reads as an empty map.
pub(crate) struct LenientStringMap(pub(crate) BTreeMap<String, String>);

impl<'de> Deserialize<'de> for LenientStringMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BTreeMap<String, String>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of strings")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    let LenientString(value) = map.next_value()?;
                    if key == "@class" {
                        continue;
                    }
                    if let Some(value) = value {
                        out.insert(key, value);
                    }
                }
                Ok(out)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq).map(|()| BTreeMap::new())
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(BTreeMap::new())
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(BTreeMap::new())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(BTreeMap::new())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(BTreeMap::new())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(BTreeMap::new())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(BTreeMap::new())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(BTreeMap::new())
            }
        }
        d.deserialize_any(V).map(LenientStringMap)
    }
}

/// A list given as an array or as a single object (old servers unwrap one-element arrays).
///
/// Elements are read with `T`'s lenient reader, which returns `None` for an element that is not
/// an object; those are counted in `skipped` rather than failing the document.
pub(crate) struct OneOrMany<T> {
    pub(crate) items: Vec<T>,
    pub(crate) skipped: usize,
}

/// A reader for one element of a [`OneOrMany`]: `None` for a value of the wrong shape.
pub(crate) trait LenientElement<'de>: Sized {
    /// Reads one element; the wrong shape reads as `None`, malformed JSON is an error.
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error>;

    /// Reads a single element given as an object where a list was expected.
    fn from_single_map<A: de::MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        Self::deserialize_lenient(de::value::MapAccessDeserializer::new(map))
    }
}

struct Element<T>(Option<T>);

impl<'de, T: LenientElement<'de>> Deserialize<'de> for Element<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize_lenient(d).map(Element)
    }
}

impl<'de, T: LenientElement<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: LenientElement<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array or a single object")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                let mut skipped = 0;
                while let Some(Element(item)) = seq.next_element::<Element<T>>()? {
                    match item {
                        Some(item) => items.push(item),
                        None => skipped += 1,
                    }
                }
                Ok(OneOrMany { items, skipped })
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let one = T::from_single_map(map)?;
                let skipped = usize::from(one.is_none());
                Ok(OneOrMany {
                    items: one.into_iter().collect(),
                    skipped,
                })
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(OneOrMany {
                    items: Vec::new(),
                    skipped: 0,
                })
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(OneOrMany {
                    items: Vec::new(),
                    skipped: 0,
                })
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(OneOrMany {
                    items: Vec::new(),
                    skipped: 1,
                })
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(OneOrMany {
                    items: Vec::new(),
                    skipped: 1,
                })
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(OneOrMany {
                    items: Vec::new(),
                    skipped: 1,
                })
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(OneOrMany {
                    items: Vec::new(),
                    skipped: 1,
                })
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(OneOrMany {
                    items: Vec::new(),
                    skipped: 1,
                })
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Implements every non-map arm of a visitor whose value is `Option<_>`: all read as `None`,
/// children skipped. Used by the hand-written object readers of this module's siblings.
macro_rules! none_unless_map {
    () => {
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    };
}
pub(crate) use none_unless_map;

/// Declares a field-name enum read without allocating: known wire names map to variants,
/// anything else to `Other` (whose value the caller skips).
macro_rules! field_names {
    ($vis:vis $name:ident { $($variant:ident = $wire:literal),* $(,)? }) => {
        #[derive(Clone, Copy)]
        $vis enum $name {
            $($variant,)*
            Other,
        }

        impl $name {
            /// The field a key names (`Other` for any key not listed).
            $vis fn from_wire(key: &str) -> $name {
                match key {
                    $($wire => $name::$variant,)*
                    _ => $name::Other,
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a field name")
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        Ok($name::from_wire(v))
                    }
                }
                d.deserialize_identifier(V)
            }
        }
    };
}
pub(crate) use field_names;

/// `json` as text, or the error of a document that is not UTF-8 (RFC 8259 requires it) or
/// holds a number beyond `f64`'s range (`1e999`, `-1E309`, an integer of 400 digits): the one
/// reading of a document every reader starts from.
///
/// serde_json checks both only in the values it reads: its byte reader lets invalid UTF-8 pass
/// in values it skips (unknown keys), and it refuses a number out of range where it reads one
/// and lets it pass where it skips one or keeps its text (the one-pass reader keeps what
/// routing does not need as text). Without this check a document would be read or refused
/// depending on which keys a reader knows. Checking once up front is also cheaper than checking
/// every string on its own.
pub(crate) fn checked_document(json: &[u8]) -> Result<&str, serde_json::Error> {
    let text = std::str::from_utf8(json).map_err(|utf8| {
        // The byte reader's error says where, when it sees the bad byte.
        serde_json::from_slice::<IgnoredAny>(json)
            .err()
            .unwrap_or_else(|| de::Error::custom(format!("the document is not UTF-8: {utf8}")))
    })?;
    match out_of_range_number(text) {
        None => Ok(text),
        Some((at, number)) => {
            let shown: String = number.chars().take(24).collect();
            let more = if shown.len() < number.len() {
                "..."
            } else {
                ""
            };
            Err(de::Error::custom(format!(
                "number out of range at byte {at}: {shown}{more}"
            )))
        }
    }
}

/// The first number of `text`, outside its strings, that serde_json reads as beyond `f64`'s
/// range, with where it starts. Only a number with an exponent or of more than 300 characters
/// can be: the others are passed over without being parsed. Text that is not JSON is passed
/// over too; its reader reports it.
fn out_of_range_number(text: &str) -> Option<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let number = &text[start..i];
                let may_overflow = number.len() > 300 || number.contains(['e', 'E']);
                // serde_json's own reading of the number, so the rule is exactly its rule.
                if may_overflow
                    && serde_json::from_str::<f64>(number)
                        .is_err_and(|e| e.to_string().starts_with("number out of range"))
                {
                    return Some((start, number));
                }
            }
            _ => i += 1,
        }
    }
    None
}
