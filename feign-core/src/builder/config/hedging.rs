//! The hedging part of [`Builder::config`]: `hedging.*` in a client's section, feign-rs's own
//! keys beside OpenFeign's (Spring has no hedged requests).

use std::time::Duration;

use feign_config::{Config, ConfigError, DurationUnit, Property};

use super::PREFIXES;
use crate::builder::Builder;
use crate::hedging::HedgingConfig;

/// One `hedging.*` property, parsed.
pub(super) enum HedgingKey {
    Enabled(bool),
    Delay(Duration),
    MaxHedges(u32),
    Percentile(f64),
    MinDelay(Duration),
}

/// Parses a client section's `hedging.*` property; any other key under `hedging.` is unknown.
pub(super) fn parse(property: &Property) -> Result<HedgingKey, ConfigError> {
    match property.rest().as_str() {
        "hedging.enabled" => Ok(HedgingKey::Enabled(property.as_bool()?)),
        "hedging.delay" => Ok(HedgingKey::Delay(
            property.as_positive_duration(DurationUnit::Millis)?,
        )),
        "hedging.maxhedges" => match property.as_number::<u32>()? {
            n @ 1..=10 => Ok(HedgingKey::MaxHedges(n)),
            _ => Err(property.bad_value("expected 1 to 10 hedges per call")),
        },
        "hedging.percentile" => percentile(property).map(HedgingKey::Percentile),
        "hedging.mindelay" => Ok(HedgingKey::MinDelay(
            property.as_duration(DurationUnit::Millis)?,
        )),
        _ => Err(property.unknown()),
    }
}

/// `hedging.percentile`: a quantile such as `0.95`, or `p95` / `p99.9`.
fn percentile(property: &Property) -> Result<f64, ConfigError> {
    let text = property.as_str();
    let q = match text.trim().strip_prefix(['p', 'P']) {
        Some(percent) => percent.parse::<f64>().map(|p| p / 100.0),
        None => text.trim().parse::<f64>(),
    };
    q.ok().filter(|q| *q > 0.0 && *q < 1.0).ok_or_else(|| {
        property.bad_value("expected a percentile between 0 and 1, e.g. 0.95 or p95")
    })
}

impl<C> Builder<C> {
    /// Binds `hedging.{enabled,delay,max-hedges,percentile,min-delay}` from the `default`
    /// section, then this client's. `enabled: true` turns hedging on (with the delay from the
    /// file, or the one set in code), `false` turns it off; without `enabled` the other keys
    /// change hedging set in code and do not turn it on.
    pub(super) fn bind_hedging(
        mut self,
        config: &Config,
        default_name: &str,
    ) -> Result<Self, ConfigError> {
        let mut enabled: Option<(bool, Property)> = None;
        let (mut delay, mut max_hedges, mut percentile, mut min_delay) = (None, None, None, None);
        for section in [default_name, self.meta.service] {
            for prefix in PREFIXES {
                for property in config.section(&format!("{prefix}.config.{section}"))? {
                    if !property.rest().starts_with("hedging.") {
                        continue;
                    }
                    match parse(&property)? {
                        HedgingKey::Enabled(on) => enabled = Some((on, property)),
                        HedgingKey::Delay(d) => delay = Some(d),
                        HedgingKey::MaxHedges(n) => max_hedges = Some(n),
                        HedgingKey::Percentile(q) => percentile = Some(q),
                        HedgingKey::MinDelay(d) => min_delay = Some(d),
                    }
                }
            }
        }
        let base = match enabled {
            Some((false, _)) => None,
            Some((true, property)) => match (self.hedging, delay) {
                (Some(hedging), _) => Some(hedging),
                (None, Some(delay)) => Some(HedgingConfig::after(delay)),
                (None, None) => {
                    return Err(property.error(
                        "hedging needs a delay: set `hedging.delay` beside it (with \
                         `hedging.percentile`, the delay used until the percentile is known), or \
                         Builder::hedging in code",
                    ))
                }
            },
            None => self.hedging,
        };
        self.hedging = base.map(|mut hedging| {
            hedging.delay = delay.unwrap_or(hedging.delay);
            hedging.max_hedges = max_hedges.unwrap_or(hedging.max_hedges);
            hedging.percentile = percentile.or(hedging.percentile);
            hedging.min_delay = min_delay.unwrap_or(hedging.min_delay);
            hedging
        });
        Ok(self)
    }
}
