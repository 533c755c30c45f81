//! Every streaming and typed response form compiles, in a trait that can take a fallback.
use feign_core::{feign_client, Bytes, Error, ResponseEntity, StreamingResponse};

#[derive(serde::Deserialize)]
pub struct Order {
    pub id: u64,
}

#[feign_client("files", url = "http://127.0.0.1:8080")]
pub trait Files {
    #[get("/files/{name}")]
    async fn download(&self, #[path] name: &str) -> Result<StreamingResponse, Error>;

    #[get("/files/{name}")]
    async fn find(&self, #[path] name: &str) -> Result<Option<feign_core::StreamingResponse>, Error>;

    #[get("/orders/{id}")]
    async fn order(&self, #[path] id: u64) -> Result<ResponseEntity<Order>, Error>;

    #[get("/orders/{id}")]
    async fn maybe_order(&self, #[path] id: u64) -> Result<Option<ResponseEntity<Order>>, Error>;

    #[get("/orders")]
    async fn orders(&self) -> Result<ResponseEntity<Vec<Order>>, Error>;

    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64) -> Result<ResponseEntity<()>, Error>;

    #[get("/text")]
    async fn text(&self) -> Result<ResponseEntity<String>, Error>;

    #[get("/text")]
    async fn maybe_text(&self) -> Result<Option<ResponseEntity<String>>, Error>;

    #[get("/raw")]
    async fn raw(&self) -> Result<ResponseEntity<Bytes>, Error>;

    #[get("/raw")]
    async fn maybe_raw(&self) -> Result<Option<ResponseEntity<Bytes>>, Error>;

    #[head("/raw")]
    async fn head(&self) -> Result<Option<ResponseEntity<()>>, Error>;
}

fn main() {
    let files: std::sync::Arc<dyn Files> = std::sync::Arc::new(FilesClient::builder().build().unwrap());
    drop(files);
}
