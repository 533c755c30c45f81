use feign_core::multipart::FilePart;
use feign_core::{feign_client, Error};

#[feign_client("files", url = "http://127.0.0.1:8080")]
pub trait Files {
    // A GET carries no body.
    #[get("/upload")]
    #[multipart]
    async fn on_get(&self, #[part] title: String) -> Result<(), Error>;

    // The parts are the body.
    #[post("/upload")]
    #[multipart]
    async fn with_body(&self, #[part] file: FilePart, #[body] extra: String) -> Result<(), Error>;

    // Nothing to send.
    #[post("/upload")]
    #[multipart]
    async fn no_parts(&self, #[query] id: u64) -> Result<(), Error>;

    // The content type carries the boundary.
    #[post("/upload")]
    #[multipart]
    #[headers("Content-Type: application/json")]
    async fn own_type(&self, #[part] file: FilePart) -> Result<(), Error>;

    #[post("/upload")]
    #[multipart(strict)]
    async fn with_args(&self, #[part("")] file: FilePart) -> Result<(), Error>;
}

fn main() {}
