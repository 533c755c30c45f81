//! One `files` instance: an HTTPS axum server on an ephemeral 127.0.0.1 port, registered with
//! the registry by its secure port (so callers use `https://`), storing files in a directory
//! every instance shares, as instances behind one volume or object store would.
//!
//! - `PUT /files/{name}`: the body, streamed to disk; `201` with the file's [`FileInfo`].
//! - `POST /files`: `multipart/form-data` with a `description` text part and a `file` part
//!   stored under its file name; `201` with its [`FileInfo`].
//! - `GET /files/{name}`: the file, streamed from disk with its `Content-Length`.
//! - `GET /files/{name}/info`: its [`FileInfo`], with an `ETag`.
//!
//! Every answer names the instance in `X-Served-By`.

use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Multipart, Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use feign_eureka::{EurekaClient, InstanceConfig};
use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

use crate::data::Sha256;
use crate::https::{self, Server};
use crate::pki::Pki;
use quickstart::{StepResult, REFRESH};

/// The largest upload an instance accepts.
const MAX_UPLOAD: u64 = 16 << 30;

/// A stored file, as the service describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInfo {
    /// Its name in the store.
    pub name: String,
    /// Its length in bytes.
    pub size: u64,
    /// The SHA-256 of its content, hex, computed by the instance while it was received.
    pub sha256: String,
    /// The instance that received it.
    pub stored_by: String,
    /// The `description` part of a multipart upload.
    pub description: Option<String>,
}

/// A running instance: its server task and its registration.
pub(crate) struct Instance {
    /// `127.0.0.1:PORT`, also its instance id.
    pub(crate) id: String,
    eureka: EurekaClient,
    server: Server,
}

struct Store {
    /// This instance, for `X-Served-By` and `stored_by`.
    id: String,
    /// Contents, one file per name.
    data: PathBuf,
    /// Each file's [`FileInfo`], as JSON.
    meta: PathBuf,
    /// Numbers the partial files of uploads in progress.
    uploads: AtomicU64,
}

impl Instance {
    /// Starts an instance storing into `store` and registers it with the registry at
    /// `eureka_url`, over mutual TLS.
    pub(crate) async fn start(eureka_url: &str, pki: &Pki, store: &FsPath) -> StepResult<Instance> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let id = addr.to_string();
        let shared = Arc::new(Store {
            id: id.clone(),
            data: store.join("data"),
            meta: store.join("meta"),
            uploads: AtomicU64::new(0),
        });
        tokio::fs::create_dir_all(&shared.data).await?;
        tokio::fs::create_dir_all(&shared.meta).await?;
        let app = Router::new()
            .route("/files", post(upload_form))
            .route("/files/{name}", put(upload).get(download))
            .route("/files/{name}/info", get(info))
            .layer(DefaultBodyLimit::max(MAX_UPLOAD as usize))
            .with_state(shared);
        let server = https::serve(listener, https::mutual_tls(pki)?, app);
        let eureka = EurekaClient::builder()
            .service_urls([eureka_url])
            .tls(pki.client_tls())
            .fetch_registry(false)
            .development()
            .instance(
                InstanceConfig::bound_to("files", addr)
                    .instance_id(id.clone())
                    .non_secure_port_enabled(false)
                    .secure_port(addr.port())
                    .lease_renewal_interval(REFRESH)
                    .lease_expiration_duration(REFRESH * 4),
            )
            .start()
            .await?;
        Ok(Instance { id, eureka, server })
    }

    /// Deregisters from the registry, then stops serving.
    pub(crate) async fn stop(self) -> StepResult<()> {
        self.eureka.shutdown().await;
        self.server.stop().await
    }
}

/// A name a file may be stored under: no path separators, no leading dot, at most 128 bytes.
fn valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn failure(status: StatusCode, message: impl Into<String>) -> Response {
    (status, message.into()).into_response()
}

impl Store {
    /// Streams `body` to a partial file, then renames it to `name`: a reader never sees a
    /// half-written file, and a body that breaks off leaves nothing behind.
    async fn save<S, E>(
        &self,
        name: &str,
        mut body: S,
        description: Option<String>,
    ) -> Result<FileInfo, Response>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
    {
        if !valid_name(name) {
            return Err(failure(StatusCode::BAD_REQUEST, "invalid file name"));
        }
        let upload = self.uploads.fetch_add(1, Ordering::Relaxed);
        // Named by instance too: every instance writes into the same directory.
        let instance = self.id.replace(':', "_");
        let partial = self.data.join(format!(".{instance}.{upload}.partial"));
        let saved = async {
            let mut file = tokio::fs::File::create(&partial).await.map_err(internal)?;
            let (mut size, mut sha256) = (0u64, Sha256::new());
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| failure(StatusCode::BAD_REQUEST, e.to_string()))?;
                size += chunk.len() as u64;
                sha256.update(&chunk);
                file.write_all(&chunk).await.map_err(internal)?;
            }
            file.flush().await.map_err(internal)?;
            Ok::<_, Response>((size, sha256.finish()))
        }
        .await;
        let (size, sha256) = match saved {
            Ok(saved) => saved,
            Err(response) => {
                let _ = tokio::fs::remove_file(&partial).await;
                return Err(response);
            }
        };
        let info = FileInfo {
            name: name.to_owned(),
            size,
            sha256,
            stored_by: self.id.clone(),
            description,
        };
        // The content first: a file whose info can be read can be downloaded.
        tokio::fs::rename(&partial, self.data.join(name))
            .await
            .map_err(internal)?;
        let json = serde_json::to_vec(&info).map_err(internal)?;
        tokio::fs::write(self.meta.join(name), json)
            .await
            .map_err(internal)?;
        Ok(info)
    }

    async fn info(&self, name: &str) -> Result<FileInfo, Response> {
        if !valid_name(name) {
            return Err(failure(StatusCode::BAD_REQUEST, "invalid file name"));
        }
        let json = match tokio::fs::read(self.meta.join(name)).await {
            Ok(json) => json,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(failure(StatusCode::NOT_FOUND, "no such file"));
            }
            Err(e) => return Err(internal(e)),
        };
        serde_json::from_slice(&json).map_err(internal)
    }

    /// `response` with `X-Served-By` and, for a file, its `ETag`.
    fn head(&self, mut response: Response, info: Option<&FileInfo>) -> Response {
        let headers = response.headers_mut();
        if let Ok(id) = HeaderValue::from_str(&self.id) {
            headers.insert("x-served-by", id);
        }
        if let Some(etag) =
            info.and_then(|i| HeaderValue::from_str(&format!("\"{}\"", i.sha256)).ok())
        {
            headers.insert(header::ETAG, etag);
        }
        response
    }
}

fn internal(error: impl std::fmt::Display) -> Response {
    failure(StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
}

fn created(store: &Store, saved: Result<FileInfo, Response>) -> Response {
    match saved {
        Ok(info) => store.head(
            (StatusCode::CREATED, Json(&info)).into_response(),
            Some(&info),
        ),
        Err(response) => store.head(response, None),
    }
}

async fn upload(State(store): State<Arc<Store>>, Path(name): Path<String>, body: Body) -> Response {
    let saved = store.save(&name, body.into_data_stream(), None).await;
    created(&store, saved)
}

async fn upload_form(State(store): State<Arc<Store>>, mut form: Multipart) -> Response {
    let mut description = None;
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => return store.head(failure(StatusCode::BAD_REQUEST, e.body_text()), None),
        };
        match field.name() {
            Some("description") => match field.text().await {
                Ok(text) => description = Some(text),
                Err(e) => return store.head(failure(StatusCode::BAD_REQUEST, e.body_text()), None),
            },
            Some("file") => {
                let name = field.file_name().unwrap_or_default().to_owned();
                let saved = store.save(&name, field, description.take()).await;
                return created(&store, saved);
            }
            _ => {}
        }
    }
    store.head(failure(StatusCode::BAD_REQUEST, "no `file` part"), None)
}

async fn download(State(store): State<Arc<Store>>, Path(name): Path<String>) -> Response {
    let info = match store.info(&name).await {
        Ok(info) => info,
        Err(response) => return store.head(response, None),
    };
    let (file, length) = match open(&store.data.join(&name)).await {
        Ok(opened) => opened,
        Err(e) => return store.head(internal(e), None),
    };
    let body = Body::from_stream(tokio_util::io::ReaderStream::with_capacity(file, 64 << 10));
    let response = (
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (header::CONTENT_LENGTH, length.to_string()),
        ],
        body,
    );
    store.head(response.into_response(), Some(&info))
}

/// The file and its length now, which is what will be sent.
async fn open(path: &FsPath) -> std::io::Result<(tokio::fs::File, u64)> {
    let file = tokio::fs::File::open(path).await?;
    let length = file.metadata().await?.len();
    Ok((file, length))
}

async fn info(State(store): State<Arc<Store>>, Path(name): Path<String>) -> Response {
    match store.info(&name).await {
        Ok(info) => store.head(Json(&info).into_response(), Some(&info)),
        Err(response) => store.head(response, None),
    }
}
