//! The registry's view of a model [`InstanceInfo`]: the fields its algorithms read and write.

use feign_eureka::model::{ActionType, InstanceInfo, InstanceStatus, LeaseInfo};

/// Upper-case application name.
pub(crate) fn app(info: &InstanceInfo) -> &str {
    &info.app
}

/// Eureka's `getId()`.
pub(crate) fn id(info: &InstanceInfo) -> String {
    info.id().to_owned()
}

/// The stored `lastDirtyTimestamp` (0 when absent).
pub(crate) fn ldt(info: &InstanceInfo) -> u64 {
    info.last_dirty_timestamp.unwrap_or(0)
}

/// Whether `stored` keeps out a registration whose `lastDirtyTimestamp` is `incoming`: Eureka
/// keeps the copy with the later timestamp. A copy written (its `lastUpdatedTimestamp`, this
/// registry's clock) with a timestamp more than `skew_ms` ahead of the clock holds that way for
/// `skew_ms` only: a client whose clock runs ahead registers and renews as on Eureka, and a
/// forged future timestamp cannot pin a record against the instance's later registrations.
pub(crate) fn holds_against(
    stored: &InstanceInfo,
    incoming: u64,
    now_ms: u64,
    skew_ms: u64,
) -> bool {
    let written = stored.last_updated_timestamp.unwrap_or(0);
    let bound = written.saturating_add(skew_ms);
    ldt(stored) > incoming && (ldt(stored) <= bound || now_ms <= bound)
}

/// Raises or sets `lastDirtyTimestamp`.
pub(crate) fn set_ldt(info: &mut InstanceInfo, ldt: u64) {
    info.last_dirty_timestamp = Some(ldt);
}

/// The stored status.
pub(crate) fn status(info: &InstanceInfo) -> InstanceStatus {
    info.status
}

/// Sets the status without touching `lastDirtyTimestamp` (`setStatusWithoutDirty`).
pub(crate) fn set_status(info: &mut InstanceInfo, status: InstanceStatus) {
    info.status = status;
}

/// The `overriddenStatus` field.
pub(crate) fn overridden(info: &InstanceInfo) -> InstanceStatus {
    info.overridden_status
}

/// Sets the `overriddenStatus` field.
pub(crate) fn set_overridden(info: &mut InstanceInfo, status: InstanceStatus) {
    info.overridden_status = status;
}

/// Sets `actionType`.
pub(crate) fn set_action(info: &mut InstanceInfo, action: ActionType) {
    info.action_type = Some(action);
}

/// Sets `lastUpdatedTimestamp`.
pub(crate) fn set_last_updated(info: &mut InstanceInfo, now_ms: u64) {
    info.last_updated_timestamp = Some(now_ms);
}

/// The client's renewal interval and lease duration, 0 when absent.
pub(crate) fn lease_secs(info: &InstanceInfo) -> (u32, u32) {
    info.lease_info
        .as_ref()
        .map_or((0, 0), |l| (l.renewal_interval_in_secs, l.duration_in_secs))
}

/// Replaces `leaseInfo`.
pub(crate) fn set_lease(info: &mut InstanceInfo, lease: LeaseInfo) {
    info.lease_info = Some(lease);
}

/// The VIPs of `vipAddress` (comma-separated, exact).
pub(crate) fn vips(info: &InstanceInfo) -> impl Iterator<Item = &str> {
    split_vips(info.vip_address.as_deref())
}

/// The VIPs of `secureVipAddress`.
pub(crate) fn secure_vips(info: &InstanceInfo) -> impl Iterator<Item = &str> {
    split_vips(info.secure_vip_address.as_deref())
}

fn split_vips(list: Option<&str>) -> impl Iterator<Item = &str> {
    list.into_iter()
        .flat_map(|l| l.split(','))
        .filter(|v| !v.is_empty())
}

/// Puts every pair into the metadata.
pub(crate) fn merge_metadata(info: &mut InstanceInfo, pairs: &[(String, String)]) {
    for (k, v) in pairs {
        info.metadata.insert(k.clone(), v.clone());
    }
}

/// The `zone` metadata entry, the conventional availability zone.
pub(crate) fn zone(info: &InstanceInfo) -> Option<&str> {
    info.metadata.get("zone").map(String::as_str)
}
