use feign_core::{feign_client, Error, Response, ResponseEntity, StreamingResponse};

#[derive(serde::Deserialize)]
pub struct Order {
    pub id: u64,
}

#[feign_client("files", url = "http://127.0.0.1:8080")]
pub trait Files {
    #[get("/files/{name}")]
    async fn typed_stream(&self, #[path] name: &str) -> Result<StreamingResponse<Order>, Error>;

    #[get("/files")]
    async fn many_streams(&self) -> Result<Vec<StreamingResponse>, Error>;

    #[get("/files/{name}")]
    async fn entity_of_stream(&self, #[path] name: &str)
        -> Result<ResponseEntity<StreamingResponse>, Error>;

    #[get("/files/{name}")]
    async fn entity_of_response(&self, #[path] name: &str) -> Result<ResponseEntity<Response>, Error>;

    #[get("/orders/{id}")]
    async fn bare_entity(&self, #[path] id: u64) -> Result<ResponseEntity, Error>;

    #[get("/orders/{id}")]
    async fn nested_entity(&self, #[path] id: u64) -> Result<Option<Option<ResponseEntity<Order>>>, Error>;
}

fn main() {}
