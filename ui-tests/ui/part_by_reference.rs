use feign_core::multipart::FilePart;
use feign_core::{feign_client, Error, FileBody};

#[feign_client("files", url = "http://127.0.0.1:8080")]
pub trait Files {
    #[post("/upload")]
    #[multipart]
    async fn borrowed_file(&self, #[part] file: &FilePart) -> Result<(), Error>;

    #[put("/upload")]
    async fn borrowed_body(&self, #[body] file: &FileBody) -> Result<(), Error>;
}

fn main() {}
