//! Parsing of the macro's attributes: `#[feign_client(...)]`, `#[headers(...)]`, the HTTP method
//! attributes, `#[options(...)]`, `#[idempotent]` and the parameter attributes.
//!
//! Unknown and duplicate keys and attributes are reported by one pair of helpers, [`Keys`] and
//! [`Slot`], whatever attribute they occur in.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, Lit, LitStr, Meta, Token};

use crate::ctxt::Ctxt;

/// The HTTP method attributes, in the order error messages list them.
pub(crate) const HTTP_METHODS: &[&str] = &["get", "post", "put", "delete", "patch", "head"];

/// The parameter attributes.
pub(crate) const PARAM_ATTRS: &[&str] = &[
    "path",
    "query",
    "query_map",
    "header",
    "header_map",
    "body",
    "form",
    "param",
    "part",
];

/// The method attributes other than the HTTP methods.
const METHOD_ATTRS: &[&str] = &["headers", "idempotent", "options", "multipart"];

/// Attributes rustc accepts on a parameter; they are left alone.
const BUILTIN_PARAM_ATTRS: &[&str] = &[
    "cfg", "cfg_attr", "allow", "warn", "deny", "forbid", "expect",
];

/// The keys of `#[feign_client(...)]` after the service name.
const CLIENT_KEYS: &[&str] = &["url", "path", "crate", "fallback", "fallback_factory"];

/// The keys of `#[options(...)]`.
const OPTION_KEYS: &[&str] = &[
    "connect_timeout_ms",
    "read_timeout_ms",
    "total_timeout_ms",
    "follow_redirects",
];

/// A value that may be given once; a second one is reported on its own tokens.
pub(crate) struct Slot<T> {
    what: String,
    value: Option<T>,
}

impl<T> Slot<T> {
    pub(crate) fn new(what: impl Into<String>) -> Self {
        Slot {
            what: what.into(),
            value: None,
        }
    }

    /// Stores `value`, or reports `tokens` as a duplicate when a value is already there.
    pub(crate) fn set<A: ToTokens>(&mut self, cx: &Ctxt, tokens: A, value: T) {
        if self.value.is_some() {
            cx.error_spanned_by(tokens, format!("duplicate {}", self.what));
        } else {
            self.value = Some(value);
        }
    }

    pub(crate) fn get(self) -> Option<T> {
        self.value
    }
}

/// Lists names for an error message: "`a`, `b` or `c`".
pub(crate) fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `key = literal`, the one shape of every keyed argument, or `key = Type` for a fallback.
pub(crate) struct KeyValue {
    pub(crate) key: Ident,
    pub(crate) value: Value,
}

/// The value of a keyed argument.
pub(crate) enum Value {
    Lit(Lit),
    Type(syn::Type),
}

impl ToTokens for Value {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            Value::Lit(lit) => lit.to_tokens(tokens),
            Value::Type(ty) => ty.to_tokens(tokens),
        }
    }
}

impl Parse for KeyValue {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let key = Ident::parse_any(input)?;
        if !input.peek(Token![=]) {
            return Err(syn::Error::new_spanned(
                &key,
                format!("expected `{key} = ...`"),
            ));
        }
        input.parse::<Token![=]>()?;
        let value = if input.peek(Lit) {
            Value::Lit(input.parse()?)
        } else {
            Value::Type(input.parse()?)
        };
        Ok(KeyValue { key, value })
    }
}

/// Sorts keyed arguments into known keys, reporting unknown and repeated ones.
fn sort_keys(
    cx: &Ctxt,
    attr: &str,
    allowed: &[&str],
    pairs: Punctuated<KeyValue, Token![,]>,
) -> Vec<KeyValue> {
    let mut seen: Vec<String> = Vec::new();
    let mut known = Vec::new();
    for pair in pairs {
        let key = pair.key.unraw().to_string();
        if !allowed.contains(&key.as_str()) {
            cx.error_spanned_by(
                &pair.key,
                format!(
                    "unknown key `{key}` in #[{attr}]; expected {}",
                    one_of(allowed)
                ),
            );
        } else if seen.contains(&key) {
            cx.error_spanned_by(&pair.key, format!("duplicate key `{key}` in #[{attr}]"));
        } else {
            seen.push(key);
            known.push(pair);
        }
    }
    known
}

/// An optional leading string literal, then `key = value` pairs: `"name", a = 1, b = 2`.
type LiteralThenKeys = (Option<LitStr>, Punctuated<KeyValue, Token![,]>);

fn literal_then_keys(input: ParseStream<'_>) -> syn::Result<LiteralThenKeys> {
    let literal = if input.peek(LitStr) {
        Some(input.parse::<LitStr>()?)
    } else {
        None
    };
    if literal.is_some() && !input.is_empty() {
        input.parse::<Token![,]>()?;
    }
    let pairs = Punctuated::<KeyValue, Token![,]>::parse_terminated(input)?;
    Ok((literal, pairs))
}

/// The arguments of `#[feign_client("name", url = "...", path = "/api", crate = "...",
/// fallback = Type)]`.
#[derive(Default)]
pub(crate) struct ClientArgs {
    pub(crate) service: Option<LitStr>,
    pub(crate) url: Option<LitStr>,
    pub(crate) path: Option<LitStr>,
    pub(crate) krate: Option<syn::Path>,
    pub(crate) fallback: Option<FallbackArg>,
}

/// `fallback = Type` or `fallback_factory = Type`.
pub(crate) struct FallbackArg {
    /// The key as written, for errors about the fallback as a whole.
    pub(crate) key: Ident,
    pub(crate) factory: bool,
    pub(crate) ty: syn::Type,
}

/// Parses the arguments of `#[feign_client]`; everything wrong is reported to `cx`.
pub(crate) fn client_args(cx: &Ctxt, args: TokenStream) -> ClientArgs {
    let (service, pairs) = match literal_then_keys.parse2(args) {
        Ok(parsed) => parsed,
        Err(error) => {
            cx.syn_error(error);
            return ClientArgs::default();
        }
    };
    let mut out = ClientArgs {
        service,
        ..ClientArgs::default()
    };
    for pair in sort_keys(cx, "feign_client", CLIENT_KEYS, pairs) {
        let key = pair.key.unraw().to_string();
        if key == "fallback" || key == "fallback_factory" {
            match pair.value {
                Value::Type(ty) if out.fallback.is_none() => {
                    out.fallback = Some(FallbackArg {
                        factory: key == "fallback_factory",
                        key: pair.key,
                        ty,
                    });
                }
                Value::Type(_) => cx.error_spanned_by(
                    &pair.key,
                    "give either `fallback` or `fallback_factory`, not both",
                ),
                Value::Lit(lit) => cx.error_spanned_by(
                    lit,
                    format!("expected a type for `{key}`, such as `{key} = OrderServiceFallback`"),
                ),
            }
            continue;
        }
        let Some(lit) = string(cx, &pair) else {
            continue;
        };
        match pair.key.unraw().to_string().as_str() {
            "url" => out.url = Some(lit),
            "path" => out.path = Some(lit),
            _ => match lit.parse::<syn::Path>() {
                Ok(path) => out.krate = Some(path),
                Err(_) => {
                    cx.error_spanned_by(&lit, "expected a path such as \"my_crate::feign_core\"");
                }
            },
        }
    }
    out
}

fn string(cx: &Ctxt, pair: &KeyValue) -> Option<LitStr> {
    match &pair.value {
        Value::Lit(Lit::Str(lit)) => Some(lit.clone()),
        other => {
            cx.error_spanned_by(
                other,
                format!("expected a string literal for `{}`", pair.key),
            );
            None
        }
    }
}

/// `#[options(...)]`, each key given at most once.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) connect_timeout_ms: Option<u64>,
    pub(crate) read_timeout_ms: Option<u64>,
    pub(crate) total_timeout_ms: Option<u64>,
    pub(crate) follow_redirects: Option<bool>,
}

/// Parses `#[options(...)]` into `options`.
pub(crate) fn options(cx: &Ctxt, attr: &Attribute, options: &mut Options) {
    let pairs = match attr.parse_args_with(Punctuated::<KeyValue, Token![,]>::parse_terminated) {
        Ok(pairs) => pairs,
        Err(error) => return cx.syn_error(error),
    };
    for pair in sort_keys(cx, "options", OPTION_KEYS, pairs) {
        let key = pair.key.to_string();
        if key == "follow_redirects" {
            match &pair.value {
                Value::Lit(Lit::Bool(lit)) => options.follow_redirects = Some(lit.value),
                other => cx.error_spanned_by(other, "expected `true` or `false`"),
            }
            continue;
        }
        let millis = match &pair.value {
            Value::Lit(Lit::Int(lit)) => match lit.base10_parse::<u64>() {
                Ok(0) => {
                    cx.error_spanned_by(lit, format!("`{key}` must be greater than zero"));
                    continue;
                }
                Ok(millis) => millis,
                Err(error) => {
                    cx.syn_error(error);
                    continue;
                }
            },
            other => {
                cx.error_spanned_by(
                    other,
                    format!("expected a number of milliseconds for `{key}`"),
                );
                continue;
            }
        };
        match key.as_str() {
            "connect_timeout_ms" => options.connect_timeout_ms = Some(millis),
            "read_timeout_ms" => options.read_timeout_ms = Some(millis),
            _ => options.total_timeout_ms = Some(millis),
        }
    }
}

/// The string literals of `#[headers("A: b", ...)]`.
pub(crate) fn headers(cx: &Ctxt, attr: &Attribute) -> Vec<LitStr> {
    match attr.parse_args_with(Punctuated::<LitStr, Token![,]>::parse_terminated) {
        Ok(list) if list.is_empty() => {
            cx.error_spanned_by(
                attr,
                "#[headers] needs at least one \"Name: value\" literal",
            );
            Vec::new()
        }
        Ok(list) => list.into_iter().collect(),
        Err(error) => {
            cx.syn_error(error);
            Vec::new()
        }
    }
}

/// The one string literal of `#[get("/path")]` or `#[header("Name")]`.
pub(crate) fn single_string(cx: &Ctxt, attr: &Attribute, example: &str) -> Option<LitStr> {
    match &attr.meta {
        Meta::List(_) => match attr.parse_args::<LitStr>() {
            Ok(lit) => Some(lit),
            Err(_) => {
                cx.error_spanned_by(attr, format!("expected one string literal: {example}"));
                None
            }
        },
        _ => {
            cx.error_spanned_by(attr, format!("expected one string literal: {example}"));
            None
        }
    }
}

/// The optional string literal of `#[path]` / `#[path("name")]`, `#[query]` / `#[query("name")]`.
pub(crate) fn optional_string(cx: &Ctxt, attr: &Attribute) -> Option<LitStr> {
    match &attr.meta {
        Meta::Path(_) => None,
        Meta::List(_) => match attr.parse_args::<LitStr>() {
            Ok(lit) => Some(lit),
            Err(error) => {
                cx.syn_error(error);
                None
            }
        },
        Meta::NameValue(_) => {
            let name = attr_name(attr);
            cx.error_spanned_by(attr, format!("expected #[{name}] or #[{name}(\"name\")]"));
            None
        }
    }
}

/// The collection formats of `#[query(format = "...")]` (OpenFeign's `CollectionFormat`) and
/// the separator each joins values with, as sent: `,` and `|` as they are, space and tab
/// percent-encoded (a URL cannot hold them raw). `None`: one pair per value.
pub(crate) const QUERY_FORMATS: &[(&str, Option<&str>)] = &[
    ("exploded", None),
    ("csv", Some(",")),
    ("ssv", Some("%20")),
    ("tsv", Some("%09")),
    ("pipes", Some("|")),
];

/// `#[query]`, `#[query("name")]`, `#[query(format = "csv")]` or
/// `#[query("name", format = "csv")]`: the name if given, and the separator of a joined
/// format (`None` for the default, exploded).
pub(crate) fn query(cx: &Ctxt, attr: &Attribute) -> (Option<LitStr>, Option<String>) {
    let Meta::List(_) = &attr.meta else {
        return (optional_string(cx, attr), None);
    };
    let (name, pairs) = match attr.parse_args_with(literal_then_keys) {
        Ok(parsed) => parsed,
        Err(error) => {
            cx.syn_error(error);
            return (None, None);
        }
    };
    let mut separator = None;
    for pair in sort_keys(cx, "query", &["format"], pairs) {
        let Some(lit) = string(cx, &pair) else {
            continue;
        };
        let formats: Vec<&str> = QUERY_FORMATS.iter().map(|(format, _)| *format).collect();
        match QUERY_FORMATS
            .iter()
            .find(|(format, _)| *format == lit.value())
        {
            Some((_, joined)) => separator = joined.map(str::to_owned),
            None => cx.error_spanned_by(
                &lit,
                format!(
                    "unknown query format {:?}; expected {}",
                    lit.value(),
                    one_of(&formats)
                ),
            ),
        }
    }
    (name, separator)
}

/// Reports arguments given to an attribute that takes none, such as `#[body]`.
pub(crate) fn no_args(cx: &Ctxt, attr: &Attribute) {
    if !matches!(attr.meta, Meta::Path(_)) {
        cx.error_spanned_by(attr, format!("#[{}] takes no arguments", attr_name(attr)));
    }
}

/// The attribute's single-identifier name, or "" for paths such as `#[serde::x]`.
pub(crate) fn attr_name(attr: &Attribute) -> String {
    attr.path()
        .get_ident()
        .map(|ident| ident.to_string())
        .unwrap_or_default()
}

/// Whether rustc itself accepts the attribute on a parameter.
pub(crate) fn is_builtin_param_attr(attr: &Attribute) -> bool {
    BUILTIN_PARAM_ATTRS.contains(&attr_name(attr).as_str())
}

/// Whether the attribute is one this macro consumes on a method.
pub(crate) fn is_method_attr(attr: &Attribute) -> bool {
    let name = attr_name(attr);
    HTTP_METHODS.contains(&name.as_str()) || METHOD_ATTRS.contains(&name.as_str())
}

/// The method attribute a method's unknown attribute is a misspelling of, such as `get` for
/// `#[gte]`. The macro reports it and removes it from the trait.
pub(crate) fn misspelled_method_attr(attr: &Attribute) -> Option<&'static str> {
    if is_method_attr(attr) {
        return None;
    }
    let known: Vec<&'static str> = HTTP_METHODS.iter().chain(METHOD_ATTRS).copied().collect();
    nearest(&attr_name(attr), &known)
}

/// The name among `known` that `name` is a misspelling of: the nearest within one edit per
/// three letters (rustc's bound for its own suggestions), the first of equals.
pub(crate) fn nearest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    if name.is_empty() {
        return None;
    }
    let most = name.chars().count().max(3) / 3;
    known
        .iter()
        .map(|candidate| (strsim::damerau_levenshtein(name, candidate), *candidate))
        .filter(|(distance, _)| *distance <= most)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Whether the attribute is one this macro consumes on the trait.
pub(crate) fn is_trait_attr(attr: &Attribute) -> bool {
    attr_name(attr) == "headers"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn method_attr(text: &str) -> Option<&'static str> {
        let mut attr: Attribute = syn::parse_quote!(#[doc = "x"]);
        attr.meta = syn::parse_str(text).unwrap();
        misspelled_method_attr(&attr)
    }

    #[test]
    fn suggests_the_attribute_a_typo_is_nearest() {
        assert_eq!(nearest("quey", PARAM_ATTRS), Some("query"));
        assert_eq!(nearest("bdy", PARAM_ATTRS), Some("body"));
        assert_eq!(nearest("from", PARAM_ATTRS), Some("form"));
        assert_eq!(nearest("frobnicate", PARAM_ATTRS), None);
        assert_eq!(nearest("", PARAM_ATTRS), None);
        assert_eq!(method_attr("gte(\"/x\")"), Some("get"));
        assert_eq!(method_attr("header(\"A: b\")"), Some("headers"));
        assert_eq!(method_attr("idempotnet"), Some("idempotent"));
        assert_eq!(method_attr("get(\"/x\")"), None);
    }

    #[test]
    fn leaves_rustc_attributes_alone() {
        for builtin in [
            "doc = \"x\"",
            "allow(dead_code)",
            "deny(warnings)",
            "must_use",
            "inline",
            "cfg(test)",
            "deprecated",
            "track_caller",
            "expect(unused)",
            "tracing::instrument",
        ] {
            assert_eq!(method_attr(builtin), None, "{builtin}");
        }
    }
}
