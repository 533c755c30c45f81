//! The document of a client using every argument role and return type.

// The types and the trait are described here, never called or read.
#![allow(dead_code)]

use std::collections::HashMap;

use feign_core::http::StatusCode;
use feign_core::{feign_client, Bytes, Error, ErrorDecoder, Response, ResponseEntity};
use feign_openapi::{DeclaresResponses, ErrorResponse};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// An order.
#[derive(Debug, Deserialize, JsonSchema)]
struct Order {
    id: u64,
    item: String,
    note: Option<String>,
    lines: Vec<Line>,
}

/// A line of an order.
#[derive(Debug, Deserialize, JsonSchema)]
struct Line {
    sku: String,
    quantity: u32,
}

#[derive(Serialize, JsonSchema)]
struct NewOrder {
    item: String,
}

#[derive(Serialize, JsonSchema)]
struct Filter {
    status: Option<String>,
    limit: u32,
}

#[derive(Serialize, JsonSchema)]
struct Login {
    user: String,
}

/// Serialize only: no JSON Schema.
#[derive(Serialize)]
struct Opaque {
    blob: String,
}

#[derive(Serialize, JsonSchema)]
struct Meta {
    title: String,
}

#[derive(Deserialize, JsonSchema)]
struct Problem {
    title: String,
    status: u16,
}

/// Orders, as the order service serves them.
#[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
#[headers("Accept: application/json")]
trait OrderService {
    /// One order.
    ///
    /// Fails when there is none.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;

    #[get("/orders/{order_id}")]
    async fn try_get(
        &self,
        #[path("order_id")] id: u64,
        #[query] expand: Option<bool>,
    ) -> Result<Option<Order>, Error>;

    #[get("/orders?view=full")]
    async fn search(
        &self,
        #[query("ids", format = "csv")] ids: &[u64],
        #[query] tag: Vec<String>,
        #[query_map] filter: &Filter,
        #[header("X-Request-Id")] rid: &str,
        #[header("X-Trace")] trace: Option<&str>,
    ) -> Result<Vec<Order>, Error>;

    #[post("/orders")]
    #[headers("X-Api-Version: v{version}")]
    async fn create(
        &self,
        #[body] order: &NewOrder,
        #[param] version: u32,
    ) -> Result<ResponseEntity<Order>, Error>;

    #[put("/orders/{id}/note")]
    async fn put_note(&self, #[path] id: u64, #[body] note: String) -> Result<(), Error>;

    #[put("/orders/{id}/blob")]
    async fn put_opaque(&self, #[path] id: u64, #[body] blob: &Opaque) -> Result<Response, Error>;

    #[post("/login")]
    async fn login(&self, #[form] form: &Login) -> Result<String, Error>;

    #[post("/files")]
    #[multipart]
    async fn upload(
        &self,
        #[part] name: String,
        #[part] data: Vec<u8>,
        #[part] meta: Option<Meta>,
    ) -> Result<Bytes, Error>;

    #[delete("/orders/{id}")]
    async fn delete(
        &self,
        #[path] id: u64,
        #[header_map] extra: &HashMap<String, String>,
    ) -> Result<(), Error>;
}

fn document() -> Value {
    OrderServiceClient::openapi().to_json()
}

/// The official OpenAPI 3.1 meta-schema (see `tests/openapi-schema/README.md`).
fn meta_schema() -> Value {
    serde_json::from_str(include_str!("../openapi-schema/oas-3.1.json")).unwrap()
}

/// Every error of `document` against the OpenAPI 3.1 meta-schema, and of each schema in it
/// against JSON Schema 2020-12.
pub(super) fn validation_errors(document: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(&meta_schema()).unwrap();
    let mut errors: Vec<String> = validator
        .iter_errors(document)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    let mut schemas = Vec::new();
    collect_schemas(document, &mut schemas);
    for schema in schemas {
        if let Err(error) = jsonschema::draft202012::meta::validate(schema) {
            errors.push(format!("schema {schema}: {error}"));
        }
    }
    errors
}

/// The Schema Objects of a document: under `schema` keys and `components/schemas`.
fn collect_schemas<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if key == "schema" {
                    out.push(inner);
                } else if key == "schemas" {
                    out.extend(inner.as_object().into_iter().flat_map(|m| m.values()));
                } else {
                    collect_schemas(inner, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_schemas(item, out)),
        _ => {}
    }
}

#[test]
fn the_document_is_valid_openapi_3_1() {
    let document = document();
    assert_eq!(document["openapi"], "3.1.1");
    let errors = validation_errors(&document);
    assert!(errors.is_empty(), "{errors:#?}\n{document:#}");
}

#[test]
fn an_invalid_document_is_caught_by_the_validator() {
    let mut document = document();
    document["paths"]["/api/orders/{id}"]["get"]["responses"]["200"]
        .as_object_mut()
        .unwrap()
        .remove("description");
    document["info"]["version"] = json!(7);
    let errors = validation_errors(&document);
    assert!(errors.len() >= 2, "{errors:#?}");
}

#[test]
fn info_comes_from_the_trait_and_the_crate() {
    let document = document();
    assert_eq!(document["info"]["title"], "order-service");
    assert_eq!(document["info"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        document["info"]["description"],
        "Orders, as the order service serves them."
    );
    assert_eq!(
        document["servers"],
        json!([{ "url": "http://127.0.0.1:8080" }])
    );
    let renamed = OrderServiceClient::openapi()
        .title("Orders")
        .version("2.0.0")
        .server("https://orders.example")
        .to_json();
    assert_eq!(renamed["info"]["title"], "Orders");
    assert_eq!(renamed["info"]["version"], "2.0.0");
    assert_eq!(renamed["servers"][0]["url"], "https://orders.example");
}

#[test]
fn methods_on_one_path_and_method_are_one_operation() {
    let document = document();
    let paths = document["paths"].as_object().unwrap();
    // `try_get` names its variable `order_id`: the same server path all the same.
    assert!(!paths.contains_key("/api/orders/{order_id}"), "{paths:#?}");
    let get = &document["paths"]["/api/orders/{id}"]["get"];
    assert_eq!(get["operationId"], "get_order");
    assert_eq!(get["x-feign-methods"], json!(["get_order", "try_get"]));
    assert_eq!(get["summary"], "One order.");
    assert_eq!(get["description"], "Fails when there is none.");
    assert_eq!(
        get["responses"]["404"]["description"],
        "not found: the method returns `None`"
    );
    assert_eq!(
        get["parameters"],
        json!([
            { "name": "id", "in": "path", "required": true,
              "schema": { "type": "integer", "format": "uint64", "minimum": 0 } },
            { "name": "expand", "in": "query", "required": false, "schema": { "type": "boolean" } },
        ])
    );
}

#[test]
fn parameters_carry_their_roles_and_types() {
    let document = document();
    let search = &document["paths"]["/api/orders"]["get"];
    let params = search["parameters"].as_array().unwrap();
    let by_name = |name: &str| {
        params
            .iter()
            .find(|param| param["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {params:#?}"))
            .clone()
    };
    assert_eq!(
        by_name("ids"),
        json!({ "name": "ids", "in": "query", "required": true, "style": "form", "explode": false,
                "schema": { "type": "array", "items": { "type": "integer", "format": "uint64", "minimum": 0 } } })
    );
    assert_eq!(
        by_name("tag")["schema"],
        json!({ "type": "array", "items": { "type": "string" } })
    );
    assert_eq!(
        by_name("filter")["schema"],
        json!({ "$ref": "#/components/schemas/Filter" })
    );
    assert_eq!(by_name("X-Request-Id")["in"], "header");
    assert_eq!(by_name("X-Request-Id")["required"], true);
    assert_eq!(by_name("X-Trace")["required"], false);
    assert_eq!(
        by_name("view"),
        json!({ "name": "view", "in": "query", "required": true, "schema": { "const": "full" } })
    );
    let create = &document["paths"]["/api/orders"]["post"];
    assert_eq!(
        create["parameters"],
        json!([{ "name": "X-Api-Version", "in": "header", "required": true, "schema": { "type": "string" } }])
    );
    // A header map has no description in OpenAPI: nothing is listed for it.
    assert!(document["paths"]["/api/orders/{id}"]["delete"]
        .get("parameters")
        .is_some_and(|params| params.as_array().unwrap().len() == 1));
}

#[test]
fn bodies_are_described_by_their_media_type_and_schema() {
    let document = document();
    let create = &document["paths"]["/api/orders"]["post"];
    assert_eq!(
        create["requestBody"],
        json!({ "required": true, "content": { "application/json": {
            "schema": { "$ref": "#/components/schemas/NewOrder" } } } })
    );
    assert_eq!(
        create["responses"]["200"]["content"]["application/json"]["schema"],
        json!({ "$ref": "#/components/schemas/Order" })
    );
    let note = &document["paths"]["/api/orders/{id}/note"]["put"];
    assert_eq!(
        note["requestBody"]["content"]["text/plain"]["schema"],
        json!({ "type": "string" })
    );
    assert!(note["responses"]["204"].is_object());
    let opaque = &document["paths"]["/api/orders/{id}/blob"]["put"];
    let described = opaque["requestBody"]["content"]["application/json"]["schema"]["description"]
        .as_str()
        .unwrap();
    assert!(described.contains("Opaque"), "{described}");
    assert!(opaque["responses"]["200"].get("content").is_none());
    let login = &document["paths"]["/api/login"]["post"];
    assert_eq!(
        login["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"],
        json!({ "$ref": "#/components/schemas/Login" })
    );
    assert_eq!(
        login["responses"]["200"]["content"]["text/plain"]["schema"]["type"],
        "string"
    );
    let upload = &document["paths"]["/api/files"]["post"];
    let multipart = &upload["requestBody"]["content"]["multipart/form-data"]["schema"];
    assert_eq!(multipart["required"], json!(["name", "data"]));
    assert_eq!(multipart["properties"]["name"], json!({ "type": "string" }));
    assert_eq!(
        multipart["properties"]["data"]["contentMediaType"],
        "application/octet-stream"
    );
    assert_eq!(
        multipart["properties"]["meta"],
        json!({ "$ref": "#/components/schemas/Meta" })
    );
    let schemas = &document["components"]["schemas"];
    assert_eq!(schemas["Order"]["required"], json!(["id", "item", "lines"]));
    assert_eq!(
        schemas["Order"]["properties"]["lines"]["items"],
        json!({ "$ref": "#/components/schemas/Line" })
    );
}

/// An error decoder of the client that declares, for the document, what it decodes.
struct OrderErrors;

impl ErrorDecoder for OrderErrors {
    fn decode(&self, _method_key: &str, response: Response) -> Error {
        Error::status_error(response.status(), response.headers().clone(), Bytes::new())
    }
}

impl DeclaresResponses for OrderErrors {
    fn declared_responses(&self, method_key: &str) -> Vec<ErrorResponse> {
        let mut declared = vec![ErrorResponse::server_errors("the service failed")];
        if method_key == "OrderService#create" {
            declared.push(
                ErrorResponse::new(StatusCode::UNPROCESSABLE_ENTITY, "the order was refused")
                    .json::<Problem>(),
            );
        }
        declared
    }
}

#[test]
fn an_error_decoder_declares_error_responses() {
    let plain = document();
    assert!(plain["paths"]["/api/orders"]["post"]["responses"]
        .get("5XX")
        .is_none());
    let document = OrderServiceClient::openapi()
        .error_decoder(&OrderErrors)
        .to_json();
    let create = &document["paths"]["/api/orders"]["post"]["responses"];
    assert_eq!(create["5XX"]["description"], "the service failed");
    assert_eq!(
        create["422"],
        json!({ "description": "the order was refused", "content": { "application/json": {
            "schema": { "$ref": "#/components/schemas/Problem" } } } })
    );
    let get = &document["paths"]["/api/orders/{id}"]["get"]["responses"];
    assert!(get.get("422").is_none());
    assert!(document["components"]["schemas"]["Problem"].is_object());
    let errors = validation_errors(&document);
    assert!(errors.is_empty(), "{errors:#?}");
}
