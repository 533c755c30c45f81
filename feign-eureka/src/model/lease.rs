//! `leaseInfo`: renewal interval, lease duration and the server's lease timestamps.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::{Deserialize, Serialize};

use super::lenient::{field_names, none_unless_map, LenientU64};

/// Lease settings and timestamps (epoch milliseconds; 0 when unknown).
///
/// Serialized with all six keys as numbers, in the order Eureka writes them. Read tolerantly:
/// numbers or numeric strings, unknown keys ignored, the legacy `renewalTimestamp` accepted as
/// `lastRenewalTimestamp`. Intervals of 0 read as the defaults (30 s / 90 s), like Eureka's
/// `LeaseInfo.Builder`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseInfo {
    /// Heartbeat period the client promises, in seconds (default 30).
    pub renewal_interval_in_secs: u32,
    /// Lease duration after the last heartbeat, in seconds (default 90).
    pub duration_in_secs: u32,
    /// When the lease was registered (server-set).
    pub registration_timestamp: u64,
    /// When the lease was last renewed (server-set).
    pub last_renewal_timestamp: u64,
    /// When the lease was cancelled or evicted, 0 while alive (server-set).
    pub eviction_timestamp: u64,
    /// When the instance was first seen UP (server-set).
    pub service_up_timestamp: u64,
}

impl LeaseInfo {
    /// Eureka's default renewal interval, in seconds.
    pub const DEFAULT_RENEWAL_INTERVAL_SECS: u32 = 30;
    /// Eureka's default lease duration, in seconds.
    pub const DEFAULT_DURATION_SECS: u32 = 90;

    /// Lease settings with the given interval and duration (0 means the default) and no
    /// timestamps.
    pub fn new(renewal_interval_in_secs: u32, duration_in_secs: u32) -> Self {
        LeaseInfo {
            renewal_interval_in_secs: if renewal_interval_in_secs == 0 {
                Self::DEFAULT_RENEWAL_INTERVAL_SECS
            } else {
                renewal_interval_in_secs
            },
            duration_in_secs: if duration_in_secs == 0 {
                Self::DEFAULT_DURATION_SECS
            } else {
                duration_in_secs
            },
            registration_timestamp: 0,
            last_renewal_timestamp: 0,
            eviction_timestamp: 0,
            service_up_timestamp: 0,
        }
    }
}

impl Default for LeaseInfo {
    fn default() -> Self {
        LeaseInfo::new(0, 0)
    }
}

field_names!(LeaseField {
    Renewal = "renewalIntervalInSecs",
    Duration = "durationInSecs",
    Registration = "registrationTimestamp",
    LastRenewal = "lastRenewalTimestamp",
    LegacyRenewal = "renewalTimestamp",
    Eviction = "evictionTimestamp",
    ServiceUp = "serviceUpTimestamp",
});

/// Reads lease info leniently; `None` when the value is not an object.
pub(crate) struct LenientLease(pub(crate) Option<LeaseInfo>);

fn secs(v: Option<u64>) -> u32 {
    v.and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
}

impl<'de> Deserialize<'de> for LenientLease {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<LeaseInfo>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a lease info object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut renewal = None;
                let mut duration = None;
                let mut lease = LeaseInfo::new(0, 0);
                while let Some(key) = map.next_key::<LeaseField>()? {
                    let value = |v: LenientU64| v.0.unwrap_or(0);
                    match key {
                        LeaseField::Renewal => renewal = map.next_value::<LenientU64>()?.0,
                        LeaseField::Duration => duration = map.next_value::<LenientU64>()?.0,
                        LeaseField::Registration => {
                            lease.registration_timestamp = value(map.next_value()?);
                        }
                        LeaseField::LastRenewal | LeaseField::LegacyRenewal => {
                            lease.last_renewal_timestamp = value(map.next_value()?);
                        }
                        LeaseField::Eviction => lease.eviction_timestamp = value(map.next_value()?),
                        LeaseField::ServiceUp => {
                            lease.service_up_timestamp = value(map.next_value()?);
                        }
                        LeaseField::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let defaults = LeaseInfo::new(secs(renewal), secs(duration));
                lease.renewal_interval_in_secs = defaults.renewal_interval_in_secs;
                lease.duration_in_secs = defaults.duration_in_secs;
                Ok(Some(lease))
            }
            none_unless_map!();
        }
        d.deserialize_any(V).map(LenientLease)
    }
}

impl<'de> Deserialize<'de> for LeaseInfo {
    /// Tolerant read; a value that is not an object reads as the defaults.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(LenientLease::deserialize(d)?.0.unwrap_or_default())
    }
}
