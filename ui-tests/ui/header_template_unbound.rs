use feign_core::{feign_client, Error};

#[feign_client("items", url = "http://127.0.0.1:8080")]
#[headers("X-Client: {client}")]
pub trait Items {
    #[get("/items")]
    #[headers("X-Api-Version: {version}")]
    async fn list(&self) -> Result<(), Error>;

    #[get("/items")]
    #[headers("X-Api-Version: {version}")]
    async fn unused(&self, #[param] version: u32, #[param] tenant: &str) -> Result<(), Error>;

    #[get("/items")]
    #[headers("X-Ids: {ids}")]
    async fn many(&self, #[param] ids: Vec<u32>) -> Result<(), Error>;
}

fn main() {}
