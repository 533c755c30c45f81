//! The HTML dashboard at `/`: server-rendered, every value escaped, refreshed by a few lines of
//! inline script allowed by a per-response CSP nonce.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use http::{header, HeaderValue, StatusCode};
use rand::Rng;

use crate::answer::shutting_down;
use crate::html::{age, escape};
use crate::registry::Registry;
use crate::state::AppState;

/// `GET /`, `GET /?page=N` for the Nth page of instances.
pub(crate) async fn page(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
) -> Response {
    if state.shutting_down.load(Ordering::SeqCst) {
        return shutting_down();
    }
    let nonce: String = (0..24)
        .map(|_| {
            char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[rand::rng().random_range(0..36)])
        })
        .collect();
    let page = query
        .as_deref()
        .and_then(|q| url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == "page"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(1);
    let (rendering, page_nonce) = (state.clone(), nonce.clone());
    let rendered = state
        .offload
        .run(move || render(&rendering, &page_nonce, page));
    let Some(html) = rendered.await else {
        return shutting_down();
    };
    let mut response = Response::new(Body::from(html));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    let csp = format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; \
         connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    );
    if let Ok(csp) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    response
}

const STYLE: &str = r#"
:root{--bg:#f5f7fa;--card:#fff;--ink:#1f2933;--muted:#616e7c;--line:#e4e7eb;--accent:#3e63dd}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
header{background:#1f2937;color:#fff;padding:18px 32px;display:flex;align-items:baseline;gap:16px;flex-wrap:wrap}
header h1{margin:0;font-size:20px;font-weight:600}
header .url{color:#cbd2d9;font-family:ui-monospace,monospace;font-size:13px}
header .updated{margin-left:auto;color:#9aa5b1;font-size:12px}
main{padding:24px 32px;max-width:1280px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:14px;margin-bottom:20px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px}
.card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:24px;font-weight:600;margin-top:4px}
.card .value.small{font-size:15px}
.note{color:var(--muted);font-size:13px;margin:-8px 0 20px}
.banner{border-radius:10px;padding:12px 16px;margin-bottom:20px;font-weight:500}
.banner.warn{background:#fff4e5;border:1px solid #f7c46c;color:#8d5b00}
.banner.ok{background:#e8f7ee;border:1px solid #9fd9b4;color:#1e6b3a}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;margin-bottom:18px;overflow:hidden}
section h2{margin:0;padding:12px 16px;font-size:15px;border-bottom:1px solid var(--line);display:flex;gap:10px;align-items:center}
section h2 .count{color:var(--muted);font-weight:400;font-size:13px}
table{width:100%;border-collapse:collapse;table-layout:fixed}
th:nth-child(1){width:26%}th:nth-child(2){width:12%}th:nth-child(3){width:16%}th:nth-child(4){width:10%}th:nth-child(5){width:26%}th:nth-child(6){width:10%}
th,td{text-align:left;padding:9px 16px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
th{color:var(--muted);font-size:12px;font-weight:500;text-transform:uppercase;letter-spacing:.04em;background:#fafbfc}
tr:last-child td{border-bottom:0}
td.mono,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
.badge{display:inline-block;padding:2px 9px;border-radius:999px;font-size:12px;font-weight:600}
.badge.up{background:#e3f9e5;color:#1f7a35}.badge.down{background:#ffe3e3;color:#b42318}
.badge.starting{background:#e0e8ff;color:#2f4bb8}.badge.oos{background:#fff1d6;color:#935f00}
.badge.unknown{background:#eceff1;color:#52606d}
.meta{display:inline-block;background:#f0f4f8;border-radius:6px;padding:1px 7px;margin:1px 4px 1px 0;font-family:ui-monospace,monospace;font-size:12px}
.empty{color:var(--muted);padding:28px 16px;text-align:center}
tr.cut td{color:var(--muted);font-style:italic}
ul.peers{margin:0;padding:10px 16px 12px 34px}
nav.pager{display:flex;gap:14px;align-items:center;margin:0 0 18px;color:var(--muted)}
nav.pager a{color:var(--accent)}nav.pager .off{color:#9aa5b1}
"#;

const SCRIPT: &str = r#"
(function(){
  var stamp=document.getElementById('updated');
  function refresh(){
    fetch(window.location.pathname+window.location.search,{cache:'no-store'}).then(function(r){return r.ok?r.text():null})
    .then(function(html){
      if(!html){return}
      var doc=new DOMParser().parseFromString(html,'text/html');
      var next=doc.querySelector('main');
      if(next){document.querySelector('main').replaceWith(next)}
      if(stamp){stamp.textContent='updated '+new Date().toLocaleTimeString()}
    }).catch(function(){if(stamp){stamp.textContent='registry unreachable, retrying'}});
  }
  setInterval(refresh,5000);
})();
"#;

fn render(state: &AppState, nonce: &str, page: usize) -> String {
    let registry = &state.registry;
    let now = registry.clock.now_ms();
    let expectation = registry.expectation();
    let expiration = registry.lease_expiration_enabled();
    let self_preservation = registry.config.self_preservation;
    let listing = state.dashboard.page(registry, page);
    let (app_count, instance_count) = (listing.apps, listing.instances);
    let banner = if self_preservation && !expiration {
        "<div class=\"banner warn\">Self-preservation is active: renewals are below the threshold, \
         so expired leases are not evicted.</div>"
    } else if self_preservation {
        "<div class=\"banner ok\">Self-preservation is on; renewals are above the threshold and \
         expired leases are evicted.</div>"
    } else {
        "<div class=\"banner ok\">Self-preservation is off: expired leases are always evicted.</div>"
    };
    let peers: Vec<String> = registry
        .replicator()
        .peers()
        .map(|p| {
            let shown = feign_core::redact::url(p).to_string();
            format!("<li class=\"mono\">{}</li>", escape(&shown))
        })
        .collect();
    let peers = if peers.is_empty() {
        "<div class=\"empty\">No peers: this registry runs alone.</div>".to_owned()
    } else {
        format!("<ul class=\"peers\">{}</ul>", peers.concat())
    };
    let apps = &listing.html;
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>feign-eureka registry</title><style nonce=\"{nonce}\">{STYLE}</style></head><body>\
         <header><h1>feign-eureka registry</h1><span class=\"url\">{url}</span>\
         <span class=\"updated\" id=\"updated\">refreshes every 5 s</span></header>\
         <main>{banner}<div class=\"cards\">\
         <div class=\"card\"><div class=\"label\">Applications</div><div class=\"value\" id=\"app-count\">{app_count}</div></div>\
         <div class=\"card\"><div class=\"label\">Instances</div><div class=\"value\" id=\"instance-count\">{instance_count}</div></div>\
         <div class=\"card\"><div class=\"label\">Renewals last minute</div><div class=\"value\">{renews}</div></div>\
         <div class=\"card\"><div class=\"label\">Renewal threshold</div><div class=\"value\">{threshold}</div></div>\
         <div class=\"card\"><div class=\"label\">Self-preservation</div><div class=\"value small\">{sp}</div></div>\
         <div class=\"card\"><div class=\"label\">Uptime</div><div class=\"value small\">{uptime}</div></div>\
         </div><p class=\"note\" id=\"threshold-note\">{note}</p>{apps}<section><h2>Peers</h2>{peers}</section></main>\
         <script nonce=\"{nonce}\">{SCRIPT}</script></body></html>",
        url = escape(&state.url),
        renews = registry.renews_last_min(),
        threshold = expectation.renews_threshold,
        sp = match (self_preservation, expiration) {
            (false, _) => "off",
            (true, true) => "on, not engaged",
            (true, false) => "on, engaged",
        },
        uptime = age(now.saturating_sub(state.started_ms)),
        note = threshold_note(registry, expectation.expected_clients),
    )
}

/// The line under the figures saying what the renewal threshold is and when self-preservation
/// starts: renewals are counted over the last complete minute, so they read below the
/// threshold for the registry's first minute and after instances join.
fn threshold_note(registry: &Registry, expected_clients: u32) -> String {
    let config = &registry.config;
    let per_minute = 60 / config.expected_client_renewal_interval_secs.max(1);
    let percent = (config.renewal_percent_threshold * 100.0).round();
    let when = if config.self_preservation {
        "While renewals are at or below it, self-preservation keeps expired leases (many clients \
         going quiet at once more likely means this registry lost the network than that they all \
         stopped); above it, expired leases are evicted."
    } else {
        "Self-preservation is off, so expired leases are evicted whatever the count."
    };
    format!(
        "The renewal threshold is {percent}% of the renewals expected a minute: {expected_clients} \
         clients expected to renew, {per_minute} times a minute each. Renewals are counted over \
         the last complete minute, so they lag behind instances that just joined. {when}"
    )
}
