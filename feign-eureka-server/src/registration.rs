//! A registration's body, read as a heavy job: converted from XML, parsed, checked against
//! Eureka's register validation and this server's limits, and stored.

use std::borrow::Cow;

use axum::response::Response;
use http::StatusCode;

use crate::answer::{empty, text, unparseable};
use crate::media::Format;
use crate::registry::Registry;
use crate::validate::{self, Invalid};
use feign_eureka::model::{xml_to_json_within, InstanceInfo, XmlError};

/// Reads `body` (in `format`) as a registration of `app` and stores it: 204, or the answer
/// that refuses it.
pub(crate) fn register(
    registry: &Registry,
    app: &str,
    format: Format,
    body: &[u8],
    is_replication: bool,
) -> Response {
    let limits = &registry.config.limits;
    let body = match format {
        Format::Json => Cow::Borrowed(body),
        Format::Xml => match xml_to_json_within(body, limits.xml_elements()) {
            Ok(json) => Cow::Owned(json),
            Err(XmlError::TooManyElements(limit)) => {
                return text(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("request body has more than {limit} XML elements"),
                );
            }
            Err(error) => return unparseable(format, &error),
        },
    };
    let body = body.as_ref();
    let mut info = match InstanceInfo::from_json(body) {
        Ok(info) => info,
        Err(error) => return unparseable(format, &error),
    };
    if let Err(reason) = validate::data_center(&info, format == Format::Json) {
        return unparseable(format, &reason);
    }
    adopt_metadata_instance_id(&mut info);
    let now = registry.clock.now_ms();
    let checked = validate::wire_values(body, format == Format::Xml)
        .and_then(|()| validate::registration(&info, app, limits));
    match checked {
        Err(Invalid::Unreadable(reason)) => return unparseable(format, &reason),
        Err(reason) => return text(StatusCode::BAD_REQUEST, reason),
        Ok(()) => {}
    }
    if info.last_dirty_timestamp.is_none() {
        info.last_dirty_timestamp = Some(now);
    }
    match registry.register(info, is_replication) {
        Ok(()) => empty(StatusCode::NO_CONTENT),
        Err(refused) => text(StatusCode::PAYLOAD_TOO_LARGE, refused),
    }
}

/// Spring Cloud's `CloudJacksonJson.updateIfNeeded`: an instance without `instanceId` but with
/// `metadata.instanceId` gets `hostName:metadata.instanceId`.
fn adopt_metadata_instance_id(info: &mut InstanceInfo) {
    if info.instance_id.as_deref().is_some_and(|id| !id.is_empty()) {
        return;
    }
    if let Some(meta) = info.metadata.get("instanceId").filter(|m| !m.is_empty()) {
        info.instance_id = Some(if meta.starts_with(&info.host_name) {
            meta.clone()
        } else {
            format!("{}:{meta}", info.host_name)
        });
    }
}
