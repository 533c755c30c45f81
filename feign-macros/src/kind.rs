//! The kinds the model decides once for each method and parameter: what a method returns, how
//! a body or part is sent, how a value is optional or repeated, what a fallback keeps. Plain
//! data: `ty` recognises them in the syntax, `ast` puts them in the model, and the checks and
//! generators read them from there.

use syn::Type;

/// A type as the user wrote it, with what the recognisers found of it.
#[derive(Clone, Copy)]
pub(crate) struct Written<'a> {
    /// As written: the generated code writes it out with its span.
    pub(crate) ty: &'a Type,
    /// Without its references and parentheses: what a schema describes.
    pub(crate) bare: &'a Type,
    /// Whether it mentions `impl Trait`, which cannot be written as a type argument.
    pub(crate) impl_trait: bool,
}

/// A parameter's type and how its value is optional or repeated, level by level:
/// `Option<Vec<u32>>` is an `Option` of a collection of one `u32` each.
pub(crate) struct Arg<'a> {
    pub(crate) ty: Written<'a>,
    pub(crate) shape: Shape<'a>,
}

impl Arg<'_> {
    /// Whether the value is an `Option`, sent only when `Some`.
    pub(crate) fn is_option(&self) -> bool {
        matches!(self.shape, Shape::Option(_))
    }

    /// Whether the value is a collection, one pair or header value per element.
    pub(crate) fn is_many(&self) -> bool {
        matches!(self.shape, Shape::Many(_))
    }
}

/// How a value is sent as query pairs or header values.
pub(crate) enum Shape<'a> {
    /// `Option<T>`: nothing when `None`, else `T` as its own shape says.
    Option(Box<Arg<'a>>),
    /// `Vec<T>`, `[T]`, `[T; N]` (behind references too): each element as its shape says.
    Many(Box<Arg<'a>>),
    /// One value.
    One,
}

/// What a method's `Result<T, E>` makes `T` from: the kinds of `feign_core::__private`, one
/// each, composed as the runtime composes them.
pub(crate) enum ReturnKind<'a> {
    /// `()`: the body is dropped.
    Unit,
    /// `String`.
    Text,
    /// `Bytes`.
    Raw,
    /// `Response`: status, headers and body.
    Whole,
    /// `StreamingResponse`: the body is not read.
    Stream,
    /// Anything else: decoded by the client's Decoder.
    Json(Written<'a>),
    /// `ResponseEntity<T>`: the body read as `T` alone would be, with status and headers.
    Entity(BodyKind<'a>),
    /// `Option<T>`: a 404 is `None`. Only at the top: `Option<Option<T>>` is an `Optional` of
    /// `Json<Option<T>>`.
    Optional(Box<ReturnKind<'a>>),
}

impl<'a> ReturnKind<'a> {
    /// The type the client's Decoder makes, if any: the `T` of a `Json<T>` anywhere in the kind.
    pub(crate) fn decoded(&self) -> Option<&Written<'a>> {
        match self {
            ReturnKind::Json(value) | ReturnKind::Entity(BodyKind::Json(value)) => Some(value),
            ReturnKind::Optional(inner) => inner.decoded(),
            _ => None,
        }
    }
}

/// How the body of a `ResponseEntity<T>` is read.
pub(crate) enum BodyKind<'a> {
    Unit,
    Text,
    Raw,
    Json(Written<'a>),
}

/// How a `#[body]` argument becomes the request body.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Body {
    /// Serialized by the client's Encoder (JSON by default).
    Serialized,
    /// `String`, `&str`, `Vec<u8>`, `&[u8]`, `Bytes`: sent as is. `by_ref`: a borrowed value,
    /// of which an owned copy is sent; `text`: `String` or `str`.
    Raw { by_ref: bool, text: bool },
    /// `BodyStream`, `FileBody`: moved into the request and read as it is sent.
    Stream,
}

/// How a `#[part]` argument becomes a part.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PartKind {
    /// `String`, `&str`, numbers, `bool`, `char`: text through `Display`.
    Text,
    /// `Vec<u8>`, `&[u8]`, `Bytes`: bytes; the flag says whether the argument is borrowed.
    Bytes(bool),
    /// `Part`, `FilePart`, `BodyStream`, `FileBody`: moved into the request.
    Part,
    /// `Vec` of those: one part per element, under the same name (Spring's
    /// `List<MultipartFile>`).
    Parts,
    /// Anything else: serialized by the client's Encoder.
    Json,
}

/// What a fallback gets of an argument the failed call consumed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kept {
    /// Nothing consumed: the fallback gets the argument itself.
    No,
    /// Owned bytes or text: a clone, made only when the client has a fallback.
    Cloned,
    /// A stream or file: `KeepForFallback`'s stand-in (same name, unreadable content).
    Spent,
}
