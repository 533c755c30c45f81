//! `{Trait}Client::openapi()`: each method described for feign-core's OpenAPI document, inside
//! `__private::if_openapi!`, which drops it unless feign-core's `openapi` feature is on.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{Attribute, Expr, Lit, Meta, ReturnType, Type};

use crate::ast::{Client, Http, Method, Role};
use crate::kind::PartKind;
use crate::template::Part;
use crate::ty::{self, Decode, EntityBody as Body, Level as Shape};

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
                        &TARGET,
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
    let generics: Vec<String> = method
        .original
        .sig
        .generics
        .type_params()
        .map(|param| param.ident.to_string())
        .collect();
    let schema = |ty: &Type| schema_of(p, ty, &generics);
    let mut params = Vec::new();
    let mut body = quote!(::core::option::Option::None);
    let mut parts = Vec::new();
    for param in &method.params {
        let (Some((role, _)), Some(ident)) = (&param.role, param.ident) else {
            continue;
        };
        let ty = &*param.original.ty;
        let (required, inner) = match ty::shape(ty) {
            Shape::Option(inner) => (false, inner),
            _ => (true, ty),
        };
        let param_doc = |name: &str, location: TokenStream, separator: Option<&String>| {
            let separator = match separator {
                Some(separator) => quote!(::core::option::Option::Some(#separator)),
                None => quote!(::core::option::Option::None),
            };
            let schema = schema(inner);
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
            Role::Body(_) => {
                let (media, content) = if ty::stream_body(inner) {
                    ("application/octet-stream", quote!(#p::binary))
                } else {
                    match ty::raw_body(inner) {
                        Some(_) if is_text(inner) => ("text/plain", quote!(#p::text)),
                        Some(_) => ("application/octet-stream", quote!(#p::binary)),
                        None => ("application/json", schema(inner)),
                    }
                };
                body = body_doc(p, media, required, quote!(#p::Content::Schema(#content)));
            }
            Role::Form => {
                let content = schema(inner);
                body = body_doc(
                    p,
                    "application/x-www-form-urlencoded",
                    required,
                    quote!(#p::Content::Schema(#content)),
                );
            }
            Role::Part(part) => {
                let part_name = &part.name;
                let part_schema = match ty::part(ty).1 {
                    PartKind::Text | PartKind::Json => schema(inner),
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
            method.params.iter().all(|param| {
                let named = matches!(
                    &param.role,
                    Some((Role::Param(n) | Role::Path { name: n, .. }, _)) if n == var
                );
                !named || !matches!(ty::shape(&param.original.ty), Shape::Option(_))
            })
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
    let success = success(method, p, &schema);
    let method_doc = doc(&method.original.attrs);
    quote! {
        #p::Operation {
            name: #name,
            key: #key,
            method: #krate::__private::HttpMethod::#variant,
            path: #path,
            query: &[#(#query),*],
            doc: #method_doc,
            params: ::std::vec::Vec::from([#(#params),*]),
            body: #body,
            success: #success,
        }
    }
}

fn body_doc(p: &TokenStream, media: &str, required: bool, content: TokenStream) -> TokenStream {
    quote! {
        ::core::option::Option::Some(#p::Body { media: #media, required: #required, content: #content })
    }
}

/// The 2xx response the return type decodes.
fn success(
    method: &Method<'_>,
    p: &TokenStream,
    schema: &dyn Fn(&Type) -> TokenStream,
) -> TokenStream {
    let unit: Type = syn::parse_quote!(());
    let ok = match &method.original.sig.output {
        ReturnType::Type(_, ret) => ty::result_ok(ret).unwrap_or(&unit),
        ReturnType::Default => &unit,
    };
    let (optional, decode) = ty::decode(ok);
    let inner = match ty::shape(ok) {
        Shape::Option(inner) => inner,
        _ => ok,
    };
    let json = |ty: &Type| {
        let schema = schema(ty);
        quote!(::core::option::Option::Some(("application/json", #schema)))
    };
    let text = quote!(::core::option::Option::Some(("text/plain", #p::text)));
    let binary = quote!(::core::option::Option::Some(("application/octet-stream", #p::binary)));
    let none = quote!(::core::option::Option::None);
    let (status, body, description) = match decode {
        Decode::Unit | Decode::Entity(Body::Unit) => {
            (204u16, none, "success; the body is not read")
        }
        Decode::String | Decode::Entity(Body::String) => (200, text, "the body as text"),
        Decode::Bytes | Decode::Entity(Body::Bytes) => (200, binary, "the body as bytes"),
        Decode::Streaming => (200, binary, "the body, streamed"),
        Decode::Response => (200, none, "any 2xx response, kept whole"),
        Decode::Json => (200, json(inner), "the decoded body"),
        Decode::Entity(Body::Json) => {
            let entity = ty::entity_body(ok).unwrap_or(&unit);
            (
                200,
                json(entity),
                "the decoded body, with status and headers",
            )
        }
    };
    quote! {
        #p::Success {
            status: #status,
            body: #body,
            description: #description,
            not_found_is_none: #optional,
        }
    }
}

/// `String` or `str`, as opposed to bytes.
fn is_text(ty: &Type) -> bool {
    let tokens = ty::peel(ty).to_token_stream().to_string();
    tokens.ends_with("String") || tokens.ends_with("str")
}

/// The schema function of `ty`: its JSON Schema when it implements `JsonSchema`, else an open
/// schema. A type the generated function cannot name (an `impl Trait`, a method's type
/// parameter) gets an open schema directly.
fn schema_of(p: &TokenStream, ty: &Type, generics: &[String]) -> TokenStream {
    if ty::names_impl_trait(ty) || mentions(ty.to_token_stream(), generics) {
        return quote!(#p::unnamed);
    }
    let mut ty = ty::peel(ty).clone();
    StaticLifetimes.visit_type_mut(&mut ty);
    quote!((&&#p::SchemaOf::<#ty>::new()).schema_fn())
}

/// Whether the tokens name one of `names` (or `Self`).
fn mentions(tokens: TokenStream, names: &[String]) -> bool {
    tokens.into_iter().any(|tree| match tree {
        proc_macro2::TokenTree::Ident(ident) => {
            ident == "Self" || names.iter().any(|name| ident == name)
        }
        proc_macro2::TokenTree::Group(group) => mentions(group.stream(), names),
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
