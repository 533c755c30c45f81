//! Responses read as they arrive. [`StreamingResponse`](crate::StreamingResponse), at the crate
//! root, gives status and headers at once, then a stream of chunks, each within the read
//! timeout; [`StreamingReader`] is the same body as a tokio `AsyncRead`, from
//! [`StreamingResponse::into_async_read`](crate::StreamingResponse::into_async_read).

pub(crate) mod response;

pub use response::reader::StreamingReader;
