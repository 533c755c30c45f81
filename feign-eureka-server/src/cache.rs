//! Eureka's two-level response cache: a read-write map invalidated on every change and a
//! read-only map, served lock-free, that a timer refreshes from it. Each entry keeps the
//! document as JSON and XML, each plain and gzipped.
//!
//! Nothing is rendered under the read-write map's lock, so a change (which invalidates) never
//! waits for a rendering: a rendering is kept only if no invalidation came while it ran.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use arc_swap::ArcSwap;
use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::media::Format;
use feign_eureka::model::{compact_json, compact_xml, json_to_xml};

/// What a cached payload describes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum CacheKey {
    /// `GET apps`.
    AllApps,
    /// `GET apps/delta`.
    Delta,
    /// `GET apps/{APP}` (upper-case name).
    App(String),
    /// `GET vips/{VIP}`.
    Vip(String),
    /// `GET svips/{SVIP}`.
    Svip(String),
}

impl CacheKey {
    /// Whether the document is gzipped for clients that accept it: as in Eureka, only the
    /// registry and the delta.
    pub(crate) fn is_compressed(&self) -> bool {
        matches!(self, CacheKey::AllApps | CacheKey::Delta)
    }
}

/// A rendered document: its JSON, and its other forms (XML, compact, gzipped) computed on
/// first demand.
#[derive(Debug)]
pub(crate) struct Payload {
    pub(crate) json: Bytes,
    /// True when the payload names nothing (an unknown application answers 404).
    pub(crate) empty: bool,
    /// False for a document that only a client's choice of name made (a VIP no instance has):
    /// answered, never kept, so names in requests cannot fill the cache.
    cacheable: bool,
    /// Set when the read-only level answers from it: each refresh keeps only the payloads used
    /// since the one before.
    used: AtomicBool,
    /// XML, compact JSON, compact XML.
    converted: [OnceLock<Bytes>; 3],
    /// Each of the four forms gzipped.
    gzipped: [OnceLock<Bytes>; 4],
    created_ms: u64,
}

impl Payload {
    /// A payload for `json`, created at `now_ms`.
    pub(crate) fn new(json: Vec<u8>, empty: bool, now_ms: u64) -> Self {
        Self {
            json: Bytes::from(json),
            empty,
            cacheable: !empty,
            used: AtomicBool::new(false),
            converted: Default::default(),
            gzipped: Default::default(),
            created_ms: now_ms,
        }
    }

    /// The payload, answered but never kept by the cache.
    pub(crate) fn uncached(mut self) -> Self {
        self.cacheable = false;
        self
    }

    /// The document in `format`, full or compact (`X-Eureka-Accept: compact`), converted from
    /// the JSON once.
    pub(crate) fn body(&self, format: Format, compact: bool) -> Bytes {
        // The registry's own JSON always converts.
        let convert = |i: usize, f: fn(&[u8]) -> Vec<u8>| {
            self.converted[i]
                .get_or_init(|| Bytes::from(f(&self.json)))
                .clone()
        };
        match (format, compact) {
            (Format::Json, false) => self.json.clone(),
            (Format::Xml, false) => {
                convert(0, |json| json_to_xml(json).unwrap_or_default().into_bytes())
            }
            (Format::Json, true) => convert(1, |json| compact_json(json).unwrap_or_default()),
            (Format::Xml, true) => {
                convert(2, |json| compact_xml(json).unwrap_or_default().into_bytes())
            }
        }
    }

    /// [`Payload::body`] gzip-compressed, once.
    pub(crate) fn gzip(&self, format: Format, compact: bool) -> Bytes {
        self.gzipped[Self::gzip_slot(format, compact)]
            .get_or_init(|| Bytes::from(gzip(&self.body(format, compact))))
            .clone()
    }

    fn gzip_slot(format: Format, compact: bool) -> usize {
        usize::from(format == Format::Xml) * 2 + usize::from(compact)
    }

    /// The form a request asks for ([`Payload::body`] or [`Payload::gzip`]), made now if need be.
    pub(crate) fn form(&self, form: Form) -> Bytes {
        if form.gzip {
            self.gzip(form.format, form.compact)
        } else {
            self.body(form.format, form.compact)
        }
    }

    /// The form a request asks for if it is made already: what can be answered without work.
    pub(crate) fn ready(&self, form: Form) -> Option<Bytes> {
        let made = match (form.gzip, form.format, form.compact) {
            (true, format, compact) => self.gzipped[Self::gzip_slot(format, compact)].get(),
            (false, Format::Json, false) => return Some(self.json.clone()),
            (false, Format::Xml, false) => self.converted[0].get(),
            (false, Format::Json, true) => self.converted[1].get(),
            (false, Format::Xml, true) => self.converted[2].get(),
        };
        made.cloned()
    }
}

/// One of a payload's forms: JSON or XML, full or compact, plain or gzipped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Form {
    pub(crate) format: Format,
    pub(crate) compact: bool,
    pub(crate) gzip: bool,
}

/// Compresses `data` with gzip.
pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(data.len() / 4 + 64), Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

type Map = HashMap<CacheKey, Arc<Payload>>;

/// Most entries either level holds: names in requests are client-chosen; those that name
/// nothing are never kept, and the read-only level drops what goes unused.
const MAX_ENTRIES: usize = 1024;

/// The read-write level: its payloads, and a count of invalidations so that a rendering made
/// while one came is not kept.
#[derive(Debug, Default)]
struct ReadWrite {
    map: Map,
    generation: u64,
}

/// Two-level cache of rendered payloads.
#[derive(Debug)]
pub(crate) struct ResponseCache {
    read_write: Mutex<ReadWrite>,
    read_only: ArcSwap<Map>,
    use_read_only: bool,
    expiry_ms: u64,
}

impl ResponseCache {
    /// An empty cache; `use_read_only` enables the second level.
    pub(crate) fn new(use_read_only: bool, expiry_ms: u64) -> Self {
        Self {
            read_write: Mutex::new(ReadWrite::default()),
            read_only: ArcSwap::from_pointee(Map::new()),
            use_read_only,
            expiry_ms,
        }
    }

    /// The payload for `key`, rendering it with `load` when neither level has it.
    pub(crate) fn get(
        &self,
        key: &CacheKey,
        now_ms: u64,
        load: impl FnOnce() -> Payload,
    ) -> Arc<Payload> {
        if let Some(hit) = self.read_only_hit(key) {
            return hit;
        }
        let payload = self.read_write_get(key, now_ms, load);
        if self.use_read_only && payload.cacheable && self.read_only.load().len() < MAX_ENTRIES {
            self.read_only.rcu(|map| {
                let mut map = Map::clone(map);
                map.entry(key.clone()).or_insert_with(|| payload.clone());
                map
            });
        }
        payload
    }

    /// The payload for `key` if either level holds it: what can be answered without rendering.
    pub(crate) fn peek(&self, key: &CacheKey, now_ms: u64) -> Option<Arc<Payload>> {
        self.read_only_hit(key)
            .or_else(|| self.read_write_hit(&self.lock(), key, now_ms))
    }

    fn read_only_hit(&self, key: &CacheKey) -> Option<Arc<Payload>> {
        if !self.use_read_only {
            return None;
        }
        let hit = self.read_only.load().get(key)?.clone();
        hit.used.store(true, Ordering::Relaxed);
        Some(hit)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ReadWrite> {
        self.read_write.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn read_write_hit(
        &self,
        read_write: &ReadWrite,
        key: &CacheKey,
        now_ms: u64,
    ) -> Option<Arc<Payload>> {
        read_write
            .map
            .get(key)
            .filter(|hit| now_ms.saturating_sub(hit.created_ms) < self.expiry_ms)
            .cloned()
    }

    fn read_write_get(
        &self,
        key: &CacheKey,
        now_ms: u64,
        load: impl FnOnce() -> Payload,
    ) -> Arc<Payload> {
        let generation = {
            let read_write = self.lock();
            if let Some(hit) = self.read_write_hit(&read_write, key, now_ms) {
                return hit;
            }
            read_write.generation
        };
        let payload = Arc::new(load());
        if payload.cacheable {
            let mut read_write = self.lock();
            // An invalidation while it was rendered may concern it: it is answered, not kept.
            if read_write.generation == generation {
                if read_write.map.len() >= MAX_ENTRIES {
                    read_write.map.clear();
                }
                read_write.map.insert(key.clone(), payload.clone());
            }
        }
        payload
    }

    /// Drops the read-write entries for `keys`; the read-only level keeps serving the old
    /// payloads until its next refresh.
    pub(crate) fn invalidate(&self, keys: &[CacheKey]) {
        let mut read_write = self.lock();
        for key in keys {
            read_write.map.remove(key);
        }
        read_write.generation += 1;
    }

    /// Copies fresh read-write payloads over the read-only ones (the 30 s timer), dropping those
    /// no request used since the last refresh (the registry and its delta are always kept).
    pub(crate) fn refresh_read_only(&self, now_ms: u64, load: impl Fn(&CacheKey) -> Payload) {
        if !self.use_read_only {
            return;
        }
        let current = self.read_only.load_full();
        let mut next = Map::with_capacity(current.len());
        for (key, old) in current.iter() {
            if !old.used.swap(false, Ordering::Relaxed) && !key.is_compressed() {
                continue;
            }
            let fresh = self.read_write_get(key, now_ms, || load(key));
            if !Arc::ptr_eq(old, &fresh) && key.is_compressed() {
                // Compress here, on the timer, so no JSON request pays for it (Java clients ask
                // for JSON; XML is converted and compressed on first demand).
                fresh.gzip(Format::Json, false);
            }
            next.insert(
                key.clone(),
                if Arc::ptr_eq(old, &fresh) {
                    old.clone()
                } else {
                    fresh
                },
            );
        }
        self.read_only.store(Arc::new(next));
    }

    /// How many documents the read-only level holds.
    pub(crate) fn read_only_len(&self) -> usize {
        self.read_only.load().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(body: &str, empty: bool) -> Payload {
        Payload::new(body.as_bytes().to_vec(), empty, 0)
    }

    #[test]
    fn the_read_only_level_serves_until_refreshed() {
        let cache = ResponseCache::new(true, 180_000);
        assert_eq!(
            cache
                .get(&CacheKey::AllApps, 0, || payload("v1", false))
                .json,
            "v1"
        );
        cache.invalidate(&[CacheKey::AllApps]);
        assert_eq!(
            cache
                .get(&CacheKey::AllApps, 1, || payload("v2", false))
                .json,
            "v1"
        );
        cache.refresh_read_only(2, |_| payload("v2", false));
        assert_eq!(
            cache
                .get(&CacheKey::AllApps, 3, || payload("v3", false))
                .json,
            "v2"
        );
    }

    #[test]
    fn without_the_read_only_level_invalidation_shows_at_once() {
        let cache = ResponseCache::new(false, 180_000);
        assert_eq!(
            cache.get(&CacheKey::Delta, 0, || payload("v1", false)).json,
            "v1"
        );
        cache.invalidate(&[CacheKey::Delta]);
        assert_eq!(
            cache.get(&CacheKey::Delta, 1, || payload("v2", false)).json,
            "v2"
        );
    }

    #[test]
    fn a_rendering_overtaken_by_an_invalidation_is_answered_not_kept() {
        let cache = ResponseCache::new(false, 180_000);
        let rendered = cache.get(&CacheKey::AllApps, 0, || {
            cache.invalidate(&[CacheKey::AllApps]);
            payload("v1", false)
        });
        assert_eq!(rendered.json, "v1");
        assert!(cache.peek(&CacheKey::AllApps, 1).is_none());
        cache.get(&CacheKey::AllApps, 2, || payload("v2", false));
        assert_eq!(cache.peek(&CacheKey::AllApps, 3).unwrap().json, "v2");
    }

    #[test]
    fn the_read_only_level_keeps_what_was_used_since_the_last_refresh() {
        let cache = ResponseCache::new(true, 180_000);
        let vip = |name: &str| CacheKey::Vip(name.to_owned());
        cache.get(&vip("used"), 0, || payload("u", false));
        cache.get(&vip("unused"), 0, || payload("n", false));
        cache.get(&CacheKey::AllApps, 0, || payload("all", false));
        cache.peek(&vip("used"), 1);
        cache.refresh_read_only(2, |_| payload("again", false));
        let kept = cache.read_only.load();
        assert!(kept.contains_key(&vip("used")));
        assert!(kept.contains_key(&CacheKey::AllApps));
        assert!(!kept.contains_key(&vip("unused")));
    }

    #[test]
    fn unknown_names_do_not_grow_the_cache() {
        let cache = ResponseCache::new(true, 180_000);
        for i in 0..1_500 {
            cache.get(&CacheKey::App(format!("NOPE-{i}")), 0, || payload("", true));
            cache.get(&CacheKey::Vip(format!("v-{i}")), 0, || {
                payload("{}", false).uncached()
            });
        }
        assert!(cache.read_only.load().is_empty());
        assert!(cache.read_write.lock().unwrap().map.is_empty());
    }
}
