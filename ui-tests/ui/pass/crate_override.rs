//! `crate = "..."` lets a crate re-export feign-core and generate clients through the re-export.
mod platform {
    pub use feign_core as http_client;
}

use platform::http_client::{feign_client, Error};

#[feign_client("inventory", path = "/v1", crate = "platform::http_client")]
pub trait Inventory {
    #[get("/stock/{sku}")]
    async fn stock(&self, #[path] sku: &str) -> Result<u32, Error>;
}

fn main() {
    let _ = InventoryClient::builder();
}
