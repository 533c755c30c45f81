//! The model of an annotated trait: the client, its methods and their parameters, each keeping
//! the syntax node it came from so errors point at what the user wrote.
//!
//! What the checks and the generators need to know of a method is decided here, once, from the
//! recognisers of `ty.rs`: they read the model, not the syntax (which it keeps for spans).

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{
    Attribute, FnArg, Ident, ItemTrait, LitStr, Pat, PatType, Receiver, ReturnType, TraitItem,
    TraitItemFn, Type,
};

use crate::attr::{self, ClientArgs, Options, Slot};
use crate::ctxt::Ctxt;
use crate::header;
use crate::kind::{Arg, Body, Kept, PartKind, ReturnKind, Written};
use crate::template::{self, Template};
use crate::ty;

/// The annotated trait.
pub(crate) struct Client<'a> {
    pub(crate) original: &'a ItemTrait,
    pub(crate) args: ClientArgs,
    /// The checked `path = "..."` prefix.
    pub(crate) prefix: String,
    /// Trait-level `#[headers]`, checked.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) methods: Vec<Method<'a>>,
    /// What keeps the trait from being written `dyn Trait`, if anything: the tokens at fault
    /// and why. Only an object-safe client gets a fallback and a test double.
    pub(crate) not_object_safe: Option<(TokenStream, &'static str)>,
}

/// An HTTP method attribute such as `#[get("/orders/{id}")]`.
pub(crate) struct Http {
    /// `Get`, `Post`, ... as named in `HttpMethod`.
    pub(crate) variant: Ident,
    pub(crate) template_lit: LitStr,
    /// `None` when the template was malformed (already reported).
    pub(crate) template: Option<Template>,
}

impl Http {
    /// `GET` and `HEAD` take no body.
    pub(crate) fn allows_body(&self) -> bool {
        self.variant != "Get" && self.variant != "Head"
    }

    /// RFC 9110 idempotency of the method.
    pub(crate) fn is_idempotent(&self) -> bool {
        self.variant != "Post" && self.variant != "Patch"
    }
}

/// A method of the trait.
pub(crate) struct Method<'a> {
    pub(crate) original: &'a TraitItemFn,
    pub(crate) http: Option<Http>,
    /// Whether an HTTP method attribute was written, even a malformed one.
    pub(crate) http_written: bool,
    /// Method-level `#[headers]`, checked.
    pub(crate) headers: Vec<(String, String)>,
    /// Method-level `#[headers]` lines with `{name}` variables.
    pub(crate) header_templates: Vec<HeaderTemplate>,
    pub(crate) idempotent: bool,
    /// `#[multipart]`, kept for spans.
    pub(crate) multipart: Option<&'a Attribute>,
    pub(crate) options: Options,
    /// The receiver as written and its kind.
    pub(crate) receiver: Option<(&'a Receiver, SelfKind)>,
    pub(crate) output: Output<'a>,
    pub(crate) params: Vec<Param<'a>>,
}

/// How a method takes `self`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SelfKind {
    /// `&self`, the one a client method takes.
    Shared,
    /// `&mut self`.
    Mut,
    /// `self` or `mut self`.
    Owned,
    /// `self: Type`.
    Typed,
}

/// A method's return type.
pub(crate) enum Output<'a> {
    /// None written.
    Missing,
    /// A type that is not `Result<T, E>`.
    NotResult(&'a Type),
    Result(Returns<'a>),
}

/// A method's `Result<T, E>`.
pub(crate) struct Returns<'a> {
    /// `Result<T, E>` as written.
    pub(crate) written: &'a Type,
    /// `E`; `None` for a one-argument `Result<T>` alias.
    pub(crate) error: Option<Written<'a>>,
    /// What the call makes `T` from.
    pub(crate) kind: ReturnKind<'a>,
    /// A part of `T` the generated code cannot serve, and why.
    pub(crate) misplaced: Option<(&'a Type, &'static str)>,
}

impl<'a> Output<'a> {
    fn from_syn(output: &'a ReturnType) -> Self {
        let ReturnType::Type(_, written) = output else {
            return Output::Missing;
        };
        match ty::result(written) {
            None => Output::NotResult(written),
            Some((ok, error)) => Output::Result(Returns {
                written,
                error: error.map(ty::written),
                kind: ty::return_kind(ok),
                misplaced: ty::misplaced(ok),
            }),
        }
    }

    /// The return type as written.
    pub(crate) fn written(&self) -> Option<&'a Type> {
        match self {
            Output::Missing => None,
            Output::NotResult(written) => Some(written),
            Output::Result(returns) => Some(returns.written),
        }
    }

    /// The `E` of `Result<T, E>`, when written.
    pub(crate) fn error(&self) -> Option<&Written<'a>> {
        match self {
            Output::Result(returns) => returns.error.as_ref(),
            _ => None,
        }
    }

    /// What the call makes `T` from; `Unit` when the return type is not a `Result` (refused).
    pub(crate) fn kind(&self) -> &ReturnKind<'a> {
        match self {
            Output::Result(returns) => &returns.kind,
            _ => &ReturnKind::Unit,
        }
    }
}

/// What a parameter becomes in the request.
pub(crate) enum Role<'a> {
    /// `#[path]`: the template variable, the parameter's name unless given, and the parameter's
    /// place among the method's `#[path]` parameters.
    Path {
        name: String,
        index: usize,
    },
    /// `#[query]`: the query name, the parameter's name unless given, and the separator a
    /// collection's values are joined with (`None`: one pair per value).
    Query {
        name: String,
        separator: Option<String>,
    },
    QueryMap,
    /// `#[header("Name")]`
    Header(String),
    HeaderMap,
    /// `#[body]`, and how it is sent.
    Body(Body),
    Form,
    /// `#[param]`: a value for `{name}` in the method's `#[headers]`, the parameter's name
    /// unless given.
    Param(String),
    Part(Part<'a>),
}

/// A `#[part]` parameter.
pub(crate) struct Part<'a> {
    /// The part name, the parameter's name unless given.
    pub(crate) name: String,
    pub(crate) kind: PartKind,
    /// Whether it is an `Option`, left out when `None`.
    pub(crate) optional: bool,
    /// The type of one part: the `T` of `Option<T>`, or the parameter's type.
    pub(crate) inner: Written<'a>,
}

/// A typed parameter (not the receiver).
pub(crate) struct Param<'a> {
    pub(crate) original: &'a PatType,
    /// The binding when the pattern is a plain identifier.
    pub(crate) ident: Option<&'a Ident>,
    /// Its type and how its value is optional or repeated.
    pub(crate) arg: Arg<'a>,
    /// The role and the attribute that gave it; `None` when the attribute was missing or wrong.
    pub(crate) role: Option<(Role<'a>, &'a Attribute)>,
    /// Whether any attribute but rustc's was written (a missing role was then reported).
    pub(crate) marked: bool,
    /// What a fallback gets of it when the request consumed it.
    pub(crate) kept: Kept,
    /// A stream, file or part written as a reference, which the request must move.
    pub(crate) borrowed_stream: bool,
}

impl<'a> Client<'a> {
    /// Reads the trait and its attributes, reporting malformed attributes to `cx`.
    pub(crate) fn from_syn(cx: &Ctxt, args: TokenStream, original: &'a ItemTrait) -> Self {
        let args = attr::client_args(cx, args);
        let prefix = match &args.path {
            Some(lit) => template::parse_prefix(&lit.value()).unwrap_or_else(|message| {
                cx.error_spanned_by(lit, message);
                String::new()
            }),
            None => String::new(),
        };
        let mut headers =
            Slot::new("#[headers] attribute: list every header in one #[headers(...)]");
        for attr in original
            .attrs
            .iter()
            .filter(|attr| attr::is_trait_attr(attr))
        {
            let (literal, templates) = header_lines(cx, attr);
            for template in templates {
                cx.error_spanned_by(
                    &template.lit,
                    "a trait-level header cannot hold a `{name}` variable: put it in the method's #[headers]",
                );
            }
            headers.set(cx, attr, literal);
        }
        let methods = original
            .items
            .iter()
            .filter_map(|item| match item {
                TraitItem::Fn(method) => Some(Method::from_syn(cx, method)),
                _ => None,
            })
            .collect::<Vec<_>>();
        Client {
            original,
            args,
            prefix,
            headers: headers.get().unwrap_or_default(),
            not_object_safe: not_object_safe(&methods),
            methods,
        }
    }

    /// The name of the generated client type, `{Trait}Client`.
    pub(crate) fn client_ident(&self) -> Ident {
        quote::format_ident!("{}Client", self.original.ident)
    }

    /// Whether the trait can be written `dyn Trait`.
    pub(crate) fn object_safe(&self) -> bool {
        self.not_object_safe.is_none()
    }
}

/// What keeps `dyn Trait` from being written for the client's trait, if anything: a generic
/// method or an `impl Trait` parameter.
fn not_object_safe(methods: &[Method<'_>]) -> Option<(TokenStream, &'static str)> {
    methods.iter().find_map(|method| {
        let generics = &method.original.sig.generics;
        if !generics.params.is_empty() {
            return Some((generics.to_token_stream(), "its methods cannot be generic"));
        }
        method
            .params
            .iter()
            .find(|param| param.arg.ty.impl_trait)
            .map(|param| {
                (
                    param.original.ty.to_token_stream(),
                    "its parameters cannot be `impl Trait`",
                )
            })
    })
}

/// A method's `#[headers]` line with `{name}` variables, filled from parameters per call.
pub(crate) struct HeaderTemplate {
    pub(crate) name: String,
    pub(crate) pieces: Vec<header::Piece>,
    /// The literal, for errors.
    pub(crate) lit: LitStr,
}

impl HeaderTemplate {
    /// The variable names, in order.
    pub(crate) fn vars(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            header::Piece::Var(name) => Some(name.as_str()),
            header::Piece::Literal(_) => None,
        })
    }
}

/// The checked lines of a `#[headers]`: literal ones, and those with `{name}` variables.
fn header_lines(cx: &Ctxt, attr: &Attribute) -> (Vec<(String, String)>, Vec<HeaderTemplate>) {
    let mut literal = Vec::new();
    let mut templates = Vec::new();
    for lit in attr::headers(cx, attr) {
        match header::parse_line(&lit.value()) {
            Ok((name, value)) => {
                let pieces = header::split_template(&value);
                if pieces
                    .iter()
                    .any(|piece| matches!(piece, header::Piece::Var(_)))
                {
                    templates.push(HeaderTemplate { name, pieces, lit });
                } else {
                    literal.push((name, value));
                }
            }
            Err(message) => cx.error_spanned_by(&lit, message),
        }
    }
    (literal, templates)
}

impl<'a> Method<'a> {
    fn from_syn(cx: &Ctxt, original: &'a TraitItemFn) -> Self {
        let mut http = Slot::new("HTTP method attribute: a method has exactly one of #[get], #[post], #[put], #[delete], #[patch] or #[head]");
        let mut headers =
            Slot::new("#[headers] attribute: list every header in one #[headers(...)]");
        let mut idempotent = Slot::new("#[idempotent] attribute");
        let mut multipart = Slot::new("#[multipart] attribute");
        let mut options_seen =
            Slot::new("#[options] attribute: give every option in one #[options(...)]");
        let mut options = Options::default();
        for attr in &original.attrs {
            if let Some(near) = attr::misspelled_method_attr(attr) {
                cx.error_spanned_by(
                    attr,
                    format!("unknown method attribute; did you mean `#[{near}]`?"),
                );
                continue;
            }
            if !attr::is_method_attr(attr) {
                continue;
            }
            let name = attr::attr_name(attr);
            match name.as_str() {
                "headers" => headers.set(cx, attr, header_lines(cx, attr)),
                "idempotent" => {
                    attr::no_args(cx, attr);
                    idempotent.set(cx, attr, ());
                }
                "multipart" => {
                    attr::no_args(cx, attr);
                    multipart.set(cx, attr, attr);
                }
                "options" => {
                    options_seen.set(cx, attr, ());
                    attr::options(cx, attr, &mut options);
                }
                _ => {
                    let Some(template_lit) =
                        attr::single_string(cx, attr, &format!("#[{name}(\"/orders/{{id}}\")]"))
                    else {
                        continue;
                    };
                    let template = template::parse_method(&template_lit.value())
                        .map_err(|message| cx.error_spanned_by(&template_lit, message))
                        .ok();
                    let mut variant = name.clone();
                    variant[..1].make_ascii_uppercase();
                    let variant = Ident::new(&variant, attr.path().segments[0].ident.span());
                    http.set(
                        cx,
                        attr,
                        Http {
                            variant,
                            template_lit,
                            template,
                        },
                    );
                }
            }
        }
        let mut receiver = None;
        let mut params: Vec<Param<'a>> = Vec::new();
        for input in &original.sig.inputs {
            match input {
                FnArg::Receiver(written) => receiver = Some((written, self_kind(written))),
                FnArg::Typed(typed) => {
                    let paths = params
                        .iter()
                        .filter(|param| matches!(param.role, Some((Role::Path { .. }, _))))
                        .count();
                    params.push(Param::from_syn(cx, typed, paths));
                }
            }
        }
        let (headers, header_templates) = headers.get().unwrap_or_default();
        Method {
            original,
            // A misspelled one too: it is reported already.
            http_written: original.attrs.iter().any(|attr| {
                let name = attr::attr_name(attr);
                let name = attr::misspelled_method_attr(attr).unwrap_or(&name);
                attr::HTTP_METHODS.contains(&name)
            }),
            http: http.get(),
            headers,
            header_templates,
            idempotent: idempotent.get().is_some(),
            multipart: multipart.get(),
            options,
            receiver,
            output: Output::from_syn(&original.sig.output),
            params,
        }
    }

    pub(crate) fn ident(&self) -> &Ident {
        &self.original.sig.ident
    }

    /// The place of `{var}`'s parameter among the `#[path]` parameters.
    pub(crate) fn path_index(&self, var: &str) -> Option<usize> {
        self.params.iter().find_map(|param| match &param.role {
            Some((Role::Path { name, index }, _)) if name == var => Some(*index),
            _ => None,
        })
    }

    /// The parameters that can fill `{var}` in a `#[headers]` line: `#[param]` and `#[path]`.
    pub(crate) fn header_params<'m>(&'m self, var: &'m str) -> impl Iterator<Item = &'m Param<'a>> {
        self.params.iter().filter(move |param| {
            matches!(
                &param.role,
                Some((Role::Param(name) | Role::Path { name, .. }, _)) if name == var
            )
        })
    }
}

fn self_kind(receiver: &Receiver) -> SelfKind {
    match (
        &receiver.reference,
        &receiver.mutability,
        &receiver.colon_token,
    ) {
        (_, _, Some(_)) => SelfKind::Typed,
        (Some(_), None, None) => SelfKind::Shared,
        (Some(_), Some(_), None) => SelfKind::Mut,
        (None, _, None) => SelfKind::Owned,
    }
}

impl<'a> Param<'a> {
    /// Reads a parameter; `paths` is the number of `#[path]` parameters before it.
    fn from_syn(cx: &Ctxt, original: &'a PatType, paths: usize) -> Self {
        let ident = match &*original.pat {
            Pat::Ident(pat) if pat.subpat.is_none() && pat.by_ref.is_none() => Some(&pat.ident),
            _ => None,
        };
        let default_name = ident
            .map(|ident| ident.unraw().to_string())
            .unwrap_or_default();
        let ty = &*original.ty;
        let mut role = Slot::new(format!(
            "parameter attribute: a parameter has exactly one of {}",
            attr_list(attr::PARAM_ATTRS)
        ));
        for attr in &original.attrs {
            if let Some(value) = role_of(cx, attr, &default_name, ty, paths) {
                role.set(cx, attr, (value, attr));
            }
        }
        let role = role.get();
        let role_kind = role.as_ref().map(|(role, _)| role);
        let kept = role_kind.map_or(Kept::No, Role::kept);
        let borrowed_stream = ty::is_reference(ty)
            && match role_kind {
                Some(Role::Body(_) | Role::Form) => ty::is_stream(ty),
                Some(Role::Part(part)) => part.is_moved(),
                _ => false,
            };
        Param {
            original,
            ident,
            arg: ty::arg(ty),
            role,
            marked: original
                .attrs
                .iter()
                .any(|attr| !attr::is_builtin_param_attr(attr)),
            kept,
            borrowed_stream,
        }
    }
}

impl Role<'_> {
    /// What a fallback gets of an argument in this role.
    fn kept(&self) -> Kept {
        match self {
            Role::Body(Body::Raw { by_ref: false, .. }) => Kept::Cloned,
            Role::Body(Body::Stream) => Kept::Spent,
            Role::Part(part) if part.kind == PartKind::Bytes(false) && !part.optional => {
                Kept::Cloned
            }
            Role::Part(part) if part.is_moved() => Kept::Spent,
            _ => Kept::No,
        }
    }
}

impl Part<'_> {
    /// A stream, file or part, moved into the request.
    fn is_moved(&self) -> bool {
        matches!(self.kind, PartKind::Part | PartKind::Parts)
    }
}

/// The role an attribute gives a parameter of type `ty` named `default_name`; `None` for
/// rustc's own attributes and for mistakes (reported).
fn role_of<'a>(
    cx: &Ctxt,
    attr: &Attribute,
    default_name: &str,
    ty: &'a Type,
    paths: usize,
) -> Option<Role<'a>> {
    let name = attr::attr_name(attr);
    let given =
        |lit: Option<LitStr>| lit.map_or_else(|| default_name.to_owned(), |lit| lit.value());
    let role = match name.as_str() {
        "path" => Role::Path {
            name: given(attr::optional_string(cx, attr)),
            index: paths,
        },
        "param" => Role::Param(given(attr::optional_string(cx, attr))),
        "part" => {
            let (optional, kind) = ty::part(ty);
            Role::Part(Part {
                name: given(attr::optional_string(cx, attr)),
                kind,
                optional: optional.is_some(),
                inner: ty::written(optional.unwrap_or(ty)),
            })
        }
        "query" => {
            let (name, separator) = attr::query(cx, attr);
            Role::Query {
                name: given(name),
                separator,
            }
        }
        "header" => {
            let lit = attr::single_string(cx, attr, "#[header(\"X-Request-Id\")]")?;
            if let Err(message) = header::check_name(&lit.value()) {
                cx.error_spanned_by(&lit, message);
            }
            Role::Header(lit.value())
        }
        "query_map" | "header_map" | "body" | "form" => {
            attr::no_args(cx, attr);
            match name.as_str() {
                "query_map" => Role::QueryMap,
                "header_map" => Role::HeaderMap,
                "body" => Role::Body(ty::body(ty)),
                _ => Role::Form,
            }
        }
        _ if attr::is_builtin_param_attr(attr) => return None,
        _ => {
            let message = match attr::nearest(&name, attr::PARAM_ATTRS) {
                Some(near) => format!("unknown parameter attribute; did you mean `#[{near}]`?"),
                None => format!(
                    "unknown parameter attribute; expected one of {}",
                    attr_list(attr::PARAM_ATTRS)
                ),
            };
            cx.error_spanned_by(attr, message);
            return None;
        }
    };
    Some(role)
}

/// "#[a], #[b] or #[c]".
pub(crate) fn attr_list(names: &[&str]) -> String {
    let all: Vec<String> = names.iter().map(|name| format!("#[{name}]")).collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}
