//! Every key [`Builder::config`](crate::Builder::config) knows under `spring.cloud.openfeign`,
//! the older `feign` and `resilience4j`: bound by the binders beside this file, accepted and
//! ignored with a warning, or refused. Any other key there is an error naming the nearest of
//! these.

use feign_config::{Key, Namespace, Namespaces};

/// Every namespace `Builder::config` checks before binding.
pub(in crate::builder) const KEYS: Namespaces =
    Namespaces::new(&[OPENFEIGN, OLD_OPENFEIGN, RESILIENCE4J]);

const OPENFEIGN: Namespace = Namespace::new(
    "spring.cloud.openfeign",
    &[
        ("client", CLIENT),
        ("client.config.*", CLIENT_SECTION),
        ("compression", COMPRESSION),
        ("httpclient", HTTPCLIENT),
        ("circuitbreaker", CIRCUIT_BREAKER),
        ("", SIBLINGS),
    ],
);

/// Spring Cloud OpenFeign's names before 4.0, and feign-lb's `feign.loadbalancer`.
const OLD_OPENFEIGN: Namespace = Namespace::new(
    "feign",
    &[
        ("client", CLIENT),
        ("client.config.*", CLIENT_SECTION),
        ("compression", COMPRESSION),
        ("httpclient", HTTPCLIENT),
        ("circuitbreaker", CIRCUIT_BREAKER),
        ("", SIBLINGS),
        // feign_lb::Builder::config binds these.
        ("", &[Key::bound("loadbalancer.**")]),
    ],
);

const RESILIENCE4J: Namespace = Namespace::new(
    "resilience4j",
    &[
        ("circuitbreaker.configs.*", BREAKER),
        ("circuitbreaker.instances.*", BREAKER),
        ("bulkhead.configs.*", BULKHEAD),
        ("bulkhead.instances.*", BULKHEAD),
        ("timelimiter.configs.*", TIME_LIMITER),
        ("timelimiter.instances.*", TIME_LIMITER),
        ("", OTHER_MODULES),
    ],
);

/// `spring.cloud.openfeign.client.*` but the client sections (`config.rs`).
const CLIENT: &[Key] = &[
    Key::bound("default-config"),
    // Read by `Builder::live_config` (`builder/live.rs`).
    Key::bound("refresh-enabled"),
    Key::ignored(
        "default-to-properties",
        "properties always win over what the builder was given before `config`, and setters called after it win over them",
    )
    .unless(true),
    Key::ignored(
        "decode-slash",
        "a `/` in a path argument is always sent as %2F (Spring's decode-slash: false)",
    )
    .unless(false),
    Key::ignored(
        "remove-trailing-slash",
        "a path is sent as its method's template writes it",
    )
    .unless(false),
];

/// `spring.cloud.openfeign.client.config.<default or service>.*` (`config.rs`,
/// `config/hedging.rs`, `transport_config.rs`).
const CLIENT_SECTION: &[Key] = &[
    Key::bound("connect-timeout"),
    Key::bound("read-timeout"),
    Key::bound("follow-redirects"),
    Key::bound("logger-level"),
    Key::bound("dismiss404"),
    Key::bound("ssl-bundle"),
    Key::bound("url"),
    Key::bound("retryer"),
    Key::bound("default-request-headers.**"),
    Key::bound("default-query-parameters.**"),
    // Without a name: the binder's error says a map is expected.
    Key::bound("default-request-headers"),
    Key::bound("default-query-parameters"),
    // feign-rs's own: Spring has no hedged requests.
    Key::bound("hedging.enabled"),
    Key::bound("hedging.delay"),
    Key::bound("hedging.max-hedges"),
    Key::bound("hedging.percentile"),
    Key::bound("hedging.min-delay"),
    Key::ignored(
        "micrometer.enabled",
        "every client's metrics go through the `metrics` facade: they are off only while no recorder is installed",
    )
    .unless(true),
    Key::refused("error-decoder", "names Java code: use Builder::error_decoder"),
    Key::refused("request-interceptors", "names Java code: use Builder::interceptor"),
    Key::refused("response-interceptor", "names Java code: use Builder::response_interceptor"),
    Key::refused("decoder", "names Java code: use Builder::decoder"),
    Key::refused("encoder", "names Java code: use Builder::encoder"),
    Key::refused("contract", "names Java code: use the #[feign_client] attributes"),
    Key::refused("capabilities", "names Java code: use Builder::interceptor and Builder::client"),
    Key::refused("query-map-encoder", "names Java code: use #[query_map] parameters"),
    Key::refused(
        "exception-propagation-policy",
        "Feign's exception wrapping has no counterpart: the error decoder's error is the call's",
    ),
];

/// `spring.cloud.openfeign.compression.*` (`compression_config.rs`).
const COMPRESSION: &[Key] = &[
    Key::bound("request.enabled"),
    Key::bound("request.mime-types"),
    Key::bound("request.min-request-size"),
    Key::bound("response.enabled"),
    Key::ignored(
        "request.content-encoding-types",
        "request bodies are compressed with gzip only",
    ),
];

/// `spring.cloud.openfeign.httpclient.*` (`transport_config.rs`).
const HTTPCLIENT: &[Key] = &[
    Key::bound("enabled"),
    Key::bound("hc5.enabled"),
    Key::bound("ok-http.enabled"),
    Key::bound("http2.enabled"),
    Key::bound("disable-ssl-validation"),
    Key::bound("max-connections"),
    Key::bound("max-connections-per-route"),
    Key::bound("time-to-live"),
    Key::bound("time-to-live-unit"),
    Key::bound("follow-redirects"),
    Key::bound("connection-timeout"),
    Key::bound("connection-timer-repeat"),
    Key::bound("hc5.connection-request-timeout"),
    Key::bound("hc5.connection-request-timeout-unit"),
    Key::bound("hc5.pool-concurrency-policy"),
    Key::bound("hc5.pool-reuse-policy"),
    Key::bound("hc5.socket-timeout"),
    Key::bound("hc5.socket-timeout-unit"),
    Key::bound("ok-http.read-timeout"),
    Key::bound("ok-http.protocols"),
    Key::bound("http2.version"),
    Key::bound("ssl-bundle"),
    Key::bound("hc5.ssl-bundle"),
];

/// `spring.cloud.openfeign.circuitbreaker.*` (`resilience_config.rs`).
const CIRCUIT_BREAKER: &[Key] = &[
    Key::bound("enabled"),
    Key::bound("group.enabled"),
    Key::ignored(
        "alphanumeric-ids.enabled",
        "breakers are named `Trait#method` (per method) or by the service (per client)",
    ),
];

/// What a transport switch answers: the transport is reqwest's.
const REQWEST: &str =
    "the transport is always reqwest, which speaks HTTP/2 when the server offers it";

/// What OAuth2 keys answer until it is supported.
const NO_OAUTH2: &str =
    "OAuth2 is not supported yet: send tokens with BearerAuth::refreshing and a TokenProvider";

/// Spring Cloud OpenFeign's other switches, beside `client`, `compression`, `httpclient` and
/// `circuitbreaker`.
const SIBLINGS: &[Key] = &[
    // Refused when on: a client that silently sent no token would fail every call.
    Key::refused("oauth2.enabled", NO_OAUTH2).unless(false),
    Key::ignored("oauth2.client-registration-id", NO_OAUTH2),
    Key::ignored("oauth2.load-balanced", NO_OAUTH2),
    Key::ignored(
        "micrometer.enabled",
        "metrics go through the `metrics` facade: they are off only while no recorder is installed",
    )
    .unless(true),
    Key::ignored(
        "metrics.enabled",
        "metrics go through the `metrics` facade: they are off only while no recorder is installed",
    )
    .unless(true),
    Key::ignored(
        "lazy-attributes-resolution",
        "a client's settings are read when it is built",
    )
    .unless(false),
    Key::ignored(
        "cache.enabled",
        "calls are not cached: put a cache in front with Builder::layer",
    )
    .unless(false),
    Key::ignored(
        "autoconfiguration.jackson.enabled",
        "Spring Data's Page and Sort have no counterpart: decode into types of your own",
    )
    .unless(false),
    Key::ignored(
        "encoder.charset-from-content-type",
        "JSON bodies are always UTF-8",
    )
    .unless(false),
    Key::ignored("http2client.enabled", REQWEST).unless(false),
    Key::ignored("okhttp.enabled", REQWEST).unless(false),
    Key::ignored(
        "hystrix.enabled",
        "Hystrix is gone, in Spring Cloud too: use spring.cloud.openfeign.circuitbreaker.enabled",
    )
    .unless(false),
];

/// Where a failed call is decided to count, which Resilience4j sets by exception class.
const CLASSIFIER: &str =
    "the failure classifier decides which errors count: use Builder::failure_classifier";

/// What Resilience4j's health indicator keys answer.
const NO_HEALTH: &str =
    "there is no health endpoint: the state is in the metrics and CircuitBreakerConfig::subscribe";

/// `resilience4j.circuitbreaker.{configs,instances}.<name>.*` (`resilience_config.rs`).
const BREAKER: &[Key] = &[
    Key::bound("failure-rate-threshold"),
    Key::bound("slow-call-rate-threshold"),
    Key::bound("slow-call-duration-threshold"),
    Key::bound("sliding-window-size"),
    Key::bound("sliding-window-type"),
    Key::bound("minimum-number-of-calls"),
    Key::bound("wait-duration-in-open-state"),
    Key::bound("permitted-number-of-calls-in-half-open-state"),
    Key::bound("automatic-transition-from-open-to-half-open-enabled"),
    Key::bound("base-config"),
    Key::refused("record-exceptions", CLASSIFIER),
    Key::refused("ignore-exceptions", CLASSIFIER),
    Key::refused("record-failure-predicate", CLASSIFIER),
    Key::refused("ignore-exception-predicate", CLASSIFIER),
    Key::refused("record-result-predicate", CLASSIFIER),
    Key::ignored("register-health-indicator", NO_HEALTH),
    Key::ignored("allow-health-indicator-to-fail", NO_HEALTH),
    Key::ignored(
        "event-consumer-buffer-size",
        "state transitions are a stream: CircuitBreakerConfig::subscribe",
    ),
    Key::ignored(
        "writable-stack-trace-enabled",
        "errors carry no stack trace",
    ),
    Key::ignored(
        "max-wait-duration-in-half-open-state",
        "a half-open breaker stays half-open until its trial calls are done",
    ),
    Key::ignored(
        "transition-to-state-after-wait-duration",
        "an open breaker turns half-open once its wait is over",
    ),
    Key::ignored("initial-state", "a breaker starts closed"),
    Key::ignored(
        "enable-exponential-backoff",
        "the wait in the open state is always wait-duration-in-open-state",
    )
    .unless(false),
    Key::ignored(
        "exponential-backoff-multiplier",
        "the wait in the open state is always wait-duration-in-open-state",
    ),
    Key::ignored(
        "exponential-max-wait-duration-in-open-state",
        "the wait in the open state is always wait-duration-in-open-state",
    ),
    Key::ignored(
        "enable-randomized-wait",
        "the wait in the open state is always wait-duration-in-open-state",
    )
    .unless(false),
    Key::ignored(
        "randomized-wait-factor",
        "the wait in the open state is always wait-duration-in-open-state",
    ),
    Key::ignored(
        "ignore-class-binding-exceptions",
        "no exception class is loaded",
    ),
];

/// `resilience4j.bulkhead.{configs,instances}.<name>.*` (`resilience_config.rs`).
const BULKHEAD: &[Key] = &[
    Key::bound("max-concurrent-calls"),
    Key::bound("max-wait-duration"),
    Key::bound("base-config"),
    // feign-rs's own: the adaptive concurrency limit.
    Key::bound("adaptive.enabled"),
    Key::bound("adaptive.initial-limit"),
    Key::bound("adaptive.min-limit"),
    Key::bound("adaptive.max-limit"),
    Key::bound("adaptive.sample-window"),
    Key::bound("adaptive.min-samples"),
    Key::bound("adaptive.tolerance"),
    Key::bound("adaptive.smoothing"),
    Key::bound("adaptive.min-rtt-refresh"),
    Key::ignored(
        "writable-stack-trace-enabled",
        "errors carry no stack trace",
    ),
    Key::ignored(
        "event-consumer-buffer-size",
        "the bulkhead's state is in its metrics",
    ),
    Key::ignored(
        "fair-call-handling-strategy-enabled",
        "waiting calls are always served in order",
    )
    .unless(true),
];

/// `resilience4j.timelimiter.{configs,instances}.<name>.*` (`resilience_config.rs`).
const TIME_LIMITER: &[Key] = &[
    Key::bound("timeout-duration"),
    Key::bound("base-config"),
    Key::ignored(
        "cancel-running-future",
        "a call that runs out of time is always cancelled",
    )
    .unless(true),
    Key::ignored(
        "event-consumer-buffer-size",
        "a call that runs out of time fails with a timeout error (is_timeout)",
    ),
];

/// Resilience4j's other modules and settings, none of which reaches a client.
const OTHER_MODULES: &[Key] = &[
    Key::ignored("circuitbreaker.circuit-breaker-aspect-order", "there are no Spring aspects"),
    Key::ignored("bulkhead.bulkhead-aspect-order", "there are no Spring aspects"),
    Key::ignored("timelimiter.time-limiter-aspect-order", "there are no Spring aspects"),
    Key::ignored(
        "retry.**",
        "Resilience4j's retry does not reach clients: retries come from the client's Retryer or spring.cloud.loadbalancer.retry",
    ),
    Key::ignored(
        "ratelimiter.**",
        "Resilience4j's rate limiter does not reach clients: add one with Builder::layer",
    ),
    Key::ignored(
        "thread-pool-bulkhead.**",
        "the bulkhead is a semaphore: resilience4j.bulkhead",
    ),
    Key::ignored("scheduled.**", "there are no Resilience4j executors"),
];

#[cfg(test)]
mod tests {
    use feign_config::Config;

    use super::KEYS;
    use crate::builder::Builder;
    use crate::meta::ClientMeta;

    static ORDERS: ClientMeta = ClientMeta {
        trait_name: "Orders",
        service: "x",
        url: None,
        path: "",
    };

    /// Every key the table says is bound reaches a binder: its value may be refused, never
    /// its name.
    #[test]
    fn every_bound_key_reaches_a_binder() {
        for key in KEYS.bound_examples() {
            for value in ["?", "1", "true"] {
                let config = Config::new().set(key.clone(), value);
                if let Err(error) = Builder::<()>::new(&ORDERS).bind_config(&config) {
                    let message = error.to_string();
                    assert!(!message.contains("unknown property"), "{key}: {message}");
                }
            }
        }
    }
}
