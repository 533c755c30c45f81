//! `FileBody`: a file sent as a request body, read in chunks while it goes out.

use std::path::Path;
use std::sync::Arc;

use futures_util::TryStreamExt;
use tokio::fs::File;

use super::stream::BodyStream;
use crate::Error;

/// Bytes read from a file at a time.
const CHUNK: usize = 64 * 1024;

/// A file sent as a `#[body]` (or inside a multipart [`FilePart`](crate::multipart::FilePart)),
/// read from disk while it is sent, never whole in memory, with `Content-Length` set to its
/// length at opening.
///
/// Opening checks what can be checked before anything is sent: a missing or unreadable file, or
/// a path that is not a regular file, is an error of [`FileBody::open`]. A file that shrinks or
/// grows while it is sent fails the call.
pub struct FileBody {
    pub(crate) stream: BodyStream,
    /// The path as given, for errors and `Debug`.
    pub(crate) name: Arc<str>,
}

impl FileBody {
    /// Opens the file at `path` and reads its length.
    pub async fn open(path: impl AsRef<Path>) -> Result<FileBody, Error> {
        let path = path.as_ref();
        let name: Arc<str> = Arc::from(path.display().to_string());
        let file = File::open(path).await.map_err(|e| {
            Error::request(format!("file `{name}` could not be opened")).with_source(e)
        })?;
        FileBody::with_name(file, name).await
    }

    /// Sends an already open file, from its current position to its end as measured now.
    pub async fn from_file(file: File) -> Result<FileBody, Error> {
        FileBody::with_name(file, Arc::from("<open file>")).await
    }

    async fn with_name(file: File, name: Arc<str>) -> Result<FileBody, Error> {
        let metadata = file.metadata().await.map_err(|e| {
            Error::request(format!("file `{name}` could not be read")).with_source(e)
        })?;
        if !metadata.is_file() {
            return Err(Error::request(format!("`{name}` is not a regular file")));
        }
        let mut file = file;
        let position = tokio::io::AsyncSeekExt::stream_position(&mut file)
            .await
            .map_err(|e| {
                Error::request(format!("file `{name}` could not be read")).with_source(e)
            })?;
        let length = metadata.len().saturating_sub(position);
        let shown = name.clone();
        let chunks = tokio_util::io::ReaderStream::with_capacity(file, CHUNK).map_err(move |e| {
            std::io::Error::new(e.kind(), format!("file `{shown}` could not be read: {e}"))
        });
        Ok(FileBody {
            stream: BodyStream::sized(chunks, length),
            name,
        })
    }

    /// The number of bytes that will be sent.
    pub fn length(&self) -> u64 {
        self.stream.length.unwrap_or_default()
    }

    /// A file body that fails when read.
    pub(crate) fn consumed() -> FileBody {
        FileBody {
            stream: BodyStream::spent(),
            name: Arc::from("<consumed>"),
        }
    }

    /// The body a fallback gets for a file its failed call consumed: same name, unreadable.
    pub(crate) fn spent(&self) -> FileBody {
        FileBody {
            stream: BodyStream::spent(),
            name: self.name.clone(),
        }
    }
}

/// An open file sent from its current position, chunked (its length is not read: use
/// [`FileBody::from_file`] for `Content-Length`).
impl From<File> for BodyStream {
    fn from(file: File) -> BodyStream {
        BodyStream::new(tokio_util::io::ReaderStream::with_capacity(file, CHUNK))
    }
}

impl From<FileBody> for BodyStream {
    fn from(file: FileBody) -> BodyStream {
        file.stream
    }
}

impl std::fmt::Debug for FileBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileBody")
            .field("path", &self.name)
            .field("length", &self.stream.length)
            .finish()
    }
}
