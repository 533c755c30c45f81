//! The multipart body: a random boundary, each part's head, and the parts' contents in order,
//! as one buffer when all are in memory and as a stream otherwise.

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::stream::{self, StreamExt};
use http::HeaderValue;
use rand::distr::{Alphanumeric, SampleString};

use super::{Content, Part};
use crate::error::BoxError;
use crate::BodyStream;
use crate::Error;

/// Random characters of a boundary: about 238 bits, as long as browsers' and reqwest's.
const BOUNDARY_RANDOM: usize = 40;

/// The encoded body.
pub(crate) enum Encoded {
    /// Every part was in memory.
    Full(Bytes),
    /// At least one part streams.
    Stream(BodyStream),
}

/// One piece of the body, in order.
enum Piece {
    Bytes(Bytes),
    Stream(BodyStream),
}

/// Encodes `parts` under a fresh boundary; returns the `Content-Type` to send with it.
pub(crate) fn encode(parts: Vec<(&'static str, Part)>) -> Result<(HeaderValue, Encoded), Error> {
    for (name, part) in &parts {
        if let Some(content_type) = &part.content_type {
            if !crate::headers::is_clean_value(content_type.as_bytes()) {
                return Err(Error::request(format!(
                    "part `{name}` has a content type that is not a valid header value"
                )));
            }
        }
    }
    let boundary = boundary_for(&parts);
    let mut pieces = Vec::with_capacity(parts.len() * 2 + 1);
    let mut head = BytesMut::new();
    let mut length = Some(0u64);
    for (name, part) in parts {
        write_head(&mut head, &boundary, name, &part);
        match part.content {
            Content::Bytes(bytes) => {
                head.put_slice(&bytes);
                head.put_slice(b"\r\n");
            }
            Content::Stream(stream) => {
                length = length
                    .zip(stream.length)
                    .map(|(sum, part)| sum + part + head.len() as u64);
                pieces.push(Piece::Bytes(head.split().freeze()));
                pieces.push(Piece::Stream(stream));
                head.put_slice(b"\r\n");
            }
        }
    }
    head.put_slice(b"--");
    head.put_slice(boundary.as_bytes());
    head.put_slice(b"--\r\n");
    let content_type = HeaderValue::try_from(format!("multipart/form-data; boundary={boundary}"))
        .map_err(|e| Error::request("multipart content type").with_source(e))?;
    if pieces.is_empty() {
        return Ok((content_type, Encoded::Full(head.freeze())));
    }
    let length = length.map(|sum| sum + head.len() as u64);
    pieces.push(Piece::Bytes(head.freeze()));
    let chunks = stream::iter(pieces).flat_map(|piece| match piece {
        Piece::Bytes(bytes) => stream::once(async move { Ok::<_, BoxError>(bytes) }).boxed(),
        Piece::Stream(stream) => stream.chunks,
    });
    let body = match length {
        Some(length) => BodyStream::sized(chunks, length),
        None => BodyStream::new(chunks),
    };
    Ok((content_type, Encoded::Stream(body)))
}

/// A boundary found in no part held in memory (streamed parts cannot be searched; the random
/// part makes a clash there as likely as guessing it).
fn boundary_for(parts: &[(&'static str, Part)]) -> String {
    loop {
        let boundary = format!(
            "feign-{}",
            Alphanumeric.sample_string(&mut rand::rng(), BOUNDARY_RANDOM)
        );
        let finder = memchr::memmem::Finder::new(boundary.as_bytes());
        let clash = parts.iter().any(|(_, part)| match &part.content {
            Content::Bytes(bytes) => finder.find(bytes).is_some(),
            Content::Stream(_) => false,
        });
        if !clash {
            return boundary;
        }
    }
}

/// `--boundary`, `Content-Disposition` and `Content-Type` lines, and the blank line.
fn write_head(out: &mut BytesMut, boundary: &str, name: &str, part: &Part) {
    out.put_slice(b"--");
    out.put_slice(boundary.as_bytes());
    out.put_slice(b"\r\nContent-Disposition: form-data; name=\"");
    escape(out, name);
    out.put_u8(b'"');
    if let Some(file_name) = &part.file_name {
        out.put_slice(b"; filename=\"");
        escape(out, file_name);
        out.put_u8(b'"');
    }
    out.put_slice(b"\r\n");
    if let Some(content_type) = &part.content_type {
        out.put_slice(b"Content-Type: ");
        out.put_slice(content_type.as_bytes());
        out.put_slice(b"\r\n");
    }
    out.put_slice(b"\r\n");
}

/// A name or file name as the HTML standard's multipart/form-data encoding writes it: LF as
/// `%0A`, CR as `%0D`, `"` as `%22`, nothing else escaped.
fn escape(out: &mut BytesMut, text: &str) {
    for byte in text.bytes() {
        match byte {
            b'\n' => out.put_slice(b"%0A"),
            b'\r' => out.put_slice(b"%0D"),
            b'"' => out.put_slice(b"%22"),
            other => out.put_u8(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(encoded: Encoded) -> String {
        match encoded {
            Encoded::Full(bytes) => String::from_utf8(bytes.to_vec()).unwrap(),
            Encoded::Stream(_) => panic!("expected a buffered body"),
        }
    }

    #[test]
    fn names_and_file_names_escape_quotes_and_line_breaks_only() {
        let part = Part::bytes("x").file_name("a\"b\r\nc%22 é.txt");
        let (_, encoded) = encode(vec![("we\"ird\nname", part)]).unwrap();
        let body = text(encoded);
        assert!(
            body.contains("name=\"we%22ird%0Aname\"; filename=\"a%22b%0D%0Ac%22 é.txt\"\r\n"),
            "{body}"
        );
    }

    #[test]
    fn boundaries_are_random_and_close_the_body() {
        let (first, encoded) = encode(vec![("a", Part::text("1"))]).unwrap();
        let (second, _) = encode(vec![("a", Part::text("1"))]).unwrap();
        assert_ne!(first, second);
        let boundary = first
            .to_str()
            .unwrap()
            .strip_prefix("multipart/form-data; boundary=")
            .unwrap()
            .to_owned();
        assert!(boundary.len() >= 30);
        assert_eq!(
            text(encoded),
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--{boundary}--\r\n"
            )
        );
    }

    #[test]
    fn a_content_type_with_a_line_break_is_refused() {
        let part = Part::text("x").content_type("text/plain\r\nX-Injected: 1");
        let error = encode(vec![("a", part)]).err().unwrap();
        assert!(error.to_string().contains("part `a`"), "{error}");
    }
}
