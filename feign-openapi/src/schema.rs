//! The schema of a type the macro names: its JSON Schema when it implements
//! `schemars::JsonSchema`, an open schema saying why otherwise.
//!
//! The trait's types are concrete, so generated code picks between the two by autoref
//! specialization: `(&&SchemaOf::<T>::new()).schema_fn()` finds [`ViaJsonSchema`] on
//! `&SchemaOf<T>` when `T: JsonSchema`, and [`ViaOpen`] on `SchemaOf<T>` one autoref later
//! otherwise.

use std::marker::PhantomData;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};

/// Makes a type's schema, adding what it refers to to the generator's definitions.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// Names a type for [`ViaJsonSchema`] and [`ViaOpen`].
pub struct SchemaOf<T: ?Sized>(PhantomData<fn(&T)>);

impl<T: ?Sized> SchemaOf<T> {
    /// The marker of `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        SchemaOf(PhantomData)
    }
}

/// Chosen when the type implements `JsonSchema`: its schema (a `$ref` for named types).
pub trait ViaJsonSchema {
    /// The function making the schema.
    fn schema_fn(&self) -> SchemaFn;
}

impl<T: JsonSchema + ?Sized> ViaJsonSchema for &SchemaOf<T> {
    fn schema_fn(&self) -> SchemaFn {
        subschema::<T>
    }
}

/// Chosen when the type does not implement `JsonSchema`: an open schema naming the type.
pub trait ViaOpen {
    /// The function making the schema.
    fn schema_fn(&self) -> SchemaFn;
}

impl<T: ?Sized> ViaOpen for SchemaOf<T> {
    fn schema_fn(&self) -> SchemaFn {
        open::<T>
    }
}

fn subschema<T: JsonSchema + ?Sized>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

fn open<T: ?Sized>(_: &mut SchemaGenerator) -> Schema {
    described(std::any::type_name::<T>())
}

/// An open schema for a type the macro cannot name (an `impl Trait` or a method's type
/// parameter).
pub fn unnamed(_: &mut SchemaGenerator) -> Schema {
    described("a type the client does not name")
}

fn described(type_name: &str) -> Schema {
    let description =
        format!("{type_name}: no JSON Schema (the type does not implement `schemars::JsonSchema`)");
    json_schema!({ "description": description })
}

/// Bytes sent or received as they are.
pub fn binary(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "contentMediaType": "application/octet-stream" })
}

/// Several byte parts under one name.
pub fn binaries(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": { "type": "string", "contentMediaType": "application/octet-stream" },
    })
}

/// Text sent or received as it is.
pub fn text(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string" })
}

/// The generator of a document's schemas: JSON Schema 2020-12, definitions under
/// `#/components/schemas/`.
pub(crate) fn generator() -> SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.definitions_path = "/components/schemas".into();
            settings.meta_schema = None;
        })
        .into_generator()
}
