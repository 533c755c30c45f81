use feign_core::{feign_client, Error};

#[feign_client("search", url = "http://127.0.0.1:8080")]
pub trait Search {
    #[get("/search")]
    async fn search(&self, #[query(format = "semicolons")] tags: Vec<String>) -> Result<(), Error>;

    #[get("/search")]
    async fn typo(&self, #[query("t", fromat = "csv")] tags: Vec<String>) -> Result<(), Error>;
}

fn main() {}
