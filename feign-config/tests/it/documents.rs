//! Files of several documents, each activated by its `spring.config.activate.on-profile`, as
//! Spring Boot reads them: the Java fixtures' `application.yml` among them.

use feign_config::Config;
// The Eureka server fixture's `application.yml` has two documents, the second for the
// profile expression `!basic-auth`.
use feign_test_support::{TempDir, EUREKA_SERVER_YML};

fn value(config: &Config, key: &str) -> Option<String> {
    config.get(key).unwrap().map(|p| p.as_str())
}

const PROFILED: &str = "\
app:
  region: base
  color: grey
---
spring.config.activate.on-profile: prod
app.region: prod
---
spring.config.activate.on-profile: \"!prod\"
app.color: green
---
spring:
  config.activate.on-profile: [eu, \"us & staging\"]
app.region: eu-or-us-staging
";

#[test]
fn later_documents_win_while_their_profiles_are_active() {
    let dir = TempDir::new("documents");
    let file = dir.write("application.yml", PROFILED);
    let none = Config::from_file(&file).unwrap();
    assert_eq!(value(&none, "app.region").as_deref(), Some("base"));
    assert_eq!(value(&none, "app.color").as_deref(), Some("green"));
    assert_eq!(
        none.section("app").unwrap().len(),
        2,
        "the inactive documents add nothing"
    );

    let prod = Config::from_file(&file)
        .unwrap()
        .with_env_vars([("SPRING_PROFILES_ACTIVE", "prod")]);
    assert_eq!(value(&prod, "app.region").as_deref(), Some("prod"));
    assert_eq!(value(&prod, "app.color").as_deref(), Some("grey"));

    for active in ["eu", "staging,us", "prod, eu"] {
        let config = Config::from_file(&file)
            .unwrap()
            .set("spring.profiles.active", active);
        assert_eq!(
            value(&config, "app.region").as_deref(),
            Some("eu-or-us-staging"),
            "{active}"
        );
    }
    // `spring.profiles.default` stands in while none is active.
    let default = Config::from_file(&file)
        .unwrap()
        .set("spring.profiles.default", "prod");
    assert_eq!(value(&default, "app.region").as_deref(), Some("prod"));
}

#[test]
fn properties_files_split_at_hash_dashes() {
    let config = Config::from_properties_str(
        "app.region=base\napp.list[0]=a\n#---\nspring.config.activate.on-profile=prod\napp.region=prod\napp.list[0]=b\n!---\napp.color=green\n",
        "application.properties",
    )
    .unwrap();
    assert_eq!(value(&config, "app.region").as_deref(), Some("base"));
    assert_eq!(value(&config, "app.list").as_deref(), Some("a"));
    assert_eq!(value(&config, "app.color").as_deref(), Some("green"));
    let prod = config.set("spring.profiles.active", "prod");
    assert_eq!(value(&prod, "app.region").as_deref(), Some("prod"));
    assert_eq!(value(&prod, "app.list").as_deref(), Some("b"));
}

#[test]
fn documents_spring_refuses_are_errors_naming_the_key() {
    for (text, key, reason) in [
        (
            "a: 1\n---\nspring.config.activate.on-cloud-platform: kubernetes\n",
            "spring.config.activate.on-cloud-platform",
            "activated by profile only",
        ),
        (
            "a: 1\n---\nspring.profiles: prod\n",
            "spring.profiles",
            "spring.config.activate.on-profile",
        ),
        (
            "spring.config.activate.on-profile: prod\nspring.profiles.active: eu\n",
            "spring.profiles.active",
            "not allowed",
        ),
        (
            "spring.config.activate.on-profile: a & b | c\n",
            "spring.config.activate.on-profile",
            "malformed profile expression",
        ),
        ("a: 1\n---\n- b\n", "", "not a mapping"),
    ] {
        let err = Config::from_yaml_str(text, "application.yml").unwrap_err();
        assert_eq!(err.key().unwrap_or_default(), key, "{text:?}: {err}");
        assert!(err.to_string().contains(reason), "{text:?}: {err}");
        assert_eq!(err.origin(), "application.yml");
    }
}

#[test]
fn the_eureka_server_fixture_reads_as_spring_reads_it() {
    let config = Config::from_file(EUREKA_SERVER_YML).unwrap();
    assert_eq!(value(&config, "server.port").as_deref(), Some("8761"));
    assert_eq!(
        value(&config, "eureka.client.service-url.defaultZone").as_deref(),
        Some("http://127.0.0.1:8761/eureka/")
    );
    let excluded = "spring.autoconfigure.exclude";
    assert_eq!(
        config.get(excluded).unwrap().unwrap().as_list().len(),
        4,
        "the second document counts while basic-auth is not active"
    );
    let basic_auth = config.set("spring.profiles.active", "basic-auth");
    assert!(basic_auth.get(excluded).unwrap().is_none());
}
