//! Reading an OpenAPI 3 document for the comparison: its operations, their parameters (path
//! item's and operation's), bodies and responses, `$ref`s followed.

use serde_json::{Map, Value};

use crate::path::unnamed_vars;

/// A document that cannot be compared.
#[derive(Debug, thiserror::Error)]
#[error("the {side} document is not an OpenAPI 3 document: {reason}")]
pub struct SpecError {
    side: &'static str,
    reason: String,
}

/// A checked OpenAPI 3 document.
pub(super) struct Spec<'a> {
    pub(super) root: &'a Value,
    paths: &'a Map<String, Value>,
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// How many `$ref`s are followed in a row before giving up (a loop of references).
const MAX_REFS: usize = 32;

impl<'a> Spec<'a> {
    pub(super) fn read(root: &'a Value, side: &'static str) -> Result<Self, SpecError> {
        let error = |reason: &str| SpecError {
            side,
            reason: reason.to_owned(),
        };
        let Some(object) = root.as_object() else {
            return Err(error("not a JSON object"));
        };
        if object.contains_key("swagger") {
            return Err(error(
                "Swagger 2.0 is not supported; convert it to OpenAPI 3",
            ));
        }
        match object.get("openapi").and_then(Value::as_str) {
            Some(version) if version.starts_with("3.") => {}
            Some(version) => return Err(error(&format!("unsupported version {version:?}"))),
            None => return Err(error("no `openapi` version")),
        }
        let paths = match object.get("paths") {
            Some(Value::Object(paths)) => paths,
            Some(_) => return Err(error("`paths` is not an object")),
            None => return Err(error("no `paths`")),
        };
        Ok(Spec { root, paths })
    }

    /// Follows `$ref`s (local ones only) to the value they name.
    pub(super) fn resolve(&self, value: &'a Value) -> &'a Value {
        resolve(self.root, value)
    }

    pub(super) fn operations(&self) -> impl Iterator<Item = Op<'a>> + '_ {
        self.paths.iter().flat_map(move |(path, item)| {
            let item = self.resolve(item);
            METHODS.iter().filter_map(move |method| {
                Some(Op {
                    spec_root: self.root,
                    path: path.as_str(),
                    method,
                    item,
                    operation: item.get(*method)?,
                })
            })
        })
    }

    /// The server's operation matching `ours`: same method, same path whatever the
    /// variables' names, also below a `servers` URL's path.
    pub(super) fn find(&self, ours: &Op<'_>) -> Option<Op<'a>> {
        let wanted = normalize(ours.path);
        let bases = self.bases();
        self.operations().find(|theirs| {
            theirs.method == ours.method
                && bases
                    .iter()
                    .any(|base| normalize(&format!("{base}{}", theirs.path)) == wanted)
        })
    }

    /// `""` and the path of each `servers` URL.
    fn bases(&self) -> Vec<String> {
        let mut bases = vec![String::new()];
        let servers = self.root.get("servers").and_then(Value::as_array);
        for url in servers
            .into_iter()
            .flatten()
            .filter_map(|s| s["url"].as_str())
        {
            let path = match url.split_once("://") {
                Some((_, rest)) => rest.find('/').map_or("", |slash| &rest[slash..]),
                None => url,
            };
            let path = path.trim_end_matches('/');
            if !path.is_empty() {
                bases.push(path.to_owned());
            }
        }
        bases
    }
}

/// Follows `$ref`s (local ones only) from `value` to the value they name in `root`; a
/// reference that names nothing, or a loop, stops where it is.
fn resolve<'a>(root: &'a Value, mut value: &'a Value) -> &'a Value {
    for _ in 0..MAX_REFS {
        let Some(target) = value.get("$ref").and_then(Value::as_str) else {
            return value;
        };
        match target
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
        {
            Some(next) => value = next,
            None => return value,
        }
    }
    value
}

/// A path with its variables unnamed and no trailing slash: `/orders/{}`.
fn normalize(path: &str) -> String {
    let unnamed = unnamed_vars(path);
    let trimmed = unnamed.trim_end_matches('/');
    if trimmed.is_empty() {
        "/".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// One operation of a document.
pub(super) struct Op<'a> {
    spec_root: &'a Value,
    pub(super) path: &'a str,
    pub(super) method: &'static str,
    item: &'a Value,
    operation: &'a Value,
}

/// A parameter as the comparison sees it.
pub(super) struct Param<'a> {
    pub(super) name: String,
    pub(super) location: String,
    pub(super) required: bool,
    pub(super) schema: Option<&'a Value>,
}

impl Param<'_> {
    pub(super) fn is(&self, location: &str, name: &str) -> bool {
        self.location == location && self.named(name)
    }

    /// Header names match in any case.
    pub(super) fn named(&self, name: &str) -> bool {
        if self.location == "header" {
            self.name.eq_ignore_ascii_case(name)
        } else {
            self.name == name
        }
    }
}

/// A request body or a response: whether it is required, and its schema per media type.
pub(super) struct Body<'a> {
    pub(super) required: bool,
    pub(super) content: Vec<(String, Option<&'a Value>)>,
}

impl<'a> Body<'a> {
    /// The schema for `media`: the same type, ignoring parameters, or a wildcard.
    pub(super) fn media(&self, media: &str) -> Option<Option<&'a Value>> {
        let essence = |m: &str| {
            m.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        };
        let wanted = essence(media);
        let (kind, _) = wanted.split_once('/').unwrap_or((&wanted, ""));
        self.content
            .iter()
            .find(|(theirs, _)| {
                let theirs = essence(theirs);
                theirs == wanted || theirs == "*/*" || theirs == format!("{kind}/*")
            })
            .map(|(_, schema)| *schema)
    }
}

impl<'a> Op<'a> {
    /// `GET /orders/{id}`.
    pub(super) fn label(&self) -> String {
        format!("{} {}", self.method.to_ascii_uppercase(), self.path)
    }

    fn resolve(&self, value: &'a Value) -> &'a Value {
        resolve(self.spec_root, value)
    }

    /// The path item's parameters, overridden by the operation's of the same place and name.
    pub(super) fn params(&self) -> Vec<Param<'a>> {
        let mut params: Vec<Param<'a>> = Vec::new();
        let lists = [
            self.item.get("parameters"),
            self.operation.get("parameters"),
        ];
        for param in lists
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten()
        {
            let param = self.resolve(param);
            let (Some(name), Some(location)) = (param["name"].as_str(), param["in"].as_str())
            else {
                continue;
            };
            let read = Param {
                name: name.to_owned(),
                location: location.to_owned(),
                required: param["required"].as_bool().unwrap_or(false) || location == "path",
                schema: param.get("schema"),
            };
            params.retain(|p| !p.is(location, name));
            params.push(read);
        }
        params
    }

    /// The parameters, a query parameter whose schema is an object (a `#[query_map]`) as one
    /// parameter per property.
    pub(super) fn flat_params(&self, spec: &Spec<'a>) -> Vec<Param<'a>> {
        let mut flat = Vec::new();
        for param in self.params() {
            let object = param
                .schema
                .map(|schema| spec.resolve(schema))
                .filter(|_| param.location == "query")
                .and_then(|schema| schema.get("properties")?.as_object().map(|p| (schema, p)));
            match object {
                Some((schema, properties)) => {
                    let required = required_names(schema);
                    for (name, property) in properties {
                        flat.push(Param {
                            name: name.clone(),
                            location: "query".to_owned(),
                            required: param.required && required.contains(&name.as_str()),
                            schema: Some(property),
                        });
                    }
                }
                None => flat.push(param),
            }
        }
        flat
    }

    /// The names of the path's variables, in order.
    fn path_vars(&self) -> Vec<&'a str> {
        self.path
            .split('{')
            .skip(1)
            .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
            .collect()
    }

    /// The position of the path variable `name`.
    pub(super) fn path_position(&self, name: &str) -> Option<usize> {
        self.path_vars().iter().position(|var| *var == name)
    }

    /// The name of the path variable at `index`.
    pub(super) fn path_var(&self, index: usize) -> Option<String> {
        self.path_vars().get(index).map(|var| (*var).to_owned())
    }

    pub(super) fn request_body(&self, spec: &Spec<'a>) -> Option<Body<'a>> {
        let body = spec.resolve(self.operation.get("requestBody")?);
        Some(Body {
            required: body["required"].as_bool().unwrap_or(false),
            content: content(body),
        })
    }

    /// The client's 2xx response with a body: its status and content.
    pub(super) fn success(&self, spec: &Spec<'a>) -> Option<(String, Body<'a>)> {
        let responses = self.operation.get("responses")?.as_object()?;
        responses
            .iter()
            .find(|(status, _)| status.starts_with('2'))
            .map(|(status, response)| {
                let response = spec.resolve(response);
                (
                    status.clone(),
                    Body {
                        required: true,
                        content: content(response),
                    },
                )
            })
    }

    /// The server's response for the client's `status`: the same status, else its first 2xx
    /// (a status or `2XX`), else `default`.
    pub(super) fn success_like(&self, spec: &Spec<'a>, status: &str) -> Option<Body<'a>> {
        let responses = self.operation.get("responses")?.as_object()?;
        let response = responses
            .get(status)
            .or_else(|| {
                responses
                    .iter()
                    .find(|(theirs, _)| theirs.starts_with('2'))
                    .map(|(_, response)| response)
            })
            .or_else(|| responses.get("default"))?;
        let response = spec.resolve(response);
        Some(Body {
            required: true,
            content: content(response),
        })
    }
}

fn content(body: &Value) -> Vec<(String, Option<&Value>)> {
    body.get("content")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(media, item)| (media.clone(), item.get("schema")))
        .collect()
}

/// A schema's `required` names.
pub(super) fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}
