//! `cargo bench --bench webhook_load`: a fixed-rate load test of `kvlint webhook` over loopback
//! HTTPS. It starts the real binary with certificates made on the spot, sends AdmissionReviews
//! (deny, allow, warn and unknown-GPU objects in turn) at a fixed rate over a few HTTP/2
//! connections, as the API server does, and reports latency percentiles, errors, the server's
//! resident memory over time and its OS threads.
//!
//! `KVLINT_LOAD_RATE` (requests/s, default 500) and `KVLINT_LOAD_SECS` (default 10; the issue's
//! figure is 60) set the load. Latency runs from the moment a request was due, so a stalled
//! server cannot hide its queue (no coordinated omission). Only loopback, bounded in count and time.

// Shared with tests/webhook.rs; each side uses part of it.
#[allow(dead_code)]
#[path = "../tests/webhook_client/mod.rs"]
mod webhook_client;

use hyper::Method;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use webhook_client::{write_pair, Client, Proto};

const CONNECTIONS: usize = 4;
/// Requests allowed in flight before the generator counts a request as failed instead of
/// piling up without bound.
const MAX_IN_FLIGHT: u64 = 1000;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Reviews to send, each with whether it must be allowed.
fn reviews(root: &Path) -> Vec<(Vec<u8>, bool)> {
    let object = |name: &str| -> Value {
        let text =
            std::fs::read_to_string(root.join("fixtures/webhook").join(name)).expect("fixture");
        serde_saphyr::from_str(&text).expect("fixture YAML")
    };
    let wrap = |object: Value| -> Vec<u8> {
        serde_json::json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "UID",
                "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
                "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
                "name": object["metadata"]["name"],
                "namespace": object["metadata"]["namespace"],
                "operation": "CREATE",
                "userInfo": {"username": "load"},
                "object": object
            }
        })
        .to_string()
        .into_bytes()
    };
    let unknown = std::fs::read(root.join("fixtures/webhook/admissionreview-update-no-gpu.json"))
        .expect("fixture");
    vec![
        (wrap(object("deployment-incident.yaml")), false),
        (wrap(object("deployment-safe.yaml")), true),
        (wrap(object("deployment-headroom.yaml")), true),
        (unknown, true),
    ]
}

fn with_uid(body: &[u8], uid: &str) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(body).expect("review");
    v["request"]["uid"] = Value::String(uid.to_string());
    serde_json::to_vec(&v).expect("review")
}

/// The server's OS threads now (`/proc/<pid>/task`).
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(dir: &Path, port: u16) -> Server {
    let child = Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args(["webhook", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--tls-cert")
        .arg(dir.join("tls.crt"))
        .arg("--tls-key")
        .arg(dir.join("tls.key"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start kvlint webhook");
    Server(child)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn main() {
    let rate = env_u64("KVLINT_LOAD_RATE", 500).clamp(1, 5000);
    let secs = env_u64("KVLINT_LOAD_SECS", 10).clamp(1, 120);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = write_pair(&dir.path().join("tls.crt"), &dir.path().join("tls.key"));
    let port = free_port();
    let server = start_server(dir.path(), port);
    let pid = server.0.id();
    let addr = ([127, 0, 0, 1], port).into();
    let bodies = Arc::new(reviews(root));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let mut clients = Vec::new();
        for _ in 0..50 {
            match Client::connect(addr, &ca, Proto::H2).await {
                Ok(c) => {
                    clients.push(c);
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        assert!(!clients.is_empty(), "the webhook did not start");
        while clients.len() < CONNECTIONS {
            clients.push(Client::connect(addr, &ca, Proto::H2).await.expect("connect"));
        }
        // Warm-up: one of each review.
        for (i, (body, _)) in bodies.iter().enumerate() {
            let _ = clients[0]
                .request(Method::POST, "/validate", with_uid(body, &format!("warm-{i}")))
                .await;
        }
        println!("kvlint webhook load: {rate} requests/s for {secs} s over {CONNECTIONS} HTTP/2 connections, loopback");
        let rss_start = rss_kib(pid).unwrap_or(0);
        let threads_start = threads(pid);
        let mut threads_peak = threads_start;
        let latencies = Arc::new(Mutex::new(Vec::with_capacity((rate * secs) as usize)));
        let errors = Arc::new(AtomicU64::new(0));
        let in_flight = Arc::new(AtomicU64::new(0));
        let total = rate * secs;
        let interval = Duration::from_secs_f64(1.0 / rate as f64);
        let start = Instant::now();
        let mut rss_samples = vec![(0u64, rss_start)];
        let mut tasks = Vec::with_capacity(total as usize);
        for n in 0..total {
            let due = start + interval.mul_f64(n as f64);
            tokio::time::sleep_until(due.into()).await;
            let elapsed = start.elapsed().as_secs();
            if rss_samples.last().is_some_and(|(s, _)| *s < elapsed) {
                rss_samples.push((elapsed, rss_kib(pid).unwrap_or(0)));
            }
            if n % 100 == 0 {
                threads_peak = threads_peak.max(threads(pid));
            }
            if in_flight.load(Ordering::Relaxed) >= MAX_IN_FLIGHT {
                errors.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            in_flight.fetch_add(1, Ordering::Relaxed);
            let (body, allowed) = &bodies[(n as usize) % bodies.len()];
            let uid = format!("load-{n}");
            let body = with_uid(body, &uid);
            let expect_allowed = *allowed;
            let mut client = clients[(n as usize) % CONNECTIONS]
                .try_clone()
                .expect("an HTTP/2 connection");
            let (latencies, errors, in_flight) = (latencies.clone(), errors.clone(), in_flight.clone());
            tasks.push(tokio::spawn(async move {
                let result = client.request(Method::POST, "/validate", body).await;
                let took = due.elapsed();
                let ok = result.ok().is_some_and(|(status, bytes)| {
                    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    status == 200
                        && v["response"]["uid"] == uid.as_str()
                        && v["response"]["allowed"] == expect_allowed
                });
                if ok {
                    latencies.lock().unwrap_or_else(|e| e.into_inner()).push(took);
                } else {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                in_flight.fetch_sub(1, Ordering::Relaxed);
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
        let wall = start.elapsed();
        rss_samples.push((wall.as_secs(), rss_kib(pid).unwrap_or(0)));
        let mut l = latencies.lock().unwrap_or_else(|e| e.into_inner()).clone();
        l.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "sent {total}, ok {}, errors {}, achieved {:.0} requests/s",
            l.len(),
            errors.load(Ordering::Relaxed),
            l.len() as f64 / wall.as_secs_f64()
        );
        println!(
            "latency ms: p50 {:.2}  p90 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2}",
            ms(percentile(&l, 0.50)),
            ms(percentile(&l, 0.90)),
            ms(percentile(&l, 0.99)),
            ms(percentile(&l, 0.999)),
            ms(l.last().copied().unwrap_or_default())
        );
        let step = (rss_samples.len() / 12).max(1);
        let shown: Vec<String> = rss_samples
            .iter()
            .step_by(step)
            .chain(rss_samples.last())
            .map(|(s, kib)| format!("{s}s {:.1}", *kib as f64 / 1024.0))
            .collect();
        println!("server RSS MiB over time: {}", shown.join(", "));
        println!("server OS threads: {threads_start} at start, {threads_peak} at most");
    });
    drop(server);
}
