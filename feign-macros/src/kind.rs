//! The kinds the model decides once for each method and parameter: how a value is optional or
//! repeated, how a part is sent. Plain data: `ty` recognises them in the syntax, `ast` puts them
//! in the model, and the checks and generators read them from there.

use syn::Type;

/// A type as the user wrote it, with what the recognisers found of it.
#[derive(Clone, Copy)]
pub(crate) struct Written<'a> {
    /// As written: the generated code writes it out with its span.
    pub(crate) ty: &'a Type,
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
