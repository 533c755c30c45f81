//! Every key [`Builder::config`](crate::Builder::config) knows under
//! `spring.cloud.loadbalancer` and `feign.loadbalancer`: bound by `properties.rs`, or accepted
//! and ignored with a warning. Any other key there is an error naming the nearest of these.

use feign_config::{Key, Namespace, Namespaces};

/// Every namespace `Builder::config` checks before binding.
pub(in crate::balancer) const KEYS: Namespaces = Namespaces::new(&[SPRING, OURS]);

const SPRING: Namespace = Namespace::new(
    "spring.cloud.loadbalancer",
    &[("", SECTION), ("clients.*", SECTION), ("", TOP_ONLY)],
);

/// Ours, for what Spring chooses with beans rather than properties: the policy.
const OURS: Namespace = Namespace::new(
    "feign.loadbalancer",
    &[
        ("", &[Key::bound("policy")]),
        ("clients.*", &[Key::bound("policy")]),
    ],
);

/// What a key of Spring's health checks answers when the checks here do not have it.
const CHECKS: &str = "each instance is checked every `health-check.interval`";

/// The keys of a section: the top level, or `clients.<service>`.
const SECTION: &[Key] = &[
    Key::bound("configurations"),
    Key::bound("zone"),
    Key::bound("subset.instance-id"),
    Key::bound("subset.size"),
    Key::bound("health-check.initial-delay"),
    Key::bound("health-check.interval"),
    Key::bound("health-check.path.*"),
    Key::bound("health-check.port"),
    Key::bound("health-check.refetch-instances"),
    Key::bound("health-check.refetch-instances-interval"),
    Key::ignored("health-check.repeat-health-check", CHECKS).unless(true),
    Key::ignored(
        "health-check.update-results-list",
        "the healthy instances are published after every round of checks",
    )
    .unless(true),
    Key::bound("retry.enabled"),
    Key::bound("retry.max-retries-on-same-service-instance"),
    Key::bound("retry.max-retries-on-next-service-instance"),
    Key::bound("retry.retryable-status-codes"),
    Key::bound("retry.retry-on-all-operations"),
    Key::bound("retry.avoid-previous-instance"),
    Key::bound("retry.backoff.enabled"),
    Key::bound("retry.backoff.min-backoff"),
    Key::bound("retry.backoff.max-backoff"),
    Key::bound("retry.backoff.jitter"),
    Key::ignored(
        "retry.retry-on-all-exceptions",
        "a failure is retried when the retry policy finds it retryable: a connection that failed, or a retryable status",
    )
    .unless(false),
    Key::ignored(
        "retry.retryable-exceptions",
        "names Java classes: a failure is retried when the retry policy finds it retryable",
    ),
    Key::bound("cache.enabled"),
    Key::bound("cache.ttl"),
    Key::bound("cache.capacity"),
    Key::ignored(
        "cache.caffeine.spec",
        "the cache keeps one list per service for `cache.ttl`",
    ),
    Key::bound("sticky-session.instance-id-cookie-name"),
    Key::bound("sticky-session.add-service-instance-cookie"),
    Key::bound("hint-header-name"),
    Key::bound("hint.*"),
    Key::ignored(
        "x-forwarded.enabled",
        "X-Forwarded-Host and X-Forwarded-Proto are not added to requests",
    )
    .unless(false),
    Key::ignored(
        "call-get-with-request-on-delegates",
        "every pick sees the request",
    )
    .unless(true),
    Key::ignored(
        "stats.micrometer.enabled",
        "the balancer's metrics go through the `metrics` facade: they are off only while no recorder is installed",
    )
    .unless(true),
    Key::ignored(
        "stats.include-path",
        "the balancer's metrics carry no path",
    ),
    Key::ignored(
        "api-version.**",
        "version routing is set in code: ServiceConfig::version_routing",
    ),
];

/// Keys of the top level only.
const TOP_ONLY: &[Key] = &[
    Key::ignored(
        "enabled",
        "the balancer is on wherever it is given to a client: leave it out where clients call fixed URLs",
    )
    .unless(true),
    Key::ignored(
        "eager-load.clients",
        "a service's balancer is made on its first call",
    ),
    Key::ignored(
        "service-discovery.timeout",
        "an instance list is read from the supplier's snapshot, which never waits",
    ),
    Key::ignored(
        "eureka.approximate-zone-from-hostname",
        "an instance's zone is its `zone` metadata",
    )
    .unless(false),
];
