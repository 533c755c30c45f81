//! The dashboard's instance listing: one page of [`PAGE_SIZE`] instances at a time, in
//! application then instance order, each page kept until the registry records a change or the
//! page is [`MAX_AGE_MS`] old (its lease ages move on). A request for a kept page copies it; a
//! rebuild walks the application table once and renders only the page's rows, so a large
//! registry costs each request about the same as a small one.
//!
//! A page is bounded in bytes as well as in rows: each value a registration chose is cut after
//! a few dozen characters with a visible `…`, an instance shows at most [`METADATA_SHOWN`]
//! metadata entries and how many more it has, and rows stop at [`PAGE_BYTES`] with a line
//! saying how many were left out. Escaping cannot make a page larger than that either.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use crate::html::{age, escape, shown, status_class};
use crate::lease::AppTable;
use crate::record;
use crate::registry::Registry;

/// Instances shown per page.
pub(crate) const PAGE_SIZE: usize = 200;
/// How long a page is kept when nothing changes.
pub(crate) const MAX_AGE_MS: u64 = 5_000;
/// Pages kept at once; past it, the kept pages are dropped.
const KEPT_PAGES: usize = 32;
/// The bytes of rows a page holds at most.
pub(crate) const PAGE_BYTES: usize = 1024 * 1024;
/// Metadata entries shown per instance.
pub(crate) const METADATA_SHOWN: usize = 8;
/// Characters shown of an instance id or host, of a metadata key, of a metadata value.
const ID_SHOWN: usize = 128;
const KEY_SHOWN: usize = 48;
const VALUE_SHOWN: usize = 96;

/// One rendered page of the listing.
#[derive(Debug)]
pub(crate) struct Listing {
    pub(crate) apps: usize,
    pub(crate) instances: usize,
    /// The application sections and the page links.
    pub(crate) html: String,
}

/// A kept page: the registry's change count and the time it was built at, and the page.
#[derive(Debug)]
struct Kept {
    at_change: u64,
    built_ms: u64,
    listing: Arc<Listing>,
}

/// Rendered pages by number.
#[derive(Debug, Default)]
pub(crate) struct ListingCache {
    pages: Mutex<HashMap<usize, Kept>>,
}

impl ListingCache {
    /// Page `page` (from 1; past the last reads as the last) of `registry`'s listing.
    pub(crate) fn page(&self, registry: &Registry, page: usize) -> Arc<Listing> {
        let now = registry.clock.now_ms();
        let changes = registry.delta_changes();
        let page = page.max(1);
        let kept = self.lock().get(&page).and_then(|kept| {
            (kept.at_change == changes && now.saturating_sub(kept.built_ms) < MAX_AGE_MS)
                .then(|| kept.listing.clone())
        });
        if let Some(listing) = kept {
            return listing;
        }
        let listing = Arc::new(registry.with_apps(|apps| render(apps, page, now)));
        let mut pages = self.lock();
        if pages.len() >= KEPT_PAGES {
            pages.clear();
        }
        let kept = Kept {
            at_change: changes,
            built_ms: now,
            listing: listing.clone(),
        };
        pages.insert(page, kept);
        listing
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Kept>> {
        self.pages.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn render(apps: &AppTable, page: usize, now: u64) -> Listing {
    let instances: usize = apps.values().map(|leases| leases.len()).sum();
    let pages = instances.div_ceil(PAGE_SIZE).max(1);
    let page = page.min(pages);
    let (first, end) = ((page - 1) * PAGE_SIZE, (page * PAGE_SIZE).min(instances));
    let mut html = String::new();
    let mut index = 0;
    for (name, leases) in apps {
        let (from, to) = (index, index + leases.len());
        index = to;
        if to <= first {
            continue;
        }
        if from >= end {
            break;
        }
        section(
            &mut html,
            name,
            leases,
            first.saturating_sub(from),
            end - from.max(first),
            now,
        );
    }
    if apps.is_empty() {
        html.push_str(
            "<section><div class=\"empty\">No instances are registered yet.</div></section>",
        );
    }
    if pages > 1 {
        pager(&mut html, page, pages, first, end, instances);
    }
    Listing {
        apps: apps.len(),
        instances,
        html,
    }
}

/// An application's section with `take` of its instances from the `skip`th, its rows stopping
/// once `html` holds [`PAGE_BYTES`].
fn section(
    html: &mut String,
    name: &str,
    leases: &std::collections::BTreeMap<String, Arc<crate::lease::Lease>>,
    skip: usize,
    take: usize,
    now: u64,
) {
    let _ = write!(
        html,
        "<section><h2>{}<span class=\"count\">{} instance{}</span></h2><table>\
         <thead><tr><th>Instance</th><th>Status</th><th>Address</th><th>Zone</th>\
         <th>Metadata</th><th>Lease age</th></tr></thead><tbody>",
        escape(name),
        leases.len(),
        if leases.len() == 1 { "" } else { "s" }
    );
    let mut rows = leases.iter().skip(skip).take(take);
    let mut left_out = 0;
    for (id, lease) in rows.by_ref() {
        if html.len() >= PAGE_BYTES {
            left_out = 1;
            break;
        }
        row(html, id, lease, now);
    }
    let left_out = left_out + rows.count();
    if left_out > 0 {
        let _ = write!(
            html,
            "<tr class=\"cut\"><td colspan=\"6\">{left_out} more instance{} of this page \
             not shown: the page holds at most {} KiB</td></tr>",
            if left_out == 1 { "" } else { "s" },
            PAGE_BYTES / 1024
        );
    }
    html.push_str("</tbody></table></section>");
}

/// One instance's row, every value from its registration escaped and cut.
fn row(html: &mut String, id: &str, lease: &crate::lease::Lease, now: u64) {
    let info = lease.load();
    let status = record::status(&info);
    let mut metadata = String::new();
    for (k, v) in info.metadata.iter().take(METADATA_SHOWN) {
        let _ = write!(
            metadata,
            "<span class=\"meta\">{}={}</span>",
            shown(k, KEY_SHOWN),
            shown(v, VALUE_SHOWN)
        );
    }
    let more = info.metadata.len().saturating_sub(METADATA_SHOWN);
    if more > 0 {
        let _ = write!(metadata, "<span class=\"meta\">+{more} more</span>");
    }
    let _ = write!(
        html,
        "<tr class=\"instance\" data-id=\"{id_attr}\"><td class=\"mono\">{id}</td>\
         <td><span class=\"badge {class}\">{status}</span></td>\
         <td class=\"mono\">{host}:{port}</td><td>{zone}</td><td>{metadata}</td>\
         <td>{age}</td></tr>",
        id_attr = escape(id),
        id = shown(id, ID_SHOWN),
        class = status_class(status),
        status = status.as_str(),
        host = shown(&info.host_name, ID_SHOWN),
        port = info.port.port,
        zone = shown(record::zone(&info).unwrap_or("default"), KEY_SHOWN),
        metadata = if metadata.is_empty() {
            "&mdash;"
        } else {
            &metadata
        },
        age = age(now.saturating_sub(lease.registration_ms)),
    );
}

/// Links to the first, previous, next and last pages.
fn pager(html: &mut String, page: usize, pages: usize, first: usize, end: usize, total: usize) {
    let _ = write!(
        html,
        "<nav class=\"pager\" id=\"pager\"><span>Instances {} to {end} of {total}, \
         page {page} of {pages}</span>",
        first + 1
    );
    let links = [
        ("first", 1),
        ("previous", page.saturating_sub(1).max(1)),
        ("next", (page + 1).min(pages)),
        ("last", pages),
    ];
    for (label, target) in links {
        if target == page {
            let _ = write!(html, "<span class=\"off\">{label}</span>");
        } else {
            let _ = write!(html, "<a href=\"?page={target}\">{label}</a>");
        }
    }
    html.push_str("</nav>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lease::Lease;
    use feign_eureka::model::InstanceInfo;

    #[test]
    fn rows_stop_at_the_page_bytes_and_say_how_many_were_left_out() {
        let mut apps = AppTable::new();
        let leases = apps.entry("BIG".to_owned()).or_default();
        for i in 0..PAGE_SIZE {
            let id = format!("{i:03}{}", "\"".repeat(250));
            let mut info = InstanceInfo::new("BIG", "\"".repeat(2000), "127.0.0.1", 80);
            info.instance_id = Some(id.clone());
            info.metadata = (0..20)
                .map(|k| (format!("{k:02}{}", "<".repeat(100)), "\"".repeat(4000)))
                .collect();
            leases.insert(id, Arc::new(Lease::new(info, 30, 90, 0, false)));
        }
        let listing = render(&apps, 1, 0);
        assert!(
            listing.html.len() < PAGE_BYTES + 64 * 1024,
            "{} bytes",
            listing.html.len()
        );
        assert!(
            listing
                .html
                .contains("more instances of this page not shown"),
            "the cut is said"
        );
    }
}
