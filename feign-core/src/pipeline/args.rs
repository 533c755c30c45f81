//! The arguments of one call, encoded as the generated code hands them over.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Display, Write as _};
use std::sync::Arc;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::HeaderMap;
use serde::Serialize;

use super::observe::MethodState;
use crate::body::OneShot;
use crate::escape;
use crate::headers::{self, static_headers};
use crate::meta::{MethodMeta, PathPart};
use crate::multipart::Part;
use crate::BodyStream;
use crate::Encoder;
use crate::Error;
use crate::RequestTemplate;

/// Path values kept inline; a method with more path variables spills into a `Vec`.
const INLINE_PATH_VARS: usize = 8;

/// The arguments of one call, percent-encoded and validated as they are added.
///
/// Mistakes are collected, not thrown: `Core::execute` returns the first one before any
/// connection is made.
pub struct RequestArgs {
    pub(super) meta: &'static MethodMeta,
    pub(super) state: &'static MethodState,
    values: String,
    slots: [Option<(u32, u32)>; INLINE_PATH_VARS],
    extra_slots: Vec<(usize, (u32, u32))>,
    query: String,
    headers: HeaderMap,
    body: Bytes,
    /// A streamed or multipart body, sent in place of `body`; boxed so the common call's
    /// arguments (moved whole into its future) stay small.
    streamed: Option<Box<Streamed>>,
    encoder: Option<Arc<dyn Encoder>>,
    error: Option<Error>,
}

impl RequestArgs {
    pub(super) fn new(
        meta: &'static MethodMeta,
        state: &'static MethodState,
        encoder: Option<Arc<dyn Encoder>>,
    ) -> RequestArgs {
        let mut args = RequestArgs {
            meta,
            state,
            values: String::new(),
            slots: [None; INLINE_PATH_VARS],
            extra_slots: Vec::new(),
            query: String::new(),
            headers: state.static_headers.clone().unwrap_or_default(),
            body: Bytes::new(),
            streamed: None,
            encoder,
            error: None,
        };
        for (name, value) in meta.query {
            args.query_separator();
            args.query.push_str(name);
            args.query.push('=');
            args.query.push_str(value);
        }
        if state.static_headers.is_none() {
            if let Err(e) = static_headers(meta) {
                args.fail(e);
            }
        }
        args
    }

    fn fail(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }

    /// Sets path variable `index`, encoded as one segment.
    pub fn path<T: Display + ?Sized>(&mut self, index: usize, value: &T) {
        let start = self.values.len();
        if escape::push_display(&mut self.values, value).is_err() {
            self.values.truncate(start);
            let name = path_var_name(self.meta, index);
            return self.fail(Error::request(format!(
                "path variable `{name}` could not be formatted"
            )));
        }
        let segment = &self.values[start..];
        if segment.is_empty() || segment == "." || segment == ".." {
            let name = path_var_name(self.meta, index);
            let shown = if segment.is_empty() {
                "empty"
            } else {
                "a dot segment"
            };
            self.values.truncate(start);
            return self.fail(Error::request(format!("path variable `{name}` is {shown}")));
        }
        let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(self.values.len())) else {
            return self.fail(Error::request("path too long"));
        };
        match self.slots.get_mut(index) {
            Some(slot) => *slot = Some((start, end)),
            None => self.extra_slots.push((index, (start, end))),
        }
    }

    fn query_separator(&mut self) {
        if !self.query.is_empty() {
            self.query.push('&');
        }
    }

    /// Appends one query pair, name and value percent-encoded.
    pub fn query<T: Display + ?Sized>(&mut self, name: &str, value: &T) {
        let mark = self.query.len();
        self.query_separator();
        escape::push_str(&mut self.query, name);
        self.query.push('=');
        if escape::push_display(&mut self.query, value).is_err() {
            self.query.truncate(mark);
            self.fail(Error::request(format!(
                "query parameter `{name}` could not be formatted"
            )));
        }
    }

    /// Appends one query pair whose value is `values` joined by `separator` (a collection
    /// format: `,`, `%20`, `%09` or `|`, written as is); each value is percent-encoded, so a
    /// separator inside a value is never taken for one. No values, no pair.
    pub fn query_joined<'v, T, I>(&mut self, name: &str, separator: &str, values: I)
    where
        T: Display + ?Sized + 'v,
        I: IntoIterator<Item = &'v T>,
    {
        let mark = self.query.len();
        for (index, value) in values.into_iter().enumerate() {
            if index == 0 {
                self.query_separator();
                escape::push_str(&mut self.query, name);
                self.query.push('=');
            } else {
                self.query.push_str(separator);
            }
            if escape::push_display(&mut self.query, value).is_err() {
                self.query.truncate(mark);
                return self.fail(Error::request(format!(
                    "query parameter `{name}` could not be formatted"
                )));
            }
        }
    }

    /// Appends every field of a serializable struct or map as query pairs: `None` fields are
    /// left out and sequences become one pair per element.
    pub fn query_map<T: Serialize + ?Sized>(&mut self, value: &T) {
        let value = match serde_json::to_value(value) {
            Ok(value) => value,
            Err(e) => {
                return self
                    .fail(Error::request("query map could not be serialized").with_source(e))
            }
        };
        let serde_json::Value::Object(map) = value else {
            if value.is_null() {
                return;
            }
            return self.fail(Error::request(
                "query map must serialize as a struct or map",
            ));
        };
        for (name, value) in &map {
            match value {
                serde_json::Value::Array(items) => {
                    for item in items {
                        self.query_scalar(name, item);
                    }
                }
                other => self.query_scalar(name, other),
            }
        }
    }

    fn query_scalar(&mut self, name: &str, value: &serde_json::Value) {
        match value {
            serde_json::Value::Null => {}
            serde_json::Value::String(text) => self.query(name, text.as_str()),
            serde_json::Value::Bool(_) | serde_json::Value::Number(_) => self.query(name, value),
            _ => self.fail(Error::request(format!(
                "query map field `{name}` is nested"
            ))),
        }
    }

    fn insert_header(&mut self, name: HeaderName, value: HeaderValue) {
        headers::insert(&mut self.headers, name, value);
    }

    /// Adds a header from a parameter; CR, LF, NUL, other control bytes and non-ASCII make
    /// the call fail before anything is sent.
    pub fn header<T: Display + ?Sized>(&mut self, name: &str, value: &T) {
        let mut text = String::new();
        if write!(text, "{value}").is_err() {
            return self.fail(Error::request(format!(
                "header `{name}` could not be formatted"
            )));
        }
        match headers::parse_for_request(name, Bytes::from(text)) {
            Ok((name, value)) => self.insert_header(name, value),
            Err(e) => self.fail(e),
        }
    }

    /// Adds a `#[headers]` line whose value is filled from parameters: the pieces formatted
    /// in order, then checked as a [`header`](RequestArgs::header) parameter's value is.
    pub fn header_template(&mut self, name: &str, parts: &[HeaderPart<'_>]) {
        let mut text = String::new();
        for part in parts {
            let written = match part {
                HeaderPart::Literal(literal) => text.write_str(literal),
                HeaderPart::Value(value) => write!(text, "{value}"),
            };
            if written.is_err() {
                return self.fail(Error::request(format!(
                    "header `{name}` could not be formatted"
                )));
            }
        }
        self.header(name, text.as_str());
    }

    /// Adds every header of a map.
    pub fn header_map<T: HeaderMapArg + ?Sized>(&mut self, value: &T) {
        let mut pending = Vec::new();
        let mut first_error = None;
        value.each_header(&mut |name, value| match headers::parse_for_request(
            name,
            Bytes::copy_from_slice(value),
        ) {
            Ok(pair) => pending.push(pair),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        });
        if let Some(e) = first_error {
            return self.fail(e);
        }
        for (name, value) in pending {
            self.insert_header(name, value);
        }
    }

    /// Encodes the body with the client's Encoder (JSON by default).
    pub fn body<T: Serialize + ?Sized>(&mut self, value: &T) {
        let encoded = match &self.encoder {
            None => serde_json::to_vec(value)
                .map(|bytes| {
                    crate::codec::set_content_type(&mut self.headers, "application/json");
                    Bytes::from(bytes)
                })
                .map_err(|e| Error::request("body could not be encoded as json").with_source(e)),
            Some(encoder) => {
                encoder.encode(&value as &dyn erased_serde::Serialize, &mut self.headers)
            }
        };
        match encoded {
            Ok(bytes) => self.body = bytes,
            Err(e) => self.fail(e),
        }
    }

    /// Sends bytes or text as they are.
    pub fn body_raw<T: Into<Bytes>>(&mut self, value: T) {
        self.body = value.into();
    }

    /// Sends a stream or a file as the body, as it is read.
    pub fn body_stream<T: Into<BodyStream>>(&mut self, value: T) {
        self.streamed = Some(Box::new(Streamed::Stream(value.into())));
    }

    /// Makes the body `multipart/form-data`, built from the parts added next.
    pub fn multipart(&mut self) {
        self.streamed = Some(Box::new(Streamed::Parts(Vec::new())));
    }

    fn push_part(&mut self, name: &'static str, part: Part) {
        match self.streamed.as_deref_mut() {
            Some(Streamed::Parts(parts)) => parts.push((name, part)),
            _ => self.streamed = Some(Box::new(Streamed::Parts(vec![(name, part)]))),
        }
    }

    /// Adds a text part: the value's `Display`, with no file name or content type.
    pub fn part_text<T: Display + ?Sized>(&mut self, name: &'static str, value: &T) {
        self.push_part(name, Part::text(value.to_string()));
    }

    /// Adds a part of bytes, `application/octet-stream`.
    pub fn part_bytes<T: Into<Bytes>>(&mut self, name: &'static str, value: T) {
        self.push_part(name, Part::bytes(value));
    }

    /// Adds a [`Part`], a [`FilePart`](crate::multipart::FilePart), or a stream or file as a
    /// part.
    pub fn part<T: crate::multipart::IntoPart>(&mut self, name: &'static str, value: T) {
        self.push_part(name, value.into_part());
    }

    /// Adds a part encoded with the client's Encoder (JSON by default), with the content type
    /// it sets, as Spring's `@RequestPart` sends an object.
    pub fn part_json<T: Serialize + ?Sized>(&mut self, name: &'static str, value: &T) {
        let mut headers = HeaderMap::new();
        let encoded = match &self.encoder {
            None => serde_json::to_vec(value)
                .map(|bytes| {
                    crate::codec::set_content_type(&mut headers, "application/json");
                    Bytes::from(bytes)
                })
                .map_err(|e| {
                    Error::request(format!("part `{name}` could not be encoded as json"))
                        .with_source(e)
                }),
            Some(encoder) => encoder.encode(&value as &dyn erased_serde::Serialize, &mut headers),
        };
        match encoded {
            Ok(bytes) => {
                let mut part = Part::bytes(bytes);
                part.content_type = headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_owned);
                self.push_part(name, part);
            }
            Err(e) => self.fail(e),
        }
    }

    /// Encodes the body as `application/x-www-form-urlencoded`.
    pub fn form<T: Serialize + ?Sized>(&mut self, value: &T) {
        match serde_urlencoded::to_string(value) {
            Ok(text) => {
                crate::codec::set_content_type(
                    &mut self.headers,
                    "application/x-www-form-urlencoded",
                );
                self.body = Bytes::from(text);
            }
            Err(e) => self.fail(Error::request("form could not be encoded").with_source(e)),
        }
    }

    fn slot(&self, index: usize) -> Option<(u32, u32)> {
        match self.slots.get(index) {
            Some(slot) => *slot,
            None => self
                .extra_slots
                .iter()
                .rev()
                .find(|(i, _)| *i == index)
                .map(|(_, s)| *s),
        }
    }

    /// Assembles the request, or returns the first mistake found in the arguments.
    pub(super) fn into_template(
        self,
        prefix: &str,
        service: &'static str,
    ) -> Result<RequestTemplate, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let meta = self.meta;
        let mut path_and_query =
            String::with_capacity(prefix.len() + 32 + self.values.len() + self.query.len());
        path_and_query.push_str(prefix);
        for part in meta.path {
            match *part {
                PathPart::Literal(text) => {
                    let text = if path_and_query.ends_with('/') {
                        text.strip_prefix('/').unwrap_or(text)
                    } else {
                        text
                    };
                    path_and_query.push_str(text);
                }
                PathPart::Var(index) => match self.slot(index) {
                    Some((start, end)) => {
                        path_and_query.push_str(&self.values[start as usize..end as usize]);
                    }
                    None => {
                        let name = path_var_name(meta, index);
                        return Err(Error::request(format!(
                            "path variable `{name}` has no value"
                        )));
                    }
                },
            }
        }
        if !path_and_query.starts_with('/') {
            path_and_query.insert(0, '/');
        }
        if !self.query.is_empty() {
            path_and_query.push('?');
            path_and_query.push_str(&self.query);
        }
        let mut headers = self.headers;
        let (body, stream) = match self.streamed.map(|streamed| *streamed) {
            None => (self.body, None),
            Some(Streamed::Stream(stream)) => (self.body, Some(stream)),
            Some(Streamed::Parts(parts)) => {
                let (content_type, encoded) = crate::multipart::encode(parts)?;
                headers.insert(http::header::CONTENT_TYPE, content_type);
                match encoded {
                    crate::multipart::Encoded::Full(bytes) => (bytes, None),
                    crate::multipart::Encoded::Stream(stream) => (Bytes::new(), Some(stream)),
                }
            }
        };
        Ok(RequestTemplate {
            method: meta.method.as_http(),
            path_and_query,
            headers,
            body,
            stream: stream.map(|stream| Arc::new(OneShot::new(stream))),
            meta,
            service,
        })
    }
}

/// A body that is not one buffer of bytes.
enum Streamed {
    /// A `#[body]` stream or file.
    Stream(BodyStream),
    /// The parts of a `#[multipart]` method, in order.
    Parts(Vec<(&'static str, Part)>),
}

impl fmt::Debug for RequestArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestArgs")
            .field("method_key", &self.meta.key)
            .field("headers", &crate::redact::headers(&self.headers))
            .field("body_len", &self.body.len())
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// The name of path variable `index` as written in the route, for error messages.
fn path_var_name(meta: &MethodMeta, index: usize) -> &'static str {
    let position = meta
        .path
        .iter()
        .filter(|p| matches!(p, PathPart::Var(_)))
        .position(|p| *p == PathPart::Var(index));
    let route = meta.route;
    position
        .and_then(|n| route.split('{').nth(n + 1))
        .and_then(|rest| rest.split('}').next())
        .unwrap_or("?")
}

/// One piece of a `#[headers]` line with variables.
#[derive(Clone, Copy)]
pub enum HeaderPart<'a> {
    /// Text written in the attribute, checked by the macro.
    Literal(&'static str),
    /// A parameter's value.
    Value(&'a dyn Display),
}

impl fmt::Debug for HeaderPart<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderPart::Literal(text) => f.debug_tuple("Literal").field(text).finish(),
            HeaderPart::Value(_) => f.write_str("Value(..)"),
        }
    }
}

/// A `#[header_map]` argument: anything that lists header names and values.
pub trait HeaderMapArg {
    /// Calls `f` with every name and value.
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8]));
}

impl<T: HeaderMapArg + ?Sized> HeaderMapArg for &T {
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8])) {
        (**self).each_header(f);
    }
}

impl<T: HeaderMapArg> HeaderMapArg for Option<T> {
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8])) {
        if let Some(inner) = self {
            inner.each_header(f);
        }
    }
}

impl HeaderMapArg for HeaderMap {
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8])) {
        for (name, value) in self {
            f(name.as_str(), value.as_bytes());
        }
    }
}

impl<K: AsRef<str>, V: AsRef<str>, S> HeaderMapArg for HashMap<K, V, S> {
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8])) {
        for (name, value) in self {
            f(name.as_ref(), value.as_ref().as_bytes());
        }
    }
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderMapArg for BTreeMap<K, V> {
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8])) {
        for (name, value) in self {
            f(name.as_ref(), value.as_ref().as_bytes());
        }
    }
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderMapArg for [(K, V)] {
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8])) {
        for (name, value) in self {
            f(name.as_ref(), value.as_ref().as_bytes());
        }
    }
}

impl<K: AsRef<str>, V: AsRef<str>> HeaderMapArg for Vec<(K, V)> {
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8])) {
        self.as_slice().each_header(f);
    }
}

impl<K: AsRef<str>, V: AsRef<str>, const N: usize> HeaderMapArg for [(K, V); N] {
    fn each_header(&self, f: &mut dyn FnMut(&str, &[u8])) {
        self.as_slice().each_header(f);
    }
}
