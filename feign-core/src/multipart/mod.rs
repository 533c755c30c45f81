//! `multipart/form-data` parts: what `#[part]` parameters of a `#[multipart]` method take
//! besides text, bytes and serializable values.
//!
//! Parts are encoded as browsers and Spring's `@RequestPart` / feign-form send them: each has
//! `Content-Disposition: form-data; name="..."` (and `; filename="..."` for files), with `"`,
//! CR and LF in names and file names written `%22`, `%0D` and `%0A` as the HTML standard says,
//! and everything else (non-ASCII included) as UTF-8. The boundary is random per request. A
//! body whose parts are all in memory is sent with `Content-Length` and retried like any
//! buffered body; a file part streams from disk, and the length is still sent when every part
//! knows its own.

mod encode;

use std::path::Path;

use bytes::Bytes;

use crate::Error;
use crate::{BodyStream, FileBody};

pub(crate) use encode::{encode, Encoded};

/// One part of a multipart body: its content, and the file name and content type it is
/// announced with.
///
/// ```
/// use feign_core::multipart::Part;
///
/// let csv = Part::bytes("a,b\n1,2\n").file_name("report.csv").content_type("text/csv");
/// # let _ = csv;
/// ```
#[derive(Debug)]
pub struct Part {
    pub(crate) file_name: Option<String>,
    pub(crate) content_type: Option<String>,
    pub(crate) content: Content,
}

/// What a part holds.
#[derive(Debug)]
pub(crate) enum Content {
    Bytes(Bytes),
    Stream(BodyStream),
}

impl Part {
    /// A text field: no file name and no `Content-Type`, as a browser sends an input's value.
    pub fn text(text: impl Into<String>) -> Part {
        Part {
            file_name: None,
            content_type: None,
            content: Content::Bytes(Bytes::from(text.into())),
        }
    }

    /// Bytes, announced as `application/octet-stream` unless [`content_type`](Part::content_type)
    /// says otherwise.
    pub fn bytes(bytes: impl Into<Bytes>) -> Part {
        Part {
            file_name: None,
            content_type: Some("application/octet-stream".to_owned()),
            content: Content::Bytes(bytes.into()),
        }
    }

    /// A stream (or a [`FileBody`]), sent as it is read; `application/octet-stream` unless set.
    pub fn stream(body: impl Into<BodyStream>) -> Part {
        Part {
            file_name: None,
            content_type: Some("application/octet-stream".to_owned()),
            content: Content::Stream(body.into()),
        }
    }

    /// Sets the `filename` the part is announced with (servers such as Spring treat a part
    /// with a file name as a file).
    pub fn file_name(mut self, file_name: impl Into<String>) -> Part {
        self.file_name = Some(file_name.into());
        self
    }

    /// Sets the part's `Content-Type`; a value that is not a valid header value fails the call
    /// before anything is sent.
    pub fn content_type(mut self, content_type: impl Into<String>) -> Part {
        self.content_type = Some(content_type.into());
        self
    }

    /// The content's length, when known.
    pub fn length(&self) -> Option<u64> {
        match &self.content {
            Content::Bytes(bytes) => Some(bytes.len() as u64),
            Content::Stream(stream) => stream.length(),
        }
    }

    /// What a fallback gets for a part its failed call consumed: the same announcement, and
    /// content that is kept when in memory and unreadable when it was a stream.
    pub(crate) fn kept(&self) -> Part {
        Part {
            file_name: self.file_name.clone(),
            content_type: self.content_type.clone(),
            content: match &self.content {
                Content::Bytes(bytes) => Content::Bytes(bytes.clone()),
                Content::Stream(_) => Content::Stream(BodyStream::spent()),
            },
        }
    }
}

/// A file part streamed from disk, never read whole into memory: its file name is the path's
/// last component and its type `application/octet-stream`, both changeable.
///
/// Opening checks the file before anything is sent: a missing or unreadable file, or a path
/// that is not a regular file, is an error of [`FilePart::open`].
///
/// ```no_run
/// # async fn run() -> Result<(), feign_core::Error> {
/// use feign_core::multipart::FilePart;
///
/// let report = FilePart::open("reports/2024.pdf").await?.content_type("application/pdf");
/// # let _ = report;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct FilePart {
    body: FileBody,
    file_name: String,
    content_type: String,
}

impl FilePart {
    /// Opens the file at `path` and reads its length.
    pub async fn open(path: impl AsRef<Path>) -> Result<FilePart, Error> {
        let path = path.as_ref();
        let body = FileBody::open(path).await?;
        let file_name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(FilePart {
            body,
            file_name,
            content_type: "application/octet-stream".to_owned(),
        })
    }

    /// Sets the `filename` the part is announced with.
    pub fn file_name(mut self, file_name: impl Into<String>) -> FilePart {
        self.file_name = file_name.into();
        self
    }

    /// Sets the part's `Content-Type`.
    pub fn content_type(mut self, content_type: impl Into<String>) -> FilePart {
        self.content_type = content_type.into();
        self
    }

    /// The file's length at opening: the bytes that will be sent.
    pub fn length(&self) -> u64 {
        self.body.length()
    }

    /// A file part that fails when read.
    pub(crate) fn consumed() -> FilePart {
        FilePart {
            body: FileBody::consumed(),
            file_name: String::new(),
            content_type: "application/octet-stream".to_owned(),
        }
    }

    /// What a fallback gets for a file part its failed call consumed.
    pub(crate) fn kept(&self) -> FilePart {
        FilePart {
            body: self.body.spent(),
            file_name: self.file_name.clone(),
            content_type: self.content_type.clone(),
        }
    }
}

/// What a `#[part]` parameter moved into the request can be: a [`Part`], a [`FilePart`], a
/// [`BodyStream`] or a [`FileBody`]. (Text, bytes and serializable values are recognised by
/// their type and need no conversion.)
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a multipart part",
    label = "not a part",
    note = "a #[part] is text (`String`, `&str`, numbers), bytes (`Vec<u8>`, `&[u8]`, `Bytes`), a `Serialize` value, or an owned `Part`, `FilePart`, `BodyStream` or `FileBody`"
)]
pub trait IntoPart {
    /// The part.
    fn into_part(self) -> Part;
}

impl IntoPart for Part {
    fn into_part(self) -> Part {
        self
    }
}

impl IntoPart for FilePart {
    fn into_part(self) -> Part {
        self.into()
    }
}

impl IntoPart for BodyStream {
    fn into_part(self) -> Part {
        Part::stream(self)
    }
}

impl IntoPart for FileBody {
    fn into_part(self) -> Part {
        Part::stream(self)
    }
}

impl From<BodyStream> for Part {
    fn from(body: BodyStream) -> Part {
        Part::stream(body)
    }
}

impl From<FileBody> for Part {
    fn from(file: FileBody) -> Part {
        Part::stream(file)
    }
}

impl From<FilePart> for Part {
    fn from(file: FilePart) -> Part {
        Part {
            file_name: Some(file.file_name),
            content_type: Some(file.content_type),
            content: Content::Stream(file.body.into()),
        }
    }
}
