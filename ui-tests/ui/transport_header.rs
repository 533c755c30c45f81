use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders")]
    #[headers("TE: trailers")]
    async fn list(&self, #[header("Keep-Alive")] keep_alive: &str) -> Result<String, Error>;

    #[get("/orders/{id}")]
    #[headers("Upgrade: websocket", "Proxy-Connection: close", "Trailer: Expires")]
    async fn get(&self, #[path] id: u64) -> Result<String, Error>;
}

fn main() {}
