//! Checks of the model, one rule each: every `{var}` bound to exactly one `#[path]` parameter,
//! at most one body and none on GET or HEAD, `&self` receivers, `async` methods and `Result`
//! return types, parts only under `#[multipart]`. Each check reads the facts the model decided
//! and reports on the syntax node it kept.
//!
//! Errors are reported in the order of the trait: the client's, then each method's, its
//! parameters in order.

use proc_macro2::Span;
use syn::{Attribute, TraitItem};

use crate::ast::{attr_list, Client, Http, Method, Output, Param, Part, Role, SelfKind};
use crate::attr::{self, HTTP_METHODS, PARAM_ATTRS};
use crate::ctxt::Ctxt;

/// Reports every mistake in `client` to `cx`.
pub(crate) fn check(cx: &Ctxt, client: &Client<'_>) {
    check_service(cx, client);
    check_url(cx, client);
    check_trait_shape(cx, client);
    check_fallback_object_safe(cx, client);
    for method in &client.methods {
        check_method(cx, method);
    }
}

/// The service name is given and not blank.
fn check_service(cx: &Ctxt, client: &Client<'_>) {
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
}

/// `url = "..."` is an absolute http or https URL.
fn check_url(cx: &Ctxt, client: &Client<'_>) {
    if let Some(url) = &client.args.url {
        let value = url.value();
        if !(value.starts_with("http://") || value.starts_with("https://"))
            || value.contains(char::is_whitespace)
        {
            cx.error_spanned_by(url, "expected an absolute http:// or https:// URL");
        }
    }
}

/// The trait is not generic and holds only methods.
fn check_trait_shape(cx: &Ctxt, client: &Client<'_>) {
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
}

/// A client with a fallback is called as `dyn Trait`, so its trait must be object safe.
fn check_fallback_object_safe(cx: &Ctxt, client: &Client<'_>) {
    let (Some(fallback), Some((tokens, why))) = (&client.args.fallback, &client.not_object_safe)
    else {
        return;
    };
    cx.error_spanned_by(
        tokens,
        format!(
            "a client with `{}` is called as `dyn {}`, so {why}",
            fallback.key, client.original.ident
        ),
    );
}

fn check_method(cx: &Ctxt, method: &Method<'_>) {
    let Some(http) = &method.http else {
        return check_without_http(cx, method);
    };
    check_async(cx, method);
    check_receiver(cx, method);
    check_output(cx, method);
    check_method_not_generic(cx, method);
    for index in 0..method.params.len() {
        check_param(cx, method, http, index);
    }
    check_header_vars_bound(cx, method);
    for param in &method.params {
        check_header_param(cx, method, param);
    }
    if let Some(multipart) = method.multipart {
        check_multipart(cx, method, http, multipart);
    }
    check_template_vars_bound(cx, method, http);
}

/// A method without an HTTP attribute has a default body, and no parameter attributes.
fn check_without_http(cx: &Ctxt, method: &Method<'_>) {
    if method.http_written {
        return; // malformed, already reported
    }
    if method.original.default.is_none() {
        cx.error_spanned_by(
            method.ident(),
            format!(
                "add one of {} to this method, or give it a default body",
                attr_list(HTTP_METHODS)
            ),
        );
    }
    for (_, attr) in method.params.iter().filter_map(|param| param.role.as_ref()) {
        cx.error_spanned_by(
            attr,
            "parameter attributes need an HTTP method attribute on the method",
        );
    }
}

fn check_async(cx: &Ctxt, method: &Method<'_>) {
    let sig = &method.original.sig;
    if sig.asyncness.is_none() {
        cx.error_spanned_by(sig.fn_token, "a client method must be `async fn`");
    }
}

fn check_receiver(cx: &Ctxt, method: &Method<'_>) {
    let Some((receiver, kind)) = method.receiver else {
        return cx.error_spanned_by(
            method.ident(),
            "a client method takes `&self` as its first parameter",
        );
    };
    let written = match kind {
        SelfKind::Shared => return,
        SelfKind::Typed => "a typed `self`",
        SelfKind::Mut => "`&mut self`",
        SelfKind::Owned => "`self` by value",
    };
    cx.error_spanned_by(
        receiver,
        format!("a client method takes `&self`, not {written}"),
    );
}

/// A `Result<T, E>`, whose `T` the generated code can serve.
fn check_output(cx: &Ctxt, method: &Method<'_>) {
    match &method.output {
        Output::Missing => cx.error_spanned_by(
            method.ident(),
            "a client method returns `Result<T, E>` where `E: From<feign_core::Error>`",
        ),
        Output::NotResult(written) => cx.error_spanned_by(
            written,
            "unsupported return type: expected `Result<T, E>` where `E: From<feign_core::Error>`",
        ),
        Output::Result(returns) => {
            if let Some((fault, message)) = returns.misplaced {
                cx.error_spanned_by(fault, message);
            }
        }
    }
}

fn check_method_not_generic(cx: &Ctxt, method: &Method<'_>) {
    let generics = &method.original.sig.generics;
    if !generics.params.is_empty() {
        cx.error_spanned_by(
            generics,
            "a client method cannot be generic: the trait must stay object safe",
        );
    }
}

/// The rules of the method's parameter at `index`, by its role.
fn check_param(cx: &Ctxt, method: &Method<'_>, http: &Http, index: usize) {
    let (param, earlier) = (&method.params[index], &method.params[..index]);
    let Some((role, attr)) = &param.role else {
        return check_param_marked(cx, param);
    };
    check_plain_name(cx, param);
    match role {
        Role::Path { name, .. } => {
            check_path_unique(cx, earlier, name, attr);
            check_path_in_template(cx, http, name, attr);
        }
        Role::Query { name, .. } if name.is_empty() => {
            cx.error_spanned_by(attr, "empty query name");
        }
        Role::Part(part) => check_part(cx, method, param, part, attr),
        Role::Body(_) | Role::Form if method.multipart.is_some() => {
            let attr_name = attr::attr_name(attr);
            cx.error_spanned_by(
                attr,
                format!("a #[multipart] method sends its #[part] parameters as the body: remove #[{attr_name}] or make it a #[part]"),
            );
        }
        Role::Body(_) | Role::Form => {
            check_moved_by_value(cx, param, "body");
            check_one_body(cx, earlier, attr);
            check_body_allowed(cx, http, attr);
        }
        _ => {}
    }
}

/// A parameter without a role was given one of the macro's attributes (an unknown or wrong
/// one is already reported).
fn check_param_marked(cx: &Ctxt, param: &Param<'_>) {
    if !param.marked {
        cx.error_spanned_by(
            param.original,
            format!("this parameter needs one of {}", attr_list(PARAM_ATTRS)),
        );
    }
}

fn check_plain_name(cx: &Ctxt, param: &Param<'_>) {
    if param.ident.is_none() {
        cx.error_spanned_by(
            &param.original.pat,
            "a client method parameter is a plain name, such as `id: u64`",
        );
    }
}

/// No `earlier` parameter is a `#[path]` of the same name.
fn check_path_unique(cx: &Ctxt, earlier: &[Param<'_>], name: &str, attr: &Attribute) {
    let taken = earlier
        .iter()
        .any(|other| matches!(&other.role, Some((Role::Path { name: n, .. }, _)) if n == name));
    if taken {
        cx.error_spanned_by(attr, format!("two #[path] parameters named `{name}`"));
    }
}

fn check_path_in_template(cx: &Ctxt, http: &Http, name: &str, attr: &Attribute) {
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

/// A part is moved by value, sent under `#[multipart]`, and named.
fn check_part(
    cx: &Ctxt,
    method: &Method<'_>,
    param: &Param<'_>,
    part: &Part<'_>,
    attr: &Attribute,
) {
    check_moved_by_value(cx, param, "part");
    if method.multipart.is_none() {
        cx.error_spanned_by(
            attr,
            "#[part] parameters are sent as multipart/form-data: add #[multipart] to the method",
        );
    }
    if part.name.is_empty() {
        cx.error_spanned_by(attr, "empty part name");
    }
}

/// A stream, file or part is read as it is sent, so the request takes it by value.
fn check_moved_by_value(cx: &Ctxt, param: &Param<'_>, what: &str) {
    if param.borrowed_stream {
        cx.error_spanned_by(
            &param.original.ty,
            format!("a streamed or file {what} is read as it is sent: pass it by value"),
        );
    }
}

/// No `earlier` parameter is a `#[body]` or `#[form]`.
fn check_one_body(cx: &Ctxt, earlier: &[Param<'_>], attr: &Attribute) {
    let taken = earlier
        .iter()
        .any(|other| matches!(other.role, Some((Role::Body(_) | Role::Form, _))));
    if taken {
        cx.error_spanned_by(
            attr,
            "a method has at most one #[body] or #[form] parameter",
        );
    }
}

/// `GET` and `HEAD` carry no body: `attr` is the `#[body]`, `#[form]` or `#[multipart]`.
fn check_body_allowed(cx: &Ctxt, http: &Http, attr: &Attribute) {
    if !http.allows_body() {
        let verb = http.variant.to_string().to_ascii_uppercase();
        let attr_name = attr::attr_name(attr);
        cx.error_spanned_by(
            attr,
            format!("a {verb} request carries no body: remove #[{attr_name}] or use #[post], #[put] or #[patch]"),
        );
    }
}

/// Every `{name}` of a `#[headers]` line is bound to a `#[param]` or `#[path]` parameter.
fn check_header_vars_bound(cx: &Ctxt, method: &Method<'_>) {
    for template in &method.header_templates {
        let mut reported: Vec<&str> = Vec::new();
        for var in template.vars() {
            if method.header_params(var).next().is_none() && !reported.contains(&var) {
                reported.push(var);
                cx.error_spanned_by(
                    &template.lit,
                    format!("`{{{var}}}` in header `{}` has no parameter: add `#[param] {var}: T` (or `#[param(\"{var}\")]`) to the method", template.name),
                );
            }
        }
    }
}

/// A `#[param]` is one value, used by a `#[headers]` line.
fn check_header_param(cx: &Ctxt, method: &Method<'_>, param: &Param<'_>) {
    let Some((Role::Param(name), attr)) = &param.role else {
        return;
    };
    if param.arg.is_many() {
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

/// `#[multipart]`: a method with a body, at least one part, and the content type left to the
/// encoder (it carries the boundary).
fn check_multipart(cx: &Ctxt, method: &Method<'_>, http: &Http, multipart: &Attribute) {
    check_body_allowed(cx, http, multipart);
    let has_part = method
        .params
        .iter()
        .any(|param| matches!(param.role, Some((Role::Part(_), _))));
    if !has_part {
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

/// Every `{var}` of the path template has a `#[path]` parameter.
fn check_template_vars_bound(cx: &Ctxt, method: &Method<'_>, http: &Http) {
    let Some(template) = &http.template else {
        return;
    };
    let mut reported: Vec<&str> = Vec::new();
    for var in template.vars() {
        if method.path_index(var).is_none() && !reported.contains(&var) {
            reported.push(var);
            cx.error_spanned_by(
                &http.template_lit,
                format!("`{{{var}}}` has no parameter: add `#[path] {var}: T` (or `#[path(\"{var}\")]`) to the method"),
            );
        }
    }
}
