//! Body codecs: the [`Encoder`](crate::Encoder) writes request bodies, the
//! [`Decoder`](crate::Decoder) reads 2xx bodies, the [`ErrorDecoder`](crate::ErrorDecoder) turns
//! every other response into an [`Error`](crate::Error). The three traits are at the crate root;
//! this module holds their implementations ([`JsonEncoder`], [`FormEncoder`], [`JsonDecoder`],
//! [`DefaultErrorDecoder`]), the closure adapters and [`parse_retry_after`].

pub(crate) mod decoder;
pub(crate) mod encoder;
pub(crate) mod error_decoder;

pub use decoder::{decoder_fn, DecodeTarget, FnDecoder, JsonDecoder};
pub use encoder::{encoder_fn, FnEncoder, FormEncoder, JsonEncoder};
pub use error_decoder::{error_decoder_fn, parse_retry_after, DefaultErrorDecoder, FnErrorDecoder};

pub(crate) use decoder::{decode_erased, decode_json};
pub(crate) use encoder::set_content_type;
