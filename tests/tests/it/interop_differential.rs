//! The embedded registry against the real Spring Cloud Netflix Eureka server: one list of REST
//! exchanges, sent in the same order to both, and their answers compared: status, media type
//! (the `Content-Type` essence), content encoding, and the body's shape (JSON keys or XML
//! elements and attributes, in order, with their values; XML also line by line, for its
//! indentation). Every endpoint is read under `/eureka/` and then `/eureka/v2/` (the real server
//! serves both alike), with no `Accept`, `*/*`, JSON, XML and both, and some with `text/xml`,
//! `text/plain` (406) and gzip; registrations go in as JSON and as XML, replication batches as
//! JSON and XML; then heartbeats with equal, older, newer and malformed `lastDirtyTimestamp`,
//! status overrides, metadata, cancels, unknown applications and instances, bodies that do not
//! parse, and missing or unsupported content types.
//!
//! Values that cannot agree are normalised on both sides: time stamps (numbers within a day of
//! now, and the error body's `timestamp`), the delta's generation counter, the detail after
//! "cannot parse request body", and the order of applications, instances and metadata entries
//! (the real server writes its hash maps' order, the registry its keys' order; they are compared
//! sorted).
//!
//! Where the registry is deliberately safer, [`ALLOWED`] names the exchange, what differs, both
//! answers (status, media type and kind of body) and why; every occurrence of the exchange must
//! differ in exactly those aspects and answer as pinned on both sides, and each allowed
//! difference must still occur, so the table stays true. Not exercised here:
//! the registry takes replication batches only from its peers (403 otherwise, where the real
//! server takes any, as the registry does with `replication_from_any_address`), so it is given a
//! peer on 127.0.0.1. `FEIGN_DIFF_SHOW=<part of an exchange name>` prints both answers of the
//! matching exchanges. Needs the Java fixtures, so ignored unless asked for (`-- --ignored`, as
//! `.ci/run` runs them).

use std::fmt::{self, Write as _};
use std::io::Read;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use feign_eureka::model::xml_to_json;
use feign_eureka_server::EurekaServer;
use feign_tests::interop::{http_request, HttpResponse, JavaApp};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// A registration's `lastDirtyTimestamp`: fixed, in the past, so it is compared as sent.
const LDT: u64 = 1_732_881_099_990;

/// What may differ, for which exchanges (by name), both answers as they stand, and why. Every
/// occurrence of each exchange must differ in exactly these aspects and answer as pinned.
const ALLOWED: &[Allowed] = &[
    Allowed {
        exchange: "register JSON port 70000",
        aspects: REFUSED,
        real: Pin(204, None, Kind::Empty),
        ours: Pin(400, TEXT, Kind::Text),
        why: "ports outside 0..=65535 are refused (400); the real server stores them (204)",
    },
    Allowed {
        exchange: "register JSON status up",
        aspects: REFUSED,
        real: Pin(204, None, Kind::Empty),
        ours: Pin(400, TEXT, Kind::Text),
        why: "unknown status names are refused (400); the real server stores UNKNOWN (204), and \
         every heartbeat of that instance is then answered 404",
    },
    Allowed {
        exchange: "heartbeat lastDirtyTimestamp not a number",
        aspects: REFUSED,
        real: Pin(500, JSON_TYPE, Kind::Json),
        ours: Pin(400, TEXT, Kind::Text),
        why: "400 with the reason where the real server fails with 500",
    },
    Allowed {
        exchange: "status override value bogus",
        aspects: REFUSED,
        real: Pin(500, JSON_TYPE, Kind::Json),
        ours: Pin(400, TEXT, Kind::Text),
        why: "400 with the reason where the real server fails with 500",
    },
    Allowed {
        exchange: "status override value missing",
        aspects: REFUSED,
        real: Pin(500, JSON_TYPE, Kind::Json),
        ours: Pin(400, TEXT, Kind::Text),
        why: "400 with the reason where the real server fails with 500",
    },
    Allowed {
        exchange: "register JSON port a fraction",
        aspects: REFUSED,
        real: Pin(204, None, Kind::Empty),
        ours: Pin(400, JSON_TYPE, Kind::Json),
        why: "a port that is not a whole number is refused as unparseable (400); the real server \
         stores it truncated (204)",
    },
    Allowed {
        exchange: "register XML application root",
        aspects: REFUSED,
        real: Pin(500, JSON_TYPE, Kind::Json),
        ours: Pin(400, XML_TYPE, Kind::Xml),
        why: "an application where an instance is expected is a body that does not parse: 400 \
              with the reason in the negotiated type (XML); the real server fails with 500",
    },
    Allowed {
        exchange: "register XML port 99999",
        aspects: REFUSED,
        real: Pin(204, None, Kind::Empty),
        ours: Pin(400, TEXT, Kind::Text),
        why: "ports outside 0..=65535 are refused (400); the real server stores them (204)",
    },
    Allowed {
        exchange: "register XML missing dataCenterInfo",
        aspects: &[Aspect::MediaType],
        real: Pin(400, XML_TYPE, Kind::Text),
        ours: Pin(400, TEXT, Kind::Text),
        why: PLAIN_REASONS,
    },
    Allowed {
        exchange: "register JSON mismatched app",
        aspects: &[Aspect::MediaType],
        real: Pin(400, XML_TYPE, Kind::Text),
        ours: Pin(400, TEXT, Kind::Text),
        why: PLAIN_REASONS,
    },
    Allowed {
        exchange: "register XML mismatched app",
        aspects: &[Aspect::MediaType],
        real: Pin(400, XML_TYPE, Kind::Text),
        ours: Pin(400, TEXT, Kind::Text),
        why: PLAIN_REASONS,
    },
    Allowed {
        exchange: "register JSON missing dataCenterInfo",
        aspects: &[Aspect::MediaType],
        real: Pin(400, XML_TYPE, Kind::Text),
        ours: Pin(400, TEXT, Kind::Text),
        why: PLAIN_REASONS,
    },
    Allowed {
        exchange: "GET apps Accept: application/xml, application/json",
        aspects: &[Aspect::MediaType],
        real: Pin(200, XML_TYPE, Kind::Json),
        ours: Pin(200, JSON_TYPE, Kind::Json),
        why: "a JSON body is labelled application/json; the real server labels it application/xml \
         (its resource tests the header for \"json\" while Jersey picks the type)",
    },
];

/// A difference allowed for one exchange.
struct Allowed {
    /// The exchange's name.
    exchange: &'static str,
    /// What differs.
    aspects: &'static [Aspect],
    /// The real server's answer.
    real: Pin,
    /// The registry's answer.
    ours: Pin,
    /// Why the registry answers differently.
    why: &'static str,
}

/// The media types the pins name.
const TEXT: Option<&str> = Some("text/plain");
const JSON_TYPE: Option<&str> = Some(JSON);
const XML_TYPE: Option<&str> = Some(XML);

/// An answer as an allowed difference pins it: its status, media type and kind of body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pin(u16, Option<&'static str>, Kind);

/// What a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Empty,
    Json,
    Xml,
    Text,
}

impl Answer {
    /// Whether this answer is `pin`.
    fn is(&self, pin: Pin) -> bool {
        let kind = match self.body {
            Body::Empty => Kind::Empty,
            Body::Json(_) => Kind::Json,
            Body::Xml(..) => Kind::Xml,
            Body::Text(_) => Kind::Text,
        };
        self.status == pin.0 && self.media_type.as_deref() == pin.1 && kind == pin.2
    }

    /// The answer as a pin would name it.
    fn summary(&self) -> String {
        let kind = match self.body {
            Body::Empty => "Empty",
            Body::Json(_) => "Json",
            Body::Xml(..) => "Xml",
            Body::Text(_) => "Text",
        };
        format!("Pin({}, {:?}, Kind::{kind})", self.status, self.media_type)
    }
}

/// A request the registry refuses where the real server takes it: all but the encoding differ.
const REFUSED: &[Aspect] = &[Aspect::Status, Aspect::MediaType, Aspect::Body];

const PLAIN_REASONS: &str = "validation reasons are plain text labelled text/plain; the real \
     server labels the same text with the negotiated type (application/xml or application/json)";

/// What is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Aspect {
    Status,
    MediaType,
    ContentEncoding,
    Body,
}

/// One request, sent alike to both servers.
struct Exchange {
    name: String,
    method: &'static str,
    /// After the prefix, e.g. `apps/DIFF-A`.
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Option<Vec<u8>>,
}

impl Exchange {
    fn new(name: impl Into<String>, method: &'static str, path: impl Into<String>) -> Self {
        Exchange {
            name: name.into(),
            method,
            path: path.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    fn body(self, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        self.header("Content-Type", content_type).raw_body(body)
    }

    fn raw_body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }
}

/// A body's structure: JSON, or XML read into its JSON form, keys in document order.
#[derive(Debug, Clone, PartialEq)]
enum Tree {
    Scalar(String),
    List(Vec<Tree>),
    Map(Vec<(String, Tree)>),
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Tree, E> {
                // Strings and numbers are told apart, as the wire types matter.
                Ok(Tree::Scalar(format!("{v:?}")))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Tree, E> {
                Ok(Tree::Scalar("null".into()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Tree::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    fields.push((key, map.next_value()?));
                }
                Ok(Tree::Map(fields))
            }
        }
        d.deserialize_any(V)
    }
}

/// An answer reduced to what is compared.
#[derive(Debug)]
struct Answer {
    status: u16,
    media_type: Option<String>,
    content_encoding: Option<String>,
    body: Body,
}

#[derive(Debug, PartialEq)]
enum Body {
    Empty,
    Json(Tree),
    /// The tree, and each line's indentation and tag (the layout).
    Xml(Tree, Vec<String>),
    Text(String),
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut out)
        .expect("a gzip body");
    out
}

/// Each line's indentation and first tag: what XStream's pretty printer decides.
fn xml_layout(xml: &str) -> Vec<String> {
    let mut lines: Vec<String> = xml
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            let tag: String = trimmed
                .chars()
                .take_while(|c| !matches!(c, '>' | ' '))
                .collect();
            format!("{indent}{tag}")
        })
        .collect();
    // Sorted, as the order of applications, instances and metadata may differ (see `normalise`).
    lines.sort();
    lines
}

fn normalise(tree: &mut Tree, key: &str, delta: bool) {
    let day = 24 * 3_600_000;
    let now = now_ms();
    match tree {
        Tree::Scalar(value) => {
            let unquoted = value.trim_matches('"');
            let is_time = unquoted.parse::<u64>().is_ok_and(|n| n.abs_diff(now) < day);
            if is_time || key == "timestamp" {
                *value = "<time>".into();
            } else if delta && key == "versions__delta" {
                *value = "<generation>".into();
            } else if unquoted.starts_with("cannot parse request body") {
                *value = "cannot parse request body".into();
            }
        }
        Tree::List(items) => {
            items.iter_mut().for_each(|i| normalise(i, key, delta));
            // Both servers keep applications and instances in hash maps: order carries nothing.
            let sort_key = match key {
                "application" => "name",
                "instance" => "instanceId",
                _ => return,
            };
            items.sort_by_key(|item| field(item, sort_key));
        }
        Tree::Map(fields) => {
            if key == "metadata" {
                fields.sort_by(|a, b| a.0.cmp(&b.0));
            }
            for (k, v) in fields {
                normalise(v, k, delta);
            }
        }
    }
}

fn field(tree: &Tree, name: &str) -> Option<String> {
    match tree {
        Tree::Map(fields) => fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| format!("{v:?}")),
        _ => None,
    }
}

/// One element of a list, whichever form it came in: a single XML element reads as itself.
fn as_list(tree: &Tree) -> Vec<&Tree> {
    match tree {
        Tree::List(items) => items.iter().collect(),
        other => vec![other],
    }
}

/// Where two trees first differ, and how: `path: real … vs ours …`.
fn first_difference(real: &Tree, ours: &Tree, path: &str) -> Option<String> {
    match (real, ours) {
        (Tree::Map(a), Tree::Map(b)) => {
            let keys_a: Vec<&str> = a.iter().map(|(k, _)| k.as_str()).collect();
            let keys_b: Vec<&str> = b.iter().map(|(k, _)| k.as_str()).collect();
            if keys_a != keys_b {
                return Some(format!("{path}: keys {keys_a:?} vs ours {keys_b:?}"));
            }
            a.iter()
                .zip(b)
                .find_map(|((k, va), (_, vb))| first_difference(va, vb, &format!("{path}/{k}")))
        }
        (Tree::List(_), _) | (_, Tree::List(_)) => {
            let (a, b) = (as_list(real), as_list(ours));
            if a.len() != b.len() {
                return Some(format!("{path}: {} items vs ours {}", a.len(), b.len()));
            }
            a.iter()
                .zip(&b)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}[{i}]")))
        }
        _ if real == ours => None,
        _ => Some(format!("{path}: {real:?} vs ours {ours:?}")),
    }
}

/// A readable account of two different bodies.
fn body_difference(real: &Body, ours: &Body) -> String {
    match (real, ours) {
        (Body::Json(a), Body::Json(b)) | (Body::Xml(a, _), Body::Xml(b, _)) => {
            match first_difference(a, b, "") {
                Some(at) => at,
                None => match (real, ours) {
                    (Body::Xml(_, la), Body::Xml(_, lb)) => {
                        let line = la.iter().zip(lb).position(|(x, y)| x != y);
                        format!(
                            "layout, line {line:?}: {:?} vs ours {:?}",
                            line.and_then(|l| la.get(l))
                                .unwrap_or(&la.len().to_string()),
                            line.and_then(|l| lb.get(l))
                                .unwrap_or(&lb.len().to_string())
                        )
                    }
                    _ => "same shape".into(),
                },
            }
        }
        _ => {
            let short = |body: &Body| format!("{body:?}").chars().take(300).collect::<String>();
            format!("{} vs ours {}", short(real), short(ours))
        }
    }
}

fn answer(response: HttpResponse, path: &str) -> Answer {
    let media_type = response.header("content-type").map(|ct| {
        ct.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    let content_encoding = response.header("content-encoding").map(str::to_owned);
    let raw = if content_encoding.as_deref() == Some("gzip") {
        gunzip(&response.body)
    } else {
        response.body.clone()
    };
    let delta = path.ends_with("delta");
    let body = if raw.is_empty() {
        Body::Empty
    } else if let Ok(mut tree) = serde_json::from_slice::<Tree>(&raw) {
        normalise(&mut tree, "", delta);
        Body::Json(tree)
    } else if let Some(mut tree) = xml_to_json(&raw)
        .ok()
        .and_then(|json| serde_json::from_slice::<Tree>(&json).ok())
    {
        normalise(&mut tree, "", delta);
        Body::Xml(tree, xml_layout(&String::from_utf8_lossy(&raw)))
    } else {
        Body::Text(String::from_utf8_lossy(&raw).into_owned())
    };
    Answer {
        status: response.status,
        media_type,
        content_encoding,
        body,
    }
}

fn send(base: &str, prefix: &str, exchange: &Exchange) -> Answer {
    let show = std::env::var("FEIGN_DIFF_SHOW").ok();
    let url = format!("{base}{prefix}{}", exchange.path);
    let headers: Vec<(&str, &str)> = exchange
        .headers
        .iter()
        .map(|(n, v)| (*n, v.as_str()))
        .collect();
    let response = http_request(exchange.method, &url, &headers, exchange.body.as_deref())
        .unwrap_or_else(|e| panic!("{} {url}: {e}", exchange.method));
    // FEIGN_DIFF_SHOW=<part of an exchange name> prints both answers in full.
    if show.is_some_and(|part| exchange.name.contains(&part)) {
        println!("{} {url}\n{response:?}\n{}", exchange.name, response.text());
    }
    answer(response, &exchange.path)
}

/// The differences between two answers.
fn differences(real: &Answer, ours: &Answer) -> Vec<(Aspect, String)> {
    let mut found = Vec::new();
    if real.status != ours.status {
        found.push((
            Aspect::Status,
            format!("status {} vs ours {}", real.status, ours.status),
        ));
    }
    if real.media_type != ours.media_type {
        found.push((
            Aspect::MediaType,
            format!(
                "media type {:?} vs ours {:?}",
                real.media_type, ours.media_type
            ),
        ));
    }
    if real.content_encoding != ours.content_encoding {
        found.push((
            Aspect::ContentEncoding,
            format!(
                "content encoding {:?} vs ours {:?}",
                real.content_encoding, ours.content_encoding
            ),
        ));
    }
    if real.body != ours.body {
        found.push((
            Aspect::Body,
            format!("body {}", body_difference(&real.body, &ours.body)),
        ));
    }
    found
}

fn instance_json(app: &str, id: &str, port: &str, status: &str, ldt: u64) -> String {
    let lower = app.to_ascii_lowercase();
    format!(
        r#"{{"instance":{{"instanceId":"{id}","hostName":"127.0.0.1","app":"{app}","ipAddr":"127.0.0.1","status":"{status}","overriddenStatus":"UNKNOWN","port":{{"$":{port},"@enabled":"true"}},"securePort":{{"$":443,"@enabled":"false"}},"countryId":1,"dataCenterInfo":{{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}},"leaseInfo":{{"renewalIntervalInSecs":30,"durationInSecs":90}},"metadata":{{"zone":"z1","management.port":"8081","a-key":"x & <y>","snake_key":"v_1","dollar$key":"w"}},"homePageUrl":"http://127.0.0.1:{port}/","statusPageUrl":"http://127.0.0.1:{port}/info","healthCheckUrl":"http://127.0.0.1:{port}/health","vipAddress":"{lower}","secureVipAddress":"{lower}-secure","isCoordinatingDiscoveryServer":"false","lastUpdatedTimestamp":"{ldt}","lastDirtyTimestamp":"{ldt}"}}}}"#
    )
}

fn instance_xml(app: &str, id: &str, port: u16) -> String {
    let lower = app.to_ascii_lowercase();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<instance><instanceId>{id}</instanceId><hostName>127.0.0.1</hostName><app>{app}</app><ipAddr>127.0.0.1</ipAddr><status>UP</status><overriddenstatus>UNKNOWN</overriddenstatus><port enabled="true">{port}</port><securePort enabled="false">443</securePort><countryId>1</countryId><dataCenterInfo class="com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"><name>MyOwn</name></dataCenterInfo><leaseInfo><renewalIntervalInSecs>30</renewalIntervalInSecs><durationInSecs>90</durationInSecs></leaseInfo><metadata class="java.util.Collections$EmptyMap"/><vipAddress>{lower}</vipAddress><lastDirtyTimestamp>{LDT}</lastDirtyTimestamp></instance>"#
    )
}

const JSON: &str = "application/json";
const XML: &str = "application/xml";

/// The `Accept` headers every read is sent with.
const ACCEPTS: &[Option<&str>] = &[
    None,
    Some("*/*"),
    Some("application/json"),
    Some("application/xml"),
    Some("application/json, application/xml"),
];

fn reads(name: &str, path: &str) -> Vec<Exchange> {
    ACCEPTS
        .iter()
        .map(|accept| {
            let label = accept.map_or("no Accept".to_owned(), |a| format!("Accept: {a}"));
            let exchange = Exchange::new(format!("GET {name} {label}"), "GET", path);
            match accept {
                Some(a) => exchange.header("Accept", *a),
                None => exchange,
            }
        })
        .collect()
}

fn all_reads() -> Vec<Exchange> {
    let mut list = Vec::new();
    for (name, path) in [
        ("apps", "apps"),
        ("apps/", "apps/"),
        ("delta", "apps/delta"),
        ("app", "apps/DIFF-A"),
        ("app lower-case", "apps/diff-a"),
        ("instance", "apps/DIFF-A/a1"),
        ("instance by id", "instances/a2"),
        ("amazon instance", "apps/DIFF-B/b1"),
        ("vip", "vips/diff-a"),
        ("svip", "svips/diff-a-secure"),
        ("unknown vip", "vips/nope"),
        ("unknown app", "apps/NOPE"),
        ("unknown instance", "apps/DIFF-A/nope"),
        ("unknown instance by id", "instances/nope"),
    ] {
        list.extend(reads(name, path));
    }
    for (label, accept) in [
        ("apps", "text/xml"),
        ("apps", "text/plain"),
        ("instance", "text/xml"),
        ("unknown app", "text/xml"),
        ("apps", "application/xml, application/json"),
        ("apps", "application/xml;q=0.5, application/json"),
        ("apps", "application/*"),
        ("apps", "*/*;q=0.1, application/json"),
        ("apps", "application/json;q=0"),
        ("instance", "application/xml;q=0.5, application/json"),
        ("instance", "application/json;q=0"),
        ("unknown app", "application/xml"),
        ("unknown app", "text/plain"),
    ] {
        let path = match label {
            "instance" => "apps/DIFF-A/a1",
            "unknown app" => "apps/NOPE",
            _ => "apps",
        };
        list.push(
            Exchange::new(format!("GET {label} Accept: {accept}"), "GET", path)
                .header("Accept", accept),
        );
    }
    for (label, path) in [
        ("apps", "apps"),
        ("delta", "apps/delta"),
        ("app", "apps/DIFF-A"),
        ("instance", "apps/DIFF-A/a1"),
    ] {
        for accept in [JSON, XML] {
            list.push(
                Exchange::new(format!("GET {label} gzip {accept}"), "GET", path)
                    .header("Accept", accept)
                    .header("Accept-Encoding", "gzip"),
            );
        }
    }
    list
}

fn batch(items: &str) -> String {
    format!(r#"{{"replicationList":[{items}]}}"#)
}

/// Every exchange, in order: registrations, reads, changes, errors, reads again, and last the
/// deliberately refused registrations (the real server stores them, so nothing is read after).
fn exchanges() -> Vec<Exchange> {
    let mut list = vec![
        Exchange::new("register JSON", "POST", "apps/DIFF-A")
            .body(JSON, instance_json("DIFF-A", "a1", "8080", "UP", LDT)),
        Exchange::new("register XML", "POST", "apps/DIFF-A").body(XML, instance_xml("DIFF-A", "a2", 8081)),
        Exchange::new("register JSON Amazon", "POST", "apps/DIFF-B").body(
            JSON,
            format!(r#"{{"instance":{{"instanceId":"b1","hostName":"h<&>'2","app":"DIFF-B","ipAddr":"127.0.0.2","dataCenterInfo":{{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{{"instance-id":"i-1","availability-zone":"us-east-1a"}}}},"metadata":{{"k":"v\r\nw","z":"1"}},"lastDirtyTimestamp":"{LDT}"}}}}"#),
        ),
    ];
    list.extend(all_reads());
    let id = "apps/DIFF-A/a1";
    list.extend([
        Exchange::new(
            "heartbeat",
            "PUT",
            format!("{id}?status=UP&lastDirtyTimestamp={LDT}"),
        ),
        Exchange::new(
            "heartbeat without lastDirtyTimestamp",
            "PUT",
            format!("{id}?status=UP"),
        ),
        Exchange::new(
            "heartbeat older lastDirtyTimestamp",
            "PUT",
            format!("{id}?status=UP&lastDirtyTimestamp={}", LDT - 1),
        ),
        Exchange::new(
            "heartbeat newer lastDirtyTimestamp",
            "PUT",
            format!("{id}?status=UP&lastDirtyTimestamp={}", LDT + 1),
        ),
        Exchange::new(
            "heartbeat newer lastDirtyTimestamp Accept XML",
            "PUT",
            format!("{id}?status=UP&lastDirtyTimestamp={}", LDT + 1),
        )
        .header("Accept", XML),
        Exchange::new(
            "heartbeat unknown instance",
            "PUT",
            "apps/DIFF-A/nope?status=UP",
        ),
        Exchange::new("heartbeat unknown app", "PUT", "apps/NOPE/a1?status=UP"),
        Exchange::new(
            "status override",
            "PUT",
            format!("{id}/status?value=OUT_OF_SERVICE"),
        ),
        Exchange::new(
            "status override unknown",
            "PUT",
            "apps/DIFF-A/nope/status?value=DOWN",
        ),
        Exchange::new(
            "status override value bogus",
            "PUT",
            format!("{id}/status?value=bogus"),
        ),
        Exchange::new(
            "status override value missing",
            "PUT",
            format!("{id}/status"),
        ),
        Exchange::new(
            "heartbeat XML-registered instance",
            "PUT",
            format!("apps/DIFF-A/a2?status=UP&lastDirtyTimestamp={LDT}"),
        ),
        Exchange::new("metadata", "PUT", format!("{id}/metadata?added=1")),
        Exchange::new(
            "metadata unknown",
            "PUT",
            "apps/DIFF-A/nope/metadata?added=1",
        ),
    ]);
    list.extend(reads("app after changes", "apps/DIFF-A"));
    list.extend(reads("delta after changes", "apps/delta"));
    list.extend([
        Exchange::new("delete status override", "DELETE", format!("{id}/status?value=UP")),
        Exchange::new("delete status override unknown", "DELETE", "apps/DIFF-A/nope/status"),
        Exchange::new("delete status override none left", "DELETE", format!("{id}/status")),
        Exchange::new("register XML Amazon", "POST", "apps/DIFF-B").body(
            XML,
            format!(
                "<!-- an Amazon instance -->\n<instance>\n  <instanceId>b2</instanceId><hostName>h2</hostName><app>diff-b</app><ipAddr>127.0.0.3</ipAddr><status>DOWN</status><port enabled='true'>9090</port><dataCenterInfo class=\"com.netflix.appinfo.AmazonInfo\"><name>Amazon</name><metadata><instance-id>i-2</instance-id><availability-zone>us-east-1b</availability-zone></metadata></dataCenterInfo><metadata><zone>us-east-1b</zone><k>a&amp;b&#x41;</k><e/><k__m>1</k__m><n_-o>2</n_-o><p_q>3</p_q></metadata><vipAddress>diff-b</vipAddress><lastDirtyTimestamp>{LDT}</lastDirtyTimestamp></instance>"
            ),
        ),
        Exchange::new("register XML bare ports", "POST", "apps/DIFF-B").body(
            XML,
            "<instance><instanceId>b3</instanceId><hostName> h3 </hostName><app>DIFF-B</app><ipAddr>127.0.0.4</ipAddr><port>8080</port><securePort>8443</securePort><dataCenterInfo class=\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\"><name>MyOwn</name></dataCenterInfo><metadata/><leaseInfo/></instance>",
        ),
        Exchange::new("register XML status in mixed case", "POST", "apps/DIFF-B").body(
            XML,
            "<instance><instanceId>b4</instanceId><hostName>h4</hostName><app>DIFF-B</app><ipAddr>127.0.0.5</ipAddr><status>Down</status><overriddenstatus>unknown</overriddenstatus><dataCenterInfo><name>MyOwn</name></dataCenterInfo><foo><bar>1</bar></foo></instance>",
        ),
        Exchange::new("register XML unknown class", "POST", "apps/DIFF-B").body(
            XML,
            "<instance><instanceId>b5</instanceId><hostName>h5</hostName><app>DIFF-B</app><ipAddr>127.0.0.6</ipAddr><dataCenterInfo class=\"foo.Bar\"><name>MyOwn</name></dataCenterInfo></instance>",
        ),
        Exchange::new("register XML unknown data center name", "POST", "apps/DIFF-B").body(
            XML,
            "<instance><instanceId>b6</instanceId><hostName>h6</hostName><app>DIFF-B</app><ipAddr>127.0.0.7</ipAddr><dataCenterInfo><name>Bogus</name></dataCenterInfo></instance>",
        ),
        Exchange::new("register JSON without @class", "POST", "apps/DIFF-B").body(
            JSON,
            r#"{"instance":{"instanceId":"b7","hostName":"h","app":"DIFF-B","ipAddr":"1.2.3.4","dataCenterInfo":{"name":"MyOwn"}}}"#,
        ),
        Exchange::new("register JSON unknown @class", "POST", "apps/DIFF-B").body(
            JSON,
            r#"{"instance":{"instanceId":"b7","hostName":"h","app":"DIFF-B","ipAddr":"1.2.3.4","dataCenterInfo":{"@class":"foo.Bar","name":"MyOwn"}}}"#,
        ),
        Exchange::new("register JSON unknown data center name", "POST", "apps/DIFF-B").body(
            JSON,
            r#"{"instance":{"instanceId":"b7","hostName":"h","app":"DIFF-B","ipAddr":"1.2.3.4","dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"Bogus"}}}"#,
        ),
        Exchange::new("register XML port not a number", "POST", "apps/DIFF-B").body(
            XML,
            "<instance><instanceId>b8</instanceId><hostName>h</hostName><app>DIFF-B</app><ipAddr>1.2.3.4</ipAddr><port enabled=\"true\">abc</port><dataCenterInfo><name>MyOwn</name></dataCenterInfo></instance>",
        ),
        Exchange::new("register JSON port not a number", "POST", "apps/DIFF-B")
            .body(JSON, instance_json("DIFF-B", "b9", "\"abc\"", "UP", LDT)),
        Exchange::new("register XML application root", "POST", "apps/DIFF-B")
            .body(XML, "<application><name>DIFF-B</name></application>"),
        Exchange::new("register XML missing dataCenterInfo", "POST", "apps/DIFF-B").body(
            XML,
            "<instance><hostName>h</hostName><app>DIFF-B</app><ipAddr>1.2.3.4</ipAddr></instance>",
        ),
        Exchange::new("GET vip Accept: text/xml", "GET", "vips/diff-a").header("Accept", "text/xml"),
        Exchange::new("GET app compact", "GET", "apps/DIFF-B")
            .header("Accept", JSON)
            .header("X-Eureka-Accept", "compact"),
        Exchange::new("GET app compact XML", "GET", "apps/DIFF-B").header("X-Eureka-Accept", "compact"),
        Exchange::new("GET apps compact", "GET", "apps")
            .header("Accept", JSON)
            .header("X-Eureka-Accept", "Compact"),
        Exchange::new("GET apps compact XML", "GET", "apps").header("X-Eureka-Accept", "compact"),
        Exchange::new("GET apps compact gzip", "GET", "apps")
            .header("Accept", JSON)
            .header("Accept-Encoding", "gzip")
            .header("X-Eureka-Accept", "compact"),
        Exchange::new("GET delta compact", "GET", "apps/delta")
            .header("Accept", JSON)
            .header("X-Eureka-Accept", "compact"),
        Exchange::new("GET vip compact XML", "GET", "vips/diff-a").header("X-Eureka-Accept", "compact"),
        Exchange::new("GET unknown svip compact", "GET", "svips/nope")
            .header("Accept", JSON)
            .header("X-Eureka-Accept", "compact"),
        Exchange::new("GET instance compact", "GET", "apps/DIFF-B/b1")
            .header("Accept", JSON)
            .header("X-Eureka-Accept", "compact"),
        Exchange::new("GET app other X-Eureka-Accept", "GET", "apps/DIFF-B")
            .header("Accept", JSON)
            .header("X-Eureka-Accept", "mini"),
        Exchange::new("cancel", "DELETE", "apps/DIFF-A/a2"),
        Exchange::new("cancel again", "DELETE", "apps/DIFF-A/a2"),
        Exchange::new("cancel unknown app", "DELETE", "apps/NOPE/a2"),
        Exchange::new("method not allowed", "POST", id).body(JSON, "{}"),
        Exchange::new("method not allowed Accept XML", "POST", id)
            .header("Accept", XML)
            .body(JSON, "{}"),
        Exchange::new("register without Content-Type Accept XML", "POST", "apps/DIFF-A")
            .header("Accept", XML)
            .raw_body(instance_json("DIFF-A", "a9", "8080", "UP", LDT)),
        Exchange::new("heartbeat unknown instance Accept text/xml", "PUT", "apps/DIFF-A/nope")
            .header("Accept", "text/xml"),
        Exchange::new("unknown path", "GET", "nothing/here"),
        Exchange::new("register JSON malformed", "POST", "apps/DIFF-A").body(JSON, "{\"instance\":"),
        Exchange::new("register XML malformed", "POST", "apps/DIFF-A").body(XML, "<instance><hostName>h</hostName>"),
        Exchange::new("register JSON declared XML", "POST", "apps/DIFF-A")
            .body(XML, instance_json("DIFF-A", "a9", "8080", "UP", LDT)),
        Exchange::new("register JSON without wrapper", "POST", "apps/DIFF-A")
            .body(JSON, r#"{"hostName":"h","app":"DIFF-A"}"#),
        Exchange::new("register JSON mismatched app", "POST", "apps/DIFF-A")
            .body(JSON, instance_json("OTHER", "a9", "8080", "UP", LDT)),
        Exchange::new("register XML mismatched app", "POST", "apps/DIFF-A")
            .body(XML, instance_xml("OTHER", "a9", 8080)),
        Exchange::new("register JSON missing dataCenterInfo", "POST", "apps/DIFF-A")
            .body(JSON, r#"{"instance":{"hostName":"h","app":"DIFF-A","ipAddr":"1.2.3.4"}}"#),
        Exchange::new("register without Content-Type", "POST", "apps/DIFF-A")
            .raw_body(instance_json("DIFF-A", "a9", "8080", "UP", LDT)),
        Exchange::new("register text/xml", "POST", "apps/DIFF-A")
            .body("text/xml", instance_xml("DIFF-A", "a9", 8080)),
        Exchange::new("register text/plain", "POST", "apps/DIFF-A")
            .body("text/plain", instance_json("DIFF-A", "a9", "8080", "UP", LDT)),
        Exchange::new("register JSON in UTF-16", "POST", "apps/DIFF-A").body(
            "application/json;charset=UTF-16",
            instance_json("DIFF-A", "a9", "8080", "UP", LDT),
        ),
        Exchange::new("register XML with charset", "POST", "apps/DIFF-C")
            .body("application/xml;charset=UTF-8", instance_xml("DIFF-C", "c1", 8082)),
        Exchange::new("batch", "POST", "peerreplication/batch").body(
            JSON,
            batch(&format!(
                r#"{{"appName":"DIFF-A","id":"a1","lastDirtyTimestamp":{LDT},"status":"UP","action":"Heartbeat"}},{{"appName":"DIFF-A","id":"nope","lastDirtyTimestamp":{LDT},"status":"UP","action":"Heartbeat"}}"#
            )),
        ),
        Exchange::new("batch Accept JSON", "POST", "peerreplication/batch/")
            .header("Accept", JSON)
            .body(JSON, batch(r#"{"appName":"DIFF-A","id":"nope","action":"Cancel"}"#)),
        Exchange::new("batch empty", "POST", "peerreplication/batch").body(JSON, batch("")),
        Exchange::new("batch XML", "POST", "peerreplication/batch").body(
            XML,
            "<replicationList><replicationList><appName>DIFF-A</appName><id>a1</id><action>Heartbeat</action></replicationList></replicationList>",
        ),
        Exchange::new("batch malformed", "POST", "peerreplication/batch").body(JSON, "{"),
        Exchange::new(
            "heartbeat lastDirtyTimestamp not a number",
            "PUT",
            format!("{id}?status=UP&lastDirtyTimestamp=soon"),
        ),
    ]);
    list.extend(reads("apps at the end", "apps"));
    list.extend(reads("delta at the end", "apps/delta"));
    list
}

/// The registrations the registry refuses and the real server stores: sent last, once, as
/// nothing read after them could agree. A registration with a `lastDirtyTimestamp` a day ahead
/// is among them although both servers take it (a client whose clock runs fast registers).
fn refused() -> Vec<Exchange> {
    let mut list = Vec::new();
    list.extend([
        Exchange::new("register JSON port 70000", "POST", "apps/DIFF-X")
            .body(JSON, instance_json("DIFF-X", "x1", "70000", "UP", LDT)),
        Exchange::new("register XML port 99999", "POST", "apps/DIFF-X").body(
            XML,
            "<instance><instanceId>x4</instanceId><hostName>h</hostName><app>DIFF-X</app><ipAddr>1.2.3.4</ipAddr><port enabled=\"true\">99999</port><dataCenterInfo><name>MyOwn</name></dataCenterInfo></instance>",
        ),
        Exchange::new("register JSON port a fraction", "POST", "apps/DIFF-X")
            .body(JSON, instance_json("DIFF-X", "x5", "80.5", "UP", LDT)),
        Exchange::new("register JSON status up", "POST", "apps/DIFF-X")
            .body(JSON, instance_json("DIFF-X", "x2", "8080", "up", LDT)),
        Exchange::new(
            "register JSON lastDirtyTimestamp a day ahead",
            "POST",
            "apps/DIFF-X",
        )
        .body(
            JSON,
            instance_json("DIFF-X", "x3", "8080", "UP", now_ms() + 24 * 3_600_000),
        ),
    ]);
    list
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn the_embedded_registry_answers_as_the_real_server_does() {
    // A replication peer on 127.0.0.1 (where nothing listens) so the batches this test sends
    // from 127.0.0.1 are taken, as the real server takes any.
    let peer = format!("{}/eureka/", feign_test_support::closed_port_url());
    let ours = EurekaServer::builder()
        .bind("127.0.0.1:0")
        .self_preservation(false)
        .read_only_cache(false)
        .eviction_interval(Duration::from_secs(1))
        .peer(peer)
        .startup_sync(false)
        .start()
        .await
        .expect("registry starts");
    let our_base = format!("http://{}", ours.local_addr());
    tokio::task::spawn_blocking(move || {
        // The fixture's service URL names 127.0.0.1 while its instance host name is localhost,
        // so by default it takes itself for a peer and replays every change to itself half a
        // second later (a cancelled instance can come back); with its own address as its host
        // name it knows itself.
        let real = JavaApp::eureka_server(&["--eureka.instance.hostname=127.0.0.1"])
            .expect("the Java fixtures");
        let mut report = String::new();
        let mut used = vec![false; ALLOWED.len()];
        let mut compared = 0;
        // Both prefixes in turn, the second continuing from the state the first left on both
        // sides, then the refused registrations.
        let rounds = [
            ("/eureka/", exchanges()),
            ("/eureka/v2/", exchanges()),
            ("/eureka/", refused()),
        ];
        for (prefix, list) in rounds {
            for exchange in list {
                let theirs = send(&real.base_url(), prefix, &exchange);
                let mine = send(&our_base, prefix, &exchange);
                compared += 1;
                let found = differences(&theirs, &mine);
                let allowed = ALLOWED
                    .iter()
                    .position(|allowed| allowed.exchange == exchange.name);
                let Some(i) = allowed else {
                    for (_, what) in found {
                        let _ = writeln!(
                            report,
                            "{} {}{} ({}): {what}",
                            exchange.method, prefix, exchange.path, exchange.name
                        );
                    }
                    continue;
                };
                let allowed = &ALLOWED[i];
                used[i] = true;
                let aspects: Vec<Aspect> = found.iter().map(|(aspect, _)| *aspect).collect();
                if aspects != allowed.aspects || !theirs.is(allowed.real) || !mine.is(allowed.ours)
                {
                    let _ = writeln!(
                        report,
                        "{} {}{} ({}): allowed to differ in {:?}, real {:?}, ours {:?}; \
                         differs in {aspects:?}, real {}, ours {}",
                        exchange.method,
                        prefix,
                        exchange.path,
                        exchange.name,
                        allowed.aspects,
                        allowed.real,
                        allowed.ours,
                        theirs.summary(),
                        mine.summary()
                    );
                }
            }
        }
        for (i, allowed) in ALLOWED.iter().enumerate() {
            if !used[i] {
                let _ = writeln!(
                    report,
                    "allowed difference no longer seen: {} / {:?} ({})",
                    allowed.exchange, allowed.aspects, allowed.why
                );
            }
        }
        println!("compared {compared} exchanges");
        assert!(
            report.is_empty(),
            "differences from the real server:\n{report}"
        );
        real.stop();
    })
    .await
    .expect("differential run");
    ours.shutdown().await;
}
