//! Issue 29, the shell reader's classes: defaults that lose to the pod's env, launches inside
//! command substitutions, config files changed after the script writes them, and reads stopped
//! at a caller's deadline. Each input is the smallest form of a hostile or careless recipe.

mod common;
use common::kvlint_stdin;
use kvlint::extract::shell::{self, Stop};
use kvlint::source::FileId;
use std::time::{Duration, Instant};

/// The rules a check of `text` (read as `name` from stdin) finds, VER002 (no image) left out.
fn found(name: &str, text: &str) -> Vec<String> {
    common::rules(&report(name, text))
        .into_iter()
        .filter(|r| *r != "VER002")
        .map(str::to_string)
        .collect()
}

/// How many launches `kvlint check` lists in `text`, given as `name`.
fn launches_in(name: &str, text: &str) -> usize {
    report(name, text)["launches"]
        .as_array()
        .map_or(0, Vec::len)
}

fn report(name: &str, text: &str) -> serde_json::Value {
    let run = kvlint_stdin(
        &[
            "check",
            "--gpu",
            "h100-80gb",
            "--format",
            "json",
            "--stdin-filename",
            name,
            "-",
        ],
        Some(text),
    );
    assert!(run.code <= 2, "{name}: exit {}\n{}", run.code, run.stderr);
    serde_json::from_str(&run.stdout).expect("json report")
}

fn deployment(env: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: engine
          image: lmsysorg/sglang:v0.5.9
          command: ["sh", "-c"]
          args:
            - python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --context-length ${{CTX:-4096}}
{env}"#
    )
}

#[test]
fn a_default_loses_to_an_env_the_pod_sets_from_elsewhere() {
    let set_from = [
        "          env:\n            - name: CTX\n              valueFrom:\n                secretKeyRef: {name: llm, key: ctx}\n",
        "          env:\n            - name: CTX\n              valueFrom:\n                configMapKeyRef: {name: llm, key: ctx}\n",
        "          env:\n            - name: CTX\n              valueFrom:\n                fieldRef: {fieldPath: metadata.name}\n",
        "          env:\n            - name: CTX\n              value: \"4096\"\n            - name: CTX\n              valueFrom:\n                resourceFieldRef: {resource: limits.memory}\n",
        "          envFrom:\n            - configMapRef: {name: llm}\n",
        "          envFrom:\n            - secretRef: {name: llm}\n",
    ];
    for env in set_from {
        let rules = found("d.yaml", &deployment(env));
        assert!(rules.contains(&"INP004".to_string()), "{env}: {rules:?}");
    }
    // Written out, or not set at all: the default (or the value) is what runs.
    for env in [
        "",
        "          env:\n            - name: OTHER\n              value: \"1\"\n",
    ] {
        let rules = found("d.yaml", &deployment(env));
        assert!(!rules.contains(&"INP004".to_string()), "{env}: {rules:?}");
    }
}

fn launches(text: &str) -> Vec<Vec<String>> {
    shell::script(FileId(0), text)
        .launches
        .iter()
        .map(|l| l.args.iter().map(|a| a.text.clone()).collect())
        .collect()
}

#[test]
fn a_launch_inside_a_command_substitution_is_read() {
    let want = ["m", "--max-model-len", "8192"];
    for script in [
        "PID=$(vllm serve m --max-model-len 8192 &)\n",
        "echo $(vllm serve m --max-model-len 8192)\n",
        "echo \"started: $(vllm serve m --max-model-len 8192)\"\n",
        "X=`vllm serve m --max-model-len 8192`\n",
        "sh -c 'echo $(vllm serve m --max-model-len 8192)'\n",
        "sh -c \"echo \\`vllm serve m --max-model-len 8192\\`\"\n",
    ] {
        assert_eq!(launches(script), [want], "{script}");
    }
    // Arithmetic runs no command.
    assert!(launches("N=$((4 * 2))\n").is_empty());
}

#[test]
fn an_engine_named_in_a_block_style_list_that_gives_no_launch_is_inp006() {
    // A list of words that starts with the engine command is an argv, read by its head.
    let argv = "apiVersion: example.com/v1\nkind: InferencePool\nmetadata:\n  name: q\nspec:\n  runner:\n    command:\n      - vllm\n      - serve\n      - Qwen/Qwen3-8B\n";
    assert_eq!(launches_in("pool.yaml", argv), 1);
    // One item that is no word (a mapping) makes it no argv: named, so INP006.
    let yaml = argv.replace("- Qwen/Qwen3-8B", "- {model: Qwen/Qwen3-8B}");
    assert_eq!(launches_in("pool.yaml", &yaml), 0);
    assert_eq!(found("pool.yaml", &yaml), ["INP006"]);
    let quoted = yaml
        .replace("- vllm", "- \"vllm\"")
        .replace("- serve", "- 'serve'");
    assert_eq!(found("pool.yaml", &quoted), ["INP006"]);
}

/// A script that writes an engine config with a heredoc, runs `between`, then launches with it.
fn rewritten(between: &str) -> String {
    format!(
        "cd /app\ncat > /cfg/engine.yaml <<'EOF'\ncontext-length: 8192\nEOF\n{between}\npython3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --config /cfg/engine.yaml\n"
    )
}

#[test]
fn a_config_file_changed_after_it_is_written_is_cfg006() {
    for between in [
        "sed -i 's/8192/1048576/' /cfg/engine.yaml",
        "cp /tmp/other.yaml /cfg/engine.yaml",
        "mv /tmp/other.yaml /cfg/engine.yaml",
        "ln -sf /tmp/other.yaml /cfg/engine.yaml",
        "cp /tmp/other.yaml /cfg/",
        "yq -i '.context-length = 1048576' /cfg/engine.yaml",
        "python3 -c \"open('/cfg/engine.yaml', 'a').write('context-length: 1048576\\n')\"",
        "{ echo 'context-length: 1048576'; } >> /cfg/engine.yaml",
        "for x in 1; do echo 'context-length: 1048576'; done >> /cfg/engine.yaml",
        "exec 3>>/cfg/engine.yaml\necho 'context-length: 1048576' >&3",
        "sed -i 's/8192/1048576/' /cfg/*.yaml",
        "sed -i 's/8192/1048576/' \"$CFG\"",
        "cd /cfg\nsed -i 's/8192/1048576/' engine.yaml",
    ] {
        let rules = found("start.sh", &rewritten(between));
        assert!(
            rules.contains(&"CFG006".to_string()),
            "{between}: {rules:?}"
        );
    }
    // Read again but not changed: the written text is read.
    for between in [
        "cat /cfg/engine.yaml",
        "grep context /cfg/engine.yaml",
        "sed -i 's/a/b/' /cfg/other.yaml",
    ] {
        let rules = found("start.sh", &rewritten(between));
        assert!(
            !rules.contains(&"CFG006".to_string()),
            "{between}: {rules:?}"
        );
    }
    // A relative path written in one directory and read from another names another file.
    let moved = "cat > engine.yaml <<'EOF'\ncontext-length: 8192\nEOF\ncd /srv\npython3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --config engine.yaml\n";
    assert!(found("start.sh", moved).contains(&"CFG006".to_string()));
}

#[test]
fn a_read_past_the_callers_deadline_stops_with_inp001() {
    let script = "A=1\n".repeat(20_000) + "vllm serve m --max-model-len 8192\n";
    let stop = Stop {
        deadline: Some(Instant::now() - Duration::from_secs(1)),
        flag: None,
    };
    let out = shell::with_stop(stop, || shell::script(FileId(0), &script));
    assert!(out.launches.is_empty());
    let cut: Vec<_> = out.findings.iter().filter(|f| f.rule == "INP001").collect();
    assert_eq!(cut.len(), 1);
    assert!(cut[0].get("reason").is_some_and(|r| r.contains("deadline")));
    // Without a deadline the same script is read whole.
    assert_eq!(shell::script(FileId(0), &script).launches.len(), 1);
}
