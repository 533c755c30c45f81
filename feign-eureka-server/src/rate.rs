//! Counters with a time dimension: renewals per minute, registration buckets (requests and
//! bytes) and failed-authentication buckets per client address, and metadata-update buckets
//! per instance.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use axum::response::Response;
use http::{header, HeaderValue, StatusCode};

use crate::answer::text;
use crate::config::RateLimit;

/// Eureka's `MeasuredRate`: counts events in the current minute and reports the last complete
/// minute.
#[derive(Debug, Default)]
pub(crate) struct MeasuredRate {
    current: AtomicU64,
    last: AtomicU64,
}

impl MeasuredRate {
    /// Counts one event.
    pub(crate) fn increment(&self) {
        self.current.fetch_add(1, Ordering::Relaxed);
    }

    /// Closes the current bucket (called once a minute).
    pub(crate) fn roll(&self) {
        let count = self.current.swap(0, Ordering::Relaxed);
        self.last.store(count, Ordering::Relaxed);
    }

    /// Events in the last complete bucket.
    pub(crate) fn last(&self) -> u64 {
        self.last.load(Ordering::Relaxed)
    }
}

/// Token buckets by key: a client address for registrations, an instance for metadata updates.
#[derive(Debug)]
pub(crate) struct RateLimiter<K = IpAddr> {
    limit: RateLimit,
    buckets: Mutex<Buckets<K>>,
}

#[derive(Debug)]
struct Buckets<K> {
    /// Tokens left and when they were counted, by key.
    by_key: HashMap<K, (f64, u64)>,
    /// The size at which buckets full again or unused for a minute are dropped.
    sweep_at: usize,
}

impl<K: Hash + Eq> RateLimiter<K> {
    /// A limiter admitting `limit.burst` at once and `limit.per_second` afterwards.
    pub(crate) fn new(limit: RateLimit) -> Self {
        Self {
            limit,
            buckets: Mutex::new(Buckets {
                by_key: HashMap::new(),
                sweep_at: SWEEP_AT,
            }),
        }
    }

    /// Takes a token for `key`; on refusal, the whole seconds until one is available.
    pub(crate) fn acquire(&self, key: K, now_ms: u64) -> Result<(), u64> {
        self.acquire_n(key, 1, now_ms)
    }

    /// Whether `key` has a token left, without taking it (a key never seen has its burst): on
    /// refusal, the whole seconds until one is available.
    pub(crate) fn check(&self, key: &K, now_ms: u64) -> Result<(), u64> {
        let rate = f64::from(self.limit.per_second.max(1));
        let buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let Some((tokens, at)) = buckets.by_key.get(key) else {
            return Ok(());
        };
        let tokens = tokens + now_ms.saturating_sub(*at) as f64 / 1000.0 * rate;
        if tokens >= 1.0 {
            Ok(())
        } else {
            Err(((1.0 - tokens) / rate).ceil().max(1.0) as u64)
        }
    }

    /// Takes `n` tokens for `key` (at most a burst's worth); on refusal, the whole seconds until
    /// they are available.
    pub(crate) fn acquire_n(&self, key: K, n: u64, now_ms: u64) -> Result<(), u64> {
        let burst = f64::from(self.limit.burst.max(1));
        let rate = f64::from(self.limit.per_second.max(1));
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.by_key.len() > buckets.sweep_at {
            buckets.by_key.retain(|_, (tokens, at)| {
                let refilled = *tokens + now_ms.saturating_sub(*at) as f64 / 1000.0 * rate;
                refilled < burst && now_ms.saturating_sub(*at) < 60_000
            });
            // Sweeping again only after as many new keys keeps each acquire O(1) on average.
            buckets.sweep_at = (buckets.by_key.len() * 2).max(SWEEP_AT);
        }
        let (tokens, at) = buckets.by_key.entry(key).or_insert((burst, now_ms));
        let elapsed = now_ms.saturating_sub(*at) as f64 / 1000.0;
        *tokens = (*tokens + elapsed * rate).min(burst);
        *at = now_ms;
        let wanted = (n as f64).min(burst);
        if *tokens >= wanted {
            *tokens -= wanted;
            Ok(())
        } else {
            Err(((wanted - *tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

/// The bucket count past which idle buckets are first dropped.
const SWEEP_AT: usize = 10_000;

/// 429 with `Retry-After: wait` seconds and `reason`.
pub(crate) fn too_many(wait: u64, reason: &'static str) -> Response {
    let mut response = text(StatusCode::TOO_MANY_REQUESTS, reason);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(wait));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_admitted_then_refused_then_refilled() {
        let limiter: RateLimiter = RateLimiter::new(RateLimit {
            burst: 2,
            per_second: 1,
        });
        let ip: IpAddr = [127, 0, 0, 1].into();
        assert!(limiter.acquire(ip, 0).is_ok());
        assert!(limiter.acquire(ip, 0).is_ok());
        assert_eq!(limiter.acquire(ip, 0), Err(1));
        assert!(limiter.acquire(ip, 1_000).is_ok());
    }

    #[test]
    fn a_check_takes_nothing() {
        let limiter: RateLimiter = RateLimiter::new(RateLimit {
            burst: 1,
            per_second: 1,
        });
        let ip: IpAddr = [127, 0, 0, 1].into();
        assert!(limiter.check(&ip, 0).is_ok());
        assert!(limiter.check(&ip, 0).is_ok());
        assert!(limiter.acquire(ip, 0).is_ok());
        assert_eq!(limiter.check(&ip, 0), Err(1));
        assert!(limiter.check(&ip, 1_000).is_ok());
    }

    #[test]
    fn tokens_are_taken_by_the_count() {
        let limiter: RateLimiter = RateLimiter::new(RateLimit {
            burst: 1000,
            per_second: 100,
        });
        let ip: IpAddr = [127, 0, 0, 1].into();
        assert!(limiter.acquire_n(ip, 600, 0).is_ok());
        assert_eq!(limiter.acquire_n(ip, 600, 0), Err(2));
        assert!(limiter.acquire_n(ip, 600, 2_000).is_ok());
    }

    #[test]
    fn buckets_full_again_are_swept_once_there_are_many() {
        let limiter = RateLimiter::new(RateLimit {
            burst: 1,
            per_second: 1,
        });
        for n in 0..=SWEEP_AT {
            assert!(limiter.acquire(("A".to_owned(), n.to_string()), 0).is_ok());
        }
        // A second later every bucket is full again; the next new key sweeps them all.
        assert!(limiter
            .acquire(("A".to_owned(), "new".to_owned()), 1_000)
            .is_ok());
        let buckets = limiter.buckets.lock().unwrap();
        assert_eq!(buckets.by_key.len(), 1);
        assert_eq!(buckets.sweep_at, SWEEP_AT);
    }

    #[test]
    fn measured_rate_reports_the_last_complete_minute() {
        let rate = MeasuredRate::default();
        rate.increment();
        rate.increment();
        assert_eq!(rate.last(), 0);
        rate.roll();
        assert_eq!(rate.last(), 2);
    }
}
