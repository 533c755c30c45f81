//! Syntactic recognition of the types the generated code treats specially: `Option` and
//! collections in parameters, raw, streamed and part body types, and the return types of
//! `private.rs`. Called by the model's construction only (`ast.rs`): what it recognises becomes
//! the kinds of `kind.rs`, read from the model by the checks and the generators.
//!
//! Types are recognised by their last path segment, as written: a type alias hides them.

use syn::{GenericArgument, PathArguments, Type};

use crate::kind::{Arg, Body, BodyKind, PartKind, ReturnKind, Shape, Written};

const STREAMING: &str = "StreamingResponse";
const ENTITY: &str = "ResponseEntity";

/// Removes references and parentheses: `&'a (T)` is `T`.
fn peel(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Reference(reference) => ty = &reference.elem,
            Type::Paren(paren) => ty = &paren.elem,
            Type::Group(group) => ty = &group.elem,
            _ => return ty,
        }
    }
}

/// The name of the last path segment and its angle-bracketed type arguments.
fn last_segment(ty: &Type) -> Option<(String, Vec<&Type>)> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let segment = path.path.segments.last()?;
    let args = match &segment.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(ty),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Some((segment.ident.to_string(), args))
}

/// Whether the type mentions `impl Trait`, which cannot be written as a type argument.
fn names_impl_trait(ty: &Type) -> bool {
    fn walk(tokens: proc_macro2::TokenStream) -> bool {
        tokens.into_iter().any(|tree| match tree {
            proc_macro2::TokenTree::Ident(ident) => ident == "impl",
            proc_macro2::TokenTree::Group(group) => walk(group.stream()),
            _ => false,
        })
    }
    walk(quote::ToTokens::to_token_stream(ty))
}

/// `ty` as written, without its references, and whether it can be written as a type argument.
pub(crate) fn written(ty: &Type) -> Written<'_> {
    Written {
        ty,
        bare: peel(ty),
        impl_trait: names_impl_trait(ty),
    }
}

/// The shape of a `#[query]`, `#[header]` or `#[param]` argument's type, level by level.
pub(crate) fn arg(ty: &Type) -> Arg<'_> {
    let inner = match peel(ty) {
        Type::Slice(slice) => Some((false, &*slice.elem)),
        Type::Array(array) => Some((false, &*array.elem)),
        peeled => match last_segment(peeled) {
            Some((name, args)) if name == "Option" && args.len() == 1 => Some((true, args[0])),
            Some((name, args)) if name == "Vec" && args.len() == 1 => Some((false, args[0])),
            _ => None,
        },
    };
    let shape = match inner {
        Some((true, inner)) => Shape::Option(Box::new(arg(inner))),
        Some((false, inner)) => Shape::Many(Box::new(arg(inner))),
        None => Shape::One,
    };
    Arg {
        ty: written(ty),
        shape,
    }
}

/// How a `#[body]` of this type is sent: streamed, as is, or through the Encoder.
pub(crate) fn body(ty: &Type) -> Body {
    if is_stream(ty) {
        Body::Stream
    } else {
        raw(ty).unwrap_or(Body::Serialized)
    }
}

/// A body type sent as is (`String`, `&str`, `Vec<u8>`, `&[u8]`, `Bytes`), with whether the
/// argument is a reference (then the generated code sends an owned copy) and whether it is text.
fn raw(ty: &Type) -> Option<Body> {
    let by_ref = matches!(ty, Type::Reference(_));
    let (raw, text) = match peel(ty) {
        Type::Slice(slice) => (is_u8(&slice.elem), false),
        peeled => match last_segment(peeled) {
            Some((name, args)) => match name.as_str() {
                "String" | "str" => (args.is_empty(), true),
                "Bytes" => (args.is_empty(), false),
                "Vec" => (args.len() == 1 && is_u8(args[0]), false),
                _ => (false, false),
            },
            None => (false, false),
        },
    };
    raw.then_some(Body::Raw { by_ref, text })
}

/// A body sent as a stream, moved into the request: `BodyStream` or `FileBody` (behind a
/// reference too, which `valid.rs` refuses).
pub(crate) fn is_stream(ty: &Type) -> bool {
    matches!(
        last_segment(peel(ty)),
        Some((name, args)) if args.is_empty() && matches!(name.as_str(), "BodyStream" | "FileBody")
    )
}

/// Whether the type is written as a reference: `&T`.
pub(crate) fn is_reference(ty: &Type) -> bool {
    matches!(ty, Type::Reference(_))
}

/// The kind of a `#[part]` argument, and for `Option<T>` the `T` (the part is left out when
/// `None`).
pub(crate) fn part(ty: &Type) -> (Option<&Type>, PartKind) {
    match last_segment(ty) {
        Some((name, args)) if name == "Option" && args.len() == 1 => {
            (Some(args[0]), part_inner(args[0]))
        }
        _ => (None, part_inner(ty)),
    }
}

fn part_inner(ty: &Type) -> PartKind {
    match raw(ty) {
        Some(Body::Raw { text: true, .. }) => return PartKind::Text,
        Some(Body::Raw { by_ref, .. }) => return PartKind::Bytes(by_ref),
        _ => {}
    }
    match last_segment(peel(ty)) {
        Some((name, args)) if name == "Vec" && args.len() == 1 => match part_inner(args[0]) {
            PartKind::Part => PartKind::Parts,
            _ => PartKind::Json,
        },
        Some((name, args)) if args.is_empty() => match name.as_str() {
            "Part" | "FilePart" | "BodyStream" | "FileBody" => PartKind::Part,
            "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64"
            | "i128" | "isize" | "f32" | "f64" | "bool" | "char" => PartKind::Text,
            _ => PartKind::Json,
        },
        _ => PartKind::Json,
    }
}

fn is_u8(ty: &Type) -> bool {
    matches!(last_segment(ty), Some((name, args)) if name == "u8" && args.is_empty())
}

/// The `T` and, when written, the `E` of `Result<T, E>` (`E` is not written in a one-argument
/// `Result<T>` alias).
pub(crate) fn result(ty: &Type) -> Option<(&Type, Option<&Type>)> {
    match last_segment(ty) {
        Some((name, args)) if name == "Result" && (1..=2).contains(&args.len()) => {
            Some((args[0], args.get(1).copied()))
        }
        _ => None,
    }
}

/// What a type names in a return position, one level deep.
enum Returned<'a> {
    Unit,
    String,
    Bytes,
    Response,
    Streaming,
    /// `ResponseEntity<T>`: the `T`.
    Entity(&'a Type),
    /// `Option<T>`: the `T`.
    Option(&'a Type),
    /// Anything else, decoded.
    Other,
}

fn returned(ty: &Type) -> Returned<'_> {
    if let Type::Tuple(tuple) = ty {
        if tuple.elems.is_empty() {
            return Returned::Unit;
        }
    }
    match last_segment(ty) {
        Some((name, args)) if args.is_empty() => match name.as_str() {
            "String" => Returned::String,
            "Bytes" => Returned::Bytes,
            "Response" => Returned::Response,
            STREAMING => Returned::Streaming,
            _ => Returned::Other,
        },
        Some((name, args)) if name == ENTITY && args.len() == 1 => Returned::Entity(args[0]),
        Some((name, args)) if name == "Option" && args.len() == 1 => Returned::Option(args[0]),
        _ => Returned::Other,
    }
}

/// The return kind of the `T` of `Result<T, E>`: `Option` is recognised at the top only.
pub(crate) fn return_kind(ok: &Type) -> ReturnKind<'_> {
    match returned(ok) {
        Returned::Option(inner) => ReturnKind::Optional(Box::new(value_kind(inner))),
        _ => value_kind(ok),
    }
}

fn value_kind(ty: &Type) -> ReturnKind<'_> {
    match returned(ty) {
        Returned::Unit => ReturnKind::Unit,
        Returned::String => ReturnKind::Text,
        Returned::Bytes => ReturnKind::Raw,
        Returned::Response => ReturnKind::Whole,
        Returned::Streaming => ReturnKind::Stream,
        // A body that is not one of these is refused by `misplaced`.
        Returned::Entity(body) => ReturnKind::Entity(match returned(body) {
            Returned::Unit => BodyKind::Unit,
            Returned::String => BodyKind::Text,
            Returned::Bytes => BodyKind::Raw,
            _ => BodyKind::Json(written(body)),
        }),
        Returned::Option(_) | Returned::Other => ReturnKind::Json(written(ty)),
    }
}

/// A part of the return type `Result<ok, E>` that the generated code cannot serve: the type
/// at fault and why. `StreamingResponse` and `ResponseEntity<T>` stand alone or in an `Option`.
pub(crate) fn misplaced(ok: &Type) -> Option<(&Type, &'static str)> {
    let top = match last_segment(ok) {
        Some((name, args)) if name == "Option" && args.len() == 1 => args[0],
        _ => ok,
    };
    match last_segment(top) {
        Some((name, args)) if name == STREAMING => (!args.is_empty()).then_some((
            top,
            "`StreamingResponse` takes no type argument: it streams the raw body; \
             for a decoded body with its status and headers return `ResponseEntity<T>`",
        )),
        Some((name, args)) if name == ENTITY => {
            let [body] = args[..] else {
                return Some((
                    top,
                    "`ResponseEntity` takes the body's type: `ResponseEntity<T>`",
                ));
            };
            match returned(body) {
                Returned::Response | Returned::Streaming | Returned::Entity(_) => Some((
                    body,
                    "a `ResponseEntity` holds a decoded body: return `Response` for the raw \
                     body or `StreamingResponse` to stream it",
                )),
                _ => nested(body),
            }
        }
        _ => nested(top),
    }
}

/// A `StreamingResponse` or `ResponseEntity` inside another type.
fn nested(ty: &Type) -> Option<(&Type, &'static str)> {
    const MESSAGE: &str = "`StreamingResponse` and `ResponseEntity<T>` are returned alone: \
                           `Result<StreamingResponse, E>` or `Result<Option<StreamingResponse>, E>`";
    match peel(ty) {
        Type::Slice(slice) => nested(&slice.elem),
        Type::Array(array) => nested(&array.elem),
        Type::Tuple(tuple) => tuple.elems.iter().find_map(nested),
        peeled => {
            let (name, args) = last_segment(peeled)?;
            if name == STREAMING || name == ENTITY {
                return Some((peeled, MESSAGE));
            }
            args.into_iter().find_map(nested)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        syn::parse_str(text).unwrap()
    }

    fn is_option(text: &str) -> bool {
        matches!(arg(&ty(text)).shape, Shape::Option(_))
    }

    fn is_many(text: &str) -> bool {
        matches!(arg(&ty(text)).shape, Shape::Many(_))
    }

    #[test]
    fn recognises_optional_and_repeated_arguments() {
        assert!(is_option("Option<String>"));
        assert!(is_option("&Option<&str>"));
        for many in [
            "Vec<u32>",
            "&[String]",
            "[u8; 4]",
            "&'a Vec<String>",
            "std::vec::Vec<i64>",
        ] {
            assert!(is_many(many), "{many}");
        }
        assert!(matches!(arg(&ty("u64")).shape, Shape::One));
        assert!(matches!(arg(&ty("&str")).shape, Shape::One));
        let nested = ty("Option<Vec<u32>>");
        let Shape::Option(inner) = arg(&nested).shape else {
            panic!("not an Option")
        };
        let Shape::Many(each) = inner.shape else {
            panic!("not a collection")
        };
        assert!(matches!(each.shape, Shape::One));
    }

    #[test]
    fn finds_impl_trait_anywhere_in_a_type() {
        assert!(names_impl_trait(&ty("impl Serialize")));
        assert!(names_impl_trait(&ty("&(impl Display + Send)")));
        assert!(names_impl_trait(&ty("Option<Box<impl Display>>")));
        assert!(!names_impl_trait(&ty("&Implementation")));
    }

    #[test]
    fn recognises_raw_bodies() {
        let raw = |by_ref, text| Body::Raw { by_ref, text };
        assert_eq!(body(&ty("String")), raw(false, true));
        assert_eq!(body(&ty("&str")), raw(true, true));
        assert_eq!(body(&ty("Vec<u8>")), raw(false, false));
        assert_eq!(body(&ty("&[u8]")), raw(true, false));
        assert_eq!(body(&ty("bytes::Bytes")), raw(false, false));
        assert_eq!(body(&ty("&NewOrder")), Body::Serialized);
        assert_eq!(body(&ty("Vec<u32>")), Body::Serialized);
        assert_eq!(body(&ty("Option<String>")), Body::Serialized);
    }

    #[test]
    fn recognises_stream_bodies_and_parts() {
        assert_eq!(body(&ty("feign_core::BodyStream")), Body::Stream);
        assert_eq!(body(&ty("FileBody")), Body::Stream);
        assert!(is_stream(&ty("&FileBody")));
        assert!(!is_stream(&ty("Vec<u8>")));
        let kind = |text: &str| {
            let written = ty(text);
            let (optional, kind) = part(&written);
            (optional.is_some(), kind)
        };
        assert_eq!(kind("String"), (false, PartKind::Text));
        assert_eq!(kind("&str"), (false, PartKind::Text));
        assert_eq!(kind("u64"), (false, PartKind::Text));
        assert_eq!(kind("Vec<u8>"), (false, PartKind::Bytes(false)));
        assert_eq!(kind("&[u8]"), (false, PartKind::Bytes(true)));
        assert_eq!(kind("Option<multipart::FilePart>"), (true, PartKind::Part));
        assert_eq!(kind("Metadata"), (false, PartKind::Json));
        assert_eq!(kind("Vec<FilePart>"), (false, PartKind::Parts));
        assert_eq!(kind("Vec<Metadata>"), (false, PartKind::Json));
    }

    /// The kind as `feign_core::__private` names it, with the decoded types.
    fn named(kind: &ReturnKind<'_>) -> String {
        let text = |written: &Written<'_>| {
            quote::ToTokens::to_token_stream(written.ty)
                .to_string()
                .replace(' ', "")
        };
        match kind {
            ReturnKind::Unit => "Unit".into(),
            ReturnKind::Text => "Text".into(),
            ReturnKind::Raw => "Raw".into(),
            ReturnKind::Whole => "Whole".into(),
            ReturnKind::Stream => "Stream".into(),
            ReturnKind::Json(value) => format!("Json<{}>", text(value)),
            ReturnKind::Entity(BodyKind::Unit) => "Entity<Unit>".into(),
            ReturnKind::Entity(BodyKind::Text) => "Entity<Text>".into(),
            ReturnKind::Entity(BodyKind::Raw) => "Entity<Raw>".into(),
            ReturnKind::Entity(BodyKind::Json(value)) => format!("Entity<Json<{}>>", text(value)),
            ReturnKind::Optional(inner) => format!("Optional<{}>", named(inner)),
        }
    }

    #[test]
    fn recognises_return_types() {
        let result_type = ty("Result<Option<String>, Error>");
        let (ok, error) = result(&result_type).unwrap();
        assert_eq!(named(&return_kind(ok)), "Optional<Text>");
        assert!(error.is_some());
        let alias = ty("Result<u8>");
        assert!(result(&alias).unwrap().1.is_none());
        assert!(result(&ty("Option<u8>")).is_none());
        for (written, kind) in [
            ("()", "Unit"),
            ("Vec<Order>", "Json<Vec<Order>>"),
            ("feign_core::Response", "Whole"),
            ("Option<feign_core::StreamingResponse>", "Optional<Stream>"),
            ("ResponseEntity<String>", "Entity<Text>"),
            (
                "Option<ResponseEntity<Vec<Order>>>",
                "Optional<Entity<Json<Vec<Order>>>>",
            ),
            ("Option<Option<u8>>", "Optional<Json<Option<u8>>>"),
        ] {
            assert_eq!(named(&return_kind(&ty(written))), kind, "{written}");
        }
    }

    #[test]
    fn refuses_streams_and_entities_where_they_cannot_be_served() {
        for fine in [
            "StreamingResponse",
            "Option<StreamingResponse>",
            "ResponseEntity<Order>",
            "Option<ResponseEntity<()>>",
            "ResponseEntity<Option<Order>>",
            "Vec<Order>",
        ] {
            assert!(misplaced(&ty(fine)).is_none(), "{fine}");
        }
        for (wrong, at) in [
            ("StreamingResponse<Order>", "StreamingResponse<Order>"),
            ("Option<StreamingResponse<u8>>", "StreamingResponse<u8>"),
            ("ResponseEntity", "ResponseEntity"),
            ("ResponseEntity<StreamingResponse>", "StreamingResponse"),
            ("ResponseEntity<Response>", "Response"),
            (
                "ResponseEntity<Vec<StreamingResponse>>",
                "StreamingResponse",
            ),
            ("Vec<StreamingResponse>", "StreamingResponse"),
            (
                "Option<Option<ResponseEntity<Order>>>",
                "ResponseEntity<Order>",
            ),
            ("(StreamingResponse, u8)", "StreamingResponse"),
        ] {
            let written = ty(wrong);
            let (fault, _) = misplaced(&written).unwrap_or_else(|| panic!("{wrong} accepted"));
            let fault = quote::ToTokens::to_token_stream(fault)
                .to_string()
                .replace(' ', "");
            assert_eq!(fault, at, "{wrong}");
        }
    }
}
