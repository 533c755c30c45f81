use feign_core::{feign_client, Error};

pub struct Report {
    pub pages: u32,
}

#[feign_client("files", url = "http://127.0.0.1:8080")]
pub trait Files {
    #[post("/upload")]
    #[multipart]
    async fn not_serialize(&self, #[part] report: &Report) -> Result<(), Error>;
}

fn main() {}
