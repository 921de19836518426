//! The webhook's manifests in deploy/ and its Helm chart (deploy/helm/kvlint-webhook), which renders into the objects deploy/ holds,
//! with the admin's choices taken from values.
//!
//! No `helm` binary is published on the registries CI reaches, so the test renders the chart
//! itself: Go's text/template through the `gtmpl` crate, plus the few Helm functions the chart
//! uses (`toYaml`, `nindent`, `quote`, `default`, `required`), each with Helm's meaning. The
//! rendered documents are read with kvlint's own YAML parser.

use gtmpl::{Context, FuncError, Template, Value};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn chart() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/helm/kvlint-webhook")
}

fn to_gtmpl(v: &Json) -> Value {
    match v {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => Value::from(n.as_f64().unwrap_or_default()),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(a) => Value::Array(a.iter().map(to_gtmpl).collect()),
        Json::Object(o) => Value::Map(
            o.iter()
                .map(|(k, v)| (k.clone(), to_gtmpl(v)))
                .collect::<HashMap<_, _>>(),
        ),
    }
}

fn to_json(v: &Value) -> Json {
    match v {
        Value::NoValue | Value::Nil | Value::Function(_) => Json::Null,
        Value::Bool(b) => json!(b),
        Value::String(s) => json!(s),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => json!(i),
            (None, Some(f)) => json!(f),
            _ => Json::Null,
        },
        Value::Array(a) => Json::Array(a.iter().map(to_json).collect()),
        Value::Object(o) | Value::Map(o) => {
            let mut keys: Vec<_> = o.keys().collect();
            keys.sort();
            Json::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), to_json(&o[k])))
                    .collect(),
            )
        }
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::NoValue | Value::Nil => String::new(),
        other => other.to_string(),
    }
}

/// Helm's `toYaml`: the value as block YAML, without the trailing newline.
fn to_yaml(args: &[Value]) -> Result<Value, FuncError> {
    let [v] = args else {
        return Err(FuncError::ExactlyXArgs("toYaml".into(), 1));
    };
    let yaml =
        serde_saphyr::to_string(&to_json(v)).map_err(|e| FuncError::Generic(e.to_string()))?;
    Ok(Value::from(yaml.trim_end().to_string()))
}

/// Sprig's `nindent N TEXT`: a newline, then TEXT with every line indented by N spaces.
fn nindent(args: &[Value]) -> Result<Value, FuncError> {
    let [n, s] = args else {
        return Err(FuncError::ExactlyXArgs("nindent".into(), 2));
    };
    let n = text(n)
        .parse::<usize>()
        .map_err(|e| FuncError::Generic(e.to_string()))?;
    let pad = " ".repeat(n);
    let body: Vec<String> = text(s).lines().map(|l| format!("{pad}{l}")).collect();
    Ok(Value::from(format!("\n{}", body.join("\n"))))
}

/// Sprig's `quote`: a double-quoted string.
fn quote(args: &[Value]) -> Result<Value, FuncError> {
    let [v] = args else {
        return Err(FuncError::ExactlyXArgs("quote".into(), 1));
    };
    Ok(Value::from(json!(text(v)).to_string()))
}

/// Go's truth: false, 0, nil and empty strings, lists and maps are empty (sprig's `empty`).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) | Value::Map(o) => !o.is_empty(),
        Value::NoValue | Value::Nil => false,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::Function(_) => true,
    }
}

/// Sprig's `default D V`: V unless it is empty, else D.
fn default(args: &[Value]) -> Result<Value, FuncError> {
    let [d, v] = args else {
        return Err(FuncError::ExactlyXArgs("default".into(), 2));
    };
    Ok(if truthy(v) { v } else { d }.clone())
}

/// Helm's `required MSG V`: fails the render when V is empty.
fn required(args: &[Value]) -> Result<Value, FuncError> {
    let [msg, v] = args else {
        return Err(FuncError::ExactlyXArgs("required".into(), 2));
    };
    if truthy(v) {
        Ok(v.clone())
    } else {
        Err(FuncError::Generic(text(msg)))
    }
}

/// Deep-merges `over` into `base`, as `helm --set`/`-f` do.
fn merge(base: &mut Json, over: &Json) {
    match (base, over) {
        (Json::Object(b), Json::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k.clone()).or_insert(Json::Null), v);
            }
        }
        (b, o) => *b = o.clone(),
    }
}

fn yaml_docs(name: &str, text: String) -> Vec<Json> {
    let mut sources = kvlint::source::Sources::default();
    let file = sources.add(name.to_string(), text);
    kvlint::yaml::parse_documents(file, sources.get(file))
        .into_iter()
        .map(|d| {
            d.unwrap_or_else(|e| panic!("{name}: {}", e.message))
                .to_json()
        })
        .filter(|v| !v.is_null())
        .collect()
}

/// `helm template kvlint CHART --namespace NS -f overrides`: every rendered object, or the
/// first render error.
fn render(namespace: &str, overrides: Json) -> Result<Vec<Json>, String> {
    let read = |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let chart_meta = yaml_docs("Chart.yaml", read(chart().join("Chart.yaml"))).remove(0);
    let mut values = yaml_docs("values.yaml", read(chart().join("values.yaml"))).remove(0);
    merge(&mut values, &overrides);
    let data = json!({
        "Values": values,
        "Release": {"Name": "kvlint", "Namespace": namespace},
        "Chart": {"Name": chart_meta["name"], "Version": chart_meta["version"],
                  "AppVersion": chart_meta["appVersion"]},
    });
    let mut entries: Vec<_> = std::fs::read_dir(chart().join("templates"))
        .expect("templates/")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    let mut docs = Vec::new();
    for path in entries {
        let mut t = Template::default();
        t.add_funcs(&[
            ("toYaml", to_yaml as gtmpl::Func),
            ("nindent", nindent),
            ("quote", quote),
            ("default", default),
            ("required", required),
        ]);
        t.parse(read(path.clone()))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let out = t
            .render(&Context::from(to_gtmpl(&data)))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        docs.extend(yaml_docs(&path.display().to_string(), out));
    }
    Ok(docs)
}

fn find<'a>(docs: &'a [Json], kind: &str) -> Option<&'a Json> {
    docs.iter().find(|d| d["kind"] == kind)
}

fn plain_manifests() -> Vec<Json> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let mut docs = Vec::new();
    for entry in std::fs::read_dir(dir).expect("deploy/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).expect("read");
            docs.extend(yaml_docs(&path.display().to_string(), text));
        }
    }
    docs
}

/// With its defaults, the chart renders every object of deploy/ but the Namespace (Helm's
/// `--create-namespace` makes it), with the same webhook settings.
#[test]
fn the_chart_renders_what_deploy_holds() {
    let chart = render("kvlint", json!({})).expect("renders");
    let plain = plain_manifests();
    for doc in &plain {
        let kind = doc["kind"].as_str().expect("kind");
        if kind == "Namespace" {
            continue;
        }
        let rendered = find(&chart, kind).unwrap_or_else(|| panic!("the chart has no {kind}"));
        assert_eq!(
            rendered["metadata"]["name"], doc["metadata"]["name"],
            "{kind}"
        );
        assert_eq!(
            rendered["metadata"]["namespace"], doc["metadata"]["namespace"],
            "{kind}"
        );
    }
    let hook = |docs: &[Json]| {
        find(docs, "ValidatingWebhookConfiguration").expect("vwc")["webhooks"][0].clone()
    };
    let (ours, theirs) = (hook(&chart), hook(&plain));
    for key in [
        "failurePolicy",
        "timeoutSeconds",
        "sideEffects",
        "rules",
        "clientConfig",
    ] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
    let container = |docs: &[Json]| {
        find(docs, "Deployment").expect("deployment")["spec"]["template"]["spec"]["containers"][0]
            .clone()
    };
    let (ours, theirs) = (container(&chart), container(&plain));
    for key in ["image", "args", "resources", "ports", "securityContext"] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
    assert_eq!(
        find(&chart, "Certificate").expect("certificate")["spec"]["dnsNames"],
        find(&plain, "Certificate").expect("certificate")["spec"]["dnsNames"]
    );
}

/// The values an admin sets reach the objects: failure policy, namespace selector, resources,
/// the PDB, the webhook's own flags, and the release namespace everywhere.
#[test]
fn values_set_policy_selector_resources_and_pdb() {
    let docs = render(
        "platform",
        json!({
            "failurePolicy": "Fail",
            "replicas": 3,
            "namespaceSelector": {"matchLabels": {"serving": "llm"}},
            "resources": {"limits": {"memory": "512Mi"}},
            "podDisruptionBudget": {"minAvailable": 2},
            "webhook": {"unknown": "deny", "gpu": "h200x8", "extraArgs": ["--model-config=/m"],
                "trustedControllers": ["system:serviceaccount:kserve:kserve-controller-manager"]},
            "image": {"tag": "0.2.0"},
        }),
    )
    .expect("renders");
    let hook = &find(&docs, "ValidatingWebhookConfiguration").expect("vwc")["webhooks"][0];
    assert_eq!(hook["failurePolicy"], "Fail");
    assert_eq!(
        hook["namespaceSelector"]["matchLabels"],
        json!({"serving": "llm"})
    );
    let exempt = &hook["namespaceSelector"]["matchExpressions"][0];
    assert_eq!(exempt["values"], json!(["platform", "kube-system"]));
    assert_eq!(hook["clientConfig"]["service"]["namespace"], "platform");
    let deploy = find(&docs, "Deployment").expect("deployment");
    assert_eq!(deploy["spec"]["replicas"], 3);
    let c = &deploy["spec"]["template"]["spec"]["containers"][0];
    // Helm merges maps: the limit changes, the default requests stay.
    assert_eq!(
        c["resources"],
        json!({"limits": {"memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}})
    );
    assert_eq!(c["image"], "ghcr.io/kvlint/kvlint:0.2.0");
    let args: Vec<&str> = c["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Json::as_str)
        .collect();
    for want in [
        "--unknown=deny",
        "--gpu=h200x8",
        "--model-config=/m",
        "--trusted-controller=system:serviceaccount:kserve:kserve-controller-manager",
    ] {
        assert!(args.contains(&want), "{want} in {args:?}");
    }
    assert_eq!(
        find(&docs, "PodDisruptionBudget").expect("pdb")["spec"]["minAvailable"],
        2
    );
    assert!(docs
        .iter()
        .all(|d| d["metadata"]["namespace"].is_null() || d["metadata"]["namespace"] == "platform"));
}

/// Without cert-manager the chart asks for the Secret and CA bundle instead of rendering a
/// webhook the API server could not call; with them, it renders no cert-manager objects.
#[test]
fn without_cert_manager_the_tls_secret_and_ca_are_required() {
    let err = render("kvlint", json!({"certManager": {"enabled": false}})).expect_err("must fail");
    assert!(err.contains("is required without cert-manager"), "{err}");
    let docs = render(
        "kvlint",
        json!({"certManager": {"enabled": false}, "podDisruptionBudget": {"enabled": false},
               "tls": {"secretName": "my-tls", "caBundle": "Q0E="}}),
    )
    .expect("renders");
    assert!(find(&docs, "Certificate").is_none() && find(&docs, "Issuer").is_none());
    assert!(find(&docs, "PodDisruptionBudget").is_none());
    let hook = &find(&docs, "ValidatingWebhookConfiguration").expect("vwc");
    assert_eq!(hook["webhooks"][0]["clientConfig"]["caBundle"], "Q0E=");
    assert!(hook["metadata"]["annotations"].is_null());
    let volumes =
        &find(&docs, "Deployment").expect("deployment")["spec"]["template"]["spec"]["volumes"];
    assert_eq!(volumes[0]["secret"]["secretName"], "my-tls");
}

/// An existing issuer replaces the chart's self-signed one.
#[test]
fn an_existing_issuer_is_used_as_given() {
    let docs = render(
        "kvlint",
        json!({"certManager": {"issuerRef": {"kind": "ClusterIssuer", "name": "corp-ca"}}}),
    )
    .expect("renders");
    assert!(find(&docs, "Issuer").is_none());
    let cert = find(&docs, "Certificate").expect("certificate");
    assert_eq!(
        cert["spec"]["issuerRef"],
        json!({"kind": "ClusterIssuer", "name": "corp-ca"})
    );
}

/// Every manifest in deploy/ parses, and the webhook configuration matches the serving kinds,
/// exempts its own namespace and kube-system, answers well inside the API server's timeout,
/// and gets its CA from cert-manager.
#[test]
fn deploy_manifests_parse_and_configure_the_webhook() {
    let docs = plain_manifests();
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
    let find = |kind: &str| find(&docs, kind).expect(kind);
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
        ("apps", "replicasets"),
        ("apps", "daemonsets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("", "pods"),
        ("leaderworkerset.x-k8s.io", "leaderworkersets"),
        ("disaggregatedset.x-k8s.io", "disaggregatedsets"),
        ("serving.kserve.io", "inferenceservices"),
        ("serving.kserve.io", "llminferenceservices"),
        ("ome.io", "inferenceservices"),
        ("ome.io", "clusterservingruntimes"),
        ("nvidia.com", "dynamographdeployments"),
        ("", "replicationcontrollers"),
        ("argoproj.io", "rollouts"),
        ("serving.knative.dev", "services"),
    ] {
        assert!(covered(group, resource), "no rule for {group}/{resource}");
    }
    // Objects a controller owns are only warned about: every such owner is checked itself.
    for (group, kind) in kvlint::webhook::admission::POD_CONTROLLERS {
        let resource = format!("{}s", kind.to_lowercase());
        assert!(
            covered(group, &resource),
            "owner {group}/{kind} is not checked"
        );
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
