//! A tiny blocking HTTP/1.1 client over [`TcpStream`], enough to probe the Java fixtures and to
//! send them admin calls (status overrides, registry reads) from sync or async tests alike.
//!
//! It speaks plain `http://` to an IP or host with an explicit or default port, sends
//! `Connection: close`, and reads the response to the end (decoding `chunked` bodies).

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long one request may take to connect, and each read or write may block.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest response accepted, so a misbehaving peer cannot exhaust memory.
const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// A complete HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code, e.g. `200`.
    pub status: u16,
    /// Header fields in the order received; names as sent by the server.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text, with invalid UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `GET url` with `Accept: application/json`.
pub fn http_get(url: &str) -> io::Result<HttpResponse> {
    http_request("GET", url, &[("Accept", "application/json")], None)
}

/// Sends one request and reads the whole response.
///
/// `url` must be `http://host[:port][/path][?query]`. `Host`, `Connection: close` and, when a
/// body is given, `Content-Length` are added. Fails on connect or I/O errors, timeouts (10 s per
/// operation) and malformed responses; any status code is a successful response.
pub fn http_request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> io::Result<HttpResponse> {
    let target = Target::parse(url)?;
    let mut stream = connect(&target.authority)?;

    let mut head = format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        target.path, target.authority
    );
    for (name, value) in headers {
        if [name, value].iter().any(|s| s.contains(['\r', '\n'])) {
            return Err(invalid("header contains a line break"));
        }
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if let Some(body) = body {
        stream.write_all(body)?;
    }
    stream.flush()?;

    let mut raw = Vec::new();
    stream
        .take(MAX_RESPONSE_BYTES as u64 + 1)
        .read_to_end(&mut raw)?;
    if raw.len() > MAX_RESPONSE_BYTES {
        return Err(invalid("response too large"));
    }
    parse_response(&raw)
}

/// Where a request goes: `host:port` and the request target.
struct Target {
    authority: String,
    path: String,
}

impl Target {
    fn parse(url: &str) -> io::Result<Self> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| invalid("only http:// urls are supported"))?;
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest[i..].starts_with('/') => (&rest[..i], rest[i..].to_owned()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_owned()),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(invalid("url needs a host and no user info"));
        }
        let authority = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.contains(']'))
        {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        Ok(Self { authority, path })
    }
}

fn connect(authority: &str) -> io::Result<TcpStream> {
    let mut last_error = invalid("host resolved to no address");
    for addr in authority.to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, IO_TIMEOUT) {
            Ok(stream) => {
                stream.set_read_timeout(Some(IO_TIMEOUT))?;
                stream.set_write_timeout(Some(IO_TIMEOUT))?;
                return Ok(stream);
            }
            Err(e) => last_error = e,
        }
    }
    Err(last_error)
}

fn parse_response(raw: &[u8]) -> io::Result<HttpResponse> {
    let head_end = find(raw, b"\r\n\r\n").ok_or_else(|| invalid("response head is incomplete"))?;
    let head =
        std::str::from_utf8(&raw[..head_end]).map_err(|_| invalid("response head is not utf-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .filter(|_| status_line.starts_with("HTTP/1."))
        .ok_or_else(|| invalid("malformed status line"))?;
    let headers = lines
        .map(|line| {
            line.split_once(':')
                .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
                .ok_or_else(|| invalid("malformed header line"))
        })
        .collect::<io::Result<Vec<_>>>()?;

    let rest = &raw[head_end + 4..];
    let mut response = HttpResponse {
        status,
        headers,
        body: Vec::new(),
    };
    response.body = if response
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        dechunk(rest)?
    } else if let Some(length) = response.header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| invalid("malformed content-length"))?;
        rest.get(..length)
            .ok_or_else(|| invalid("body shorter than content-length"))?
            .to_vec()
    } else {
        rest.to_vec()
    };
    Ok(response)
}

fn dechunk(mut rest: &[u8]) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = find(rest, b"\r\n").ok_or_else(|| invalid("truncated chunk size"))?;
        let size_text =
            std::str::from_utf8(&rest[..line_end]).map_err(|_| invalid("malformed chunk size"))?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size =
            usize::from_str_radix(size_text, 16).map_err(|_| invalid("malformed chunk size"))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        let chunk = rest.get(..size).ok_or_else(|| invalid("truncated chunk"))?;
        body.extend_from_slice(chunk);
        rest = rest
            .get(size + 2..)
            .ok_or_else(|| invalid("truncated chunk"))?;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_chunked_response() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n";
        let response = parse_response(raw).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.header("content-type"), Some("text/plain"));
        assert_eq!(response.text(), "hello world");
    }

    #[test]
    fn honours_content_length_and_rejects_short_bodies() {
        let raw = b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabcdef";
        assert_eq!(parse_response(raw).unwrap().body, b"abc");
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc";
        assert!(parse_response(short).is_err());
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_response(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n").is_err());
        assert!(
            parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").is_err()
        );
    }

    #[test]
    fn splits_urls() {
        let t = Target::parse("http://127.0.0.1:8761/eureka/apps?x=1").unwrap();
        assert_eq!(
            (t.authority.as_str(), t.path.as_str()),
            ("127.0.0.1:8761", "/eureka/apps?x=1")
        );
        let t = Target::parse("http://localhost").unwrap();
        assert_eq!(
            (t.authority.as_str(), t.path.as_str()),
            ("localhost:80", "/")
        );
        let t = Target::parse("http://h:1?q").unwrap();
        assert_eq!(t.path, "/?q");
        assert!(Target::parse("https://h/").is_err());
        assert!(Target::parse("http://user:pw@h/").is_err());
    }
}
