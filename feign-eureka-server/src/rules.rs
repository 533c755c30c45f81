//! Eureka's status override rules (`DownOrStartingRule`, `OverrideExistsRule`,
//! `LeaseExistsRule`, then the instance's own status), first match wins.

use feign_eureka::model::InstanceStatus;

/// Resolves the status the registry stores for an instance.
///
/// `own` is the status the instance reports, `admin_override` an administrator's override for
/// its id, `existing` the status of the lease being replaced or renewed.
pub(crate) fn resolve_status(
    own: InstanceStatus,
    admin_override: Option<InstanceStatus>,
    existing: Option<InstanceStatus>,
    is_replication: bool,
) -> InstanceStatus {
    let up_or_out =
        |s: InstanceStatus| matches!(s, InstanceStatus::Up | InstanceStatus::OutOfService);
    if !up_or_out(own) {
        return own;
    }
    if let Some(status) = admin_override {
        return status;
    }
    if !is_replication {
        if let Some(status) = existing.filter(|s| up_or_out(*s)) {
            return status;
        }
    }
    own
}

#[cfg(test)]
mod tests {
    use super::*;
    use InstanceStatus::*;

    #[test]
    fn down_and_starting_are_always_trusted() {
        assert_eq!(
            resolve_status(Down, Some(OutOfService), Some(Up), false),
            Down
        );
        assert_eq!(resolve_status(Starting, None, Some(Up), false), Starting);
        assert_eq!(resolve_status(Unknown, Some(Up), None, false), Unknown);
    }

    #[test]
    fn an_admin_override_beats_the_instance() {
        assert_eq!(
            resolve_status(Up, Some(OutOfService), Some(Up), false),
            OutOfService
        );
    }

    #[test]
    fn a_registered_instance_cannot_take_itself_out_of_service() {
        assert_eq!(resolve_status(OutOfService, None, Some(Up), false), Up);
        assert_eq!(
            resolve_status(OutOfService, None, Some(Up), true),
            OutOfService
        );
        assert_eq!(resolve_status(Up, None, Some(Down), false), Up);
        assert_eq!(
            resolve_status(OutOfService, None, None, false),
            OutOfService
        );
    }
}
