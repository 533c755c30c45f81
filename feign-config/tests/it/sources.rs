//! Property sources read from real files: precedence, relaxed names, placeholders, types, and
//! errors that name the key and the file.

use std::time::Duration;

use feign_config::{Config, ConfigError, DurationUnit};
use feign_test_support::TempDir;

fn value(config: &Config, key: &str) -> Option<String> {
    config.get(key).unwrap().map(|p| p.as_str())
}

#[test]
fn later_sources_win_and_each_value_remembers_its_file() {
    let dir = TempDir::new("layers");
    let yml = dir.write(
        "application.yml",
        "app:\n  first-name: yaml\n  only-yaml: y\n  shared: yaml\n",
    );
    let properties = dir.write(
        "application.properties",
        "app.firstName=properties\napp.shared=properties\n",
    );
    let config = Config::load_from(&dir.0)
        .unwrap()
        .with_env_vars([("APP_SHARED", "env"), ("lower_case", "skipped")]);
    assert_eq!(
        value(&config, "app.first-name").as_deref(),
        Some("properties")
    );
    assert_eq!(value(&config, "app.only_yaml").as_deref(), Some("y"));
    assert_eq!(value(&config, "app.shared").as_deref(), Some("env"));
    assert_eq!(value(&config, "lower.case"), None);
    let origin = |key: &str| config.get(key).unwrap().unwrap().origin().to_owned();
    assert_eq!(origin("app.only-yaml"), yml.display().to_string());
    assert_eq!(origin("app.first-name"), properties.display().to_string());
    assert_eq!(origin("app.shared"), "environment variable APP_SHARED");
    let debug = format!("{config:?}");
    assert!(!debug.contains("yaml\""), "Debug shows no values: {debug}");
}

#[test]
fn sections_list_the_winning_value_of_each_key_once() {
    let config = Config::from_yaml_str(
        "a:\n  b:\n    read-timeout: 1\n    x: 1\n  bb: 2\n",
        "application.yml",
    )
    .unwrap()
    .set("a.b.readTimeout", "2");
    let section = config.section("a.b").unwrap();
    let rests: Vec<String> = section.iter().map(|p| p.rest()).collect();
    assert_eq!(rests, ["readtimeout", "x"]);
    assert_eq!(section[0].as_str(), "2");
    assert_eq!(section[0].origin(), "code");
    assert_eq!(config.section_names("a"), ["b"]);
    let empty_map = Config::from_yaml_str("a:\n", "application.yml").unwrap();
    assert!(empty_map.section("a").unwrap().is_empty());
}

/// An empty value set over a file's (an environment variable `A=`) wins in a section as it
/// does in `get`: the section no longer shows the file's value beneath it.
#[test]
fn an_empty_value_over_another_hides_it_in_sections_too() {
    let config = Config::from_properties_str("a=from the file\n", "application.properties")
        .unwrap()
        .with_env_vars([("A", "")]);
    assert_eq!(value(&config, "a").as_deref(), Some(""));
    assert!(config.section("a").unwrap().is_empty());
    let config = config.set("a", "from code");
    let section = config.section("a").unwrap();
    assert_eq!(section.len(), 1);
    assert_eq!(section[0].as_str(), "from code");
}

#[test]
fn placeholders_resolve_across_sources_or_fail_naming_the_key() {
    let config = Config::from_yaml_str(
        "url: http://${host}:${port:8080}/x\nhost: file-host\nloop: ${loop}\nbad: ${missing}\nopen: ${host\n",
        "application.yml",
    )
    .unwrap()
    .with_env_vars([("HOST", "env-host")]);
    assert_eq!(
        value(&config, "url").as_deref(),
        Some("http://env-host:8080/x")
    );
    for (key, reason) in [
        ("loop", "nested too deep"),
        ("bad", "`${missing}` has no value"),
        ("open", "not closed"),
    ] {
        let err = config.get(key).unwrap_err();
        assert_eq!(err.key(), Some(key));
        assert_eq!(err.origin(), "application.yml");
        assert!(err.to_string().contains(reason), "{err}");
    }
}

#[test]
fn typed_values_follow_spring() {
    let dir = TempDir::new("types");
    let path = dir.write(
        "application.properties",
        "t.ms=5000\nt.simple=5s\nt.iso=PT1M\nt.bad=fast\nb.on=on\nb.bad=maybe\n\
         l.csv=a, b,,c\nl.items[0]=x\nl.items[1]=y,z\nn.port=8080\nn.bad=80a\n\
         s.password=hunter2-but-not-a-number\nc.level=headers\n",
    );
    let config = Config::from_file(&path).unwrap();
    let get = |key: &str| config.get(key).unwrap().unwrap();
    let ms = DurationUnit::Millis;
    assert_eq!(get("t.ms").as_duration(ms).unwrap(), Duration::from_secs(5));
    assert_eq!(
        get("t.simple").as_duration(ms).unwrap(),
        Duration::from_secs(5)
    );
    assert_eq!(
        get("t.iso").as_duration(ms).unwrap(),
        Duration::from_secs(60)
    );
    assert!(get("b.on").as_bool().unwrap());
    assert_eq!(get("l.csv").as_list(), ["a", "b", "c"]);
    assert_eq!(get("l.items").as_list(), ["x", "y,z"]);
    assert_eq!(get("n.port").as_number::<u16>().unwrap(), 8080);
    assert_eq!(
        get("c.level")
            .as_choice(&[("NONE", 0), ("HEADERS", 2)])
            .unwrap(),
        2
    );
    let file = path.display().to_string();
    let errors: Vec<ConfigError> = vec![
        get("t.bad").as_duration(ms).unwrap_err(),
        get("b.bad").as_bool().unwrap_err(),
        get("n.bad").as_number::<u16>().unwrap_err(),
        get("c.level").as_choice(&[("NONE", 0)]).unwrap_err(),
    ];
    for err in &errors {
        assert_eq!(err.origin(), file);
        assert!(
            err.to_string()
                .starts_with(&format!("`{}` in {file}: ", err.key().unwrap())),
            "{err}"
        );
    }
    assert!(
        errors[1].to_string().contains("\"maybe\""),
        "short values are shown"
    );
    let secret = get("s.password")
        .as_number::<u32>()
        .unwrap_err()
        .to_string();
    assert!(!secret.contains("hunter2"), "secrets are not: {secret}");
}

#[test]
fn unreadable_and_malformed_files_are_errors_naming_them() {
    let dir = TempDir::new("bad");
    let missing = dir.0.join("absent.yml");
    let err = Config::from_file(&missing).unwrap_err();
    assert_eq!(err.origin(), missing.display().to_string());
    assert_eq!(err.key(), None);
    let broken = dir.write("application.yml", "a: [b\n");
    let err = Config::from_file(&broken).unwrap_err();
    assert!(err
        .to_string()
        .starts_with(&format!("cannot read {}", broken.display())));
    let list = dir.write("list.yaml", "- a\n- b\n");
    assert!(Config::from_file(list).is_err());
    // A missing application file is simply not read.
    let empty = TempDir::new("none");
    assert!(Config::load_from(&empty.0).is_ok());
}
