//! Every key [`EurekaClientBuilder::config`](crate::EurekaClientBuilder::config) knows under
//! `eureka`: bound by `mod.rs` and `tls.rs`, accepted and ignored with a warning, or refused.
//! Any other key there is an error naming the nearest of these.

use feign_config::{Key, Namespace, Namespaces};

/// The namespace `EurekaClientBuilder::config` checks before binding.
pub(super) const KEYS: Namespaces = Namespaces::new(&[EUREKA]);

const EUREKA: Namespace = Namespace::new(
    "eureka",
    &[("client", CLIENT), ("instance", INSTANCE), ("", REGISTRY)],
);

/// What a registry's setting answers.
const REGISTRY_SETTING: &str = "a registry's setting: the Eureka client does not read it";

/// What Netflix's pooled transport keys answer.
const POOL: &str = "the connection pool has no total cap";

/// What the keys of Netflix's DNS discovery of servers answer.
const NO_DNS: &str = "the servers are service-url's, not found through DNS";

/// What the keys of the Java transports answer.
const REQWEST: &str = "the transport is always reqwest";

/// `eureka.client.*`.
const CLIENT: &[Key] = &[
    Key::bound("enabled"),
    Key::bound("service-url.*"),
    Key::bound("availability-zones.*"),
    Key::bound("region"),
    Key::bound("register-with-eureka"),
    Key::bound("fetch-registry"),
    Key::bound("registry-fetch-interval-seconds"),
    Key::bound("disable-delta"),
    Key::bound("filter-only-up-instances"),
    Key::bound("eureka-server-connect-timeout-seconds"),
    Key::bound("eureka-server-read-timeout-seconds"),
    Key::bound("eureka-connection-idle-timeout-seconds"),
    Key::bound("heartbeat-executor-exponential-back-off-bound"),
    Key::bound("cache-refresh-executor-exponential-back-off-bound"),
    Key::bound("prefer-same-zone-eureka"),
    Key::bound("prefer-same-eureka"),
    Key::bound("should-enforce-fetch-registry-at-init"),
    Key::bound("healthcheck.enabled"),
    Key::bound("on-demand-update-status-change"),
    Key::bound("instance-info-replication-interval-seconds"),
    Key::bound("registry-refresh-single-vip-address"),
    Key::bound("registry-fetch-single-vip-address"),
    // feign-rs's own: push discovery.
    Key::bound("watch-enabled"),
    Key::bound("watch-timeout-seconds"),
    Key::bound("proxy-host"),
    Key::bound("proxy-port"),
    Key::bound("proxy-user-name"),
    Key::bound("proxy-password"),
    Key::bound("tls.enabled"),
    Key::bound("tls.key-store"),
    Key::bound("tls.key-store-type"),
    Key::bound("tls.key-store-password"),
    Key::bound("tls.key-password"),
    Key::bound("tls.trust-store"),
    Key::bound("tls.trust-store-type"),
    Key::bound("tls.trust-store-password"),
    Key::bound("tls.ssl-bundle"),
    Key::bound("transport.sessioned-client-reconnect-interval-seconds"),
    Key::refused(
        "backup-registry-impl",
        "names a Java class: give a BackupRegistry to EurekaClientBuilder::backup_registry",
    ),
    Key::ignored(
        "initial-instance-info-replication-interval-seconds",
        "the instance registers at start (after the registration jitter), and its changes are sent as they happen",
    ),
    Key::ignored(
        "eureka-service-url-poll-interval-seconds",
        "the service URLs are read once, at start",
    ),
    Key::ignored("eureka-server-total-connections", POOL),
    Key::ignored("eureka-server-total-connections-per-host", POOL),
    Key::ignored("eureka-server-url-context", NO_DNS),
    Key::ignored("eureka-server-port", NO_DNS),
    Key::ignored("eureka-server-dns-name", NO_DNS),
    Key::ignored("use-dns-for-fetching-service-urls", NO_DNS).unless(false),
    Key::ignored(
        "heartbeat-executor-thread-pool-size",
        "the client's tasks run on the tokio runtime",
    ),
    Key::ignored(
        "cache-refresh-executor-thread-pool-size",
        "the client's tasks run on the tokio runtime",
    ),
    Key::ignored("g-zip-content", "registry responses are always accepted gzipped").unless(true),
    Key::ignored("log-delta-diff", "a delta that does not reconcile is logged as it is"),
    Key::ignored(
        "fetch-remote-regions-registry",
        "only the client's own region is fetched",
    ),
    Key::ignored("dollar-replacement", "names are sent as JSON, without XML escapes"),
    Key::ignored(
        "escape-char-replacement",
        "names are sent as JSON, without XML escapes",
    ),
    Key::ignored("allow-redirects", "redirects are never followed").unless(false),
    Key::ignored("encoder-name", "the registry's JSON and XML are read built in"),
    Key::ignored("decoder-name", "the registry's JSON and XML are read built in"),
    Key::ignored("client-data-accept", "whole registries are fetched"),
    Key::ignored(
        "should-unregister-on-shutdown",
        "EurekaClient::shutdown deregisters the instance",
    )
    .unless(true),
    Key::ignored(
        "should-enforce-registration-at-init",
        "a registration that fails at start is retried in the background",
    )
    .unless(false),
    Key::ignored("order", "there is one discovery client"),
    Key::ignored(
        "refresh.enable",
        "a client keeps the settings it started with",
    )
    .unless(false),
    Key::ignored("jersey.enabled", REQWEST),
    Key::ignored("webclient.enabled", REQWEST),
    Key::ignored("restclient.enabled", REQWEST),
    Key::ignored(
        "timeout.**",
        "Spring's RestClient settings: the timeouts here are eureka-server-connect-timeout-seconds and eureka-server-read-timeout-seconds",
    ),
    Key::ignored(
        "transport.**",
        "Netflix's transport tuning: servers are tried in order, each kept for a session (sessioned-client-reconnect-interval-seconds)",
    ),
];

/// `eureka.instance.*`.
const INSTANCE: &[Key] = &[
    Key::bound("appname"),
    Key::bound("app-group-name"),
    Key::bound("non-secure-port"),
    Key::bound("non-secure-port-enabled"),
    Key::bound("secure-port"),
    Key::bound("secure-port-enabled"),
    Key::bound("hostname"),
    Key::bound("ip-address"),
    Key::bound("prefer-ip-address"),
    Key::bound("instance-id"),
    Key::bound("metadata-map.**"),
    Key::bound("lease-renewal-interval-in-seconds"),
    Key::bound("lease-expiration-duration-in-seconds"),
    Key::bound("virtual-host-name"),
    Key::bound("secure-virtual-host-name"),
    Key::bound("home-page-url"),
    Key::bound("status-page-url"),
    Key::bound("status-page-url-path"),
    Key::bound("health-check-url"),
    Key::bound("health-check-url-path"),
    Key::bound("initial-status"),
    Key::ignored("home-page-url-path", "give the whole home-page-url"),
    Key::ignored(
        "secure-health-check-url",
        "the health check's URL is health-check-url",
    ),
    Key::ignored(
        "actuator-prefix",
        "status-page-url-path and health-check-url-path are given whole",
    ),
    Key::ignored(
        "instance-enabled-onit",
        "the instance registers with its initial-status",
    ),
    Key::ignored("a-s-g-name", "there is no Amazon auto-scaling group"),
    Key::ignored(
        "data-center-info",
        "the data center is MyOwn unless InstanceConfig::data_center says otherwise",
    ),
    Key::ignored("namespace", "there is no Archaius namespace"),
    Key::ignored(
        "async-client-initialization",
        "the client starts when EurekaClientBuilder::start is awaited",
    )
    .unless(false),
    Key::ignored(
        "default-address-resolution-order",
        "the address is ip-address or hostname",
    ),
    Key::ignored("registry.**", REGISTRY_SETTING),
];

/// The registry's own settings, beside `client` and `instance`.
const REGISTRY: &[Key] = &[
    Key::ignored("server.**", REGISTRY_SETTING),
    Key::ignored("dashboard.**", REGISTRY_SETTING),
    Key::ignored("environment", REGISTRY_SETTING),
    Key::ignored("datacenter", REGISTRY_SETTING),
];

#[cfg(test)]
mod tests {
    use feign_config::Config;

    use super::KEYS;
    use crate::EurekaClientBuilder;

    /// Every key the table says is bound reaches a binder: its value may be refused, never
    /// its name.
    #[test]
    fn every_bound_key_reaches_a_binder() {
        for key in KEYS.bound_examples() {
            for value in ["?", "1", "true"] {
                let config = Config::new().set(key.clone(), value);
                if let Err(error) = EurekaClientBuilder::default().apply_config(&config) {
                    let message = error.to_string();
                    assert!(!message.contains("unknown property"), "{key}: {message}");
                }
            }
        }
    }
}
