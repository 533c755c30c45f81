//! The `peerreplication/batch` wire types: replicated operations and the answers to them.

use serde::{Deserialize, Serialize};

use crate::media::Format;
use crate::record;
use feign_eureka::model::{json_to_xml, InstanceInfo, InstanceStatus};

/// The header marking a call as replicated; receivers neither re-replicate nor apply the
/// client-only override rules.
pub(crate) const REPLICATION_HEADER: &str = "x-netflix-discovery-replication";

/// One replicated operation (`ReplicationInstance`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReplicationItem {
    pub(crate) app_name: String,
    pub(crate) id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_dirty_timestamp: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) overridden_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) instance_info: Option<InstanceInfo>,
    pub(crate) action: Action,
}

/// `PeerAwareInstanceRegistryImpl.Action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Action {
    Heartbeat,
    Register,
    Cancel,
    StatusUpdate,
    DeleteStatusOverride,
}

impl ReplicationItem {
    fn new(app: &str, id: &str, action: Action) -> Self {
        Self {
            app_name: app.to_owned(),
            id: id.to_owned(),
            last_dirty_timestamp: None,
            overridden_status: None,
            status: None,
            instance_info: None,
            action,
        }
    }

    fn about(info: &InstanceInfo, action: Action) -> Self {
        let mut item = Self::new(record::app(info), &record::id(info), action);
        item.last_dirty_timestamp = Some(record::ldt(info));
        item.status = Some(record::status(info).as_str().to_owned());
        item
    }

    /// A `Register` of `info`.
    pub(crate) fn register(info: &InstanceInfo) -> Self {
        let mut item = Self::about(info, Action::Register);
        item.instance_info = Some(info.clone());
        item
    }

    /// A `Heartbeat` for the stored `info`.
    pub(crate) fn heartbeat(info: &InstanceInfo, admin: Option<InstanceStatus>) -> Self {
        let mut item = Self::about(info, Action::Heartbeat);
        item.overridden_status = admin.map(|s| s.as_str().to_owned());
        item
    }

    /// A `Cancel`.
    pub(crate) fn cancel(app: &str, id: &str) -> Self {
        Self::new(app, id, Action::Cancel)
    }

    /// A `StatusUpdate` to `status`.
    pub(crate) fn status_update(
        info: &InstanceInfo,
        status: InstanceStatus,
        ldt: Option<u64>,
    ) -> Self {
        Self::status_change(info, Action::StatusUpdate, status, ldt)
    }

    /// A `DeleteStatusOverride` leaving `status`.
    pub(crate) fn delete_override(
        info: &InstanceInfo,
        status: InstanceStatus,
        ldt: Option<u64>,
    ) -> Self {
        Self::status_change(info, Action::DeleteStatusOverride, status, ldt)
    }

    /// A status change always carries a `lastDirtyTimestamp`: the later of the stored one and
    /// the one the client sent, as the real server sends (whose handler fails with 500 on an
    /// item without one, leaving the nodes apart).
    fn status_change(
        info: &InstanceInfo,
        action: Action,
        status: InstanceStatus,
        ldt: Option<u64>,
    ) -> Self {
        let mut item = Self::about(info, action);
        item.status = Some(status.as_str().to_owned());
        item.last_dirty_timestamp = item.last_dirty_timestamp.max(ldt);
        item
    }
}

/// The batch request body.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReplicationList {
    #[serde(default)]
    pub(crate) replication_list: Vec<ReplicationItem>,
}

/// One item's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ItemResponse {
    pub(crate) status_code: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) response_entity: Option<InstanceInfo>,
}

/// The batch response body.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BatchResponse {
    #[serde(default)]
    pub(crate) response_list: Vec<ItemResponse>,
}

/// XStream's element names for the batch response, its Java class names.
const XML_RESPONSE: &str = "com.netflix.eureka.cluster.protocol.ReplicationListResponse";
const XML_ITEM: &str = "com.netflix.eureka.cluster.protocol.ReplicationInstanceResponse";

impl BatchResponse {
    /// The body in `format`: `{"responseList":[...]}`, or the XML the real server writes,
    /// `<…ReplicationListResponse><responseList><…ReplicationInstanceResponse>…`.
    pub(crate) fn to_format(&self, format: Format) -> Vec<u8> {
        // Serializing these types cannot fail: every map key is a string.
        let json = serde_json::to_vec(self).unwrap_or_default();
        if format == Format::Json {
            return json;
        }
        // Written out, as a `serde_json::Value` would sort the instance fields of an entity.
        let items = serde_json::to_string(&self.response_list).unwrap_or_default();
        let xml_shaped =
            format!(r#"{{"{XML_RESPONSE}":{{"responseList":{{"{XML_ITEM}":{items}}}}}}}"#);
        json_to_xml(xml_shaped.as_bytes())
            .unwrap_or_default()
            .into_bytes()
    }
}
