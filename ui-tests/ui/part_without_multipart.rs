use feign_core::{feign_client, Error};

#[feign_client("files", url = "http://127.0.0.1:8080")]
pub trait Files {
    #[post("/upload")]
    async fn upload(&self, #[part] title: String) -> Result<(), Error>;
}

fn main() {}
