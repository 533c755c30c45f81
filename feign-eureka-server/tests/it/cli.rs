//! The `feign-eureka` binary: `--help` on each command, `apps` listing an embedded registry,
//! and `serve` answering on its port.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::{get_json, instance, register, start};
use feign_test_support::tls::Pki;
use feign_test_support::{closed_port_url, free_port};

const BIN: &str = env!("CARGO_BIN_EXE_feign-eureka");

fn run(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(BIN).args(args).output().expect("binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn every_command_has_help() {
    let (ok, out, _) = run(&["serve", "--help"]);
    assert!(ok);
    for flag in [
        "--port",
        "--bind",
        "--peer",
        "--no-self-preservation",
        "--dev",
        "--header-read-timeout",
        "--body-read-timeout",
        "--idle-timeout",
        "--max-connections",
        "--max-watchers",
        "--max-instance-bytes",
        "--max-registry-bytes",
        "--max-instances",
        "--peer-user",
        "--peer-ca",
        "--peer-cert",
        "--peer-key",
        "--replication-from-any-address",
    ] {
        assert!(out.contains(flag), "{flag} missing from:\n{out}");
    }
    let (ok, out, _) = run(&["apps", "--help"]);
    assert!(ok && out.contains("--server"), "{out}");
    assert!(out.contains("--max-registry-bytes"), "{out}");
    for flag in ["--ca", "--cert", "--key", "--user", "--password"] {
        assert!(out.contains(flag), "{flag} missing from:\n{out}");
    }
    let (ok, out, _) = run(&["--help"]);
    assert!(ok && out.contains("serve") && out.contains("apps"), "{out}");
}

/// Runs `feign-eureka apps --server {url}` off the runtime's threads.
async fn apps_of(url: &str) -> (bool, String, String) {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || run(&["apps", "--server", &url]))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_lists_what_a_registry_holds() {
    let server = start().await;
    let body = instance("ORDERS", "10.0.0.5:orders:8080", 8080, "UP", 1);
    assert_eq!(register(server.url(), "ORDERS", &body).await, 204);
    let (ok, out, err) = apps_of(server.url()).await;
    assert!(ok, "{err}");
    assert!(out.contains("ORDERS"), "{out}");
    assert!(out.contains("10.0.0.5:orders:8080"), "{out}");
    assert!(out.contains("zone-a"), "{out}");
    assert!(out.contains("1 application(s), 1 instance(s)"), "{out}");
    server.shutdown().await;

    let (ok, _, err) = run(&[
        "apps",
        "--server",
        &format!("{}/eureka/", closed_port_url()),
    ]);
    assert!(!ok);
    assert!(err.starts_with("error: cannot reach"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_escapes_control_characters_a_registry_holds() {
    let server = start().await;
    let mut body = instance("ORDERS", "10.0.0.5:orders:8080", 8080, "UP", 1);
    // Retitles the terminal, clears the screen, rings the bell.
    body["instance"]["metadata"]["zone"] = "\u{1b}]0;owned\u{7}\u{1b}[2J\r".into();
    assert_eq!(register(server.url(), "ORDERS", &body).await, 204);
    let (ok, out, err) = apps_of(server.url()).await;
    assert!(ok, "{err}");
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    assert!(
        out.contains("\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\u{d}"),
        "{out}"
    );
    server.shutdown().await;
}

/// Runs `feign-eureka serve --port {port} {args}` and reads its stdout (where the log goes too)
/// up to the first line containing `until`; returns the process and what it read.
async fn serve(port: u16, args: &[&str], until: &str) -> (Child, String) {
    serve_with_env(port, args, &[], until).await
}

/// [`serve`] with extra environment variables.
async fn serve_with_env(
    port: u16,
    args: &[&str],
    env: &[(&str, &str)],
    until: &str,
) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(["serve", "--port", &port.to_string()])
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().unwrap();
    let until = until.to_owned();
    let read = tokio::task::spawn_blocking(move || {
        let mut reader = BufReader::new(stdout);
        let mut lines = String::new();
        while !lines.contains(&until) {
            if reader.read_line(&mut lines)? == 0 {
                break;
            }
        }
        std::io::Result::Ok(lines)
    });
    let lines = tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("serve prints what is awaited")
        .unwrap()
        .unwrap();
    (child, lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_a_registry_on_the_given_port() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/eureka/");
    let (mut child, lines) = serve(port, &["--no-self-preservation"], &url).await;
    assert!(lines.contains(&url), "{lines}");
    // The log went to a pipe: plain text, no colour codes.
    assert!(lines.contains("eureka registry listening"), "{lines}");
    assert!(
        !lines.contains('\x1b'),
        "colour codes in a piped log: {lines:?}"
    );
    let doc = get_json(&url, "apps/").await;
    assert_eq!(doc["applications"]["versions__delta"], "1");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_dev_shows_a_registration_at_once() {
    let port = free_port();
    let (mut child, lines) = serve(port, &["--dev"], "development:").await;
    assert!(lines.contains("no read-only cache"), "{lines}");
    let url = format!("http://127.0.0.1:{port}/eureka/");
    let before = get_json(&url, "apps/").await;
    assert!(!before.to_string().contains("ORDERS"), "{before}");
    let body = instance("ORDERS", "127.0.0.1:orders:8080", 8080, "UP", 1);
    assert_eq!(register(&url, "ORDERS", &body).await, 204);
    // With the read-only cache, reads would show the old registry for up to 30 s.
    let after = get_json(&url, "apps/").await;
    assert_eq!(
        after["applications"]["application"][0]["name"], "ORDERS",
        "{after}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_a_user_requires_the_credentials_and_apps_sends_them() {
    let refused = Command::new(BIN)
        .args(["serve", "--user", "eureka"])
        .env_remove("FEIGN_EUREKA_PASSWORD")
        .output()
        .expect("binary runs");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success(),
        "a user without a password is refused"
    );
    assert!(err.contains("--password"), "{err}");

    let port = free_port();
    let env = [("FEIGN_EUREKA_PASSWORD", "s3cret-pw")];
    let (mut child, lines) = serve_with_env(port, &["--user", "eureka"], &env, "dashboard:").await;
    assert!(!lines.contains("s3cret-pw"), "{lines}");
    let url = format!("http://127.0.0.1:{port}/eureka/");
    let (ok, _, err) = apps_of(&url).await;
    assert!(!ok && err.contains("401"), "{err}");
    let (ok, out, err) =
        apps_of(&format!("http://eureka:s3cret-pw@127.0.0.1:{port}/eureka/")).await;
    assert!(ok, "{err}");
    assert!(out.contains("0 application(s)"), "{out}");
    let (ok, _, err) = apps_of(&format!("http://eureka:wrong@127.0.0.1:{port}/eureka/")).await;
    assert!(
        !ok && !err.contains("wrong"),
        "the password is not printed: {err}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// `serve` with `pki`'s server certificate, and with `--tls-client-ca` when `mutual`: the
/// child, its port and what it printed.
async fn serve_tls(pki: &Pki, mutual: bool) -> (Child, u16, String) {
    let dir = feign_test_support::TempDir::new("serve-tls");
    let files = [
        ("--tls-cert", dir.write("cert.pem", &pki.server.cert)),
        ("--tls-key", dir.write("key.pem", &pki.server.key)),
        ("--tls-client-ca", dir.write("ca.pem", &pki.ca)),
    ];
    let used = if mutual { 3 } else { 2 };
    let args: Vec<&str> = files[..used]
        .iter()
        .flat_map(|(flag, path)| [*flag, path.to_str().unwrap()])
        .collect();
    let port = free_port();
    let (child, lines) = serve(port, &args, "dashboard:").await;
    (child, port, lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_a_certificate_answers_over_https() {
    let pki = Pki::new();
    let (mut child, port, lines) = serve_tls(&pki, false).await;
    let url = format!("https://127.0.0.1:{port}/eureka/");
    assert!(lines.contains(&url), "{lines}");
    assert!(
        lines.contains(&format!("https://127.0.0.1:{port}/\n")),
        "{lines}"
    );
    let response = crate::tls::client_trusting(Some(&pki.ca))
        .get(format!("{url}apps/"))
        .send()
        .await
        .expect("an HTTPS answer");
    assert_eq!(response.status(), 200);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_a_client_ca_requires_a_client_certificate() {
    let pki = Pki::new();
    let (mut child, port, _) = serve_tls(&pki, true).await;
    let url = format!("https://127.0.0.1:{port}/eureka/apps/");
    let identity =
        reqwest::Identity::from_pem(format!("{}{}", pki.client.cert, pki.client.key).as_bytes())
            .unwrap();
    let with_certificate = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca.as_bytes()).unwrap())
        .identity(identity)
        .build()
        .unwrap();
    let response = with_certificate
        .get(&url)
        .send()
        .await
        .expect("an HTTPS answer");
    assert_eq!(response.status(), 200);
    let without = crate::tls::client_trusting(Some(&pki.ca))
        .get(&url)
        .send()
        .await;
    assert!(without.is_err(), "no certificate, no answer: {without:?}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_escapes_format_characters_a_registry_holds() {
    let server = start().await;
    let mut body = instance("ORDERS", "10.0.0.5:orders:8080", 8080, "UP", 1);
    // A right-to-left override shows `host\u{202e}gnp.exe` as `hostexe.png`; a zero-width space
    // and a line separator hide in plain sight.
    body["instance"]["hostName"] = "host\u{202e}gnp.exe".into();
    body["instance"]["metadata"]["zone"] = "zone\u{200b}-a\u{2028}".into();
    assert_eq!(register(server.url(), "ORDERS", &body).await, 204);
    let (ok, out, err) = apps_of(server.url()).await;
    assert!(ok, "{err}");
    assert!(
        !out.contains(['\u{202e}', '\u{200b}', '\u{2028}']),
        "{out:?}"
    );
    assert!(out.contains("host\\u{202e}gnp.exe:8080"), "{out}");
    assert!(out.contains("zone\\u{200b}-a\\u{2028}"), "{out}");
    server.shutdown().await;
}

/// A registry whose answer never ends (64 MiB, then the connection closes) or that sends a
/// gzip bomb (100 KB that inflate to 100 MiB): `apps` gives up at its cap, 32 MiB, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_reads_a_registry_within_its_cap() {
    use std::io::Write;
    let endless = feign_test_support::RawServer::start_with(
        |_| {
            let head: &[u8] =
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
            let mut reply = head.to_vec();
            reply.resize(head.len() + (64 << 20), b' ');
            reply
        },
        Duration::ZERO,
    )
    .await;
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gzip.write_all(&vec![b' '; 100 << 20]).unwrap();
    let bomb = gzip.finish().unwrap();
    let bomb = feign_test_support::RawServer::start_with(
        move |_| {
            let mut reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n\
                 Content-Length: {}\r\n\r\n",
                bomb.len()
            )
            .into_bytes();
            reply.extend_from_slice(&bomb);
            reply
        },
        Duration::ZERO,
    )
    .await;
    for server in [endless, bomb] {
        let (ok, _, err) = apps_of(&format!("{}/eureka/", server.url())).await;
        assert!(!ok);
        assert!(
            err.contains("more than 33554432 bytes (--max-registry-bytes)"),
            "{err}"
        );
    }
}

/// `apps --ca --cert --key` reads a registry that requires a client certificate; without
/// them the handshake fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_reads_a_registry_behind_mutual_tls() {
    let pki = Pki::new();
    let server = crate::support::dev()
        .tls_pem(pki.server.cert.as_bytes(), pki.server.key.as_bytes())
        .tls_client_ca_pem(pki.ca.as_bytes())
        .start()
        .await
        .unwrap();
    let dir = feign_test_support::TempDir::new("apps-tls");
    let ca = dir.write("ca.pem", &pki.ca);
    let cert = dir.write("cert.pem", &pki.client.cert);
    let key = dir.write("key.pem", &pki.client.key);
    let url = server.url().to_owned();
    let paths = [&ca, &cert, &key].map(|p| p.to_str().unwrap().to_owned());
    let listed = {
        let (url, paths) = (url.clone(), paths.clone());
        tokio::task::spawn_blocking(move || {
            let [ca, cert, key] = &paths;
            run(&[
                "apps", "--server", &url, "--ca", ca, "--cert", cert, "--key", key,
            ])
        })
    };
    let (ok, out, err) = listed.await.unwrap();
    assert!(ok, "{err}");
    assert!(out.contains("0 application(s)"), "{out}");
    let without_identity =
        tokio::task::spawn_blocking(move || run(&["apps", "--server", &url, "--ca", &paths[0]]));
    let (ok, _, err) = without_identity.await.unwrap();
    assert!(!ok && err.contains("cannot reach"), "{err}");
    server.shutdown().await;
}

/// `apps --user` with the password from the environment reads a registry behind basic auth,
/// and the password is never printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_reads_a_registry_behind_basic_auth_with_user_and_password() {
    let server = crate::support::dev()
        .credentials("eureka", "s3cret-pw")
        .start()
        .await
        .unwrap();
    let url = server.url().to_owned();
    let with = |password: &'static str| {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            let output = Command::new(BIN)
                .args(["apps", "--server", &url, "--user", "eureka"])
                .env("FEIGN_EUREKA_PASSWORD", password)
                .output()
                .expect("binary runs");
            (
                output.status.success(),
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        })
    };
    let (ok, out, err) = with("s3cret-pw").await.unwrap();
    assert!(ok, "{err}");
    assert!(out.contains("0 application(s)"), "{out}");
    let (ok, _, err) = with("wrong-pw").await.unwrap();
    assert!(!ok && err.contains("401"), "{err}");
    assert!(
        !err.contains("wrong-pw"),
        "the password is not printed: {err}"
    );
    server.shutdown().await;
}
