//! Whether what one side writes, the other can read: types, nullability, enum values, required
//! properties, followed into properties and array items.

use std::collections::HashSet;

use serde_json::Value;

use super::spec::{required_names, Spec};
use super::{MismatchKind, Report};

/// How deep schemas are followed (recursive types stop here).
const MAX_DEPTH: usize = 24;

/// Who writes the value being checked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Parameters and request bodies.
    ClientWrites,
    /// Response bodies.
    ServerWrites,
}

/// The two documents the schemas come from.
pub(super) struct Compat<'a> {
    client: &'a Spec<'a>,
    server: &'a Spec<'a>,
}

/// A schema as the check reads it.
struct Shape<'a> {
    /// `None`: any type.
    types: Option<Vec<&'a str>>,
    nullable: bool,
    schema: &'a Value,
}

impl<'a> Compat<'a> {
    pub(super) fn new(client: &'a Spec<'a>, server: &'a Spec<'a>) -> Self {
        Compat { client, server }
    }

    pub(super) fn client(&self) -> &'a Spec<'a> {
        self.client
    }

    pub(super) fn server(&self) -> &'a Spec<'a> {
        self.server
    }

    /// Reports where the client's schema `ours` and the server's `theirs` disagree, `side`
    /// saying which one writes.
    pub(super) fn check(
        &self,
        ours: &'a Value,
        theirs: &'a Value,
        side: Side,
        at: &str,
        report: &mut Report<'_>,
    ) {
        let mut walk = Walk {
            side,
            seen: HashSet::new(),
            report,
        };
        self.walk(&mut walk, ours, theirs, at, 0);
    }

    fn walk(
        &self,
        walk: &mut Walk<'_, '_>,
        ours: &'a Value,
        theirs: &'a Value,
        at: &str,
        depth: usize,
    ) {
        let pair = (ours as *const Value, theirs as *const Value);
        if depth > MAX_DEPTH || !walk.seen.insert(pair) {
            return;
        }
        let side = walk.side;
        let report = &mut *walk.report;
        let ours = shape(self.client, ours);
        let theirs = shape(self.server, theirs);
        let (writer, reader) = match side {
            Side::ClientWrites => (&ours, &theirs),
            Side::ServerWrites => (&theirs, &ours),
        };
        if let (Some(written), Some(read)) = (&writer.types, &reader.types) {
            let readable = written
                .iter()
                .all(|ty| read.contains(ty) || (*ty == "integer" && read.contains(&"number")));
            // A server that says a value may be null, read by a client that cannot take null.
            let null_unreadable = side == Side::ServerWrites && writer.nullable && !reader.nullable;
            if !readable || null_unreadable {
                report(
                    at.to_owned(),
                    MismatchKind::Type {
                        client: describe(&ours),
                        server: describe(&theirs),
                    },
                );
                return;
            }
        }
        if let (Some(written), Some(read)) =
            (enum_values(writer.schema), enum_values(reader.schema))
        {
            for value in written.iter().filter(|value| !read.contains(value)) {
                report(
                    at.to_owned(),
                    MismatchKind::EnumValue {
                        value: value.to_string(),
                    },
                );
            }
        }
        let writer_properties = writer.schema.get("properties").and_then(Value::as_object);
        if let Some(read_properties) = reader.schema.get("properties").and_then(Value::as_object) {
            let writer_required = required_names(writer.schema);
            for name in required_names(reader.schema) {
                let property_at = format!("{at} .{name}");
                match writer_properties.and_then(|props| props.get(name)) {
                    None if writer_properties.is_some() => {
                        report(property_at, MismatchKind::MissingProperty);
                    }
                    Some(_) if !writer_required.contains(&name) => {
                        report(property_at, MismatchKind::OptionalProperty);
                    }
                    _ => {}
                }
            }
            for (name, read) in read_properties {
                let Some(written) = writer_properties.and_then(|props| props.get(name)) else {
                    continue;
                };
                self.descend(walk, written, read, &format!("{at} .{name}"), depth);
            }
        }
        if let (Some(written), Some(read)) =
            (writer.schema.get("items"), reader.schema.get("items"))
        {
            self.descend(walk, written, read, &format!("{at}[]"), depth);
        }
    }
}

/// One check's state: who writes, the pairs already compared, where mismatches go.
struct Walk<'w, 'r> {
    side: Side,
    seen: HashSet<(*const Value, *const Value)>,
    report: &'w mut Report<'r>,
}

impl<'a> Compat<'a> {
    /// Compares what the writer writes at `written` with what the reader reads at `read`, one
    /// level down.
    fn descend(
        &self,
        walk: &mut Walk<'_, '_>,
        written: &'a Value,
        read: &'a Value,
        at: &str,
        depth: usize,
    ) {
        let (ours, theirs) = match walk.side {
            Side::ClientWrites => (written, read),
            Side::ServerWrites => (read, written),
        };
        self.walk(walk, ours, theirs, at, depth + 1);
    }
}

/// Reads `schema`: `$ref`s followed, a one-element `allOf` unwrapped, an `anyOf`/`oneOf` of a
/// schema and `null` (how `Option` is written) read as a nullable schema, OpenAPI 3.0's
/// `nullable` and 3.1's `"null"` type both read as nullability.
fn shape<'a>(spec: &Spec<'a>, schema: &'a Value) -> Shape<'a> {
    let mut schema = spec.resolve(schema);
    let mut nullable = false;
    for _ in 0..MAX_DEPTH {
        if let Some([only]) = schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            if schema.get("type").is_none() {
                schema = spec.resolve(only);
                continue;
            }
        }
        let alternatives = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array);
        if let Some(alternatives) = alternatives {
            let (nulls, others): (Vec<&Value>, Vec<&Value>) = alternatives
                .iter()
                .map(|alternative| spec.resolve(alternative))
                .partition(|alternative| alternative["type"] == "null");
            if let ([_, ..], [only]) = (nulls.as_slice(), others.as_slice()) {
                nullable = true;
                schema = only;
                continue;
            }
        }
        break;
    }
    let mut types: Option<Vec<&str>> = match schema.get("type") {
        Some(Value::String(ty)) => Some(vec![ty.as_str()]),
        Some(Value::Array(types)) => Some(types.iter().filter_map(Value::as_str).collect()),
        _ => None,
    };
    if let Some(types) = &mut types {
        if types.contains(&"null") {
            nullable = true;
            types.retain(|ty| *ty != "null");
        }
    }
    if schema["nullable"] == true {
        nullable = true;
    }
    Shape {
        types,
        nullable,
        schema,
    }
}

fn enum_values(schema: &Value) -> Option<Vec<&Value>> {
    if let Some(value) = schema.get("const") {
        return Some(vec![value]);
    }
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| values.iter().filter(|value| !value.is_null()).collect())
}

/// `integer`, `string or null`, `any type`.
fn describe(shape: &Shape<'_>) -> String {
    let mut names: Vec<&str> = match &shape.types {
        Some(types) => types.clone(),
        None => vec!["any type"],
    };
    if shape.nullable {
        names.push("null");
    }
    names.join(" or ")
}
