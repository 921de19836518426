//! The webhook under more work than it takes: reviews in flight are bounded and the rest get an
//! AdmissionReview at once under `--unknown`; the process's OS threads stay bounded however many
//! connections are open. Real servers on loopback, real HTTP/2 and HTTP/1.1 clients; nothing is
//! timed.

// Shared with tests/webhook.rs and benches/webhook_load.rs; each side uses part of it.
#[allow(dead_code)]
mod webhook_client;

use hyper::{Method, StatusCode};
use kvlint::webhook::{Settings, Unknown, Webhook};
use serde_json::{json, Value};
use std::io::BufRead;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio_rustls::rustls::pki_types::CertificateDer;
use webhook_client::{write_pair, Client, Proto};

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/webhook")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    serde_saphyr::from_str(&text).expect("fixture YAML")
}

fn review(uid: &str, object: &Value) -> Vec<u8> {
    review_as(uid, object, "test")
}

/// As [`review`], of any kind, sent for `username`.
fn review_as(uid: &str, object: &Value, username: &str) -> Vec<u8> {
    let kind = object["kind"].as_str().unwrap_or("");
    let (group, version) = object["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
        .unwrap_or(("", "v1"));
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": format!("{}s", kind.to_lowercase())},
            "name": object["metadata"]["name"],
            "namespace": object["metadata"]["namespace"],
            "operation": "CREATE",
            "userInfo": {"username": username},
            "object": object
        }
    })
    .to_string()
    .into_bytes()
}

/// The incident padded with 60,000 `--host 0.0.0.0` pairs: a review that takes a while.
fn slow_review(uid: &str) -> Vec<u8> {
    let mut padded = fixture("deployment-incident.yaml");
    let args = padded["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array_mut()
        .expect("args");
    for _ in 0..60_000 {
        args.push(json!("--host"));
        args.push(json!("0.0.0.0"));
    }
    review(uid, &padded)
}

async fn post(
    addr: SocketAddr,
    ca: &CertificateDer<'static>,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let mut c = Client::connect(addr, ca, Proto::H2).await.expect("connect");
    let (status, bytes) = c
        .request(Method::POST, "/validate", body)
        .await
        .expect("request");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// `(running, waiting)` from the gauges in `/metrics`.
async fn reviews(addr: SocketAddr, ca: &CertificateDer<'static>) -> (u64, u64) {
    let mut c = Client::connect(addr, ca, Proto::H1).await.expect("connect");
    let (_, bytes) = c
        .request(Method::GET, "/metrics", Vec::new())
        .await
        .expect("metrics");
    let text = String::from_utf8_lossy(&bytes);
    let gauge = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
    };
    (
        gauge("kvlint_webhook_reviews_running "),
        gauge("kvlint_webhook_reviews_waiting "),
    )
}

/// Polls the gauges until `want`; the reviews that set them take seconds in a debug build.
async fn await_reviews(addr: SocketAddr, ca: &CertificateDer<'static>, want: (u64, u64)) {
    for _ in 0..3000 {
        let now = reviews(addr, ca).await;
        assert!(now.0 <= 1, "more reviews running than slots: {now:?}");
        if now == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the gauges never read {want:?}");
}

fn message(answer: &Value) -> &str {
    answer["response"]["status"]["message"]
        .as_str()
        .unwrap_or("")
}

/// One slot and a line of one: with both taken, further reviews are answered at once under
/// `--unknown=deny` (HTTP 200, an AdmissionReview, so failurePolicy does not apply), even a
/// safe Deployment, while the two admitted reviews finish with their own verdicts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_beyond_the_slots_and_the_line_are_answered_at_once_by_the_unknown_policy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let ca = write_pair(&cert, &key);
    let mut settings = Settings::new(([127, 0, 0, 1], 0).into(), cert, key);
    settings.policy.unknown = Unknown::Deny;
    settings.max_concurrency = 1;
    settings.max_queued = 1;
    // Debug builds review the padded object in seconds: the deadline must not end the test.
    settings.request_timeout = Duration::from_secs(120);
    let hook = Webhook::bind(settings).await.expect("bind");
    let addr = hook.local_addr().expect("address");
    tokio::spawn(hook.serve(std::future::pending()));

    let running = tokio::spawn({
        let ca = ca.clone();
        async move { post(addr, &ca, slow_review("slow-1")).await }
    });
    await_reviews(addr, &ca, (1, 0)).await;
    let waiting = tokio::spawn({
        let ca = ca.clone();
        async move { post(addr, &ca, slow_review("slow-2")).await }
    });
    await_reviews(addr, &ca, (1, 1)).await;

    let safe = fixture("deployment-safe.yaml");
    let incident = fixture("deployment-incident.yaml");
    for (uid, object) in [("over-1", &safe), ("over-2", &incident), ("over-3", &safe)] {
        let (status, answer) = post(addr, &ca, review(uid, object)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(answer["response"]["uid"], uid);
        assert_eq!(answer["response"]["allowed"], false, "{answer}");
        assert!(
            message(&answer).contains("the webhook is overloaded: 1 reviews running and 1 waiting")
                && message(&answer).contains("--unknown=deny"),
            "{answer}"
        );
    }
    for (task, uid) in [(running, "slow-1"), (waiting, "slow-2")] {
        let (status, answer) = task.await.expect("joined");
        assert_eq!(status, StatusCode::OK);
        assert_eq!(answer["response"]["uid"], uid);
        // Their own verdict: the incident's findings, not the overload answer.
        assert!(message(&answer).contains("KV001"), "{answer}");
        assert!(!message(&answer).contains("overloaded"), "{answer}");
    }
    assert_eq!(reviews(addr, &ca).await, (0, 0));
    let mut c = Client::connect(addr, &ca, Proto::H1)
        .await
        .expect("connect");
    let (_, bytes) = c
        .request(Method::GET, "/metrics", Vec::new())
        .await
        .expect("metrics");
    let metrics = String::from_utf8_lossy(&bytes);
    assert!(
        metrics.contains("kvlint_webhook_errors_total{kind=\"overloaded\"} 3\n"),
        "{metrics}"
    );
    // With the line free again, a safe Deployment is allowed.
    let (_, answer) = post(addr, &ca, review("after-1", &safe)).await;
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
}

/// `kvlint webhook` as a process, listening on a free port; killed when dropped.
struct Process {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Process {
    fn start(dir: &Path) -> Process {
        Process::start_with(dir, &[])
    }

    /// `kvlint webhook` with `extra` arguments after the listener and certificate.
    fn start_with(dir: &Path, extra: &[&str]) -> Process {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kvlint"))
            .args(["webhook", "--listen", "127.0.0.1:0", "--tls-cert"])
            .arg(dir.join("tls.crt"))
            .arg("--tls-key")
            .arg(dir.join("tls.key"))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start kvlint webhook");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = std::io::BufReader::new(stderr).lines();
        let addr = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.split("listening on https://").nth(1)?.trim().parse().ok())
            .expect("the webhook says where it listens");
        // Keep reading, so that the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Process { child, addr }
    }

    fn threads(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }
}

/// Many connections, HTTP/2 and HTTP/1.1, each with reviews in flight: the server's OS threads
/// (`/proc/<pid>/task`) stay within twice the CPUs plus two, and every request is answered
/// with its uid (a verdict, or the overload answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn os_threads_stay_bounded_under_many_connections() {
    const CONNECTIONS: usize = 200;
    const PER_CONNECTION: usize = 3;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bound = 2 * cpus + 2;
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = write_pair(&dir.path().join("tls.crt"), &dir.path().join("tls.key"));
    let server = Process::start(dir.path());
    let addr = server.addr;
    let before = server.threads();
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(before));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pid: PathBuf = format!("/proc/{}/task", server.child.id()).into();
    let sampler = std::thread::spawn({
        let (peak, done) = (peak.clone(), done.clone());
        move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let n = std::fs::read_dir(&pid).map(|d| d.count()).unwrap_or(0);
                peak.fetch_max(n, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    });

    let incident = fixture("deployment-incident.yaml");
    let mut clients = Vec::new();
    for i in 0..CONNECTIONS {
        let proto = if i % 2 == 0 { Proto::H2 } else { Proto::H1 };
        clients.push((
            proto,
            Client::connect(addr, &ca, proto).await.expect("connect"),
        ));
    }
    let mut tasks = Vec::new();
    for (i, (proto, client)) in clients.into_iter().enumerate() {
        // HTTP/2 streams at once on each connection; HTTP/1.1 one request per connection.
        let handles: Vec<Client> = match proto {
            Proto::H2 => (0..PER_CONNECTION)
                .filter_map(|_| client.try_clone())
                .collect(),
            Proto::H1 => vec![client],
        };
        for (j, mut c) in handles.into_iter().enumerate() {
            let uid = format!("c{i}-{j}");
            let body = review(&uid, &incident);
            tasks.push(tokio::spawn(async move {
                let (status, bytes) = c.request(Method::POST, "/validate", body).await?;
                let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                // 503: more request bytes at once than the memory budget, past the deadline.
                let ok = (status == StatusCode::OK && answer["response"]["uid"] == uid)
                    || status == StatusCode::SERVICE_UNAVAILABLE;
                ok.then_some(()).ok_or(format!("{status} {answer}"))
            }));
        }
    }
    for t in tasks {
        t.await.expect("joined").expect("answered with its uid");
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    sampler.join().expect("sampler");
    let peak = peak.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        peak <= bound,
        "{peak} OS threads with {CONNECTIONS} connections on {cpus} CPUs (bound {bound}, {before} at start)"
    );
}

/// A Deployment of about 1 KB whose `sh -c` doubles a variable of words 20 times: a million
/// `--host` flags, minutes of work for a shell reader without an expansion budget.
fn bomb(uid: &str) -> Vec<u8> {
    let mut script = String::from("x='--host 0.0.0.0'\n");
    for _ in 0..20 {
        script.push_str("x=\"$x $x\"\n");
    }
    script.push_str("exec python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B $x\n");
    let mut object = fixture("deployment-safe.yaml");
    object["metadata"]["name"] = json!(uid);
    let container = &mut object["spec"]["template"]["spec"]["containers"][0];
    container["command"] = json!(["sh", "-c", script]);
    container["args"] = json!([]);
    review(uid, &object)
}

/// Issue 29, class 14: a review whose work outlives its deadline frees its slot at the deadline
/// (its work keeps only a thread, bounded), so with bombs in flight on every slot the incident
/// is still denied with KV001, not allowed for want of a slot; and SIGTERM drains within 15 s
/// without waiting for the abandoned work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bombs_past_their_deadline_neither_hold_the_slots_nor_the_shutdown() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = write_pair(&dir.path().join("tls.crt"), &dir.path().join("tls.key"));
    let mut server = Process::start(dir.path());
    let addr = server.addr;
    // One bomb per slot (the default: one per CPU), each answered at its 3 s deadline.
    let bombs: Vec<_> = (0..cpus)
        .map(|i| {
            let ca = ca.clone();
            tokio::spawn(async move { post(addr, &ca, bomb(&format!("bomb-{i}"))).await })
        })
        .collect();
    for (i, b) in bombs.into_iter().enumerate() {
        let (status, answer) = b.await.expect("joined");
        assert_eq!(status, StatusCode::OK);
        assert_eq!(answer["response"]["uid"], format!("bomb-{i}"), "{answer}");
    }
    let mut c = Client::connect(addr, &ca, Proto::H1)
        .await
        .expect("connect");
    let (_, bytes) = c
        .request(Method::GET, "/metrics", Vec::new())
        .await
        .expect("metrics");
    let metrics = String::from_utf8_lossy(&bytes).into_owned();
    drop(c);
    let abandoned: usize = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix("kvlint_webhook_reviews_abandoned ")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no abandoned gauge in:\n{metrics}"));
    assert!(abandoned <= cpus, "{metrics}");

    // With the bombs' work still running, a review gets a slot and its own verdict.
    let (status, answer) = post(
        addr,
        &ca,
        review("incident", &fixture("deployment-incident.yaml")),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert!(message(&answer).contains("KV001"), "{answer}");

    let signalled = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(signalled.success());
    // The bound: drained within 15 s of SIGTERM (5 s of it the shutdown delay).
    let mut exited = None;
    for _ in 0..150 {
        exited = server.child.try_wait().expect("wait");
        if exited.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = exited.expect("the webhook drained and exited within 15 s of SIGTERM");
    assert!(status.success(), "{status:?}");
}

/// Issue 29, class 13: `--trusted-controller` and kvlint.toml `[webhook] trusted-controllers`
/// add to the built-in controller identities; any other service account stays one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusted_controllers_come_from_the_flag_and_kvlint_toml() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = write_pair(&dir.path().join("tls.crt"), &dir.path().join("tls.key"));
    let toml = dir.path().join("kvlint.toml");
    std::fs::write(
        &toml,
        "[webhook]\ntrusted-controllers = [\"system:serviceaccount:rbgs-system:rbgs-controller-manager\"]\n",
    )
    .expect("kvlint.toml");
    let flag = "system:serviceaccount:kserve:kserve-controller-manager";
    let server = Process::start_with(
        dir.path(),
        &[
            "--config",
            toml.to_str().unwrap(),
            "--trusted-controller",
            flag,
        ],
    );
    let deployment = fixture("deployment-incident.yaml");
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "glm-prefill-abc", "namespace": "llm", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "glm-prefill-5d8f", "uid": "u1", "controller": true}
        ]},
        "spec": deployment["spec"]["template"]["spec"]
    });
    for (user, allowed) in [
        (flag, true),
        (
            "system:serviceaccount:rbgs-system:rbgs-controller-manager",
            true,
        ),
        (
            "system:serviceaccount:kube-system:replicaset-controller",
            true,
        ),
        ("system:serviceaccount:ci:deployer", false),
    ] {
        let (_, answer) = post(server.addr, &ca, review_as("pod", &pod, user)).await;
        assert_eq!(answer["response"]["allowed"], allowed, "{user}: {answer}");
    }
}
