//! `LiveConfig` over real files: the watch applying a change once it reads it twice, a file
//! that stops parsing kept out, files appearing later, and listeners.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use feign_config::LiveConfig;
use feign_test_support::TempDir;

fn value(live: &LiveConfig, key: &str) -> Option<String> {
    live.current().get(key).unwrap().map(|p| p.as_str())
}

#[tokio::test]
async fn the_watch_applies_a_changed_file_and_tells_listeners_before_waiters() {
    let dir = TempDir::new("live-watch");
    let file = dir.write("application.yml", "app:\n  colour: blue\n");
    let live = LiveConfig::from_files([&file]).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    live.on_change(move |config| {
        let colour = config.get("app.colour").unwrap().map(|p| p.as_str());
        kept.lock().unwrap().push(colour);
        ControlFlow::Continue(())
    });
    let _watch = live.watch(Duration::from_millis(10)).unwrap();

    std::fs::write(&file, "app:\n  colour: green\n").unwrap();
    let version = tokio::time::timeout(Duration::from_secs(30), live.changed_after(0))
        .await
        .unwrap();
    assert_eq!(version, 1);
    assert_eq!(value(&live, "app.colour").as_deref(), Some("green"));
    assert_eq!(*seen.lock().unwrap(), [Some("green".to_owned())]);
}

#[tokio::test]
async fn under_the_watch_a_file_that_stops_parsing_is_kept_out_until_mended() {
    let dir = TempDir::new("live-broken");
    let file = dir.write("application.yml", "app:\n  colour: blue\n");
    let live = LiveConfig::from_files([&file]).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    live.on_change(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        ControlFlow::Continue(())
    });
    let _watch = live.watch(Duration::from_millis(10)).unwrap();

    std::fs::write(&file, "app: [unclosed\n").unwrap();
    // Many polls read the broken file meanwhile.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(live.version(), 0);
    assert_eq!(value(&live, "app.colour").as_deref(), Some("blue"));

    std::fs::write(&file, "app:\n  colour: red\n").unwrap();
    tokio::time::timeout(Duration::from_secs(30), live.changed_after(0))
        .await
        .unwrap();
    assert_eq!(value(&live, "app.colour").as_deref(), Some("red"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_directory_s_application_files_may_appear_and_disappear() {
    let dir = TempDir::new("live-dir");
    let live = LiveConfig::load_from(&dir.0).unwrap();
    assert_eq!(value(&live, "app.colour"), None);
    assert!(!live.reload().unwrap());

    let properties = dir.write("application.properties", "app.colour=grey\n");
    assert!(live.reload().unwrap());
    assert_eq!(value(&live, "app.colour").as_deref(), Some("grey"));

    std::fs::remove_file(properties).unwrap();
    assert!(live.reload().unwrap());
    assert_eq!(value(&live, "app.colour"), None);
}

#[test]
fn a_missing_file_is_an_error_naming_it_and_keeps_the_properties() {
    let dir = TempDir::new("live-missing");
    let file = dir.write("app.properties", "app.colour=grey\n");
    let live = LiveConfig::from_files([&file]).unwrap();
    std::fs::remove_file(&file).unwrap();
    let error = live.reload().unwrap_err();
    assert!(error.origin().ends_with("app.properties"), "{error}");
    assert_eq!(value(&live, "app.colour").as_deref(), Some("grey"));
}

#[test]
fn a_listener_that_breaks_is_not_called_again() {
    let dir = TempDir::new("live-listener");
    let file = dir.write("app.properties", "n=1\n");
    let live = LiveConfig::from_files([&file]).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    live.on_change(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        ControlFlow::Break(())
    });
    for n in 2..5 {
        std::fs::write(&file, format!("n={n}\n")).unwrap();
        assert!(live.reload().unwrap());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(live.version(), 3);
}
