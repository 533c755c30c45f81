//! The registry dashboard in a real browser: headless Chromium loads `/`, the registered
//! instance appears in the DOM, and a screenshot is written. Ignored unless asked for
//! (`-- --ignored`, as `.ci/run` runs it), since it needs Chromium; asked for, it fails
//! when Chromium is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use feign_eureka_server::EurekaServer;
use feign_tests::interop::http_request;

/// Chromium's path: `$CHROMIUM`, else `/usr/bin/chromium`.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    path.exists().then_some(path)
}

/// Runs headless Chromium with `args` and a fresh profile; returns stdout. Killed after 90 s.
fn run_chromium(chromium: &Path, args: &[String]) -> String {
    let profile = std::env::temp_dir().join(format!(
        "feign-dashboard-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    ));
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().expect("chromium status").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().expect("chromium output");
    let _ = std::fs::remove_dir_all(&profile);
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn register(base: &str, app: &str, id: &str, port: u16, zone: &str, status: &str) {
    let body = serde_json::json!({"instance": {
        "instanceId": id, "hostName": "127.0.0.1", "app": app, "ipAddr": "127.0.0.1",
        "status": status, "port": {"$": port, "@enabled": "true"},
        "securePort": {"$": 443, "@enabled": "false"},
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
        "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 90},
        "metadata": {"zone": zone, "version": "1.4.2"},
        "vipAddress": app.to_ascii_lowercase(), "lastDirtyTimestamp": "1732881099990"
    }});
    let response = http_request(
        "POST",
        &format!("{base}apps/{app}"),
        &[("Content-Type", "application/json")],
        Some(body.to_string().as_bytes()),
    )
    .expect("register");
    assert_eq!(response.status, 204, "{}", response.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: install Debian's chromium or set CHROMIUM"]
async fn the_dashboard_lists_registered_instances_in_a_browser() {
    let chromium =
        chromium().expect("Chromium not found: install Debian's `chromium` or set CHROMIUM");
    let server = EurekaServer::builder()
        .bind("127.0.0.1:0")
        .read_only_cache(false)
        .start()
        .await
        .expect("registry starts");
    let base = server.url().to_owned();
    let page = server.dashboard_url();
    tokio::task::spawn_blocking(move || {
        register(
            &base,
            "ORDERS",
            "10.0.0.5:orders:8080",
            8080,
            "zone-a",
            "UP",
        );
        register(
            &base,
            "ORDERS",
            "10.0.0.6:orders:8080",
            8080,
            "zone-b",
            "STARTING",
        );
        register(
            &base,
            "PAYMENTS",
            "10.0.0.7:payments:9000",
            9000,
            "zone-a",
            "DOWN",
        );
        register(
            &base,
            "INVENTORY",
            "10.0.0.8:inventory:7000",
            7000,
            "zone-c",
            "UP",
        );

        let dom = run_chromium(&chromium, &["--dump-dom".to_owned(), page.clone()]);
        assert!(dom.contains("feign-eureka registry"), "{dom:.500}");
        assert!(
            dom.contains("10.0.0.5:orders:8080"),
            "instance missing from the DOM"
        );
        assert!(dom.contains("PAYMENTS"));
        assert!(dom.contains("zone-b"));
        assert!(dom.contains(r#"id="instance-count">4<"#), "{dom:.2000}");

        let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard.png");
        let _ = std::fs::remove_file(&shot);
        run_chromium(
            &chromium,
            &[
                format!("--screenshot={}", shot.display()),
                "--window-size=1280,900".to_owned(),
                page,
            ],
        );
        let png = std::fs::read(&shot).expect("screenshot written");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        assert!(png.len() > 10_000, "screenshot suspiciously small");
        println!("dashboard screenshot: {}", shot.display());
    })
    .await
    .expect("browser checks");
    server.shutdown().await;
}
