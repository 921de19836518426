//! llm-d ModelService (`platforms/llm-d-modelservice-crd.toml`): each role's launch rendered from
//! the BaseConfig ConfigMap's Deployment template when the input holds it, with every value at
//! its place in either document; without it, what the resource says, never passed. Expected
//! values are what the fixtures say, read as llm-d-model-service's controller reads them.

mod common;

use common::{kvlint, kvlint_stdin};
use kvlint::extract::{extract, Extracted};
use kvlint::launch::{Arg, Launch};
use kvlint::source::Sources;

const DIR: &str = "fixtures/platforms/llm-d-modelservice-crd";

fn load(name: &str, text: &str) -> (Sources, Extracted) {
    let mut sources = Sources::default();
    let id = sources.add(name, text);
    let out = extract(id, &sources);
    (sources, out)
}

fn fixture(name: &str) -> (Sources, Extracted) {
    let path = format!("{DIR}/{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    load(&path, &text)
}

fn texts(l: &Launch) -> Vec<&str> {
    l.args.iter().map(|a| a.text.as_str()).collect()
}

fn after<'l>(l: &'l Launch, flag: &str) -> &'l Arg {
    let i = l.args.iter().position(|a| a.text == flag);
    &l.args[i.unwrap_or_else(|| panic!("no {flag} in {:?}", texts(l))) + 1]
}

fn role<'o>(out: &'o Extracted, role: &str) -> &'o Launch {
    let found = out
        .launches
        .iter()
        .find(|l| l.role_hint.as_deref() == Some(role));
    found.unwrap_or_else(|| panic!("no {role} launch"))
}

#[test]
fn with_its_baseconfig_each_role_is_the_rendered_template_with_the_resource_merged_over_it() {
    let (s, out) = fixture("fire-with-baseconfig.yaml");
    assert_eq!(out.launches.len(), 2, "{:#?}", out.findings);
    let decode = role(&out, "decode");
    // The engine command is the template's, in the ConfigMap.
    assert_eq!(s.text(decode.command), "vllm\n                - serve");
    // The resource's args first (stringSlicePrependTransformer), then the template's, each with
    // its actions filled from the resource: `{{ .HFModelName }}` and `getPort`.
    assert_eq!(
        texts(decode),
        [
            "Qwen/Qwen3-8B",
            "--max-model-len",
            "16384",
            "--tensor-parallel-size",
            "2",
            "--port",
            "8200",
            "--enforce-eager",
            "--kv-transfer-config",
            r#"{"kv_connector":"NixlConnector", "kv_role":"kv_both"}"#,
        ]
    );
    assert_eq!(s.text(decode.args[0].loc), r#""{{ .HFModelName }}""#);
    assert_eq!(s.text(after(decode, "--max-model-len").loc), r#""16384""#);
    let port = after(decode, "--port");
    assert_eq!(s.text(port.loc), r#""{{ "internal_port" | getPort }}""#);
    assert!(decode.args.iter().all(|a| a.unresolved.is_empty()));
    // Its GPUs: the resource's `nvidia.com/gpu: 2` over the template's 1; the type from
    // `acceleratorTypes`, made a required node affinity term.
    assert_eq!(decode.placement.gpus_per_pod, Some(2));
    let gpu = decode
        .placement
        .gpu
        .as_ref()
        .map(|(g, at)| (g.as_str(), s.text(*at)));
    assert_eq!(gpu.map(|g| g.1), Some("NVIDIA-H100-80GB-HBM3"));
    let prefill = role(&out, "prefill");
    assert_eq!(
        s.text(after(prefill, "--port").loc),
        r#""{{ "app_port" | getPort }}""#
    );
    assert_eq!(after(prefill, "--port").text, "8000");
    assert_eq!(prefill.placement.gpus_per_pod, Some(1));
    let object = prefill
        .object
        .as_ref()
        .map(|o| (o.kind.as_str(), o.name.as_str()));
    assert_eq!(object, Some(("ModelService", "qwen3-8b-nixl")));
    // The routing sidecar (a native sidecar of the template) runs no engine.
    assert!(
        out.findings.iter().all(|f| f.rule != "INP006"),
        "{:#?}",
        out.findings
    );
}

#[test]
fn an_option_both_set_differently_is_not_known_and_names_both_places() {
    let (s, out) = fixture("fire-args-order.yaml");
    let l = &out.launches[0];
    let value = after(l, "--max-model-len");
    // Newest order: the resource's `--max-model-len=8192` first, the template's 4096 last.
    assert_eq!(
        (value.text.as_str(), s.text(value.loc)),
        ("4096", r#""4096""#)
    );
    assert_eq!(
        value.unresolved,
        ["either `8192` (the ModelService `qwen3`'s, line 47) or `4096` (the ConfigMap `base`'s, \
          line 25), as the controller's release orders their args"]
    );
}

#[test]
fn without_its_baseconfig_a_role_lists_what_the_resource_says() {
    let (s, out) = fixture("fire-pd.yaml");
    assert_eq!(out.launches.len(), 2);
    let decode = role(&out, "decode");
    assert_eq!(
        texts(decode),
        [
            "--model",
            "meta-llama/Llama-3.2-3B-Instruct",
            "--served-model-name",
            "meta-llama/Llama-3.2-3B-Instruct",
            "--tensor-parallel-size",
            "2"
        ]
    );
    // The model is `routing.modelName` (a `pvc://` URI names no Hugging Face model); the TP is
    // the resource's `parallelism.tensor`; the command stands at the ConfigMap's name.
    assert_eq!(
        s.text(decode.args[1].loc),
        "meta-llama/Llama-3.2-3B-Instruct"
    );
    assert_eq!(s.text(after(decode, "--tensor-parallel-size").loc), "2");
    assert_eq!(s.text(decode.command), "universal-base-config");
    assert_eq!(decode.placement.gpus_per_pod, Some(2));
    let said: Vec<&str> = out.findings.iter().map(|f| f.rule).collect();
    assert_eq!(said, ["INP006", "INP006"]);
    let f = &out.findings[0];
    assert_eq!(f.primary.map(|p| s.text(p)), Some("universal-base-config"));
    assert!(f
        .get("help")
        .is_some_and(|h| h.contains("kubectl get deployments")));
}

/// Every role's launch is refused when the ConfigMap is not in the input, each by its own INP006
/// at the one `baseConfigMapRef` both name.
#[test]
fn without_its_baseconfig_every_role_is_refused() {
    let args = [
        "check",
        "--engine-version",
        "vllm=0.33.0",
        "fixtures/platforms/llm-d-modelservice-crd/fire-pd.yaml",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.transcript(&args));
    let verdicts: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(": vllm "))
        .collect();
    assert_eq!(verdicts.len(), 2, "{}", run.stdout);
    assert!(
        verdicts.iter().all(|v| v.ends_with(": refused")),
        "{verdicts:#?}"
    );
}

#[test]
fn with_its_baseconfig_the_roles_are_planned() {
    let args = [
        "check",
        "--engine-version",
        "vllm=0.33.0",
        "fixtures/platforms/llm-d-modelservice-crd/fire-with-baseconfig.yaml",
    ];
    let run = kvlint(&args);
    insta::assert_snapshot!(run.transcript(&args));
}

#[test]
fn an_option_both_set_differently_is_refused() {
    let args = [
        "check",
        "--engine-version",
        "vllm=0.33.0",
        "fixtures/platforms/llm-d-modelservice-crd/fire-args-order.yaml",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    insta::assert_snapshot!(run.transcript(&args));
}

/// The two files of a BaseConfig and its ModelService, given in one stream, are read together.
#[test]
fn a_baseconfig_and_its_modelservice_in_one_stream() {
    let text = std::fs::read_to_string(format!("{DIR}/fire-with-baseconfig.yaml")).unwrap();
    let (base, msvc) = text.split_once("\n---\n").unwrap();
    let stream = format!("{msvc}\n---\n{base}\n");
    let run = kvlint_stdin(
        &[
            "check",
            "--format",
            "json",
            "--engine-version",
            "vllm=0.33.0",
            "-",
        ],
        Some(&stream),
    );
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let roles: Vec<(&str, u64)> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["role"].as_str().unwrap(),
                l["context_length"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(roles, [("prefill", 16384), ("decode", 16384)]);
}

const BASE: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: base
data:
  decodeDeployment: |
    spec:
      template:
        spec:
          containers:
            - name: vllm
              command: [vllm, serve]
              args:
                - \"{{ .HFModelName }}\"
                - \"--max-model-len={{ .ModelName }}\"
---
apiVersion: llm-d.ai/v1alpha1
kind: ModelService
metadata:
  name: ms
spec:
  baseConfigMapRef:
    name: base
  routing:
    modelName: Qwen/Qwen3-8B
  modelArtifacts:
    uri: pvc://models/qwen3
  decode:
    replicas: 1
";

/// `{{ .HFModelName }}` is empty for a `pvc://` model (TemplateVars.from fills it only from an
/// `hf://` URI): a value kvlint cannot see, never a guess.
#[test]
fn an_action_the_resource_does_not_fill_stays_unresolved() {
    let (_, out) = load("ms.yaml", BASE);
    let l = &out.launches[0];
    assert_eq!(l.args[0].text, "{{ .HFModelName }}");
    assert_eq!(l.args[0].unresolved, ["{{ .HFModelName }}"]);
    assert_eq!(l.args[1].text, "--max-model-len=Qwen/Qwen3-8B");
}

#[test]
fn template_control_flow_is_not_rendered() {
    let text = BASE.replace(
        "- \"{{ .HFModelName }}\"",
        "{{ if .HFModelName }}- x{{ end }}",
    );
    let (s, out) = load("ms.yaml", &text);
    assert!(out.launches.is_empty());
    let f = out.findings.iter().find(|f| f.rule == "INP006").unwrap();
    assert!(f.get("reason").unwrap().contains("control flow"), "{f:#?}");
    assert_eq!(f.primary.map(|p| s.text(p)), Some("{{ if .HFModelName }}"));
}

/// A template whose container gives no `command` runs its image's entrypoint, which kvlint does
/// not know: INP006 at the template, never silence (the llm-d-dev image samples).
#[test]
fn a_rendered_deployment_without_an_engine_command_is_said() {
    let text = BASE.replace("              command: [vllm, serve]\n", "");
    let (s, out) = load("ms.yaml", &text);
    assert!(out.launches.is_empty());
    let f = out.findings.iter().find(|f| f.rule == "INP006").unwrap();
    assert!(
        f.get("reason").unwrap().contains("image's entrypoint"),
        "{f:#?}"
    );
    assert!(s.text(f.primary.unwrap()).starts_with("spec:"));
}

/// `{{ "app_port" | getPort }"` (two real BaseConfigs) is an action the controller cannot parse:
/// INP006 at it.
#[test]
fn an_action_left_open_is_said_at_its_place() {
    let text = BASE.replace(
        "\"--max-model-len={{ .ModelName }}\"",
        "\"{{ .ModelName }\"",
    );
    let (s, out) = load("ms.yaml", &text);
    assert!(out.launches.is_empty());
    let f = out.findings.iter().find(|f| f.rule == "INP006").unwrap();
    assert_eq!(f.primary.map(|p| s.text(p)), Some("{{ .ModelName }\""));
}

/// Given as two files of one run, the BaseConfig is not read with its ModelService (each file is
/// read and checked on its own): each role is still refused, and the help names the file that
/// holds the ConfigMap and the command that reads both together.
#[test]
fn a_baseconfig_in_another_file_of_the_run_is_named_in_the_help() {
    let text = std::fs::read_to_string(format!("{DIR}/fire-with-baseconfig.yaml")).unwrap();
    let (base, msvc) = text.split_once("\n---\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (b, m) = (dir.path().join("base.yaml"), dir.path().join("msvc.yaml"));
    std::fs::write(&b, base).unwrap();
    std::fs::write(&m, msvc).unwrap();
    let (b, m) = (b.to_str().unwrap(), m.to_str().unwrap());
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "--engine-version",
        "vllm=0.33.0",
        b,
        m,
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let helps: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "INP006" && f["file"].as_str() == Some(m))
        .map(|f| f["help"].as_str().unwrap())
        .collect();
    let want = format!(
        "the ConfigMap `universal-base-config-hf` is in {b}, another file of this run; kvlint \
         reads it with the resource that names it only from one file or stream: `cat {b} {m} | \
         kvlint check -`"
    );
    assert_eq!(helps, [want.as_str(), want.as_str()]);
}

/// Without the BaseConfig, a container whose name and image show no engine is not listed as a
/// vLLM launch: INP006 alone says the launch is in the ConfigMap.
#[test]
fn without_its_baseconfig_a_container_that_names_no_engine_is_not_listed() {
    let text = std::fs::read_to_string(format!("{DIR}/fire-granite.yaml")).unwrap();
    let (s, out) = load(
        "ms.yaml",
        &text.replace("name: \"vllm\"", "name: \"server\""),
    );
    assert!(out.launches.is_empty());
    let said: Vec<(&str, &str)> = out
        .findings
        .iter()
        .map(|f| (f.rule, s.text(f.primary.unwrap())))
        .collect();
    assert_eq!(said, [("INP006", "simple-base-config")]);
    let reason = out.findings[0].get("reason").unwrap();
    assert!(reason.contains("no launch is listed"), "{reason}");
}

/// `kubectl get configmap,modelservice -o yaml` prints one `List`: the ModelService finds its
/// BaseConfig among the items.
#[test]
fn a_baseconfig_in_the_same_kubectl_list() {
    let text = std::fs::read_to_string(format!("{DIR}/fire-with-baseconfig.yaml")).unwrap();
    let body: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let body = body.join("\n");
    let (base, msvc) = body.split_once("\n---\n").unwrap();
    let item = |doc: &str| {
        let lines: Vec<String> = doc.lines().map(|l| format!("  {l}")).collect();
        format!("- {}\n", lines.join("\n").trim_start())
    };
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n{}{}",
        item(base),
        item(msvc)
    );
    let (s, out) = load("list.yaml", &list);
    let decode = role(&out, "decode");
    assert_eq!(after(decode, "--max-model-len").text, "16384");
    assert_eq!(
        s.text(after(decode, "--port").loc),
        r#""{{ "internal_port" | getPort }}""#
    );
    assert_eq!(out.launches.len(), 2, "{:#?}", out.findings);
}
