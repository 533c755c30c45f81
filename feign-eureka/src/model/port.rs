//! `port` / `securePort`: `{"$":8080,"@enabled":"true"}` on the wire.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::lenient::{field_names, LenientBool, LenientU64};

/// A port and whether it is enabled.
///
/// Serialized exactly as Eureka writes it: `"$"` a number, `"@enabled"` the string `"true"` or
/// `"false"`. Read tolerantly: `"$"` as a number or numeric string, `"@enabled"` as a boolean or
/// string, and a bare number as an enabled port. A number outside `1..=65535` reads as port 0,
/// which is never routable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortInfo {
    /// The port number (0 when absent or out of range).
    pub port: u16,
    /// Whether the port is in use.
    pub enabled: bool,
}

impl PortInfo {
    /// An enabled port.
    pub fn enabled(port: u16) -> Self {
        PortInfo {
            port,
            enabled: true,
        }
    }

    /// A disabled port.
    pub fn disabled(port: u16) -> Self {
        PortInfo {
            port,
            enabled: false,
        }
    }

    /// Eureka's default for `port` when a registration leaves it out: 7001, enabled.
    pub fn default_port() -> Self {
        PortInfo::enabled(7001)
    }

    /// Eureka's default for `securePort` when a registration leaves it out: 7002, disabled.
    pub fn default_secure_port() -> Self {
        PortInfo::disabled(7002)
    }
}

impl Serialize for PortInfo {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("$", &self.port)?;
        map.serialize_entry("@enabled", if self.enabled { "true" } else { "false" })?;
        map.end()
    }
}

field_names!(PortField { Number = "$", Enabled = "@enabled" });

/// Reads a port leniently; `None` when the value has no usable shape.
pub(crate) struct LenientPort(pub(crate) Option<PortInfo>);

fn clamp_port(n: Option<u64>) -> u16 {
    n.and_then(|n| u16::try_from(n).ok()).unwrap_or(0)
}

impl<'de> Deserialize<'de> for LenientPort {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<PortInfo>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a port object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut port = None;
                let mut enabled = None;
                while let Some(key) = map.next_key::<PortField>()? {
                    match key {
                        PortField::Number => port = map.next_value::<LenientU64>()?.0,
                        PortField::Enabled => enabled = map.next_value::<LenientBool>()?.0,
                        PortField::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Some(PortInfo {
                    port: clamp_port(port),
                    enabled: enabled.unwrap_or(true),
                }))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Some(PortInfo::enabled(clamp_port(Some(v)))))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Some(PortInfo::enabled(clamp_port(u64::try_from(v).ok()))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Some(PortInfo::enabled(clamp_port(v.trim().parse().ok()))))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Some(PortInfo::enabled(0)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
        }
        d.deserialize_any(V).map(LenientPort)
    }
}

impl<'de> Deserialize<'de> for PortInfo {
    /// Tolerant read; a value of the wrong shape reads as port 0, disabled.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(LenientPort::deserialize(d)?
            .0
            .unwrap_or(PortInfo::disabled(0)))
    }
}
