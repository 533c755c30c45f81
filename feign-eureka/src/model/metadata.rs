//! Metadata maps: flat string maps, with Eureka's marker for an empty map.

use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// What Eureka writes for an empty metadata map (`EMPTY_METADATA`, "for backwards
/// compatibility"); readers drop the `@class` key.
pub const EMPTY_METADATA_CLASS: &str = "java.util.Collections$EmptyMap";

/// Serializes a metadata map, writing `{"@class":"java.util.Collections$EmptyMap"}` when empty.
pub(crate) struct EmptyMapAware<'a>(pub(crate) &'a BTreeMap<String, String>);

impl Serialize for EmptyMapAware<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.is_empty() {
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry("@class", EMPTY_METADATA_CLASS)?;
            return map.end();
        }
        self.0.serialize(serializer)
    }
}
