//! Spring's relaxed names: `connect-timeout`, `connectTimeout`, `connect_timeout` and
//! `CONNECTTIMEOUT` are one property.

/// The canonical form of a property name: lower case, `-` and `_` removed, segments kept.
pub fn relaxed(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The property an environment variable stands for, as Spring maps them: lower case, `_` → `.`
/// (`SPRING_CLOUD_LOADBALANCER_HEALTHCHECK_INTERVAL` → `spring.cloud.loadbalancer.healthcheck.interval`).
/// `None` for names that are not upper-case letters, digits and `_`.
pub(crate) fn from_env_name(name: &str) -> Option<String> {
    let conventional = !name.is_empty()
        && !name.starts_with('_')
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    conventional.then(|| name.to_ascii_lowercase().replace('_', "."))
}

/// Whether a value under this name must not be shown in messages.
pub(crate) fn looks_secret(key: &str) -> bool {
    let last = relaxed(key.rsplit('.').next().unwrap_or(key));
    ["password", "secret", "token", "credential", "key"]
        .iter()
        .any(|word| last.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relaxed_forms_agree() {
        for form in [
            "connect-timeout",
            "connectTimeout",
            "connect_timeout",
            "CONNECTTIMEOUT",
        ] {
            assert_eq!(relaxed(form), "connecttimeout");
        }
        assert_eq!(
            from_env_name("SPRING_CLOUD_OPENFEIGN_CLIENT_CONFIG_DEFAULT_READTIMEOUT").as_deref(),
            Some("spring.cloud.openfeign.client.config.default.readtimeout")
        );
        assert_eq!(from_env_name("path"), None);
        assert_eq!(from_env_name("_X"), None);
        assert!(looks_secret("eureka.client.password"));
        assert!(!looks_secret("eureka.client.region"));
    }
}
