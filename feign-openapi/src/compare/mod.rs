//! The client's document held against a server's: operations, parameters and bodies.

mod schema;
mod spec;

use std::fmt;

use serde_json::Value;

use schema::{Compat, Side};
use spec::{Op, Spec};

pub use spec::SpecError;

/// One way the client's expectations and the server's spec disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The client's operation: `GET /api/orders/{id}`.
    pub operation: String,
    /// Where in it: `parameter id (query)`, `request body .item`, `response 200 body .lines[]`;
    /// empty for the operation itself.
    pub at: String,
    /// What disagrees.
    pub kind: MismatchKind,
}

/// What a [`Mismatch`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MismatchKind {
    /// The server has no operation of this path and method.
    MissingOperation,
    /// The client sends a parameter the server does not take.
    UnknownParameter,
    /// The server takes the parameter in another place (`query`, `header`...).
    ParameterElsewhere {
        /// Where the server takes it.
        server: String,
    },
    /// The server requires a parameter the client never sends.
    RequiredParameter,
    /// The server requires what the client may leave out (an `Option`).
    MayBeOmitted,
    /// The two schemas allow different types.
    Type {
        /// The client's types: `integer`, `string or null`.
        client: String,
        /// The server's types.
        server: String,
    },
    /// The reader requires an object property the writer never writes (the client reads
    /// response bodies, the server request bodies).
    MissingProperty,
    /// The reader requires an object property the writer may leave out.
    OptionalProperty,
    /// The writer may write an enum value the reader does not know.
    EnumValue {
        /// The value, as JSON.
        value: String,
    },
    /// The client sends a body where the server takes none.
    UnexpectedBody,
    /// The server requires a body the client does not always send.
    RequiredBody,
    /// The server does not take or send the client's media type.
    MediaType {
        /// The client's.
        client: String,
        /// The server's.
        server: Vec<String>,
    },
    /// The client decodes a body the server does not describe.
    MissingResponseBody,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.operation)?;
        if !self.at.is_empty() {
            write!(f, ", {}", self.at)?;
        }
        f.write_str(": ")?;
        match &self.kind {
            MismatchKind::MissingOperation => f.write_str("the server has no such operation"),
            MismatchKind::UnknownParameter => f.write_str("the server takes no such parameter"),
            MismatchKind::ParameterElsewhere { server } => {
                write!(f, "the server takes it in {server}")
            }
            MismatchKind::RequiredParameter => {
                f.write_str("the server requires it and the client never sends it")
            }
            MismatchKind::MayBeOmitted => {
                f.write_str("the server requires it and the client may leave it out")
            }
            MismatchKind::Type { client, server } => {
                write!(f, "the client has {client}, the server {server}")
            }
            MismatchKind::MissingProperty => {
                f.write_str("required by the reader, never written by the writer")
            }
            MismatchKind::OptionalProperty => {
                f.write_str("required by the reader, optional for the writer")
            }
            MismatchKind::EnumValue { value } => {
                write!(f, "the value {value} is unknown to the reader")
            }
            MismatchKind::UnexpectedBody => f.write_str("the server takes no request body"),
            MismatchKind::RequiredBody => {
                f.write_str("the server requires a request body the client does not always send")
            }
            MismatchKind::MediaType { client, server } => write!(
                f,
                "the client has {client}, the server {}",
                if server.is_empty() {
                    "none".to_owned()
                } else {
                    server.join(", ")
                }
            ),
            MismatchKind::MissingResponseBody => {
                f.write_str("the client decodes a body the server does not describe")
            }
        }
    }
}

/// Every [`Mismatch`] between the client's document (`OpenApi::to_json`) and the server's
/// published OpenAPI 3.0 or 3.1 spec. Paths match whatever their variables are named, also
/// below the path of the server's `servers` URL; parameters match by location and name (path
/// parameters by position, header names in any case, a `#[query_map]` object by its
/// properties); schemas are followed through local `$ref`s. A document that is not OpenAPI 3
/// is an error.
pub fn compare(client: &Value, server: &Value) -> Result<Vec<Mismatch>, SpecError> {
    let client = Spec::read(client, "client")?;
    let server = Spec::read(server, "server")?;
    let mut found = Vec::new();
    for op in client.operations() {
        let mut report = |at: String, kind: MismatchKind| {
            found.push(Mismatch {
                operation: op.label(),
                at,
                kind,
            });
        };
        match server.find(&op) {
            None => report(String::new(), MismatchKind::MissingOperation),
            Some(theirs) => {
                let compat = Compat::new(&client, &server);
                parameters(&compat, &op, &theirs, &mut report);
                request_body(&compat, &op, &theirs, &mut report);
                response_body(&compat, &op, &theirs, &mut report);
            }
        }
    }
    Ok(found)
}

type Report<'r> = dyn FnMut(String, MismatchKind) + 'r;

fn parameters(compat: &Compat<'_>, ours: &Op<'_>, theirs: &Op<'_>, report: &mut Report<'_>) {
    let server_params = theirs.params();
    let mut matched = Vec::new();
    for param in ours.flat_params(compat.client()) {
        let at = format!("parameter {} ({})", param.name, param.location);
        let found = if param.location == "path" {
            ours.path_position(&param.name)
                .and_then(|index| theirs.path_var(index))
                .and_then(|name| server_params.iter().position(|p| p.is("path", &name)))
        } else {
            server_params
                .iter()
                .position(|p| p.is(&param.location, &param.name))
        };
        let Some(index) = found else {
            match server_params.iter().find(|p| p.named(&param.name)) {
                Some(elsewhere) => report(
                    at,
                    MismatchKind::ParameterElsewhere {
                        server: elsewhere.location.clone(),
                    },
                ),
                None if param.location == "path" => {}
                None => report(at, MismatchKind::UnknownParameter),
            }
            continue;
        };
        matched.push(index);
        let server_param = &server_params[index];
        if server_param.required && !param.required {
            report(at.clone(), MismatchKind::MayBeOmitted);
        }
        if let (Some(ours), Some(theirs)) = (param.schema, server_param.schema) {
            compat.check(ours, theirs, Side::ClientWrites, &at, report);
        }
    }
    for (index, param) in server_params.iter().enumerate() {
        let ignored = param.location == "header"
            && ["accept", "content-type", "authorization"]
                .contains(&param.name.to_ascii_lowercase().as_str());
        if param.required && !matched.contains(&index) && !ignored && param.location != "path" {
            report(
                format!("parameter {} ({})", param.name, param.location),
                MismatchKind::RequiredParameter,
            );
        }
    }
}

fn request_body(compat: &Compat<'_>, ours: &Op<'_>, theirs: &Op<'_>, report: &mut Report<'_>) {
    let at = "request body".to_owned();
    match (
        ours.request_body(compat.client()),
        theirs.request_body(compat.server()),
    ) {
        (None, Some(body)) if body.required => report(at, MismatchKind::RequiredBody),
        (None, _) => {}
        (Some(_), None) => report(at, MismatchKind::UnexpectedBody),
        (Some(mine), Some(body)) => {
            if body.required && !mine.required {
                report(at.clone(), MismatchKind::RequiredBody);
            }
            for (media, schema) in &mine.content {
                match body.media(media) {
                    None => report(
                        at.clone(),
                        MismatchKind::MediaType {
                            client: media.clone(),
                            server: body.content.iter().map(|(m, _)| m.clone()).collect(),
                        },
                    ),
                    Some(theirs) => {
                        if let (Some(ours), Some(theirs)) = (schema, theirs) {
                            compat.check(ours, theirs, Side::ClientWrites, &at, report);
                        }
                    }
                }
            }
        }
    }
}

fn response_body(compat: &Compat<'_>, ours: &Op<'_>, theirs: &Op<'_>, report: &mut Report<'_>) {
    let Some((status, mine)) = ours.success(compat.client()) else {
        return;
    };
    let at = format!("response {status} body");
    for (media, schema) in &mine.content {
        let Some(schema) = schema else { continue };
        let Some(body) = theirs.success_like(compat.server(), &status) else {
            report(at.clone(), MismatchKind::MissingResponseBody);
            continue;
        };
        match body.media(media) {
            None if body.content.is_empty() => {
                report(at.clone(), MismatchKind::MissingResponseBody);
            }
            None => report(
                at.clone(),
                MismatchKind::MediaType {
                    client: media.clone(),
                    server: body.content.iter().map(|(m, _)| m.clone()).collect(),
                },
            ),
            Some(Some(theirs)) => compat.check(schema, theirs, Side::ServerWrites, &at, report),
            Some(None) => {}
        }
    }
}
