//! `kvlint webhook` end to end: the real server on 127.0.0.1:0 with certificates made in the
//! test, driven by an HTTPS client that trusts only that CA (the API server's side), plus the
//! manifests in deploy/.

// Shared with benches/webhook_load.rs; each side uses part of it.
#[allow(dead_code)]
mod webhook_client;

use hyper::{Method, StatusCode};
use kvlint::webhook::{Settings, Unknown, Webhook};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::CertificateDer;
use webhook_client::{write_pair, Client, Proto};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A webhook serving on loopback until dropped or stopped.
struct Running {
    addr: SocketAddr,
    ca: CertificateDer<'static>,
    dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), kvlint::webhook::WebhookError>>,
}

impl Running {
    fn cert(&self) -> PathBuf {
        self.dir.path().join("tls.crt")
    }
    fn key(&self) -> PathBuf {
        self.dir.path().join("tls.key")
    }

    async fn client(&self, proto: Proto) -> Client {
        Client::connect(self.addr, &self.ca, proto)
            .await
            .expect("connect")
    }

    /// POSTs a review and returns the HTTP status and the parsed answer (Null when not JSON).
    async fn validate(&self, body: Vec<u8>) -> (StatusCode, Value) {
        let mut c = self.client(Proto::H1).await;
        let (status, bytes) = c
            .request(Method::POST, "/validate", body)
            .await
            .expect("request");
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    async fn get(&self, path: &str) -> (StatusCode, String) {
        self.get_with(&self.ca, path).await
    }

    async fn get_with(&self, ca: &CertificateDer<'static>, path: &str) -> (StatusCode, String) {
        let mut c = Client::connect(self.addr, ca, Proto::H1)
            .await
            .expect("connect");
        let (status, bytes) = c.request(Method::GET, path, Vec::new()).await.expect("get");
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }
}

async fn start(unknown: Unknown) -> Running {
    start_with(unknown, Duration::ZERO).await
}

async fn start_with(unknown: Unknown, shutdown_delay: Duration) -> Running {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let ca = write_pair(&cert, &key);
    let mut settings = Settings::new(([127, 0, 0, 1], 0).into(), cert, key);
    settings.policy.unknown = unknown;
    settings.reload_interval = Duration::from_millis(100);
    settings.shutdown_delay = shutdown_delay;
    settings.drain_timeout = Duration::from_secs(5);
    let hook = Webhook::bind(settings).await.expect("bind");
    let addr = hook.local_addr().expect("bound address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(hook.serve(async {
        let _ = stopped.await;
    }));
    Running {
        addr,
        ca,
        dir,
        stop: Some(stop),
        task,
    }
}

/// An AdmissionReview of `operation` on `object`, as the API server sends it.
fn review(uid: &str, operation: &str, object: &Value) -> Vec<u8> {
    let kind = object["kind"].as_str().unwrap_or("");
    let group = object["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
        .map_or("", |(g, _)| g);
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": "v1", "kind": kind},
            "resource": {"group": group, "version": "v1", "resource": format!("{}s", kind.to_lowercase())},
            "name": object["metadata"]["name"],
            "namespace": object["metadata"]["namespace"],
            "operation": operation,
            "userInfo": {"username": "test"},
            "object": object,
            "dryRun": false
        }
    })
    .to_string()
    .into_bytes()
}

/// A fixture YAML manifest, read with the project's parser.
fn manifest(path: &Path) -> Vec<Value> {
    let mut sources = kvlint::source::Sources::default();
    let text = std::fs::read_to_string(path).expect("read manifest");
    let file = sources.add(path.display().to_string(), text);
    kvlint::yaml::parse_documents(file, sources.get(file))
        .into_iter()
        .map(|d| {
            d.unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message))
                .to_json()
        })
        .filter(|v| !v.is_null())
        .collect()
}

fn fixture(name: &str) -> Value {
    manifest(&root().join("fixtures/webhook").join(name)).remove(0)
}

fn warnings(answer: &Value) -> Vec<String> {
    answer["response"]["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The checks the API server applies to every answer (VerifyAdmissionResponse).
fn assert_answers(answer: &Value, uid: &str) {
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["response"]["uid"], uid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "reads ../shared"]
async fn the_shared_admission_review_is_answered_with_its_uid() {
    let hook = start(Unknown::Warn).await;
    let body = std::fs::read(
        root().join("../shared/manifests/admissionreview-v1-create-deployment-sglang.json"),
    )
    .expect("read ../shared");
    let (status, answer) = hook.validate(body).await;
    assert_eq!(status, StatusCode::OK);
    assert_answers(&answer, "3b0f7e2c-7d51-4a53-9d0e-2a4c5f6b9e10");
    // The object names no GPU type: not verifiable, allowed under the default policy.
    assert_eq!(answer["response"]["allowed"], true);
    assert!(warnings(&answer).iter().any(|w| w.starts_with("INP003")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_gpu_warns_by_default_and_denies_under_unknown_deny() {
    let body = std::fs::read(root().join("fixtures/webhook/admissionreview-update-no-gpu.json"))
        .expect("fixture");
    let uid = "7c1d9a52-0b8e-4f55-a0e2-51d6c3b4e911";

    let warn = start(Unknown::Warn).await;
    let (status, answer) = warn.validate(body.clone()).await;
    assert_eq!(status, StatusCode::OK);
    assert_answers(&answer, uid);
    assert_eq!(answer["response"]["allowed"], true);
    let w = warnings(&answer);
    assert!(w[0].contains("--unknown=warn"), "{w:?}");
    assert!(
        w.iter().any(|w| w.starts_with("INP003 [container vllm]")),
        "{w:?}"
    );

    let deny = start(Unknown::Deny).await;
    let (_, answer) = deny.validate(body).await;
    assert_answers(&answer, uid);
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["code"], 403);
    let message = answer["response"]["status"]["message"]
        .as_str()
        .unwrap_or("");
    assert!(message.contains("INP003"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_incident_deployment_is_denied_with_kv001_over_http2() {
    let hook = start(Unknown::Warn).await;
    let body = review("incident-1", "CREATE", &fixture("deployment-incident.yaml"));
    let mut c = hook.client(Proto::H2).await;
    let (status, bytes) = c
        .request(Method::POST, "/validate", body)
        .await
        .expect("request");
    assert_eq!(status, StatusCode::OK);
    let answer: Value = serde_json::from_slice(&bytes).expect("JSON answer");
    assert_answers(&answer, "incident-1");
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["code"], 403);
    assert_eq!(answer["response"]["status"]["reason"], "Forbidden");
    let message = answer["response"]["status"]["message"]
        .as_str()
        .unwrap_or("");
    assert!(message.contains("KV001 [container sglang]"), "{message}");
    assert!(message.contains("1,048,576"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_safe_deployment_is_allowed_without_warnings() {
    let hook = start(Unknown::Warn).await;
    let (status, answer) = hook
        .validate(review("safe-1", "CREATE", &fixture("deployment-safe.yaml")))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_answers(&answer, "safe-1");
    assert_eq!(answer["response"]["allowed"], true);
    assert!(answer["response"].get("warnings").is_none(), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warn_level_deployment_is_allowed_with_warnings_within_limits() {
    let hook = start(Unknown::Warn).await;
    let (_, answer) = hook
        .validate(review(
            "warn-1",
            "UPDATE",
            &fixture("deployment-headroom.yaml"),
        ))
        .await;
    assert_answers(&answer, "warn-1");
    assert_eq!(answer["response"]["allowed"], true);
    let w = warnings(&answer);
    assert!(w.iter().any(|w| w.starts_with("KV003")), "{w:?}");
    assert!(w.iter().all(|w| w.chars().count() <= 256));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_owned_pod_is_only_warned() {
    let hook = start(Unknown::Warn).await;
    let deployment = fixture("deployment-incident.yaml");
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "glm-prefill-abc", "namespace": "llm", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "glm-prefill-5d8f", "uid": "u1", "controller": true}
        ]},
        "spec": deployment["spec"]["template"]["spec"]
    });
    let (_, answer) = hook.validate(review("pod-1", "CREATE", &pod)).await;
    assert_eq!(answer["response"]["allowed"], true);
    let w = warnings(&answer);
    assert!(
        w[0].contains("managed by ReplicaSet glm-prefill-5d8f"),
        "{w:?}"
    );
    assert!(w.iter().any(|w| w.starts_with("KV001")), "{w:?}");
    // The same Pod created directly is denied.
    pod["metadata"]["ownerReferences"] = json!([]);
    let (_, answer) = hook.validate(review("pod-2", "CREATE", &pod)).await;
    assert_eq!(answer["response"]["allowed"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_without_launches_and_deletions_pass_untouched() {
    let hook = start(Unknown::Deny).await;
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "llm"}, "data": {"a": "b"}});
    let (_, answer) = hook.validate(review("cm-1", "CREATE", &config_map)).await;
    assert_answers(&answer, "cm-1");
    assert_eq!(answer["response"]["allowed"], true);
    assert!(answer["response"].get("warnings").is_none());
    let (_, answer) = hook
        .validate(review(
            "del-1",
            "DELETE",
            &fixture("deployment-incident.yaml"),
        ))
        .await;
    assert_eq!(answer["response"]["allowed"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_foreign_bodies_get_400_with_a_reason() {
    let hook = start(Unknown::Warn).await;
    let mut c = hook.client(Proto::H1).await;
    for (body, reason) in [
        (
            &b"{not json"[..],
            "not an admission.k8s.io/v1 AdmissionReview",
        ),
        (
            br#"{"apiVersion":"v1","kind":"Pod","metadata":{}}"#,
            "expected apiVersion admission.k8s.io/v1",
        ),
        (
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
            "has no request",
        ),
    ] {
        let (status, text) = c
            .request(Method::POST, "/validate", body.to_vec())
            .await
            .expect("request");
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let text = String::from_utf8_lossy(&text);
        assert!(text.contains(reason), "{text}");
    }
    let (status, _) = c
        .request(Method::GET, "/validate", Vec::new())
        .await
        .expect("request");
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_body_gets_413() {
    let hook = start(Unknown::Warn).await;
    // Over HTTP/2 the server can answer before reading the body and reset only the stream; an
    // HTTP/1.1 client may instead see the connection close while it still writes.
    let mut c = hook.client(Proto::H2).await;
    let body = vec![b' '; 4 * 1024 * 1024];
    let (status, text) = c
        .request(Method::POST, "/validate", body)
        .await
        .expect("request");
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(String::from_utf8_lossy(&text).contains("exceeds 3145728 bytes"));
    let (_, metrics) = hook.get("/metrics").await;
    assert!(
        metrics.contains("kvlint_webhook_errors_total{kind=\"too_large\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_swapped_on_disk_is_served_without_restart() {
    let hook = start(Unknown::Warn).await;
    let new_ca = write_pair(&hook.cert(), &hook.key());
    let mut served = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if Client::connect(hook.addr, &new_ca, Proto::H1).await.is_ok() {
            served = true;
            break;
        }
    }
    assert!(served, "the new certificate was not served within 5 s");
    assert!(
        Client::connect(hook.addr, &hook.ca, Proto::H1)
            .await
            .is_err(),
        "the old CA still verifies the server"
    );
    let (_, metrics) = hook.get_with(&new_ca, "/metrics").await;
    assert!(
        metrics.contains("kvlint_webhook_tls_reloads_total 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_metrics_report_decisions_by_rule() {
    let hook = start(Unknown::Warn).await;
    assert_eq!(hook.get("/healthz").await.0, StatusCode::OK);
    assert_eq!(hook.get("/readyz").await.0, StatusCode::OK);
    hook.validate(review(
        "m-1",
        "CREATE",
        &fixture("deployment-incident.yaml"),
    ))
    .await;
    let (status, metrics) = hook.get("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    for line in [
        "kvlint_webhook_decisions_total{decision=\"denied\"} 1",
        "kvlint_webhook_findings_total{rule=\"KV001\",level=\"deny\"} 1",
        "kvlint_webhook_requests_total{path=\"/validate\",code=\"200\"} 1",
        "kvlint_webhook_request_duration_seconds_count 1",
    ] {
        assert!(metrics.contains(line), "missing {line}:\n{metrics}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_a_request_in_flight() {
    let mut hook = start(Unknown::Warn).await;
    let body = review("drain-1", "CREATE", &fixture("deployment-safe.yaml"));
    let (head, tail) = body.split_at(body.len() / 2);
    let mut tls = webhook_client::tls(hook.addr, &hook.ca, b"http/1.1")
        .await
        .expect("connect");
    let request = format!(
        "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    tls.write_all(request.as_bytes()).await.expect("write");
    tls.write_all(head).await.expect("write");
    tls.flush().await.expect("flush");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = hook.stop.take().map(|s| s.send(()));
    tokio::time::sleep(Duration::from_millis(200)).await;
    // No longer accepting, but the request already begun is answered.
    assert!(Client::connect(hook.addr, &hook.ca, Proto::H1)
        .await
        .is_err());
    tls.write_all(tail).await.expect("write");
    tls.flush().await.expect("flush");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"uid\":\"drain-1\""), "{answer}");
    let served = tokio::time::timeout(Duration::from_secs(5), &mut hook.task).await;
    assert!(matches!(served, Ok(Ok(Ok(())))), "{served:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_signal_readiness_fails_while_requests_are_still_answered() {
    let mut hook = start_with(Unknown::Warn, Duration::from_secs(2)).await;
    let _ = hook.stop.take().map(|s| s.send(()));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(hook.get("/readyz").await.0, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(hook.get("/healthz").await.0, StatusCode::OK);
    let (_, answer) = hook
        .validate(review("late-1", "CREATE", &fixture("deployment-safe.yaml")))
        .await;
    assert_answers(&answer, "late-1");
    let served = tokio::time::timeout(Duration::from_secs(10), &mut hook.task).await;
    assert!(matches!(served, Ok(Ok(Ok(())))), "{served:?}");
}

/// Every manifest in deploy/ parses, and the webhook configuration matches the serving kinds,
/// exempts its own namespace and kube-system, answers well inside the API server's timeout,
/// and gets its CA from cert-manager.
#[test]
fn deploy_manifests_parse_and_configure_the_webhook() {
    let mut docs = Vec::new();
    for entry in std::fs::read_dir(root().join("deploy")).expect("deploy/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            docs.extend(manifest(&path));
        }
    }
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    for kind in [
        "Namespace",
        "ServiceAccount",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "Issuer",
        "Certificate",
        "ValidatingWebhookConfiguration",
    ] {
        assert!(kinds.contains(&kind), "deploy/ has no {kind}: {kinds:?}");
    }
    let find = |kind: &str| docs.iter().find(|d| d["kind"] == kind).expect(kind);
    let vwc = find("ValidatingWebhookConfiguration");
    let cert = find("Certificate");
    let ns = cert["metadata"]["namespace"].as_str().expect("namespace");
    assert_eq!(
        vwc["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        format!("{ns}/{}", cert["metadata"]["name"].as_str().unwrap_or(""))
    );
    let hooks = vwc["webhooks"].as_array().expect("webhooks");
    assert_eq!(hooks.len(), 1);
    let hook = &hooks[0];
    assert_eq!(hook["sideEffects"], "None");
    assert_eq!(hook["admissionReviewVersions"], json!(["v1"]));
    let timeout = hook["timeoutSeconds"].as_u64().expect("timeoutSeconds");
    assert!((1..=5).contains(&timeout), "timeoutSeconds {timeout}");
    assert!(matches!(
        hook["failurePolicy"].as_str(),
        Some("Ignore" | "Fail")
    ));
    assert_eq!(hook["clientConfig"]["service"]["path"], "/validate");
    assert_eq!(hook["clientConfig"]["service"]["namespace"], ns);
    // The certificate names the service the API server calls.
    let svc = hook["clientConfig"]["service"]["name"]
        .as_str()
        .expect("service");
    let dns = cert["spec"]["dnsNames"].as_array().expect("dnsNames");
    assert!(dns.contains(&json!(format!("{svc}.{ns}.svc"))), "{dns:?}");

    let exempt = hook["namespaceSelector"]["matchExpressions"]
        .as_array()
        .expect("namespaceSelector.matchExpressions")
        .iter()
        .find(|e| e["key"] == "kubernetes.io/metadata.name")
        .expect("a selector on the namespace name");
    assert_eq!(exempt["operator"], "NotIn");
    let values = exempt["values"].as_array().expect("values");
    assert!(values.contains(&json!(ns)) && values.contains(&json!("kube-system")));

    let covered = |group: &str, resource: &str| {
        hook["rules"].as_array().into_iter().flatten().any(|r| {
            r["apiGroups"]
                .as_array()
                .is_some_and(|g| g.contains(&json!(group)))
                && r["resources"]
                    .as_array()
                    .is_some_and(|g| g.contains(&json!(resource)))
                && r["operations"] == json!(["CREATE", "UPDATE"])
        })
    };
    for (group, resource) in [
        ("apps", "deployments"),
        ("apps", "statefulsets"),
        ("", "pods"),
        ("leaderworkerset.x-k8s.io", "leaderworkersets"),
        ("disaggregatedset.x-k8s.io", "disaggregatedsets"),
        ("serving.kserve.io", "inferenceservices"),
        ("serving.kserve.io", "llminferenceservices"),
        ("ome.io", "inferenceservices"),
        ("ome.io", "clusterservingruntimes"),
        ("nvidia.com", "dynamographdeployments"),
    ] {
        assert!(covered(group, resource), "no rule for {group}/{resource}");
    }

    let deployment = find("Deployment");
    assert_eq!(deployment["spec"]["replicas"], 2);
    let pod = &deployment["spec"]["template"]["spec"];
    assert!(pod["affinity"]["podAntiAffinity"].is_object());
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert!(c["readinessProbe"]["httpGet"]["path"] == "/readyz");
    assert!(c["livenessProbe"]["httpGet"]["path"] == "/healthz");
    assert!(c["resources"]["limits"]["memory"].is_string());
}
