//! Input checks: Eureka's register validation, then this server's safety limits.

use std::borrow::Cow;

use crate::config::Limits;
use feign_eureka::model::{InstanceInfo, InstanceStatus, ParseStatusError};
use serde::Deserialize;
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

/// The fields of a registration body whose values the wire model reads tolerantly (a port out of
/// range reads as 0, an unknown status as `UNKNOWN`), checked as written.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireValues {
    port: Option<Value>,
    secure_port: Option<Value>,
    status: Option<Value>,
    overridden_status: Option<Value>,
}

#[derive(Deserialize)]
struct Envelope {
    instance: Option<WireValues>,
}

/// Refuses a registration body whose ports are not numbers in `0..=65535` or whose statuses are
/// not Eureka's names (`UP`, `DOWN`, `STARTING`, `OUT_OF_SERVICE`, `UNKNOWN`), naming the field.
/// A body the wire model already refused never gets here.
pub(crate) fn wire_values(body: &[u8]) -> Result<(), Invalid> {
    let Ok(Envelope {
        instance: Some(values),
    }) = serde_json::from_slice::<Envelope>(body)
    else {
        return Ok(());
    };
    for (name, port) in [("port", &values.port), ("securePort", &values.secure_port)] {
        if let Some(port) = port {
            check_port(name, port)?;
        }
    }
    for (name, status) in [
        ("status", &values.status),
        ("overriddenStatus", &values.overridden_status),
    ] {
        match status {
            None | Some(Value::Null) => {}
            Some(Value::String(status)) => {
                status.parse::<InstanceStatus>()?;
            }
            Some(other) => return Err(format!("{name} {other} is not a status name").into()),
        }
    }
    Ok(())
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

/// Refuses a `lastDirtyTimestamp` further ahead of `now_ms` than the allowed clock skew.
pub(crate) fn last_dirty(ldt: u64, now_ms: u64, limits: &Limits) -> Result<(), Invalid> {
    if ldt > now_ms.saturating_add(limits.max_clock_skew_ms) {
        return Err(format!(
            "lastDirtyTimestamp {ldt} is more than {} ms ahead of this server's clock ({now_ms})",
            limits.max_clock_skew_ms
        )
        .into());
    }
    Ok(())
}
