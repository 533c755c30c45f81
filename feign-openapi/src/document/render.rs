//! The document as JSON: paths and operations, their parameters, bodies and responses, and the
//! schemas they refer to under `components`.

use std::collections::BTreeMap;

use percent_encoding::percent_decode_str;
use schemars::SchemaGenerator;
use serde_json::{json, Map, Value};

use super::OpenApi;
use crate::operation::{Body, Content, Location, Operation, Param, Success};
use crate::path::unnamed_vars;
use crate::response::ErrorResponse;
use crate::schema;

/// The OpenAPI version written.
const OPENAPI_VERSION: &str = "3.1.1";

/// Renders `doc`. Methods sharing a path (whatever its variables are named) and an HTTP method
/// (`get_order` and `try_get` on `GET /orders/{id}`) are one operation: the first names it and
/// its path variables, every one is listed under `x-feign-methods`, a parameter is required
/// only when each of them requires it, and the responses of all are kept.
pub(super) fn render(doc: &OpenApi) -> Value {
    let mut generator = schema::generator();
    // Keyed by the path with its variables unnamed; the first method's path is written.
    let mut paths: BTreeMap<String, (&str, Map<String, Value>)> = BTreeMap::new();
    for (operation, errors) in &doc.operations {
        let rendered = render_operation(&mut generator, operation, errors);
        let (_, item) = paths
            .entry(unnamed_vars(operation.path))
            .or_insert_with(|| (operation.path, Map::new()));
        let method = operation.method.as_str().to_ascii_lowercase();
        match item.get_mut(&method) {
            Some(Value::Object(first)) => merge(first, rendered),
            _ => {
                item.insert(method, Value::Object(rendered));
            }
        }
    }
    let mut info = Map::new();
    info.insert("title".into(), json!(doc.title));
    info.insert("version".into(), json!(doc.version));
    if !doc.description.is_empty() {
        info.insert("description".into(), json!(doc.description));
    }
    let mut root = Map::new();
    root.insert("openapi".into(), json!(OPENAPI_VERSION));
    root.insert("info".into(), Value::Object(info));
    if let Some(url) = &doc.server {
        root.insert("servers".into(), json!([{ "url": url }]));
    }
    let paths: Map<String, Value> = paths
        .into_values()
        .map(|(path, item)| (path.to_owned(), Value::Object(item)))
        .collect();
    root.insert("paths".into(), Value::Object(paths));
    let schemas = generator.take_definitions(true);
    if !schemas.is_empty() {
        root.insert("components".into(), json!({ "schemas": schemas }));
    }
    Value::Object(root)
}

fn render_operation(
    generator: &mut SchemaGenerator,
    operation: &Operation,
    errors: &[ErrorResponse],
) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("operationId".into(), json!(operation.name));
    let doc = operation.doc.trim();
    if let Some((summary, rest)) = doc.split_once('\n').or(Some((doc, ""))) {
        if !summary.trim().is_empty() {
            out.insert("summary".into(), json!(summary.trim()));
        }
        if !rest.trim().is_empty() {
            out.insert("description".into(), json!(rest.trim()));
        }
    }
    let mut params: Vec<Value> = operation
        .params
        .iter()
        .map(|param| render_param(generator, param))
        .collect();
    params.extend(operation.query.iter().map(|(name, value)| {
        let decode = |text: &str| percent_decode_str(text).decode_utf8_lossy().into_owned();
        json!({
            "name": decode(name),
            "in": "query",
            "required": true,
            "schema": { "const": decode(value) },
        })
    }));
    if !params.is_empty() {
        out.insert("parameters".into(), Value::Array(params));
    }
    if let Some(body) = &operation.body {
        out.insert("requestBody".into(), render_body(generator, body));
    }
    let mut responses = Map::new();
    render_success(generator, &operation.success, &mut responses);
    for error in errors {
        let mut response = Map::new();
        response.insert("description".into(), json!(error.description));
        if let Some((media, schema)) = &error.body {
            response.insert(
                "content".into(),
                json!({ media.as_str(): { "schema": schema(generator) } }),
            );
        }
        responses
            .entry(error.status.clone())
            .or_insert(Value::Object(response));
    }
    out.insert("responses".into(), Value::Object(responses));
    out.insert("x-feign-methods".into(), json!([operation.name]));
    out
}

fn render_param(generator: &mut SchemaGenerator, param: &Param) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(param.name));
    out.insert("in".into(), json!(param.location.as_str()));
    out.insert(
        "required".into(),
        json!(param.required || param.location == Location::Path),
    );
    if let Some(separator) = param.separator {
        let style = match separator {
            "|" => "pipeDelimited",
            " " => "spaceDelimited",
            _ => "form",
        };
        out.insert("style".into(), json!(style));
        out.insert("explode".into(), json!(false));
        if !matches!(separator, "," | "|" | " ") {
            out.insert("x-feign-separator".into(), json!(separator));
        }
    }
    out.insert("schema".into(), json!((param.schema)(generator)));
    Value::Object(out)
}

fn render_body(generator: &mut SchemaGenerator, body: &Body) -> Value {
    let schema = match &body.content {
        Content::Schema(schema) => json!(schema(generator)),
        Content::Parts(parts) => {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for part in parts {
                properties.insert(part.name.to_owned(), json!((part.schema)(generator)));
                if part.required {
                    required.push(part.name);
                }
            }
            json!({ "type": "object", "properties": properties, "required": required })
        }
    };
    json!({
        "required": body.required,
        "content": { body.media: { "schema": schema } },
    })
}

fn render_success(
    generator: &mut SchemaGenerator,
    success: &Success,
    out: &mut Map<String, Value>,
) {
    let mut response = Map::new();
    response.insert("description".into(), json!(success.description));
    if let Some((media, schema)) = success.body {
        response.insert(
            "content".into(),
            json!({ media: { "schema": schema(generator) } }),
        );
    }
    out.insert(success.status.to_string(), Value::Object(response));
    if success.not_found_is_none {
        out.insert(
            "404".into(),
            json!({ "description": "not found: the method returns `None`" }),
        );
    }
}

/// Folds a later method's operation on the same path and HTTP method into the first's.
fn merge(first: &mut Map<String, Value>, later: Map<String, Value>) {
    if let (Some(Value::Array(names)), Some(Value::Array(more))) = (
        first.get_mut("x-feign-methods"),
        later.get("x-feign-methods"),
    ) {
        names.extend(more.iter().cloned());
    }
    // The first method's path parameters name the variables; the later's are the same ones.
    let later_params: Vec<&Value> = later
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|param| param["in"] != "path")
        .collect();
    let mut params = first
        .remove("parameters")
        .and_then(|params| match params {
            Value::Array(params) => Some(params),
            _ => None,
        })
        .unwrap_or_default();
    let key = |param: &Value| (param["name"].clone(), param["in"].clone());
    for param in params.iter_mut().filter(|param| param["in"] != "path") {
        let required_by_later = later_params
            .iter()
            .any(|other| key(other) == key(param) && other["required"] == json!(true));
        if !required_by_later {
            param["required"] = json!(false);
        }
    }
    for param in later_params {
        if !params.iter().any(|other| key(other) == key(param)) {
            let mut param = (*param).clone();
            param["required"] = json!(false);
            params.push(param);
        }
    }
    if !params.is_empty() {
        first.insert("parameters".into(), Value::Array(params));
    }
    if let Some(body) = later.get("requestBody") {
        first.entry("requestBody").or_insert_with(|| body.clone());
    }
    if let (Some(Value::Object(responses)), Some(Value::Object(more))) =
        (first.get_mut("responses"), later.get("responses"))
    {
        for (status, response) in more {
            responses
                .entry(status.clone())
                .or_insert_with(|| response.clone());
        }
    }
}
