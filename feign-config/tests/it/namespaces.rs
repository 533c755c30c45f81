//! `Namespace`: every key under a binder's prefix bound, ignored with a warning given once,
//! refused with a reason, or unknown with the nearest known key named.

use feign_config::{Config, Key, Namespace};
use feign_test_support::Captured;
use tracing::Level;

const SHOP: Namespace = Namespace::new(
    "shop",
    &[
        (
            "",
            &[
                Key::bound("read-timeout"),
                Key::ignored("jmx.enabled", "there is no JMX"),
                Key::ignored("decode-slash", "`/` in path values is always encoded").unless(false),
                Key::refused("oauth2.enabled", "OAuth2 is not there yet").unless(false),
            ],
        ),
        ("clients.*", &[Key::bound("url"), Key::bound("headers.**")]),
    ],
);

fn yaml(text: &str) -> Config {
    Config::from_yaml_str(text, "application.yml").unwrap()
}

fn warnings(captured: &Captured) -> Vec<String> {
    captured
        .events()
        .into_iter()
        .filter(|e| e.level == Level::WARN)
        .map(|e| e.message)
        .collect()
}

#[test]
fn bound_keys_pass_and_ignored_keys_warn_once_per_config() {
    let (captured, _guard) = Captured::install();
    let config = yaml(
        "shop:\n  readTimeout: 2s\n  jmx.enabled: true\n  decode-slash: false\n  oauth2.enabled: false\n  clients:\n    billing:\n      url: http://b\n      headers.X-Team: shop\n",
    );
    let clone = config.clone();
    SHOP.check(&config).unwrap();
    SHOP.check(&clone).unwrap();
    assert_eq!(
        warnings(&captured),
        ["`shop.jmx.enabled` in application.yml: ignored: there is no JMX"],
        "once, whoever checks; decode-slash: false and oauth2.enabled: false are what happens"
    );
    let event = &captured.events()[0];
    assert_eq!(event.target, "feign_config");
    assert_eq!(event.fields["key"], "shop.jmx.enabled");

    // Another Config (a reload) warns again.
    SHOP.check(&yaml("shop.decode-slash: true\n")).unwrap();
    assert_eq!(
        warnings(&captured)[1],
        "`shop.decode-slash` in application.yml: ignored: `/` in path values is always encoded"
    );
}

#[test]
fn refused_and_unknown_keys_are_errors_naming_the_nearest_key() {
    let error = |text: &str| SHOP.check(&yaml(text)).unwrap_err().to_string();
    assert_eq!(
        error("shop.oauth2.enabled: true\n"),
        "`shop.oauth2.enabled` in application.yml: not supported: OAuth2 is not there yet"
    );
    assert_eq!(
        error("shop.decode-slash: sometimes\n"),
        "`shop.decode-slash` in application.yml: expected true or false, got \"sometimes\""
    );
    assert_eq!(
        error("shop.read-timout: 2s\n"),
        "`shop.read-timout` in application.yml: unknown property, did you mean `shop.read-timeout`?"
    );
    assert_eq!(
        error("shop.clients.Billing.header.X-Team: a\n"),
        "`shop.clients.Billing.header.X-Team` in application.yml: unknown property, did you mean `shop.clients.Billing.headers.X-Team`?"
    );
    assert_eq!(
        error("shop.colour: red\n"),
        "`shop.colour` in application.yml: unknown property"
    );
    // Outside the prefix nothing is checked.
    SHOP.check(&yaml("shopping.anything: 1\nother: 2\n"))
        .unwrap();
}

/// The environment holds other programs' variables (`SHOP_COLOUR` of a shell script, say): an
/// unknown key from it is warned about and ignored, while the same key in a file is refused.
#[test]
fn unknown_keys_from_the_environment_are_warned_about_not_refused() {
    let (captured, _guard) = Captured::install();
    let config = Config::new().with_env_vars([("SHOP_READ_TIMOUT", "2s"), ("SHOP_COLOUR", "red")]);
    SHOP.check(&config).unwrap();
    let mut warned = warnings(&captured);
    warned.sort();
    assert_eq!(
        warned,
        [
            "`shop.colour` in environment variable SHOP_COLOUR: unknown property (ignored: an environment variable may belong to another program)",
            "`shop.read.timout` in environment variable SHOP_READ_TIMOUT: unknown property, did you mean `shop.read-timeout`? (ignored: an environment variable may belong to another program)",
        ]
    );
    let property = config.section("shop").unwrap().into_iter().next().unwrap();
    SHOP.unbound(&property).unwrap();
    // A bound key from the environment is bound as from a file.
    SHOP.check(&Config::new().with_env_vars([("SHOP_READTIMEOUT", "2s")]))
        .unwrap();
}

#[test]
fn unbound_accepts_what_the_check_accepts_and_nothing_bound() {
    let config = yaml("shop:\n  jmx.enabled: true\n  read-timeout: 1s\n  reed-timeout: 1s\n");
    let section = config.section("shop").unwrap();
    let by_key = |key: &str| section.iter().find(|p| p.key() == key).unwrap();
    SHOP.unbound(by_key("shop.jmx.enabled")).unwrap();
    assert!(SHOP
        .unbound(by_key("shop.read-timeout"))
        .unwrap_err()
        .to_string()
        .contains("unknown property"));
    assert!(SHOP
        .unbound(by_key("shop.reed-timeout"))
        .unwrap_err()
        .to_string()
        .ends_with("did you mean `shop.read-timeout`?"));
    assert_eq!(
        SHOP.bound_examples(),
        [
            "shop.read-timeout",
            "shop.clients.x.url",
            "shop.clients.x.headers.x"
        ]
    );
}
