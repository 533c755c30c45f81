//! Checks of the model that span attributes, parameters and templates: every `{var}` bound to
//! exactly one `#[path]` parameter, at most one body and none on GET or HEAD, `&self`
//! receivers, `async` methods and `Result` return types.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::{FnArg, ItemTrait, ReturnType, TraitItem};

use crate::ast::{attr_list, Client, Method, Role};
use crate::attr::HTTP_METHODS;
use crate::ctxt::Ctxt;
use crate::ty;

/// Reports every mistake in `client` to `cx`.
pub(crate) fn check(cx: &Ctxt, client: &Client<'_>) {
    check_client(cx, client);
    for method in &client.methods {
        check_method(cx, method);
    }
}

fn check_client(cx: &Ctxt, client: &Client<'_>) {
    match &client.args.service {
        None => cx.error_at(
            Span::call_site(),
            "missing the service name: #[feign_client(\"order-service\", url = \"http://...\")]",
        ),
        Some(service) if service.value().trim().is_empty() => {
            cx.error_spanned_by(service, "the service name is empty");
        }
        Some(_) => {}
    }
    if let Some(url) = &client.args.url {
        let value = url.value();
        if !(value.starts_with("http://") || value.starts_with("https://"))
            || value.contains(char::is_whitespace)
        {
            cx.error_spanned_by(url, "expected an absolute http:// or https:// URL");
        }
    }
    let original = client.original;
    if !original.generics.params.is_empty() || original.generics.where_clause.is_some() {
        cx.error_spanned_by(&original.generics, "a client trait cannot be generic");
    }
    for item in &original.items {
        match item {
            TraitItem::Fn(_) => {}
            other => cx.error_spanned_by(other, "a client trait holds only methods"),
        }
    }
    if let Some(fallback) = &client.args.fallback {
        if let Some((tokens, why)) = not_object_safe(original) {
            cx.error_spanned_by(
                tokens,
                format!(
                    "a client with `{}` is called as `dyn {}`, so {why}",
                    fallback.key, original.ident
                ),
            );
        }
    }
}

/// What keeps `dyn Trait` from being written for the client's trait, if anything: a generic
/// method or an `impl Trait` parameter.
pub(crate) fn not_object_safe(item: &ItemTrait) -> Option<(TokenStream, &'static str)> {
    item.items.iter().find_map(|entry| {
        let TraitItem::Fn(method) = entry else {
            return None;
        };
        if !method.sig.generics.params.is_empty() {
            return Some((
                method.sig.generics.to_token_stream(),
                "its methods cannot be generic",
            ));
        }
        method.sig.inputs.iter().find_map(|input| match input {
            FnArg::Typed(typed) if ty::names_impl_trait(&typed.ty) => Some((
                typed.ty.to_token_stream(),
                "its parameters cannot be `impl Trait`",
            )),
            _ => None,
        })
    })
}

fn check_method(cx: &Ctxt, method: &Method<'_>) {
    let sig = &method.original.sig;
    let Some(http) = &method.http else {
        if method.http_written {
            return; // malformed, already reported
        }
        if method.original.default.is_none() {
            cx.error_spanned_by(
                &sig.ident,
                format!(
                    "add one of {} to this method, or give it a default body",
                    attr_list(HTTP_METHODS)
                ),
            );
        }
        for param in method.params.iter().filter_map(|param| param.role.as_ref()) {
            cx.error_spanned_by(
                param.1,
                "parameter attributes need an HTTP method attribute on the method",
            );
        }
        return;
    };
    if sig.asyncness.is_none() {
        cx.error_spanned_by(sig.fn_token, "a client method must be `async fn`");
    }
    match method.receiver {
        Some(receiver)
            if receiver.reference.is_some()
                && receiver.mutability.is_none()
                && receiver.colon_token.is_none() => {}
        Some(receiver) => {
            let written = match (
                &receiver.reference,
                &receiver.mutability,
                &receiver.colon_token,
            ) {
                (_, _, Some(_)) => "a typed `self`",
                (Some(_), Some(_), None) => "`&mut self`",
                _ => "`self` by value",
            };
            cx.error_spanned_by(
                receiver,
                format!("a client method takes `&self`, not {written}"),
            );
        }
        None => cx.error_spanned_by(
            &sig.ident,
            "a client method takes `&self` as its first parameter",
        ),
    }
    match &sig.output {
        ReturnType::Default => cx.error_spanned_by(
            &sig.ident,
            "a client method returns `Result<T, E>` where `E: From<feign_core::Error>`",
        ),
        ReturnType::Type(_, ty) if ty::result_ok(ty).is_none() => cx.error_spanned_by(
            ty,
            "unsupported return type: expected `Result<T, E>` where `E: From<feign_core::Error>`",
        ),
        ReturnType::Type(_, ty) => {
            if let Some((fault, message)) = ty::result_ok(ty).and_then(ty::misplaced) {
                cx.error_spanned_by(fault, message);
            }
        }
    }
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "a client method cannot be generic: the trait must stay object safe",
        );
    }

    let mut path_names: Vec<&str> = Vec::new();
    let mut body_seen = false;
    let mut part_seen = false;
    for param in &method.params {
        let Some((role, attr)) = &param.role else {
            if !param
                .original
                .attrs
                .iter()
                .any(|attr| !crate::attr::is_builtin_param_attr(attr))
            {
                cx.error_spanned_by(
                    param.original,
                    format!(
                        "this parameter needs one of {}",
                        attr_list(crate::attr::PARAM_ATTRS)
                    ),
                );
            }
            continue;
        };
        if param.ident.is_none() {
            cx.error_spanned_by(
                &param.original.pat,
                "a client method parameter is a plain name, such as `id: u64`",
            );
        }
        match role {
            Role::Path(name) => {
                if path_names.contains(&name.as_str()) {
                    cx.error_spanned_by(attr, format!("two #[path] parameters named `{name}`"));
                } else {
                    path_names.push(name);
                }
                let in_template = http
                    .template
                    .as_ref()
                    .is_none_or(|template| template.vars().any(|var| var == name));
                if !in_template {
                    cx.error_spanned_by(
                        attr,
                        format!(
                            "#[path] parameter `{name}` is not in the template {:?}",
                            http.template_lit.value()
                        ),
                    );
                }
            }
            Role::Query(name, _) if name.is_empty() => {
                cx.error_spanned_by(attr, "empty query name");
            }
            Role::Part(name) => {
                part_seen = true;
                let ty = &*param.original.ty;
                if matches!(ty, syn::Type::Reference(_))
                    && matches!(ty::part(ty).1, ty::PartKind::Part | ty::PartKind::Parts)
                {
                    cx.error_spanned_by(
                        ty,
                        "a streamed or file part is read as it is sent: pass it by value",
                    );
                }
                if method.multipart.is_none() {
                    cx.error_spanned_by(
                        attr,
                        "#[part] parameters are sent as multipart/form-data: add #[multipart] to the method",
                    );
                }
                if name.is_empty() {
                    cx.error_spanned_by(attr, "empty part name");
                }
            }
            Role::Body | Role::Form if method.multipart.is_some() => {
                let attr_name = crate::attr::attr_name(attr);
                cx.error_spanned_by(
                    attr,
                    format!("a #[multipart] method sends its #[part] parameters as the body: remove #[{attr_name}] or make it a #[part]"),
                );
            }
            Role::Body | Role::Form => {
                let attr_name = crate::attr::attr_name(attr);
                let ty = &*param.original.ty;
                if matches!(ty, syn::Type::Reference(_)) && ty::stream_body(ty) {
                    cx.error_spanned_by(
                        ty,
                        "a streamed or file body is read as it is sent: pass it by value",
                    );
                }
                if body_seen {
                    cx.error_spanned_by(
                        attr,
                        "a method has at most one #[body] or #[form] parameter",
                    );
                }
                body_seen = true;
                if !http.allows_body() {
                    let verb = http.variant.to_string().to_ascii_uppercase();
                    cx.error_spanned_by(
                        attr,
                        format!("a {verb} request carries no body: remove #[{attr_name}] or use #[post], #[put] or #[patch]"),
                    );
                }
            }
            _ => {}
        }
    }
    check_header_templates(cx, method);
    if let Some(multipart) = method.multipart {
        check_multipart(cx, method, http, multipart, part_seen);
    }
    if let Some(template) = &http.template {
        let mut reported: Vec<&str> = Vec::new();
        for var in template.vars() {
            if !path_names.contains(&var) && !reported.contains(&var) {
                reported.push(var);
                cx.error_spanned_by(
                    &http.template_lit,
                    format!("`{{{var}}}` has no parameter: add `#[path] {var}: T` (or `#[path(\"{var}\")]`) to the method"),
                );
            }
        }
    }
}

/// Every `{name}` of a `#[headers]` template bound to a `#[param]` or `#[path]` parameter, and
/// every `#[param]` used by a template.
fn check_header_templates(cx: &Ctxt, method: &Method<'_>) {
    let bound = |var: &str| {
        method.params.iter().any(|param| {
            matches!(&param.role, Some((Role::Param(name) | Role::Path(name), _)) if name == var)
        })
    };
    for template in &method.header_templates {
        let mut reported: Vec<&str> = Vec::new();
        for var in template.vars() {
            if !bound(var) && !reported.contains(&var) {
                reported.push(var);
                cx.error_spanned_by(
                    &template.lit,
                    format!("`{{{var}}}` in header `{}` has no parameter: add `#[param] {var}: T` (or `#[param(\"{var}\")]`) to the method", template.name),
                );
            }
        }
    }
    for param in &method.params {
        if let Some((Role::Param(name), attr)) = &param.role {
            if matches!(ty::shape(&param.original.ty), ty::Shape::Many(_)) {
                cx.error_spanned_by(
                    &param.original.ty,
                    "a #[param] fills one header value: pass one value (or an Option of one)",
                );
            }
            let used = method
                .header_templates
                .iter()
                .any(|template| template.vars().any(|var| var == name));
            if !used {
                cx.error_spanned_by(
                    attr,
                    format!("#[param] `{name}` is not used: no #[headers] line of the method holds `{{{name}}}`"),
                );
            }
        }
    }
}

/// `#[multipart]`: a method with a body, at least one part, and the content type left to the
/// encoder (it carries the boundary).
fn check_multipart(
    cx: &Ctxt,
    method: &Method<'_>,
    http: &crate::ast::Http,
    multipart: &syn::Attribute,
    part_seen: bool,
) {
    if !http.allows_body() {
        let verb = http.variant.to_string().to_ascii_uppercase();
        cx.error_spanned_by(
            multipart,
            format!("a {verb} request carries no body: remove #[multipart] or use #[post], #[put] or #[patch]"),
        );
    }
    if !part_seen {
        cx.error_spanned_by(
            multipart,
            "a #[multipart] method needs at least one #[part] parameter",
        );
    }
    if method
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
    {
        cx.error_spanned_by(
            multipart,
            "a #[multipart] method sets its own Content-Type (multipart/form-data with the boundary): remove it from #[headers]",
        );
    }
}
