//! The interop launcher against the real Spring Cloud Eureka server and the Spring Boot client
//! app: both start, answer, and stop. Needs the Java fixtures, so
//! ignored unless asked for (`-- --ignored`, as `.ci/run` runs them).

use std::thread;
use std::time::{Duration, Instant};

use feign_tests::interop::{http_get, JavaApp};
use serde_json::Value;

/// Polls `url` until `done` accepts the (status, JSON body) or `timeout` passes.
fn wait_for(url: &str, timeout: Duration, done: impl Fn(u16, &Value) -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if let Ok(response) = http_get(url) {
            let json = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
            if done(response.status, &json) {
                return true;
            }
        }
        thread::sleep(Duration::from_millis(250));
    }
    false
}

#[test]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
fn eureka_server_starts_empty_java_svc_registers_and_deregisters_and_server_restarts() {
    let mut server = JavaApp::eureka_server(&[]).expect("the Java fixtures");
    assert_eq!(
        server.base_url(),
        format!("http://127.0.0.1:{}", server.port())
    );

    let apps = http_get(&format!("{}apps", server.eureka_url())).expect("GET /eureka/apps");
    assert_eq!(apps.status, 200, "{}", apps.text());
    let json: Value = serde_json::from_slice(&apps.body).expect("registry is JSON");
    assert_eq!(json["applications"]["versions__delta"], "1");
    assert_eq!(json["applications"]["application"], Value::Array(vec![]));

    let svc = JavaApp::java_svc(&server.eureka_url(), &[]).expect("java-svc starts");
    let hello = http_get(&format!("{}/hello", svc.base_url())).expect("GET /hello");
    assert_eq!(hello.text(), "hello from java");

    let app_url = format!("{}apps/JAVA-SVC", server.eureka_url());
    let instance_id = format!("java-svc:{}", svc.port());
    let svc_port = svc.port();
    assert!(
        wait_for(&app_url, Duration::from_secs(30), |status, json| {
            let instance = &json["application"]["instance"][0];
            status == 200
                && instance["instanceId"] == instance_id.as_str()
                && instance["ipAddr"] == "127.0.0.1"
                && instance["port"]["$"] == svc_port
                && instance["status"] == "UP"
        }),
        "java-svc never appeared UP in the registry"
    );

    svc.stop();
    let gone = http_get(&app_url).expect("GET /eureka/apps/JAVA-SVC");
    assert_eq!(
        gone.status,
        404,
        "a graceful stop deregisters: {}",
        gone.text()
    );

    let (port, pid) = (server.port(), server.pid());
    server.restart();
    assert_eq!(server.port(), port, "a restart keeps the port");
    assert_ne!(server.pid(), pid, "a restart starts a new process");
    let apps = http_get(&format!("{}apps", server.eureka_url())).expect("GET /eureka/apps");
    assert_eq!(apps.status, 200, "{}", apps.text());

    server.stop();
}
