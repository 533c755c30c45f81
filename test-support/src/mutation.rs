//! Mutations of valid JSON documents for property tests: truncation, byte flips and inserts,
//! and values of another type put in place of one of the document's.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// One change to a document's bytes.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// Cut the document at this point.
    Truncate(Index),
    /// Set the byte at this point.
    Flip(Index, u8),
    /// Insert a byte at this point.
    Insert(Index, u8),
    /// Put this value at one of the document's values, the root included (valid JSON stays
    /// valid).
    Swap(Index, Value),
}

/// Any [`Mutation`].
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Truncate),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (
            any::<Index>(),
            prop::sample::select(b"{}[]\",:\\0-e.".to_vec())
        )
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<Index>(), value_of_any_type()).prop_map(|(i, v)| Mutation::Swap(i, v)),
    ]
}

/// A JSON value of any type: scalars of every kind (strings with characters JSON escapes),
/// empty containers, and shapes found in Eureka documents.
pub fn value_of_any_type() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[ -~]{0,12}|\\PC{0,8}|[\"\\\\/\u{0}-\u{1f}\u{e9}]{0,6}".prop_map(Value::String),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!([{"hostName": "10.0.0.1", "app": "X"}, 1])),
        Just(serde_json::json!({"$": "80", "@enabled": "maybe"})),
    ]
}

/// Every value's JSON pointer in `value`, the root (`""`) last.
pub fn pointers(value: &Value) -> Vec<String> {
    fn walk(value: &Value, at: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    walk(child, format!("{at}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(child, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
        out.push(at);
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}

/// The bytes of `document` with `mutation` applied.
pub fn mutate(document: &Value, mutation: &Mutation) -> Vec<u8> {
    let mut bytes = document.to_string().into_bytes();
    match mutation {
        Mutation::Truncate(at) => bytes.truncate(at.index(bytes.len())),
        Mutation::Flip(at, byte) => {
            let at = at.index(bytes.len());
            bytes[at] = *byte;
        }
        Mutation::Insert(at, byte) => bytes.insert(at.index(bytes.len() + 1), *byte),
        Mutation::Swap(at, replacement) => {
            let all = pointers(document);
            let mut document = document.clone();
            if let Some(target) = document.pointer_mut(&all[at.index(all.len())]) {
                *target = replacement.clone();
            }
            bytes = document.to_string().into_bytes();
        }
    }
    bytes
}

/// The bytes of `document` with each mutation applied in turn, as long as the result is
/// still JSON (a document no longer JSON is returned as it is).
pub fn mutate_all(document: &Value, mutations: &[Mutation]) -> Vec<u8> {
    let mut current = document.clone();
    let mut bytes = document.to_string().into_bytes();
    for mutation in mutations {
        bytes = mutate(&current, mutation);
        match serde_json::from_slice(&bytes) {
            Ok(next) => current = next,
            Err(_) => break,
        }
    }
    bytes
}
