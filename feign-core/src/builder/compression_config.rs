//! The compression part of [`Builder::config`]: Spring Cloud OpenFeign's
//! `spring.cloud.openfeign.compression.*` (and the older `feign.compression.*`), which apply to
//! every client.

use feign_config::{Config, ConfigError};

use super::config::KEYS;
use super::Builder;

/// The prefixes, older first so that the Spring Cloud 4 names win.
const PREFIXES: [&str; 2] = ["feign.compression", "spring.cloud.openfeign.compression"];

impl<C> Builder<C> {
    /// Binds `compression.request.{enabled,mime-types,min-request-size}` and
    /// `compression.response.enabled`. The request settings change a compression already set
    /// on the builder, and `request.enabled: true` turns it on with Spring's defaults under them.
    pub(super) fn bind_compression(mut self, config: &Config) -> Result<Self, ConfigError> {
        let mut enabled = None;
        let mut settings = self.compression.request.clone().unwrap_or_default();
        for prefix in PREFIXES {
            for property in config.section(prefix)? {
                match property.rest().as_str() {
                    "request.enabled" => enabled = Some(property.as_bool()?),
                    "request.mimetypes" => settings = settings.mime_types(property.as_list()),
                    "request.minrequestsize" => {
                        settings = settings.min_request_size(property.as_number::<usize>()?);
                    }
                    "response.enabled" => self.compression.response = property.as_bool()?,
                    _ => KEYS.unbound(&property)?,
                }
            }
        }
        self.compression.request = match enabled {
            Some(true) => Some(settings),
            Some(false) => None,
            None => self.compression.request.take().map(|_| settings),
        };
        Ok(self)
    }
}
