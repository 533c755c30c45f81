//! `{Trait}Client::openapi()`: each method described for feign-core's OpenAPI document, inside
//! `__private::if_openapi!`, which drops it unless feign-core's `openapi` feature is on.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{Attribute, Expr, Lit, Meta};

use crate::ast::{Client, Http, Method, Param, Role};
use crate::kind::{Body, BodyKind, PartKind, ReturnKind, Shape, Written};
use crate::template::Part;

/// The `impl {Trait}Client { fn openapi() }` block; `meta` is the client's `ClientMeta`.
pub(crate) fn client_openapi(
    client: &Client<'_>,
    krate: &TokenStream,
    client_ident: &syn::Ident,
    meta: &TokenStream,
) -> TokenStream {
    let item = client.original;
    let vis = &item.vis;
    let p = quote!(#krate::__private::openapi);
    let operations = client.methods.iter().filter_map(|method| {
        let http = method.http.as_ref()?;
        Some(operation(client, method, http, krate, &p))
    });
    let trait_doc = doc(&item.attrs);
    let fn_doc = format!(
        " The OpenAPI 3.1 document of [`{}`]: one operation per method, with the JSON Schema of \
         each type that implements `schemars::JsonSchema`.",
        item.ident
    );
    quote! {
        #krate::__private::if_openapi! {
            #[automatically_derived]
            impl #client_ident {
                #[doc = #fn_doc]
                #[allow(dead_code)]
                #vis fn openapi() -> #p::OpenApi {
                    #[allow(unused_imports)]
                    use #p::{ViaJsonSchema as _, ViaOpen as _};
                    static TARGET: #krate::__private::ClientMeta = #meta;
                    #p::OpenApi::new(
                        TARGET.service,
                        TARGET.url,
                        ::core::option_env!("CARGO_PKG_VERSION"),
                        #trait_doc,
                        ::std::vec::Vec::from([#(#operations),*]),
                    )
                }
            }
        }
    }
}

fn operation(
    client: &Client<'_>,
    method: &Method<'_>,
    http: &Http,
    krate: &TokenStream,
    p: &TokenStream,
) -> TokenStream {
    let name = method.ident().to_string();
    let key = format!("{}#{name}", client.original.ident);
    let variant = &http.variant;
    let mut path = client.prefix.clone();
    let template = http.template.as_ref();
    for part in template.map(|t| &t.parts).into_iter().flatten() {
        match part {
            Part::Literal(text) => path.push_str(text),
            Part::Var(var) => path.push_str(&format!("{{{var}}}")),
        }
    }
    if path.is_empty() {
        path.push('/');
    }
    let query = template
        .map(|t| &t.query)
        .into_iter()
        .flatten()
        .map(|(name, value)| quote!((#name, #value)));
    let (params, body) = params_and_body(method, p);
    let success = success(method.output.kind(), p);
    let method_doc = doc(&method.original.attrs);
    quote! {
        #p::Operation {
            name: #name,
            key: #key,
            method: #krate::__private::HttpMethod::#variant.as_http(),
            path: #path,
            query: &[#(#query),*],
            doc: #method_doc,
            params: ::std::vec::Vec::from([#(#params),*]),
            body: #body,
            success: #success,
        }
    }
}

/// The parameters the method describes (its `#[path]`, `#[query]`, `#[query_map]` and `#[header]`
/// arguments, then its `#[headers]` lines with variables) and its body.
fn params_and_body(method: &Method<'_>, p: &TokenStream) -> (Vec<TokenStream>, TokenStream) {
    let mut params = Vec::new();
    let mut body = quote!(::core::option::Option::None);
    let mut parts = Vec::new();
    for param in &method.params {
        let (Some((role, _)), Some(ident)) = (&param.role, param.ident) else {
            continue;
        };
        let (required, inner) = required_and_inner(param);
        let param_doc = |name: &str, location: TokenStream, separator: Option<&String>| {
            let separator = match separator {
                Some(separator) => quote!(::core::option::Option::Some(#separator)),
                None => quote!(::core::option::Option::None),
            };
            let schema = schema_of(p, inner);
            quote! {
                #p::Param {
                    name: #name,
                    location: #p::Location::#location,
                    required: #required,
                    separator: #separator,
                    schema: #schema,
                }
            }
        };
        let own_name = syn::ext::IdentExt::unraw(ident).to_string();
        match role {
            Role::Path { name, .. } => params.push(param_doc(name, quote!(Path), None)),
            Role::Query { name, separator } => {
                params.push(param_doc(name, quote!(Query), separator.as_ref()));
            }
            Role::QueryMap => params.push(param_doc(&own_name, quote!(Query), None)),
            Role::Header(name) => params.push(param_doc(name, quote!(Header), None)),
            Role::HeaderMap | Role::Param(_) => {}
            Role::Body(kind) => {
                let (media, content) = match kind {
                    Body::Stream => ("application/octet-stream", quote!(#p::binary)),
                    Body::Raw { text: true, .. } => ("text/plain", quote!(#p::text)),
                    Body::Raw { .. } => ("application/octet-stream", quote!(#p::binary)),
                    Body::Serialized => ("application/json", schema_of(p, inner)),
                };
                body = body_doc(p, media, required, quote!(#p::Content::Schema(#content)));
            }
            Role::Form => {
                let content = schema_of(p, inner);
                body = body_doc(
                    p,
                    "application/x-www-form-urlencoded",
                    required,
                    quote!(#p::Content::Schema(#content)),
                );
            }
            Role::Part(part) => {
                let part_name = &part.name;
                let part_schema = match part.kind {
                    PartKind::Text | PartKind::Json => schema_of(p, inner),
                    PartKind::Bytes(_) | PartKind::Part => quote!(#p::binary),
                    PartKind::Parts => quote!(#p::binaries),
                };
                parts.push(quote! {
                    #p::Part { name: #part_name, required: #required, schema: #part_schema }
                });
            }
        }
    }
    if method.multipart.is_some() {
        body = body_doc(
            p,
            "multipart/form-data",
            true,
            quote!(#p::Content::Parts(::std::vec::Vec::from([#(#parts),*]))),
        );
    }
    for template in &method.header_templates {
        let name = &template.name;
        let required = template.vars().all(|var| {
            method
                .header_params(var)
                .all(|param| !param.arg.is_option())
        });
        params.push(quote! {
            #p::Param {
                name: #name,
                location: #p::Location::Header,
                required: #required,
                separator: ::core::option::Option::None,
                schema: #p::text,
            }
        });
    }
    (params, body)
}

/// Whether the argument is required (not an `Option`), and the type of its value: the `T` of
/// `Option<T>`, or its own.
fn required_and_inner<'p>(param: &'p Param<'_>) -> (bool, &'p Written<'p>) {
    match &param.arg.shape {
        Shape::Option(inner) => (false, &inner.ty),
        _ => (true, &param.arg.ty),
    }
}

fn body_doc(p: &TokenStream, media: &str, required: bool, content: TokenStream) -> TokenStream {
    quote! {
        ::core::option::Option::Some(#p::Body { media: #media, required: #required, content: #content })
    }
}

/// The 2xx response the return kind decodes.
fn success(kind: &ReturnKind<'_>, p: &TokenStream) -> TokenStream {
    let optional = matches!(kind, ReturnKind::Optional(_));
    let (status, body, description) = response(kind, p);
    quote! {
        #p::Success {
            status: #status,
            body: #body,
            description: #description,
            not_found_is_none: #optional,
        }
    }
}

/// The status, the body's media type and schema, and the description of a 2xx answer.
fn response(kind: &ReturnKind<'_>, p: &TokenStream) -> (u16, TokenStream, &'static str) {
    let json = |value: &Written<'_>| {
        let schema = schema_of(p, value);
        quote!(::core::option::Option::Some(("application/json", #schema)))
    };
    let text = quote!(::core::option::Option::Some(("text/plain", #p::text)));
    let binary = quote!(::core::option::Option::Some(("application/octet-stream", #p::binary)));
    let none = quote!(::core::option::Option::None);
    match kind {
        ReturnKind::Unit | ReturnKind::Entity(BodyKind::Unit) => {
            (204, none, "success; the body is not read")
        }
        ReturnKind::Text | ReturnKind::Entity(BodyKind::Text) => (200, text, "the body as text"),
        ReturnKind::Raw | ReturnKind::Entity(BodyKind::Raw) => (200, binary, "the body as bytes"),
        ReturnKind::Stream => (200, binary, "the body, streamed"),
        ReturnKind::Whole => (200, none, "any 2xx response, kept whole"),
        ReturnKind::Json(value) => (200, json(value), "the decoded body"),
        ReturnKind::Entity(BodyKind::Json(value)) => (
            200,
            json(value),
            "the decoded body, with status and headers",
        ),
        ReturnKind::Optional(inner) => response(inner, p),
    }
}

/// The schema function of a type: its JSON Schema when it implements `JsonSchema`, else an
/// open schema. A type `openapi()` cannot name (an `impl Trait`, or one naming `Self`) gets an
/// open schema directly.
fn schema_of(p: &TokenStream, written: &Written<'_>) -> TokenStream {
    if written.impl_trait || names_self(written.ty.to_token_stream()) {
        return quote!(#p::unnamed);
    }
    let mut ty = written.bare.clone();
    StaticLifetimes.visit_type_mut(&mut ty);
    quote!((&&#p::SchemaOf::<#ty>::new()).schema_fn())
}

/// Whether the tokens name `Self`, which `openapi()` cannot (a method's own type parameters
/// would not be in scope either, but a client method is never generic).
fn names_self(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tree| match tree {
        proc_macro2::TokenTree::Ident(ident) => ident == "Self",
        proc_macro2::TokenTree::Group(group) => names_self(group.stream()),
        _ => false,
    })
}

/// Makes every lifetime `'static`: the method's lifetimes are not in scope in `openapi()`.
struct StaticLifetimes;

impl VisitMut for StaticLifetimes {
    fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
        *lifetime = syn::Lifetime::new("'static", lifetime.span());
    }

    fn visit_type_reference_mut(&mut self, reference: &mut syn::TypeReference) {
        reference.lifetime = Some(syn::Lifetime::new(
            "'static",
            proc_macro2::Span::call_site(),
        ));
        self.visit_type_mut(&mut reference.elem);
    }
}

/// The doc comment of an item, its lines joined.
fn doc(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(pair) => match &pair.value {
                Expr::Lit(expr) => match &expr.lit {
                    Lit::Str(text) => Some(text.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').unwrap_or(&line).to_owned())
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// The media type of each body `openapi()` describes, in the order of the methods.
    fn body_media(item: proc_macro2::TokenStream) -> Vec<String> {
        let item: syn::ItemTrait = syn::parse2(item).unwrap();
        let expanded = crate::expand::feign_client(quote!("orders"), &item)
            .unwrap()
            .to_string();
        expanded
            .split("Body { media : \"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
            .collect()
    }

    #[test]
    fn describes_a_body_as_it_is_sent() {
        let media = body_media(quote! {
            trait Orders {
                #[post("/notes")]
                async fn note(&self, #[body] note: String) -> Result<(), Error>;
                #[post("/notes")]
                async fn maybe_note(&self, #[body] note: Option<String>) -> Result<(), Error>;
                #[post("/blobs")]
                async fn blob(&self, #[body] blob: &[u8]) -> Result<(), Error>;
                #[post("/blobs")]
                async fn maybe_blob(&self, #[body] blob: Option<Bytes>) -> Result<(), Error>;
                #[post("/files")]
                async fn file(&self, #[body] file: FileBody) -> Result<(), Error>;
            }
        });
        // An `Option` body goes through the Encoder (`null` when `None`), as JSON.
        assert_eq!(
            media,
            [
                "text/plain",
                "application/json",
                "application/octet-stream",
                "application/json",
                "application/octet-stream",
            ]
        );
    }
}
