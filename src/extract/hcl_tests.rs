use super::*;
use crate::source::Sources;

fn read(text: &str) -> Result<Node, HclError> {
    let mut s = Sources::default();
    let f = s.add("job.nomad", text);
    parse(f, text)
}

fn at<'n>(node: &'n Node, path: &[&str]) -> &'n Node {
    path.iter().fold(node, |n, k| n.get(k).expect(k))
}

#[test]
fn nomad_job_reads_as_nested_labels_with_spans() {
    let text = r#"job "llm" {
  group "serve" {
    count = 2
    task "vllm" {
      driver = "docker"
      config {
        image = "vllm/vllm-openai:v0.11.0"
        args  = ["--model", "Qwen/Qwen3-8B", "--max-model-len", 32768]
      }
      resources {
        device "nvidia/gpu" {
          count = 2
          constraint {
            attribute = "${device.model}"
            value     = "NVIDIA H100 80GB HBM3"
          }
        }
      }
    }
  }
}
"#;
    let doc = read(text).expect("valid");
    let task = at(&doc, &["job", "llm", "group", "serve", "task", "vllm"]);
    let image = at(task, &["config", "image"]);
    assert_eq!(image.as_str(), Some("vllm/vllm-openai:v0.11.0"));
    assert_eq!(&text[image.loc.range()], "\"vllm/vllm-openai:v0.11.0\"");
    let Value::Seq(args) = &at(task, &["config", "args"]).value else {
        panic!("args is a list");
    };
    assert_eq!(args[3].value, Value::Int(32768));
    assert_eq!(&text[args[1].loc.range()], "\"Qwen/Qwen3-8B\"");
    let device = at(task, &["resources", "device", "nvidia/gpu"]);
    assert_eq!(device.get("count").map(|n| &n.value), Some(&Value::Int(2)));
    // Nomad's own runtime interpolation is a placeholder, not a literal.
    let attr = at(device, &["constraint", "attribute"]);
    assert_eq!(attr.as_str(), Some("${device.model}"));
    // A label is a key at the label's place; the block's mapping spans the whole block.
    let Value::Map(jobs) = &doc.get("job").expect("job").value else {
        panic!("labels are a mapping");
    };
    assert_eq!(&text[jobs[0].0.loc.range()], "\"llm\"");
    assert!(text[jobs[0].1.loc.range()].starts_with("job \"llm\" {"));
}

#[test]
fn repeated_blocks_are_a_sequence_and_labels_merge() {
    let text = r#"
resource "kubernetes_deployment" "a" {
  spec {
    template {
      spec {
        container {
          name = "one"
          env {
            name  = "A"
            value = "1"
          }
          env {
            name  = "B"
            value = "2"
          }
        }
      }
    }
  }
}
resource "helm_release" "b" { chart = "x" }
resource "kubernetes_deployment" "c" {}
"#;
    let doc = read(text).expect("valid");
    let res = at(&doc, &["resource"]);
    assert!(res.get("helm_release").is_some());
    let Value::Map(deps) = &at(res, &["kubernetes_deployment"]).value else {
        panic!("labels are a mapping");
    };
    assert_eq!(deps.len(), 2);
    let c = at(
        res,
        &["kubernetes_deployment", "a", "spec", "template", "spec"],
    );
    let Value::Seq(env) = &at(c, &["container", "env"]).value else {
        panic!("two env blocks are a list");
    };
    assert_eq!(env[1].get("value").and_then(Node::as_str), Some("2"));
    assert_eq!(at(c, &["container", "name"]).as_str(), Some("one"));
}

#[test]
fn expressions_kvlint_cannot_evaluate_are_placeholders() {
    let text = r#"
variable "model" {
  default = "Qwen/Qwen3-8B"
}
locals {
  ctx   = 8192
  other = local.ctx
  gone  = var.model
}
a = var.model
b = "--model=${var.model}"
c = upper("x")
d = var.big ? 1 : 2
e = local.other
f = "${local.ctx}"
g = local.gone
h = <<-EOT
  vllm serve ${var.model}
  EOT
i = "%{ if true }x%{ endif }"
j = { "nvidia.com/gpu" = 1, (var.k) = 2 }
"#;
    let doc = read(text).expect("valid");
    let s = |k: &str| doc.get(k).and_then(Node::scalar_text).expect(k);
    assert_eq!(s("a"), "${var.model}");
    assert_eq!(s("b"), "--model=${var.model}");
    assert_eq!(s("c"), "${upper(\"x\")}");
    assert_eq!(s("d"), "${var.big ? 1 : 2}");
    assert_eq!(s("e"), "8192");
    assert_eq!(s("f"), "8192");
    assert_eq!(s("g"), "${local.gone}");
    assert_eq!(s("h"), "vllm serve ${var.model}\n");
    assert_eq!(s("i"), "${template directive}");
    let j = at(&doc, &["j"]);
    assert_eq!(
        j.get("nvidia.com/gpu").map(|n| &n.value),
        Some(&Value::Int(1))
    );
    assert!(j.get("${var.k}").is_some());
    // Every placeholder is one the platform readers hold as not known.
    for k in ["a", "b", "c", "d", "g", "h", "i"] {
        assert!(
            !crate::extract::by_platform::placeholders(&s(k)).is_empty(),
            "{k}"
        );
    }
}

#[test]
fn broken_hcl_is_an_error_at_its_line() {
    let cases = [
        ("job \"x\" {\n  group {\n", 2),
        ("a = 1\na = 2\n", 2),
        ("a = 1\na {\n}\n", 2),
        ("x \"l\" {}\nx {}\n", 2),
    ];
    for (text, line) in cases {
        let e = read(text).expect_err(text);
        let before = &text[..e.loc.start];
        assert_eq!(before.matches('\n').count() + 1, line, "{text}: {e}");
    }
}

#[test]
fn nesting_and_size_are_bounded() {
    let deep = format!("a = {}1{}", "[".repeat(200), "]".repeat(200));
    assert!(read(&deep).is_err());
    let ok = format!("a = {}1{}", "[".repeat(30), "]".repeat(30));
    assert!(read(&ok).is_ok());
    let big = format!("a = \"{}\"", "x".repeat(MAX_BYTES));
    assert!(read(&big).expect_err("too big").message.contains("larger"));
}
