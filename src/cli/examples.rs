//! The examples that end `kvlint --help` and each `kvlint <command> --help`, as ruff's and
//! kube-linter's help pages end: two or three commands that work as written.

/// `(subcommand, examples)`; `""` is `kvlint` itself. A new subcommand adds its line here
/// (tests/cli_help.rs fails on a visible subcommand without examples).
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "kvlint check --gpu h200x8 --engine-version 0.5.20 fixtures/incident/prefill.sh",
            "helm template ./chart | kvlint check -",
            "kvlint explain KV001",
        ],
    ),
    (
        "check",
        &[
            "kvlint check --gpu h200x8 fixtures/incident/",
            "kubectl get deploy -o yaml | kvlint check --stdin-filename cluster.yaml -",
            "kvlint check --format sarif --output kvlint.sarif --format github deploy/",
        ],
    ),
    (
        "capacity",
        &[
            "kvlint capacity --gpu h100-80gb -- vllm serve Qwen/Qwen3-8B --max-model-len 32768",
            "kvlint capacity --gpu h200x8 --format json -- sglang serve Qwen/Qwen3-8B --tp 8",
        ],
    ),
    (
        "plan",
        &[
            "kvlint plan --model zai-org/GLM-5.3 --gpu h200x32 --engine sglang --role prefill --context 1048576",
            "kvlint plan --model Qwen/Qwen3-32B --gpu h100 --gpu a100-80gb --context 131072 --format markdown",
            "kvlint plan --launch fixtures/incident/prefill.sh --gpu h200",
        ],
    ),
    ("gpus", &["kvlint gpus", "kvlint gpus --catalog --format json"]),
    ("models", &["kvlint models qwen3", "kvlint models --format json"]),
    (
        "probe",
        &[
            "kvlint probe -- vllm serve Qwen/Qwen3-8B --max-model-len 32768",
            "CUDA_VISIBLE_DEVICES=0,1 kvlint probe --gpu auto -- sglang serve Qwen/Qwen3-8B --tp 2",
        ],
    ),
    ("explain", &["kvlint explain KV001", "kvlint explain pool-below-context"]),
    ("rules", &["kvlint rules", "kvlint rules --format json"]),
    (
        "platforms",
        &["kvlint platforms", "kvlint platforms ray-serve-config --format json"],
    ),
    (
        "webhook",
        &[
            "kvlint webhook --listen 0.0.0.0:8443 --tls-cert tls.crt --tls-key tls.key",
            "kvlint webhook --listen 0.0.0.0:8443 --tls-cert tls.crt --tls-key tls.key --unknown deny",
        ],
    ),
    (
        "verify",
        &[
            "kvlint verify --url http://glm-prefill.llm.svc:30000",
            "kvlint verify --log fixtures/verify/sglang-0.5.20-incident-prefill.log",
        ],
    ),
    (
        "canary",
        &[
            "kvlint canary --url http://qwen.llm.svc:8000 --requests 12 --concurrency 4",
            "kvlint canary --url http://llm.prod.svc:30000 --max-tokens-sent 1100000 --yes-large",
        ],
    ),
    (
        "completions",
        &[
            "kvlint completions bash > /etc/bash_completion.d/kvlint",
            "kvlint completions zsh > \"${fpath[1]}/_kvlint\"",
        ],
    ),
    (
        "man",
        &[
            "kvlint man > /usr/local/share/man/man1/kvlint.1",
            "kvlint man | man -l -",
        ],
    ),
];

/// The help text's closing section for a subcommand (`""`: kvlint itself).
fn section(name: &str) -> Option<String> {
    let (_, lines) = EXAMPLES.iter().find(|(n, _)| *n == name)?;
    let body: Vec<String> = lines.iter().map(|l| format!("  {l}")).collect();
    Some(format!("Examples:\n{}", body.join("\n")))
}

/// Ends kvlint's help, and each subcommand's, with its examples.
pub(super) fn add(cmd: clap::Command) -> clap::Command {
    let top = section("").unwrap_or_default();
    cmd.after_help(top)
        .mut_subcommands(|sub| match section(sub.get_name()) {
            Some(text) => sub.after_help(text),
            None => sub,
        })
}
