//! Input checks: Eureka's register validation, then this server's safety limits.

use std::borrow::Cow;

use std::fmt;

use crate::config::Limits;
use feign_eureka::model::{InstanceInfo, InstanceStatus, ParseStatusError};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Why a request is refused with 400; its message is the plain-text response body.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Invalid {
    /// A reason of this server's own.
    #[error("{0}")]
    Reason(Cow<'static, str>),
    /// A status value that is not one of Eureka's.
    #[error(transparent)]
    Status(#[from] ParseStatusError),
    /// A value Eureka's readers cannot read at all: they refuse the body as unparseable.
    #[error("{0}")]
    Unreadable(String),
}

impl From<&'static str> for Invalid {
    fn from(reason: &'static str) -> Self {
        Invalid::Reason(Cow::Borrowed(reason))
    }
}

impl From<String> for Invalid {
    fn from(reason: String) -> Self {
        Invalid::Reason(Cow::Owned(reason))
    }
}

/// Checks an application name from a path or body: ASCII letters, digits, `.`, `_`, `-`.
pub(crate) fn app_name(name: &str, limits: &Limits) -> Result<(), Invalid> {
    if name.is_empty() {
        return Err("missing application name".into());
    }
    if name.len() > limits.name_len {
        return Err(format!("application name longer than {} bytes", limits.name_len).into());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if !name.chars().all(allowed) || name.chars().all(|c| c == '.') {
        return Err(format!(
            "invalid application name {name:?}: use letters, digits, '.', '_' and '-'"
        )
        .into());
    }
    Ok(())
}

/// Checks an instance id: printable, no path or query delimiters, bounded.
pub(crate) fn instance_id(id: &str, limits: &Limits) -> Result<(), Invalid> {
    if id.is_empty() {
        return Err("missing instance id".into());
    }
    if id.len() > limits.name_len {
        return Err(format!("instance id longer than {} bytes", limits.name_len).into());
    }
    let bad =
        |c: char| c.is_control() || c.is_whitespace() || matches!(c, '/' | '\\' | '?' | '#' | '%');
    if id.chars().any(bad) || id == "." || id == ".." {
        return Err(format!("invalid instance id {id:?}").into());
    }
    Ok(())
}

fn field(name: &str, value: &str, limits: &Limits) -> Result<(), Invalid> {
    if value.len() > limits.field_len {
        return Err(format!("{name} longer than {} bytes", limits.field_len).into());
    }
    if value.chars().any(char::is_control) {
        return Err(format!("{name} contains control characters").into());
    }
    Ok(())
}

/// Eureka's `addInstance` validation in its order, then the limits.
pub(crate) fn registration(
    info: &InstanceInfo,
    path_app: &str,
    limits: &Limits,
) -> Result<(), Invalid> {
    if info.id().trim().is_empty() {
        return Err("Missing instanceId".into());
    }
    if info.host_name.trim().is_empty() {
        return Err("Missing hostname".into());
    }
    if info.ip_addr.trim().is_empty() {
        return Err("Missing ip address".into());
    }
    if info.app.trim().is_empty() {
        return Err("Missing appName".into());
    }
    if info.app != path_app {
        return Err(format!(
            "Mismatched appName, expecting {path_app} but was {}",
            info.app
        )
        .into());
    }
    let Some(dc) = &info.data_center_info else {
        return Err("Missing dataCenterInfo".into());
    };
    if dc.name.is_empty() {
        return Err("Missing dataCenterInfo Name".into());
    }
    if !dc.has_known_name() {
        return Err(format!("unknown dataCenterInfo name {:?}", dc.name).into());
    }
    instance_id(info.id(), limits)?;
    field("hostName", &info.host_name, limits)?;
    field("ipAddr", &info.ip_addr, limits)?;
    let optional = [
        ("appGroupName", &info.app_group_name),
        ("homePageUrl", &info.home_page_url),
        ("statusPageUrl", &info.status_page_url),
        ("healthCheckUrl", &info.health_check_url),
        ("secureHealthCheckUrl", &info.secure_health_check_url),
        ("vipAddress", &info.vip_address),
        ("secureVipAddress", &info.secure_vip_address),
        ("asgName", &info.asg_name),
        ("sid", &info.sid),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            field(name, value, limits)?;
        }
    }
    metadata(info.metadata.iter(), limits)?;
    if let Some(dc) = &info.data_center_info {
        metadata(dc.metadata.iter(), limits)?;
    }
    Ok(())
}

/// What Eureka's readers refuse in a `dataCenterInfo` before any validation (they fail to parse
/// the body): a name other than `Netflix`, `Amazon` and `MyOwn`, and in JSON a missing or
/// unknown `@class` (the XML reader takes the declared type when `class` is missing or unknown).
pub(crate) fn data_center(info: &InstanceInfo, json: bool) -> Result<(), Invalid> {
    let Some(dc) = &info.data_center_info else {
        return Ok(());
    };
    if !dc.name.is_empty() && !dc.has_known_name() {
        return Err(format!("unknown dataCenterInfo name {:?}", dc.name).into());
    }
    if json && !dc.has_known_class() {
        return Err(format!("unknown dataCenterInfo @class {:?}", dc.class).into());
    }
    Ok(())
}

/// Bounds a metadata map (entry count, key and value sizes, no control characters in keys).
pub(crate) fn metadata<'a>(
    entries: impl ExactSizeIterator<Item = (&'a String, &'a String)>,
    limits: &Limits,
) -> Result<(), Invalid> {
    if entries.len() > limits.metadata_entries {
        return Err(format!("more than {} metadata entries", limits.metadata_entries).into());
    }
    for (key, value) in entries {
        if key.is_empty()
            || key.len() > limits.metadata_key_len
            || key.chars().any(char::is_control)
        {
            return Err(format!(
                "invalid metadata key (empty, control characters or longer than {} bytes)",
                limits.metadata_key_len
            )
            .into());
        }
        if value.len() > limits.metadata_value_len {
            return Err(format!(
                "metadata value of {key:?} longer than {} bytes",
                limits.metadata_value_len
            )
            .into());
        }
    }
    Ok(())
}

/// Refuses a registration body the wire model would read differently from what it says: a
/// key given twice in any object (the model keeps the last; `"port":{"$":8080},"port":{"$":-1}`
/// once stored port 0), an element given twice where one is read (`from_xml`: the conversion
/// makes it a list), a port outside `0..=65535`, a status that is not one of Eureka's names
/// (`status`, `overriddenStatus` and the legacy `overriddenstatus`), a lease duration that is
/// not a whole number of seconds a `u32` holds, or a timestamp that is not a whole number of
/// milliseconds. Each names the field. A body the wire model already refused never gets here.
pub(crate) fn wire_values(body: &[u8], from_xml: bool) -> Result<(), Invalid> {
    let mut reader = serde_json::Deserializer::from_slice(body);
    let document = UniqueKeys
        .deserialize(&mut reader)
        .map_err(|error| Invalid::from(error.to_string()))?;
    let Some(Value::Object(instance)) = document.get("instance") else {
        return Ok(());
    };
    if from_xml {
        if let Some((name, _)) = instance.iter().find(|(_, v)| holds_a_list(v)) {
            return Err(format!("element <{name}> is given more than once").into());
        }
    }
    for name in ["port", "securePort"] {
        if let Some(port) = instance.get(name) {
            check_port(name, port)?;
        }
    }
    for name in ["status", "overriddenStatus", "overriddenstatus"] {
        match instance.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::String(status)) => {
                status.parse::<InstanceStatus>()?;
            }
            Some(other) => return Err(format!("{name} {other} is not a status name").into()),
        }
    }
    if let Some(Value::Object(lease)) = instance.get("leaseInfo") {
        for name in ["renewalIntervalInSecs", "durationInSecs"] {
            if let Some(secs) = lease.get(name) {
                check_whole(name, secs, u64::from(u32::MAX))?;
            }
        }
    }
    for name in ["lastDirtyTimestamp", "lastUpdatedTimestamp"] {
        if let Some(ms) = instance.get(name) {
            check_whole(name, ms, u64::MAX)?;
        }
    }
    Ok(())
}

/// Whether `value` is, or holds, a list.
fn holds_a_list(value: &Value) -> bool {
    match value {
        Value::Array(_) => true,
        Value::Object(fields) => fields.values().any(holds_a_list),
        _ => false,
    }
}

/// A whole number in `0..=max`, as a number or a numeric string; null reads as absent.
fn check_whole(name: &str, value: &Value, max: u64) -> Result<(), Invalid> {
    let whole = match value {
        Value::Null => return Ok(()),
        Value::Number(n) => n.as_u64(),
        Value::String(text) => text.trim().parse::<u64>().ok(),
        _ => None,
    };
    match whole {
        Some(n) if n <= max => Ok(()),
        _ => Err(format!("{name} {value} is not a whole number from 0 to {max}").into()),
    }
}

/// Reads a JSON document as a [`Value`], refusing a key given twice in any object.
struct UniqueKeys;

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(UniqueKeys)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if fields.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key {key:?} is given more than once"
                )));
            }
            let value = map.next_value_seed(UniqueKeys)?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

/// A port as Eureka writes it (`{"$": 8080, "@enabled": "true"}`), or a bare number: its number,
/// or numeric string, must fit `0..=65535`.
fn check_port(name: &str, port: &Value) -> Result<(), Invalid> {
    let number = match port {
        Value::Object(fields) => match fields.get("$") {
            None | Some(Value::Null) => return Ok(()),
            Some(number) => number,
        },
        Value::Null => return Ok(()),
        number => number,
    };
    let whole = match number {
        Value::Number(n) => n.as_i64().or_else(|| n.as_u64().map(|_| i64::MAX)),
        Value::String(text) => text.trim().parse::<i64>().ok(),
        _ => None,
    };
    let Some(whole) = whole else {
        let shown = number
            .as_str()
            .map_or_else(|| number.to_string(), str::to_owned);
        return Err(Invalid::Unreadable(format!(
            "{name} {shown} is not a number"
        )));
    };
    let valid = (0..=65535).contains(&whole);
    if valid {
        Ok(())
    } else {
        Err(format!("{name} {number} is not a port number (0 to 65535)").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_names_reject_traversal_and_separators() {
        let limits = Limits::default();
        assert!(app_name("JAVA-SVC", &limits).is_ok());
        assert!(app_name("../X", &limits).is_err());
        assert!(app_name("A/B", &limits).is_err());
        assert!(app_name("..", &limits).is_err());
        assert!(app_name(&"A".repeat(10 * 1024), &limits).is_err());
    }

    #[test]
    fn instance_ids_reject_delimiters() {
        let limits = Limits::default();
        assert!(instance_id("10.0.0.5:rust-svc:9000", &limits).is_ok());
        assert!(instance_id("a/b", &limits).is_err());
        assert!(instance_id("a b", &limits).is_err());
        assert!(instance_id("a\r\nb", &limits).is_err());
    }
}
