//! `compare`: a client's document against server specs, one disagreement at a time.

// The types and the trait are described here, never called or read.
#![allow(dead_code)]

use feign_core::{feign_client, Error};
use feign_openapi::{compare, Mismatch, MismatchKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Deserialize, JsonSchema)]
struct Order {
    id: u64,
    item: String,
    note: Option<String>,
    status: Status,
}

#[derive(Deserialize, JsonSchema)]
enum Status {
    Open,
    Shipped,
}

#[derive(Serialize, JsonSchema)]
struct NewOrder {
    item: String,
    quantity: u32,
}

#[feign_client("order-service", path = "/api")]
trait Orders {
    #[get("/orders/{id}")]
    async fn get(&self, #[path] id: u64, #[query] expand: Option<bool>) -> Result<Order, Error>;

    #[post("/orders")]
    async fn create(
        &self,
        #[body] order: &NewOrder,
        #[header("X-Request-Id")] rid: &str,
    ) -> Result<Order, Error>;

    #[delete("/orders/{id}")]
    async fn delete(&self, #[path] id: u64) -> Result<(), Error>;
}

/// What a Spring service publishes for the same API (springdoc's OpenAPI 3.0 shape): its own
/// names for path variables, the `/api` prefix in its server URL, `*/*` responses.
fn server() -> Value {
    json!({
        "openapi": "3.0.1",
        "info": { "title": "orders", "version": "v1" },
        "servers": [{ "url": "http://localhost:8080/api" }],
        "paths": {
            "/orders/{orderId}": {
                "parameters": [
                    { "name": "orderId", "in": "path", "required": true,
                      "schema": { "type": "integer", "format": "int64" } }
                ],
                "get": {
                    "parameters": [
                        { "name": "expand", "in": "query", "schema": { "type": "boolean" } },
                        { "name": "Accept", "in": "header", "required": true, "schema": { "type": "string" } }
                    ],
                    "responses": { "200": { "description": "OK", "content": {
                        "*/*": { "schema": { "$ref": "#/components/schemas/Order" } } } } }
                },
                "delete": { "responses": { "204": { "description": "No Content" } } }
            },
            "/orders": {
                "post": {
                    "parameters": [
                        { "name": "X-Request-Id", "in": "header", "schema": { "type": "string" } }
                    ],
                    "requestBody": { "required": true, "content": { "application/json": {
                        "schema": { "$ref": "#/components/schemas/NewOrder" } } } },
                    "responses": { "201": { "description": "Created", "content": {
                        "application/json": { "schema": { "$ref": "#/components/schemas/Order" } } } } }
                }
            }
        },
        "components": { "schemas": {
            "Order": { "type": "object", "required": ["id", "item", "status"], "properties": {
                "id": { "type": "integer", "format": "int64" },
                "item": { "type": "string" },
                "note": { "type": "string", "nullable": true },
                "status": { "type": "string", "enum": ["Open", "Shipped"] },
                "created": { "type": "string", "format": "date-time" }
            } },
            "NewOrder": { "type": "object", "required": ["item"], "properties": {
                "item": { "type": "string" },
                "quantity": { "type": "integer", "format": "int32" }
            } }
        } }
    })
}

fn client() -> Value {
    OrdersClient::openapi().to_json()
}

fn against(server: &Value) -> Vec<Mismatch> {
    compare(&client(), server).unwrap()
}

/// The mismatches as `operation | at | kind`, for exact assertions.
fn found(server: &Value) -> Vec<(String, String, MismatchKind)> {
    against(server)
        .into_iter()
        .map(|mismatch| (mismatch.operation, mismatch.at, mismatch.kind))
        .collect()
}

fn one(operation: &str, at: &str, kind: MismatchKind) -> Vec<(String, String, MismatchKind)> {
    vec![(operation.to_owned(), at.to_owned(), kind)]
}

fn changed(edit: impl FnOnce(&mut Value)) -> Value {
    let mut server = server();
    edit(&mut server);
    server
}

const GET: &str = "GET /api/orders/{id}";
const POST: &str = "POST /api/orders";

#[test]
fn a_server_that_agrees_has_no_mismatch() {
    assert_eq!(against(&server()), vec![]);
    // Itself, too.
    assert_eq!(compare(&client(), &client()).unwrap(), vec![]);
}

#[test]
fn a_missing_operation_is_reported() {
    let server = changed(|s| {
        s["paths"]["/orders/{orderId}"]
            .as_object_mut()
            .unwrap()
            .remove("delete");
    });
    let found = against(&server);
    assert_eq!(
        found.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["DELETE /api/orders/{id}: the server has no such operation"]
    );
    // Without the server URL's path, no operation matches.
    let unprefixed = changed(|s| s["servers"] = json!([{ "url": "http://localhost:8080" }]));
    assert_eq!(against(&unprefixed).len(), 3);
}

#[test]
fn parameters_missing_elsewhere_or_required_are_reported() {
    let elsewhere = changed(|s| {
        s["paths"]["/orders/{orderId}"]["get"]["parameters"][0]["in"] = json!("header");
    });
    assert_eq!(
        found(&elsewhere),
        one(
            GET,
            "parameter expand (query)",
            MismatchKind::ParameterElsewhere {
                server: "header".into()
            }
        )
    );
    let renamed = changed(|s| {
        s["paths"]["/orders/{orderId}"]["get"]["parameters"][0] = json!({ "name": "view", "in": "query", "required": true, "schema": { "type": "string" } });
    });
    assert_eq!(
        found(&renamed),
        [
            one(
                GET,
                "parameter expand (query)",
                MismatchKind::UnknownParameter
            ),
            one(
                GET,
                "parameter view (query)",
                MismatchKind::RequiredParameter
            ),
        ]
        .concat()
    );
    let required = changed(|s| {
        s["paths"]["/orders/{orderId}"]["get"]["parameters"][0]["required"] = json!(true);
    });
    assert_eq!(
        found(&required),
        one(GET, "parameter expand (query)", MismatchKind::MayBeOmitted)
    );
    // Header names match in any case.
    let lower =
        changed(|s| s["paths"]["/orders"]["post"]["parameters"][0]["name"] = json!("x-request-id"));
    assert_eq!(found(&lower), vec![]);
}

#[test]
fn parameter_types_are_compared() {
    let server = changed(|s| {
        s["paths"]["/orders/{orderId}"]["parameters"][0]["schema"] = json!({ "type": "string" });
    });
    let retyped = || MismatchKind::Type {
        client: "integer".into(),
        server: "string".into(),
    };
    // The path item's parameter: both operations on it.
    assert_eq!(
        found(&server),
        [
            one(GET, "parameter id (path)", retyped()),
            one("DELETE /api/orders/{id}", "parameter id (path)", retyped()),
        ]
        .concat()
    );
}

#[test]
fn response_properties_the_client_reads_are_compared() {
    let retyped = changed(|s| {
        s["components"]["schemas"]["Order"]["properties"]["item"] = json!({ "type": "integer" });
    });
    // The client's 200 against the server's 201 for the POST.
    assert_eq!(
        found(&retyped),
        [POST, GET]
            .iter()
            .flat_map(|op| {
                one(
                    op,
                    "response 200 body .item",
                    MismatchKind::Type {
                        client: "string".into(),
                        server: "integer".into(),
                    },
                )
            })
            .collect::<Vec<_>>()
    );
    let optional =
        changed(|s| s["components"]["schemas"]["Order"]["required"] = json!(["id", "status"]));
    assert_eq!(
        found(&optional),
        [
            one(
                POST,
                "response 200 body .item",
                MismatchKind::OptionalProperty
            ),
            one(
                GET,
                "response 200 body .item",
                MismatchKind::OptionalProperty
            ),
        ]
        .concat()
    );
    let gone = changed(|s| {
        let order = &mut s["components"]["schemas"]["Order"];
        order["properties"].as_object_mut().unwrap().remove("item");
        order["required"] = json!(["id", "status"]);
    });
    assert_eq!(
        found(&gone)[0],
        one(
            POST,
            "response 200 body .item",
            MismatchKind::MissingProperty
        )[0]
    );
    let more_states = changed(|s| {
        s["components"]["schemas"]["Order"]["properties"]["status"]["enum"] =
            json!(["Open", "Shipped", "Lost"]);
    });
    assert_eq!(
        found(&more_states)[0],
        one(
            POST,
            "response 200 body .status",
            MismatchKind::EnumValue {
                value: "\"Lost\"".into()
            }
        )[0]
    );
    // Fewer states than the client knows, a nullable field the client reads as `Option`, and
    // properties the client ignores are fine.
    let fewer = changed(|s| {
        s["components"]["schemas"]["Order"]["properties"]["status"]["enum"] = json!(["Open"]);
    });
    assert_eq!(found(&fewer), vec![]);
    let null_id = changed(|s| {
        s["components"]["schemas"]["Order"]["properties"]["id"]["nullable"] = json!(true);
    });
    assert_eq!(
        found(&null_id)[0],
        one(
            POST,
            "response 200 body .id",
            MismatchKind::Type {
                client: "integer".into(),
                server: "integer or null".into()
            }
        )[0]
    );
}

#[test]
fn request_bodies_are_compared() {
    let needs_more = changed(|s| {
        let new_order = &mut s["components"]["schemas"]["NewOrder"];
        new_order["required"] = json!(["item", "priority"]);
        new_order["properties"]["priority"] = json!({ "type": "integer" });
    });
    assert_eq!(
        found(&needs_more),
        one(
            POST,
            "request body .priority",
            MismatchKind::MissingProperty
        )
    );
    let narrower = changed(|s| {
        s["components"]["schemas"]["NewOrder"]["properties"]["quantity"] =
            json!({ "type": "string" });
    });
    assert_eq!(
        found(&narrower),
        one(
            POST,
            "request body .quantity",
            MismatchKind::Type {
                client: "integer".into(),
                server: "string".into()
            }
        )
    );
    let no_body = changed(|s| {
        s["paths"]["/orders"]["post"]
            .as_object_mut()
            .unwrap()
            .remove("requestBody");
    });
    assert_eq!(
        found(&no_body),
        one(POST, "request body", MismatchKind::UnexpectedBody)
    );
    let xml = changed(|s| {
        let content = &mut s["paths"]["/orders"]["post"]["requestBody"]["content"];
        *content = json!({ "application/xml": content["application/json"].clone() });
    });
    assert_eq!(
        found(&xml),
        one(
            POST,
            "request body",
            MismatchKind::MediaType {
                client: "application/json".into(),
                server: vec!["application/xml".into()],
            }
        )
    );
    let delete_body = changed(|s| {
        s["paths"]["/orders/{orderId}"]["delete"]["requestBody"] =
            json!({ "required": true, "content": { "application/json": { "schema": {} } } });
    });
    assert_eq!(
        found(&delete_body),
        one(
            "DELETE /api/orders/{id}",
            "request body",
            MismatchKind::RequiredBody
        )
    );
}

#[test]
fn documents_that_are_not_openapi_3_are_errors() {
    let client = client();
    for (server, reason) in [
        (json!([]), "not a JSON object"),
        (json!({ "swagger": "2.0", "paths": {} }), "Swagger 2.0"),
        (
            json!({ "openapi": "4.0.0", "paths": {} }),
            "unsupported version",
        ),
        (json!({ "openapi": "3.1.0" }), "no `paths`"),
    ] {
        let error = compare(&client, &server).unwrap_err().to_string();
        assert!(
            error.starts_with("the server document is not an OpenAPI 3 document"),
            "{error}"
        );
        assert!(error.contains(reason), "{error}");
    }
    // A reference loop ends the walk instead of the process.
    let looped = changed(|s| {
        s["components"]["schemas"]["Order"] = json!({ "$ref": "#/components/schemas/Order" });
    });
    let _ = against(&looped);
}
