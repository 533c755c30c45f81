//! `InstanceInfo`: one registered instance, with Eureka's exact key set, order and types.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::datacenter::{DataCenterInfo, LenientDataCenter};
use super::lease::{LeaseInfo, LenientLease};
use super::lenient::{
    field_names, none_unless_map, LenientBool, LenientElement, LenientI64, LenientString,
    LenientStringMap, LenientU64,
};
use super::metadata::EmptyMapAware;
use super::port::{LenientPort, PortInfo};
use super::status::{ActionType, InstanceStatus, LenientStatus};

/// One instance as Eureka describes it (`{"instance":{...}}` on the wire, without the wrapper
/// when nested in an application).
///
/// Serialization follows Eureka's `InstanceInfoSerializer` exactly: key order `instanceId,
/// hostName, app, ipAddr, [sid], status, overriddenStatus, port, securePort, countryId,
/// dataCenterInfo, leaseInfo, metadata`, then the optional fields `appGroupName, homePageUrl,
/// statusPageUrl, healthCheckUrl, secureHealthCheckUrl, vipAddress, secureVipAddress,
/// isCoordinatingDiscoveryServer, lastUpdatedTimestamp, lastDirtyTimestamp, actionType,
/// asgName` written as strings (booleans and timestamps too) and left out when `None`. An empty
/// metadata map is written as `{"@class":"java.util.Collections$EmptyMap"}`.
///
/// Deserialization is tolerant (§3.9): numbers and booleans as strings, `overriddenStatus` or
/// `overriddenstatus`, `@class` dropped from metadata, unknown keys ignored, values of the wrong
/// type treated as absent. Absent keys take Eureka's register defaults (status `UP`, port 7001
/// enabled, secure port 7002 disabled, country 1). `app` and `appGroupName` are upper-cased.
/// Whether the result is usable is for the reader to decide (see [`InstanceInfo::id`] and the
/// emptiness of `host_name`, `ip_addr`, `app`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceInfo {
    /// `instanceId`; `None` or empty means "use [`InstanceInfo::id`]'s fallbacks".
    pub instance_id: Option<String>,
    /// `hostName`: what callers connect to.
    pub host_name: String,
    /// `app`: the application name, upper-case.
    pub app: String,
    /// `ipAddr`.
    pub ip_addr: String,
    /// `sid` (deprecated); not written when `None`, `"na"` or `"unknown"`.
    pub sid: Option<String>,
    /// `status` (default `UP` when absent).
    pub status: InstanceStatus,
    /// `overriddenStatus`: an administrator's override, `UNKNOWN` when there is none.
    pub overridden_status: InstanceStatus,
    /// `port`.
    pub port: PortInfo,
    /// `securePort`.
    pub secure_port: PortInfo,
    /// `countryId` (deprecated, 1).
    pub country_id: i64,
    /// `dataCenterInfo`; `None` when absent (Eureka rejects such registrations).
    pub data_center_info: Option<DataCenterInfo>,
    /// `leaseInfo`; `None` when absent (Eureka then uses 30 s / 90 s).
    pub lease_info: Option<LeaseInfo>,
    /// `metadata`: a flat string map (`zone`, `version`, `management.port`, ...).
    pub metadata: BTreeMap<String, String>,
    /// `appGroupName`, upper-case.
    pub app_group_name: Option<String>,
    /// `homePageUrl` (informational: never dereferenced by this crate).
    pub home_page_url: Option<String>,
    /// `statusPageUrl` (informational: never dereferenced by this crate).
    pub status_page_url: Option<String>,
    /// `healthCheckUrl` (informational: never dereferenced by this crate).
    pub health_check_url: Option<String>,
    /// `secureHealthCheckUrl` (informational: never dereferenced by this crate).
    pub secure_health_check_url: Option<String>,
    /// `vipAddress`: comma-separated VIPs; Java clients look services up by it.
    pub vip_address: Option<String>,
    /// `secureVipAddress`.
    pub secure_vip_address: Option<String>,
    /// `isCoordinatingDiscoveryServer` (written as a string).
    pub is_coordinating_discovery_server: bool,
    /// `lastUpdatedTimestamp`, epoch ms (written as a string).
    pub last_updated_timestamp: Option<u64>,
    /// `lastDirtyTimestamp`, epoch ms (written as a string).
    pub last_dirty_timestamp: Option<u64>,
    /// `actionType` in registry listings and deltas.
    pub action_type: Option<ActionType>,
    /// `asgName` (AWS only).
    pub asg_name: Option<String>,
}

impl InstanceInfo {
    /// An instance of `app` (upper-cased) at `host_name`/`ip_addr`:`port`, status `UP`, MyOwn
    /// data center, default lease, no metadata, no optional fields.
    pub fn new(
        app: &str,
        host_name: impl Into<String>,
        ip_addr: impl Into<String>,
        port: u16,
    ) -> Self {
        InstanceInfo {
            host_name: host_name.into(),
            app: app.to_ascii_uppercase(),
            ip_addr: ip_addr.into(),
            port: PortInfo::enabled(port),
            secure_port: PortInfo::disabled(443),
            data_center_info: Some(DataCenterInfo::my_own()),
            lease_info: Some(LeaseInfo::default()),
            ..InstanceInfo::absent()
        }
    }

    /// An instance with every key absent: Eureka's register defaults (status `UP`, port 7001
    /// enabled, secure port 7002 disabled, country 1), no data center, no lease. Allocates
    /// nothing, which matters when reading tens of thousands of instances.
    fn absent() -> Self {
        InstanceInfo {
            instance_id: None,
            host_name: String::new(),
            app: String::new(),
            ip_addr: String::new(),
            sid: None,
            status: InstanceStatus::Up,
            overridden_status: InstanceStatus::Unknown,
            port: PortInfo::default_port(),
            secure_port: PortInfo::default_secure_port(),
            country_id: 1,
            data_center_info: None,
            lease_info: None,
            metadata: BTreeMap::new(),
            app_group_name: None,
            home_page_url: None,
            status_page_url: None,
            health_check_url: None,
            secure_health_check_url: None,
            vip_address: None,
            secure_vip_address: None,
            is_coordinating_discovery_server: false,
            last_updated_timestamp: None,
            last_dirty_timestamp: None,
            action_type: None,
            asg_name: None,
        }
    }

    /// The instance id as Eureka computes it (`InstanceInfo.getId()`): `instanceId` when
    /// non-empty, else an Amazon data center's `instance-id`, else `hostName`.
    pub fn id(&self) -> &str {
        eureka_id(
            self.instance_id.as_deref(),
            self.data_center_info.as_ref(),
            &self.host_name,
        )
    }

    /// Reads `{"instance":{...}}` (the root wrapper is required, as in Eureka).
    pub fn from_json(json: &[u8]) -> Result<InstanceInfo, serde_json::Error> {
        serde_json::from_str::<InstanceEnvelope>(super::lenient::checked_document(json)?)
            .map(|e| e.instance)
    }

    /// Writes `{"instance":{...}}`.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Wrapper<'a> {
            instance: &'a InstanceInfo,
        }
        // Serializing this type cannot fail: every map key is a string.
        serde_json::to_string(&Wrapper { instance: self }).unwrap_or_default()
    }
}

/// Eureka's `InstanceInfo.getId()` from its parts (see [`InstanceInfo::id`]).
pub(crate) fn eureka_id<'a>(
    instance_id: Option<&'a str>,
    data_center: Option<&'a DataCenterInfo>,
    host_name: &'a str,
) -> &'a str {
    if let Some(id) = instance_id.filter(|id| !id.is_empty()) {
        return id;
    }
    if let Some(dc) = data_center.filter(|dc| dc.is_amazon()) {
        if let Some(id) = dc.metadata.get("instance-id").filter(|id| !id.is_empty()) {
            return id;
        }
    }
    host_name
}

/// `{"instance":{...}}`: the root wrapper of a single instance (register bodies, `GET
/// apps/{APP}/{ID}`, `GET instances/{ID}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceEnvelope {
    /// The wrapped instance.
    pub instance: InstanceInfo,
}

fn is_unset_sid(sid: &Option<String>) -> bool {
    matches!(sid.as_deref(), None | Some("na") | Some("unknown"))
}

impl Serialize for InstanceInfo {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(id) = &self.instance_id {
            map.serialize_entry("instanceId", id)?;
        }
        map.serialize_entry("hostName", &self.host_name)?;
        map.serialize_entry("app", &self.app)?;
        map.serialize_entry("ipAddr", &self.ip_addr)?;
        if !is_unset_sid(&self.sid) {
            map.serialize_entry("sid", &self.sid)?;
        }
        map.serialize_entry("status", &self.status)?;
        map.serialize_entry("overriddenStatus", &self.overridden_status)?;
        map.serialize_entry("port", &self.port)?;
        map.serialize_entry("securePort", &self.secure_port)?;
        map.serialize_entry("countryId", &self.country_id)?;
        if let Some(dc) = &self.data_center_info {
            map.serialize_entry("dataCenterInfo", dc)?;
        }
        if let Some(lease) = &self.lease_info {
            map.serialize_entry("leaseInfo", lease)?;
        }
        map.serialize_entry("metadata", &EmptyMapAware(&self.metadata))?;
        let optional = [
            ("appGroupName", &self.app_group_name),
            ("homePageUrl", &self.home_page_url),
            ("statusPageUrl", &self.status_page_url),
            ("healthCheckUrl", &self.health_check_url),
            ("secureHealthCheckUrl", &self.secure_health_check_url),
            ("vipAddress", &self.vip_address),
            ("secureVipAddress", &self.secure_vip_address),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                map.serialize_entry(key, value)?;
            }
        }
        let coordinating = if self.is_coordinating_discovery_server {
            "true"
        } else {
            "false"
        };
        map.serialize_entry("isCoordinatingDiscoveryServer", coordinating)?;
        if let Some(ts) = self.last_updated_timestamp {
            map.serialize_entry("lastUpdatedTimestamp", &ts.to_string())?;
        }
        if let Some(ts) = self.last_dirty_timestamp {
            map.serialize_entry("lastDirtyTimestamp", &ts.to_string())?;
        }
        if let Some(action) = &self.action_type {
            map.serialize_entry("actionType", action)?;
        }
        if let Some(asg) = &self.asg_name {
            map.serialize_entry("asgName", asg)?;
        }
        map.end()
    }
}

field_names!(pub(super) InstanceField {
    InstanceId = "instanceId",
    HostName = "hostName",
    App = "app",
    IpAddr = "ipAddr",
    Sid = "sid",
    Status = "status",
    OverriddenStatus = "overriddenStatus",
    OverriddenStatusLegacy = "overriddenstatus",
    Port = "port",
    SecurePort = "securePort",
    CountryId = "countryId",
    DataCenterInfo = "dataCenterInfo",
    LeaseInfo = "leaseInfo",
    Metadata = "metadata",
    AppGroupName = "appGroupName",
    HomePageUrl = "homePageUrl",
    StatusPageUrl = "statusPageUrl",
    HealthCheckUrl = "healthCheckUrl",
    SecureHealthCheckUrl = "secureHealthCheckUrl",
    VipAddress = "vipAddress",
    SecureVipAddress = "secureVipAddress",
    IsCoordinating = "isCoordinatingDiscoveryServer",
    LastUpdated = "lastUpdatedTimestamp",
    LastDirty = "lastDirtyTimestamp",
    ActionType = "actionType",
    AsgName = "asgName",
});

/// `s` upper-cased in place (no second allocation).
fn upper_case(mut s: String) -> String {
    s.make_ascii_uppercase();
    s
}

/// A status read leniently (`None` for null, see [`LenientStatus`]).
pub(super) struct StatusValue(pub(super) Option<InstanceStatus>);

impl<'de> Deserialize<'de> for StatusValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientStatus).map(StatusValue)
    }
}

struct InstanceVisitor;

impl<'de> Visitor<'de> for InstanceVisitor {
    type Value = Option<InstanceInfo>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an instance object")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut info = InstanceInfo::absent();
        let mut saw_camel_override = false;
        while let Some(key) = map.next_key::<InstanceField>()? {
            macro_rules! string {
                () => {
                    map.next_value::<LenientString>()?.0
                };
            }
            match key {
                InstanceField::InstanceId => info.instance_id = string!(),
                InstanceField::HostName => info.host_name = string!().unwrap_or_default(),
                InstanceField::App => info.app = upper_case(string!().unwrap_or_default()),
                InstanceField::IpAddr => info.ip_addr = string!().unwrap_or_default(),
                InstanceField::Sid => info.sid = string!(),
                InstanceField::Status => {
                    if let Some(status) = map.next_value::<StatusValue>()?.0 {
                        info.status = status;
                    }
                }
                InstanceField::OverriddenStatus => {
                    if let Some(status) = map.next_value::<StatusValue>()?.0 {
                        info.overridden_status = status;
                        saw_camel_override = true;
                    }
                }
                InstanceField::OverriddenStatusLegacy => {
                    let status = map.next_value::<StatusValue>()?.0;
                    if let (Some(status), false) = (status, saw_camel_override) {
                        info.overridden_status = status;
                    }
                }
                InstanceField::Port => {
                    if let Some(port) = map.next_value::<LenientPort>()?.0 {
                        info.port = port;
                    }
                }
                InstanceField::SecurePort => {
                    if let Some(port) = map.next_value::<LenientPort>()?.0 {
                        info.secure_port = port;
                    }
                }
                InstanceField::CountryId => {
                    info.country_id = map.next_value::<LenientI64>()?.0.unwrap_or(1);
                }
                InstanceField::DataCenterInfo => {
                    info.data_center_info = map.next_value::<LenientDataCenter>()?.0;
                }
                InstanceField::LeaseInfo => info.lease_info = map.next_value::<LenientLease>()?.0,
                InstanceField::Metadata => info.metadata = map.next_value::<LenientStringMap>()?.0,
                InstanceField::AppGroupName => info.app_group_name = string!().map(upper_case),
                InstanceField::HomePageUrl => info.home_page_url = string!(),
                InstanceField::StatusPageUrl => info.status_page_url = string!(),
                InstanceField::HealthCheckUrl => info.health_check_url = string!(),
                InstanceField::SecureHealthCheckUrl => info.secure_health_check_url = string!(),
                InstanceField::VipAddress => info.vip_address = string!(),
                InstanceField::SecureVipAddress => info.secure_vip_address = string!(),
                InstanceField::IsCoordinating => {
                    info.is_coordinating_discovery_server =
                        map.next_value::<LenientBool>()?.0.unwrap_or(false);
                }
                InstanceField::LastUpdated => {
                    info.last_updated_timestamp = map.next_value::<LenientU64>()?.0;
                }
                InstanceField::LastDirty => {
                    info.last_dirty_timestamp = map.next_value::<LenientU64>()?.0;
                }
                InstanceField::ActionType => {
                    info.action_type = string!().as_deref().and_then(ActionType::from_wire);
                }
                InstanceField::AsgName => info.asg_name = string!(),
                InstanceField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(info))
    }

    none_unless_map!();
}

impl<'de> LenientElement<'de> for InstanceInfo {
    fn deserialize_lenient<D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        d.deserialize_any(InstanceVisitor)
    }

    fn from_single_map<A: de::MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        InstanceVisitor.visit_map(map)
    }
}

impl<'de> Deserialize<'de> for InstanceInfo {
    /// Tolerant read (see the type docs); only a value that is not an object is an error.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(InstanceVisitor)?
            .ok_or_else(|| de::Error::custom("expected an instance object"))
    }
}
