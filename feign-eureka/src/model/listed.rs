//! Full listings read for the client's registry cache, in one pass over the document: of each
//! instance, only what routing needs is read ([`InstanceView`]); the rest is validated, not
//! read, and the instance's JSON text is kept to be compared with the cached copy at the next
//! fetch, or read in full as an [`InstanceInfo`] when asked.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::applications::{AppListing, Applications, Listing, ListingEnvelope};
use super::datacenter::{DataCenterInfo, LenientDataCenter};
use super::instance::{eureka_id, InstanceField, InstanceInfo, StatusValue};
use super::lenient::checked_document;
use super::lenient::{none_unless_map, LenientElement, LenientStringMap, LenientText};
use super::port::{LenientPort, PortInfo};
use super::status::InstanceStatus;

/// A full listing and the document it was read from (which its instances borrow from).
pub(crate) struct ListedDocument<'a> {
    pub(crate) listing: Listing<ListedInstance<'a>>,
    pub(crate) text: DocumentText<'a>,
}

impl<'a> ListedDocument<'a> {
    /// Reads `{"applications":{...}}` with the same tolerant rules as
    /// [`Applications::from_json`](super::Applications::from_json).
    pub(crate) fn read(json: &'a [u8]) -> Result<ListedDocument<'a>, serde_json::Error> {
        let text = checked_document(json)?;
        let listing = serde_json::from_str::<ListingEnvelope<ListedInstance<'a>>>(text)?;
        Ok(ListedDocument {
            listing: listing.applications,
            text: DocumentText(text),
        })
    }

    /// A listing given as model types, with no document behind it.
    pub(crate) fn from_model(applications: Applications) -> ListedDocument<'static> {
        let listing = Listing {
            versions_delta: applications.versions_delta,
            apps_hashcode: applications.apps_hashcode,
            applications: applications
                .applications
                .into_iter()
                .map(|app| AppListing {
                    name: app.name,
                    instances: app
                        .instances
                        .into_iter()
                        .map(|info| ListedInstance::Read(Box::new(info)))
                        .collect(),
                    skipped: app.skipped,
                })
                .collect(),
            skipped: applications.skipped,
        };
        ListedDocument {
            listing,
            text: DocumentText(""),
        }
    }
}

/// The text of a listing's document.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DocumentText<'a>(&'a str);

impl<'a> DocumentText<'a> {
    /// The JSON text of one of this document's instances, braces included (`None` for a view
    /// read from another document).
    pub(crate) fn of(self, instance: &InstanceView<'a>) -> Option<&'a str> {
        let Some((first_key, end)) = instance.span else {
            return Some("{}");
        };
        // serde_json hands out sub-slices of the document, so their addresses say where they
        // lie in it; only whitespace may stand between the opening brace and the first key,
        // and between the last value and the closing brace.
        let base = self.0.as_ptr().addr();
        let (first_key, end) = (first_key.checked_sub(base)?, end.checked_sub(base)?);
        let bytes = self.0.as_bytes();
        let open = bytes
            .get(..first_key)?
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())?;
        let close = end
            + bytes
                .get(end..)?
                .iter()
                .position(|b| !b.is_ascii_whitespace())?;
        (bytes[open] == b'{' && bytes[close] == b'}')
            .then(|| self.0.get(open..=close))
            .flatten()
    }
}

/// One `instance` element of a listing.
#[derive(Debug)]
// The view is the large variant on purpose: a listing holds thousands of them, unboxed.
#[allow(clippy::large_enum_variant)]
pub(crate) enum ListedInstance<'a> {
    /// An instance object of the document, of which only what routing needs was read.
    Listed(InstanceView<'a>),
    /// An instance read in full (a lone object given where a list was expected, or a listing
    /// given as model types). Boxed: a listing holds thousands of the other kind.
    Read(Box<InstanceInfo>),
}

impl<'de> LenientElement<'de> for ListedInstance<'de> {
    /// Reads an instance object's view; an element that is not an object reads as `None`.
    /// Only serde_json's deserializers hand out the borrowed texts this needs.
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(ViewVisitor)
    }

    fn from_single_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        let info = InstanceInfo::from_single_map(map)?;
        Ok(info.map(|info| ListedInstance::Read(Box::new(info))))
    }
}

/// What the client routes by, read with the same tolerant rules as [`InstanceInfo`] (absent
/// keys take the same defaults); every other key is validated and skipped. Strings borrow from
/// the document unless they hold escapes.
#[derive(Debug)]
pub(crate) struct InstanceView<'a> {
    /// `instanceId`.
    instance_id: Option<Cow<'a, str>>,
    /// `hostName`.
    pub(crate) host_name: Cow<'a, str>,
    /// `app`, as written (not upper-cased).
    pub(crate) app: Cow<'a, str>,
    /// `ipAddr`.
    pub(crate) ip_addr: Cow<'a, str>,
    /// `status` (`UP` when absent).
    pub(crate) status: InstanceStatus,
    /// `port`'s JSON text (read with [`read_port`] when needed: not for an unchanged instance).
    pub(crate) port: Option<&'a str>,
    /// `securePort`'s JSON text.
    pub(crate) secure_port: Option<&'a str>,
    /// `dataCenterInfo`, read only when the id depends on it (no usable `instanceId`).
    data_center: Option<Box<DataCenterInfo>>,
    /// `metadata`'s JSON text (read with [`read_metadata`]).
    pub(crate) metadata: Option<&'a str>,
    /// `vipAddress`.
    pub(crate) vip_address: Option<Cow<'a, str>>,
    /// `healthCheckUrl` and `secureHealthCheckUrl`.
    pub(crate) health_check_urls: [Option<Cow<'a, str>>; 2],
    /// Where the instance's entries lie in the document: the address of the first key and the
    /// address just past the last value (`None` for an empty object).
    span: Option<(usize, usize)>,
}

impl InstanceView<'_> {
    /// The instance id, as [`InstanceInfo::id`] computes it.
    pub(crate) fn id(&self) -> &str {
        eureka_id(
            self.instance_id.as_deref(),
            self.data_center.as_deref(),
            &self.host_name,
        )
    }
}

/// Reads a metadata object's JSON text as [`InstanceInfo::metadata`] is read.
pub(crate) fn read_metadata(text: &str) -> Result<BTreeMap<String, String>, serde_json::Error> {
    serde_json::from_str::<LenientStringMap>(text).map(|m| m.0)
}

/// A `port` or `securePort` value's JSON text read as [`InstanceInfo`] reads it: `None` when it
/// has no usable shape (the field then keeps its default).
pub(crate) fn read_port(text: &str) -> Option<PortInfo> {
    lenient::<LenientPort>(text).and_then(|p| p.0)
}

/// A string value's text when it holds no escapes (the common case, read without a parser).
fn plain_string(raw: &str) -> Option<&str> {
    raw.strip_prefix('"')?
        .strip_suffix('"')
        .filter(|s| !s.contains('\\'))
}

/// A value's text read as a lenient string (see [`LenientText`]).
fn text_value(raw: &str) -> Option<Cow<'_, str>> {
    match plain_string(raw) {
        Some(plain) => Some(Cow::Borrowed(plain)),
        None => serde_json::from_str::<LenientText<'_>>(raw).ok()?.0,
    }
}

/// A value's text read with `T`'s tolerant reader (which accepts any JSON value, and `raw` is
/// one: the document reader validated it).
fn lenient<'a, T: Deserialize<'a>>(raw: &'a str) -> Option<T> {
    serde_json::from_str(raw).ok()
}

struct ViewVisitor;

impl<'de> Visitor<'de> for ViewVisitor {
    type Value = Option<ListedInstance<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an instance object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut view = InstanceView {
            instance_id: None,
            host_name: Cow::Borrowed(""),
            app: Cow::Borrowed(""),
            ip_addr: Cow::Borrowed(""),
            status: InstanceStatus::Up,
            port: None,
            secure_port: None,
            data_center: None,
            metadata: None,
            vip_address: None,
            health_check_urls: [None, None],
            span: None,
        };
        let mut data_center = None;
        // Keys and values are taken as their texts, which records where they lie.
        while let Some(key) = map.next_key::<&'de RawValue>()? {
            let key = key.get();
            let value = map.next_value::<&'de RawValue>()?.get();
            let first_key = view.span.map_or(key.as_ptr().addr(), |(first, _)| first);
            view.span = Some((first_key, value.as_ptr().addr() + value.len()));
            // No field name holds an escape, so a key that names none is read by the parser
            // only when it holds one.
            let name = key.strip_prefix('"').and_then(|k| k.strip_suffix('"'));
            let field = match name.map(InstanceField::from_wire) {
                Some(InstanceField::Other) | None if key.contains('\\') => {
                    lenient::<InstanceField>(key).unwrap_or(InstanceField::Other)
                }
                Some(field) => field,
                None => InstanceField::Other,
            };
            match field {
                InstanceField::InstanceId => view.instance_id = text_value(value),
                InstanceField::HostName => view.host_name = text_value(value).unwrap_or_default(),
                InstanceField::App => view.app = text_value(value).unwrap_or_default(),
                InstanceField::IpAddr => view.ip_addr = text_value(value).unwrap_or_default(),
                InstanceField::Status => {
                    let status = match plain_string(value) {
                        Some(plain) => Some(InstanceStatus::from_wire(plain)),
                        None => lenient::<StatusValue>(value).and_then(|s| s.0),
                    };
                    if let Some(status) = status {
                        view.status = status;
                    }
                }
                InstanceField::Port => view.port = Some(value),
                InstanceField::SecurePort => view.secure_port = Some(value),
                InstanceField::DataCenterInfo => data_center = Some(value),
                InstanceField::Metadata => view.metadata = Some(value),
                InstanceField::VipAddress => view.vip_address = text_value(value),
                InstanceField::HealthCheckUrl => view.health_check_urls[0] = text_value(value),
                InstanceField::SecureHealthCheckUrl => {
                    view.health_check_urls[1] = text_value(value);
                }
                _ => {}
            }
        }
        if view.instance_id.as_deref().is_none_or(str::is_empty) {
            view.data_center = data_center
                .and_then(lenient::<LenientDataCenter>)
                .and_then(|dc| dc.0.map(Box::new));
        }
        Ok(Some(ListedInstance::Listed(view)))
    }

    none_unless_map!();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The view reads what the model reads, from every shape the tolerant reader accepts, and
    /// the kept text reads back as the model's instance.
    #[test]
    fn the_view_agrees_with_the_model() {
        let texts = [
            r#"{"instanceId":"a-1","hostName":"h","app":"a","ipAddr":"10.0.0.1","status":"DOWN",
               "port":{"$":"8080","@enabled":"true"},"securePort":{"$":8443,"@enabled":false},
               "metadata":{"@class":"java.util.Collections$EmptyMap"},"vipAddress":"a,b"}"#,
            r#"{ "hostName" : "h\u0041","app":"a","ipAddr":"10.0.0.1","port":8080,
               "dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon",
               "metadata":{"instance-id":"i-123"}},"metadata":{"zone":"z","n":1,"x":null} }"#,
            r#"{"instanceId":"","hostName":5,"app":"a","ipAddr":null,"status":7,"port":[1],
               "securePort":"x","vipAddress":{"k":1},"hostName":"later","st\u0061tus":"DOWN"}"#,
            r#"{"status":{"a":1},"instanceId":"x\"y"}"#,
            r#"{ }"#,
        ];
        for text in texts {
            let json = format!(r#"{{"applications":{{"application":{{"instance":[{text}]}}}}}}"#);
            let document = ListedDocument::read(json.as_bytes()).unwrap();
            let [ListedInstance::Listed(view)] = &document.listing.applications[0].instances[..]
            else {
                panic!("one listed instance expected");
            };
            let info: InstanceInfo = serde_json::from_str(text).unwrap();
            assert_eq!(view.id(), info.id(), "{text}");
            assert_eq!(view.host_name, info.host_name, "{text}");
            assert_eq!(view.app.to_ascii_uppercase(), info.app, "{text}");
            assert_eq!(view.ip_addr, info.ip_addr, "{text}");
            assert_eq!(view.status, info.status, "{text}");
            let port = |text: Option<&str>, default| text.and_then(read_port).unwrap_or(default);
            assert_eq!(port(view.port, PortInfo::default_port()), info.port);
            let secure_port = port(view.secure_port, PortInfo::default_secure_port());
            assert_eq!(secure_port, info.secure_port, "{text}");
            assert_eq!(
                view.vip_address.as_deref(),
                info.vip_address.as_deref(),
                "{text}"
            );
            let metadata = view.metadata.map(read_metadata).transpose().unwrap();
            assert_eq!(metadata.unwrap_or_default(), info.metadata, "{text}");
            let kept = document.text.of(view).unwrap();
            assert_eq!(
                serde_json::from_str::<InstanceInfo>(kept).unwrap(),
                info,
                "{text}"
            );
        }
    }

    #[test]
    fn a_lone_instance_object_is_read_in_full() {
        let json = br#"{"applications":{"application":{"instance":{"hostName":"h"}}}}"#;
        let document = ListedDocument::read(json).unwrap();
        let instances = &document.listing.applications[0].instances;
        assert!(matches!(&instances[..], [ListedInstance::Read(info)] if info.host_name == "h"));
    }

    #[test]
    fn a_document_that_is_not_utf8_is_an_error() {
        let json = b"{\"applications\":{\"x\":\"\xff\"}}";
        assert!(ListedDocument::read(json).is_err());
    }
}
