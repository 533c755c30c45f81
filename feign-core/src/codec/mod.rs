//! Body codecs: the Encoder writes request bodies, the Decoder reads 2xx bodies, the
//! ErrorDecoder turns every other response into an [`Error`](crate::Error).

mod decoder;
mod encoder;
mod error_decoder;

pub use decoder::{decoder_fn, DecodeTarget, Decoder, FnDecoder, JsonDecoder};
pub use encoder::{encoder_fn, Encoder, FnEncoder, FormEncoder, JsonEncoder};
pub use error_decoder::{
    error_decoder_fn, parse_retry_after, DefaultErrorDecoder, ErrorDecoder, FnErrorDecoder,
};

pub(crate) use decoder::{decode_erased, decode_json};
pub(crate) use encoder::set_content_type;
