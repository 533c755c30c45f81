//! Instance status and delta action type: exact, case-sensitive enum names on the wire.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The status of an instance, as Eureka spells it (`UP`, `DOWN`, ...).
///
/// Parsing is exact and case-sensitive like Eureka's `EnumLookup`: anything else (including
/// `"up"`) reads as [`InstanceStatus::Unknown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum InstanceStatus {
    /// Ready to receive traffic; the only routable status by default.
    Up,
    /// Running but unhealthy.
    Down,
    /// Starting, not ready yet.
    Starting,
    /// Taken out of traffic, usually by an administrator's override.
    OutOfService,
    /// Unknown; also what any unrecognised status string reads as.
    #[default]
    Unknown,
}

impl InstanceStatus {
    /// Every status, in the lexicographic order of their names (the reconcile hash order).
    pub const ALL: [InstanceStatus; 5] = [
        InstanceStatus::Down,
        InstanceStatus::OutOfService,
        InstanceStatus::Starting,
        InstanceStatus::Unknown,
        InstanceStatus::Up,
    ];

    /// The wire name: `UP`, `DOWN`, `STARTING`, `OUT_OF_SERVICE` or `UNKNOWN`.
    pub fn as_str(self) -> &'static str {
        match self {
            InstanceStatus::Up => "UP",
            InstanceStatus::Down => "DOWN",
            InstanceStatus::Starting => "STARTING",
            InstanceStatus::OutOfService => "OUT_OF_SERVICE",
            InstanceStatus::Unknown => "UNKNOWN",
        }
    }

    /// Reads a wire name exactly; anything else is [`InstanceStatus::Unknown`].
    pub fn from_wire(name: &str) -> InstanceStatus {
        match name {
            "UP" => InstanceStatus::Up,
            "DOWN" => InstanceStatus::Down,
            "STARTING" => InstanceStatus::Starting,
            "OUT_OF_SERVICE" => InstanceStatus::OutOfService,
            _ => InstanceStatus::Unknown,
        }
    }
}

impl fmt::Display for InstanceStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a status strictly with [`str::parse`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown instance status {0:?} (expected UP, DOWN, STARTING, OUT_OF_SERVICE or UNKNOWN)")]
pub struct ParseStatusError(String);

impl FromStr for InstanceStatus {
    type Err = ParseStatusError;

    /// Strict parsing, for configuration and admin input: unknown names are an error.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "UNKNOWN" => Ok(InstanceStatus::Unknown),
            other => match InstanceStatus::from_wire(other) {
                InstanceStatus::Unknown => Err(ParseStatusError(s.to_owned())),
                status => Ok(status),
            },
        }
    }
}

impl Serialize for InstanceStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for InstanceStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(LenientStatus)
            .map(|s| s.unwrap_or_default())
    }
}

/// Reads a status from any JSON value: a string is looked up exactly, anything else is `None`.
pub(crate) struct LenientStatus;

impl<'de> Visitor<'de> for LenientStatus {
    type Value = Option<InstanceStatus>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an instance status name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(InstanceStatus::from_wire(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Some(InstanceStatus::Unknown))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Some(InstanceStatus::Unknown))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Some(InstanceStatus::Unknown))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Some(InstanceStatus::Unknown))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(Some(InstanceStatus::Unknown))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(Some(InstanceStatus::Unknown))
    }
}

/// What a delta entry says happened to an instance (`actionType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionType {
    /// Registered or re-registered (also how a status change by re-registration shows).
    Added,
    /// Changed by an admin status operation.
    Modified,
    /// Cancelled or evicted.
    Deleted,
}

impl ActionType {
    /// The wire name: `ADDED`, `MODIFIED` or `DELETED`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionType::Added => "ADDED",
            ActionType::Modified => "MODIFIED",
            ActionType::Deleted => "DELETED",
        }
    }

    /// Reads a wire name exactly; anything else is `None`.
    pub fn from_wire(name: &str) -> Option<ActionType> {
        match name {
            "ADDED" => Some(ActionType::Added),
            "MODIFIED" => Some(ActionType::Modified),
            "DELETED" => Some(ActionType::Deleted),
            _ => None,
        }
    }
}

impl fmt::Display for ActionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ActionType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
