//! The default size caps of every client, which [`Builder::max_response_bytes`],
//! [`Builder::max_request_target_bytes`] and [`Builder::max_header_bytes`] change.
//!
//! [`Builder::max_response_bytes`]: crate::Builder::max_response_bytes
//! [`Builder::max_request_target_bytes`]: crate::Builder::max_request_target_bytes
//! [`Builder::max_header_bytes`]: crate::Builder::max_header_bytes

/// Default cap on a response body, before and after decompression: 10 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 10 * 1024 * 1024;
/// Default cap on the request target (path and query): 8 KiB.
pub const DEFAULT_MAX_REQUEST_TARGET_BYTES: usize = 8 * 1024;
/// Default cap on the request headers: 64 KiB.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;
