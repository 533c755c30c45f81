//! The body a transport receives: [`RequestBody`], which a [`Client`](crate::client::Client) is
//! given (buffered bytes, which every attempt can send, or a stream read once).
//!
//! The bodies a method sends, [`BodyStream`] and [`FileBody`], are at the crate root.

pub(crate) mod file;
mod one_shot;
pub(crate) mod stream;

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

use crate::error::BoxError;

pub(crate) use one_shot::OneShot;

use crate::{BodyStream, FileBody};

/// The body of a request as a [`Client`](crate::client::Client) receives it: buffered bytes, which
/// any attempt can send again at the cost of a reference count, or a stream that can be read once
/// ([`BodyStream`], [`FileBody`], a multipart body with a file part).
///
/// It is an [`http_body::Body`] whose [`size_hint`](http_body::Body::size_hint) is exact when
/// the length is known, so hyper-based transports send `Content-Length` then, and chunked
/// otherwise.
pub struct RequestBody {
    kind: Kind,
}

enum Kind {
    Full(Bytes),
    /// The call's stream and the attempt this body belongs to.
    Stream(Arc<OneShot>, u32),
}

impl RequestBody {
    /// An empty body.
    pub fn empty() -> RequestBody {
        RequestBody::from(Bytes::new())
    }

    /// The bytes of a buffered body; `None` for a streamed one.
    pub fn as_bytes(&self) -> Option<&Bytes> {
        match &self.kind {
            Kind::Full(bytes) => Some(bytes),
            Kind::Stream(..) => None,
        }
    }

    /// The bytes of a buffered body, or the body itself back when it is streamed.
    pub fn into_bytes(self) -> Result<Bytes, RequestBody> {
        match self.kind {
            Kind::Full(bytes) => Ok(bytes),
            Kind::Stream(..) => Err(self),
        }
    }

    /// Whether the body is a stream, which can be sent only once.
    pub fn is_streamed(&self) -> bool {
        matches!(self.kind, Kind::Stream(..))
    }

    /// The length in bytes, when known.
    pub fn length(&self) -> Option<u64> {
        match &self.kind {
            Kind::Full(bytes) => Some(bytes.len() as u64),
            Kind::Stream(shared, _) => shared.length(),
        }
    }

    /// A copy for another attempt: cheap for a buffered body, `None` for a stream.
    pub fn try_clone(&self) -> Option<RequestBody> {
        self.as_bytes().cloned().map(RequestBody::from)
    }

    /// Attempt `attempt`'s body, reading the call's shared stream.
    pub(crate) fn shared(shared: Arc<OneShot>, attempt: u32) -> RequestBody {
        RequestBody {
            kind: Kind::Stream(shared, attempt),
        }
    }
}

impl Default for RequestBody {
    fn default() -> RequestBody {
        RequestBody::empty()
    }
}

impl From<Bytes> for RequestBody {
    fn from(bytes: Bytes) -> RequestBody {
        RequestBody {
            kind: Kind::Full(bytes),
        }
    }
}

impl From<Vec<u8>> for RequestBody {
    fn from(bytes: Vec<u8>) -> RequestBody {
        RequestBody::from(Bytes::from(bytes))
    }
}

impl From<String> for RequestBody {
    fn from(text: String) -> RequestBody {
        RequestBody::from(Bytes::from(text))
    }
}

impl From<&'static str> for RequestBody {
    fn from(text: &'static str) -> RequestBody {
        RequestBody::from(Bytes::from_static(text.as_bytes()))
    }
}

impl From<BodyStream> for RequestBody {
    fn from(stream: BodyStream) -> RequestBody {
        let shared = Arc::new(OneShot::new(stream));
        shared.next_attempt().unwrap_or_default()
    }
}

impl From<FileBody> for RequestBody {
    fn from(file: FileBody) -> RequestBody {
        RequestBody::from(BodyStream::from(file))
    }
}

impl http_body::Body for RequestBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match &mut self.get_mut().kind {
            Kind::Full(bytes) if bytes.is_empty() => Poll::Ready(None),
            Kind::Full(bytes) => Poll::Ready(Some(Ok(Frame::data(std::mem::take(bytes))))),
            Kind::Stream(shared, attempt) => shared
                .poll_chunk(*attempt, cx)
                .map(|chunk| chunk.map(|chunk| chunk.map(Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(bytes) => bytes.is_empty(),
            Kind::Stream(shared, _) => shared.is_done(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.len() as u64),
            Kind::Stream(shared, _) => match shared.length() {
                Some(length) if !shared.started() => SizeHint::with_exact(length),
                _ => SizeHint::default(),
            },
        }
    }
}

impl fmt::Debug for RequestBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Full(bytes) => f
                .debug_struct("RequestBody")
                .field("length", &bytes.len())
                .finish(),
            Kind::Stream(shared, _) => f
                .debug_struct("RequestBody")
                .field("streamed", &true)
                .field("length", &shared.length())
                .finish(),
        }
    }
}
