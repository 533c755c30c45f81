//! The Eureka wire model: exactly what Eureka servers write, read tolerantly, in JSON and in
//! XML (`to_xml`, `from_xml`: the same documents in the server's XML form, see [`json_to_xml`]).
//!
//! Serialization matches Eureka's `EurekaJacksonCodec` field for field (key order, strings where
//! Eureka writes strings, `{"$":8080,"@enabled":"true"}` ports, `@class` on every data center,
//! the empty-metadata marker, arrays always), so both Java servers and Java clients accept it.
//! Deserialization follows the tolerant-reader rules every Eureka generation needs: numbers and
//! booleans as strings, single objects where arrays are expected, `overriddenstatus`, `@class`
//! keys in metadata, unknown keys, and values of the wrong type read as absent. Only malformed
//! JSON (or a missing root wrapper) fails a whole document.
//!
//! ```
//! use feign_eureka::model::{Applications, InstanceInfo, InstanceStatus};
//!
//! let json = br#"{"applications":{"versions__delta":"1","apps__hashcode":"UP_1_",
//!   "application":{"name":"ORDERS","instance":{"hostName":"10.0.0.5","app":"orders",
//!   "ipAddr":"10.0.0.5","status":"UP","port":{"$":"8080","@enabled":true},
//!   "metadata":{"@class":"java.util.Collections$EmptyMap"}}}}}"#;
//! let apps = Applications::from_json(json)?;
//! let orders = apps.application("orders").unwrap();
//! assert_eq!(orders.instances[0].port.port, 8080);
//! assert_eq!(orders.instances[0].status, InstanceStatus::Up);
//! assert!(orders.instances[0].metadata.is_empty());
//! assert_eq!(apps.reconcile_hash_code(), "UP_1_");
//! # Ok::<(), serde_json::Error>(())
//! ```

mod applications;
mod compact;
mod datacenter;
mod instance;
mod lease;
mod lenient;
mod listed;
mod metadata;
mod port;
mod status;
mod xml;

pub use applications::{
    reconcile_hash, Application, ApplicationEnvelope, Applications, ApplicationsEnvelope,
    StatusCounts,
};
pub use compact::{compact_json, compact_xml};
pub use datacenter::{
    DataCenterInfo, AMAZON_DATA_CENTER_CLASS, DEFAULT_DATA_CENTER_CLASS, MY_DATA_CENTER_CLASS,
};
pub use instance::{InstanceEnvelope, InstanceInfo};
pub use lease::LeaseInfo;
pub(crate) use listed::{read_metadata, read_port, InstanceView, ListedDocument, ListedInstance};
pub use metadata::EMPTY_METADATA_CLASS;
pub use port::PortInfo;
pub use status::{ActionType, InstanceStatus, ParseStatusError};
pub use xml::{json_to_xml, xml_to_json, xml_to_json_within, XmlError, XML_MEDIA_TYPE};
