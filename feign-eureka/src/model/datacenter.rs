//! `dataCenterInfo`: polymorphic on `"@class"`, with `name` `MyOwn`, `Amazon` or `Netflix`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::lenient::{field_names, none_unless_map, LenientString, LenientStringMap};

/// The `@class` Eureka writes for every data center that is not Amazon.
pub const DEFAULT_DATA_CENTER_CLASS: &str =
    "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo";
/// The `@class` of an Amazon data center.
pub const AMAZON_DATA_CENTER_CLASS: &str = "com.netflix.appinfo.AmazonInfo";
/// The other `@class` Eureka accepts for a `MyOwn` data center.
pub const MY_DATA_CENTER_CLASS: &str = "com.netflix.appinfo.MyDataCenterInfo";

/// Where an instance runs.
///
/// Serialized as Eureka does: `@class` is [`AMAZON_DATA_CENTER_CLASS`] for `Amazon` and
/// [`DEFAULT_DATA_CENTER_CLASS`] otherwise, then `name`, then `metadata` for Amazon only (a
/// `metadata` key in a `MyOwn` data center makes Eureka answer 400).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataCenterInfo {
    /// `MyOwn`, `Amazon` or `Netflix` (Eureka rejects any other name).
    pub name: String,
    /// The `@class` as read; `None` when it was missing (a registration Eureka rejects).
    /// Ignored when serializing, which derives it from `name`.
    pub class: Option<String>,
    /// Amazon metadata (`instance-id`, `availability-zone`, ...); empty for other names.
    pub metadata: BTreeMap<String, String>,
}

impl DataCenterInfo {
    /// `{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}`,
    /// what every non-AWS instance should register with.
    pub fn my_own() -> Self {
        DataCenterInfo {
            name: "MyOwn".to_owned(),
            class: Some(DEFAULT_DATA_CENTER_CLASS.to_owned()),
            metadata: BTreeMap::new(),
        }
    }

    /// An Amazon data center with its instance metadata.
    pub fn amazon(metadata: BTreeMap<String, String>) -> Self {
        DataCenterInfo {
            name: "Amazon".to_owned(),
            class: Some(AMAZON_DATA_CENTER_CLASS.to_owned()),
            metadata,
        }
    }

    /// Whether this is an Amazon data center.
    pub fn is_amazon(&self) -> bool {
        self.name == "Amazon"
    }

    /// Whether `name` is one Eureka accepts (`Netflix`, `Amazon`, `MyOwn`).
    pub fn has_known_name(&self) -> bool {
        matches!(self.name.as_str(), "Netflix" | "Amazon" | "MyOwn")
    }

    /// Whether `@class` was present and is one Eureka accepts.
    pub fn has_known_class(&self) -> bool {
        matches!(
            self.class.as_deref(),
            Some(DEFAULT_DATA_CENTER_CLASS | MY_DATA_CENTER_CLASS | AMAZON_DATA_CENTER_CLASS)
        )
    }
}

impl Default for DataCenterInfo {
    fn default() -> Self {
        DataCenterInfo::my_own()
    }
}

impl Serialize for DataCenterInfo {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let amazon = self.is_amazon();
        let mut map = serializer.serialize_map(Some(if amazon { 3 } else { 2 }))?;
        let class = if amazon {
            AMAZON_DATA_CENTER_CLASS
        } else {
            DEFAULT_DATA_CENTER_CLASS
        };
        map.serialize_entry("@class", class)?;
        map.serialize_entry("name", &self.name)?;
        if amazon {
            map.serialize_entry("metadata", &self.metadata)?;
        }
        map.end()
    }
}

field_names!(DataCenterField { Class = "@class", Name = "name", Metadata = "metadata" });

/// Reads a data center leniently; `None` when the value is not an object.
pub(crate) struct LenientDataCenter(pub(crate) Option<DataCenterInfo>);

impl<'de> Deserialize<'de> for LenientDataCenter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<DataCenterInfo>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a data center object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut info = DataCenterInfo {
                    name: String::new(),
                    class: None,
                    metadata: BTreeMap::new(),
                };
                while let Some(key) = map.next_key::<DataCenterField>()? {
                    match key {
                        DataCenterField::Class => info.class = map.next_value::<LenientString>()?.0,
                        DataCenterField::Name => {
                            info.name = map.next_value::<LenientString>()?.0.unwrap_or_default();
                        }
                        DataCenterField::Metadata => {
                            info.metadata = map.next_value::<LenientStringMap>()?.0;
                        }
                        DataCenterField::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Some(info))
            }
            none_unless_map!();
        }
        d.deserialize_any(V).map(LenientDataCenter)
    }
}

impl<'de> Deserialize<'de> for DataCenterInfo {
    /// Tolerant read; a value that is not an object reads as `MyOwn`.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(LenientDataCenter::deserialize(d)?.0.unwrap_or_default())
    }
}
