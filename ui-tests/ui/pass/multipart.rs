use feign_core::multipart::{FilePart, Part};
use feign_core::{feign_client, BodyStream, Bytes, Error, FileBody};
use serde::Serialize;

#[derive(Serialize)]
pub struct Metadata {
    pub title: String,
}

#[feign_client("files", url = "http://127.0.0.1:8080")]
pub trait Files {
    #[post("/upload")]
    #[multipart]
    async fn upload(
        &self,
        #[part] title: &str,
        #[part("file")] file: FilePart,
        #[part] data: Vec<u8>,
        #[part] borrowed: &[u8],
        #[part] shared: Bytes,
        #[part] meta: &Metadata,
        #[part] count: u64,
        #[part] note: Option<String>,
        #[part] extra: Option<Part>,
        #[part] stream: BodyStream,
        #[part] many: Vec<FilePart>,
        #[part] maybe_many: Option<Vec<Part>>,
    ) -> Result<(), Error>;

    #[put("/raw")]
    async fn raw(&self, #[body] body: BodyStream) -> Result<(), Error>;

    #[put("/file")]
    async fn file(&self, #[body] file: FileBody) -> Result<(), Error>;
}

fn main() {
    let _ = FilesClient::builder();
}
