//! Shell-side inputs end to end: launch forms in scripts and Dockerfiles, what stdin is read as,
//! and what a script hides (INP004) or breaks (INP001). Every expected value is what the shell,
//! Docker or the engine image would do with the fixture.

mod common;
use common::{kvlint, kvlint_stdin, root};
use kvlint::extract::{extract, Extracted};
use kvlint::launch::{Engine, Launch};
use kvlint::source::Sources;

fn read(path: &str) -> (Sources, Extracted) {
    let text = std::fs::read_to_string(root().join(path)).expect("fixture");
    let mut sources = Sources::default();
    let id = sources.add(path, text);
    let out = extract(id, &sources);
    (sources, out)
}

fn args(l: &Launch) -> Vec<&str> {
    l.args.iter().map(|a| a.text.as_str()).collect()
}

/// The JSON report of a file checked on an H100 whose launch is refused (exit 1).
fn refused(path: &str) -> serde_json::Value {
    let run = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", path]);
    assert_eq!(run.code, 1, "{path}: {}", run.stderr);
    serde_json::from_str(&run.stdout).expect("json report")
}

fn rules(json: &str) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(json).expect("json report");
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rule"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn docker_run_takes_engine_version_and_gpus_from_the_container() {
    let (s, out) = read("fixtures/extract/shell/docker-run-sglang-prefill.sh");
    assert_eq!(out.launches.len(), 1, "{:#?}", out.launches);
    let l = &out.launches[0];
    assert_eq!(l.engine, Engine::Sglang);
    assert_eq!(s.text(l.command), "python3 -m sglang.launch_server");
    let (version, at) = l.engine_version.clone().expect("version from the tag");
    assert_eq!(
        (version.as_str(), s.text(at)),
        ("0.5.12", "lmsysorg/sglang:v0.5.12-cu129")
    );
    // `--gpus all` is every GPU of the host: not known from the file.
    assert_eq!(l.placement.gpus_per_pod, None);
    assert_eq!(
        l.env.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["HF_TOKEN"]
    );

    let (s, out) = read("fixtures/extract/shell/docker-run-vllm.sh");
    let l = &out.launches[0];
    assert_eq!(l.engine, Engine::Vllm);
    // No command after the image: its ENTRYPOINT (`vllm serve`) takes the words as arguments.
    assert_eq!(s.text(l.command), "vllm/vllm-openai:v0.11.0");
    assert_eq!(args(l)[..2], ["--model", "Qwen/Qwen3-8B"]);
    assert_eq!(l.placement.gpus_per_pod, Some(2));
    assert_eq!(
        l.engine_version.as_ref().map(|v| v.0.as_str()),
        Some("0.11.0")
    );
}

#[test]
fn docker_run_of_a_vulnerable_sglang_prefill_is_ver001() {
    let path = "fixtures/extract/shell/docker-run-sglang-prefill.sh";
    let run = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", path]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(rules(&run.stdout), ["VER001"]);
}

#[test]
fn dockerfile_cmd_runs_under_the_base_images_entrypoint() {
    let (s, out) = read("fixtures/extract/shell/Dockerfile.vllm-openai");
    assert_eq!(out.launches.len(), 1);
    let l = &out.launches[0];
    assert_eq!(l.engine, Engine::Vllm);
    assert_eq!(s.text(l.command), "vllm/vllm-openai:v0.11.0");
    assert_eq!(
        args(l),
        [
            "Qwen/Qwen3-8B",
            "--max-model-len",
            "32768",
            "--gpu-memory-utilization",
            "0.9"
        ]
    );
    assert_eq!(s.text(l.args[2].loc), "\"32768\"");
    assert_eq!(
        l.engine_version.as_ref().map(|v| v.0.as_str()),
        Some("0.11.0")
    );
    assert_eq!(l.env[0].0, "HF_HOME");
}

#[test]
fn nested_shells_eval_and_heredocs_are_read_and_routers_are_not_launches() {
    let (s, out) = read("fixtures/extract/shell/nested.sh");
    let found: Vec<(usize, &str, Engine)> = out
        .launches
        .iter()
        .map(|l| (s.position(l.command).line, s.text(l.command), l.engine))
        .collect();
    assert_eq!(
        found,
        [
            (3, "python3 -m sglang.launch_server", Engine::Sglang),
            (4, "vllm serve", Engine::Vllm),
            (6, "python3 -m sglang.launch_server", Engine::Sglang),
            (9, "vllm serve", Engine::Vllm),
            (12, "python3 -m vllm.entrypoints.api_server", Engine::Vllm),
            // The Dynamo worker keeps its wrapper in the command words.
            (16, "python3 -m dynamo.sglang", Engine::Sglang),
        ]
    );
    // eval: `$CTX` was expanded by the outer shell, and the value points at the eval string.
    let eval = &out.launches[0];
    assert_eq!(args(eval)[3], "32768");
    assert_eq!(s.position(eval.args[3].loc).line, 3);
    // Unquoted heredoc: the outer shell's CTX; quoted heredoc: LEN is not set anywhere.
    assert_eq!(args(&out.launches[2])[3], "32768");
    assert_eq!(out.launches[3].args[2].unresolved, ["LEN"]);
    let at = out.launches[2].args[3].loc;
    assert_eq!((s.position(at).line, s.text(at)), (6, "$CTX"));
}

#[test]
fn extensionless_scripts_by_shebang_and_extensions_in_any_case() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = std::fs::read_to_string(root().join("fixtures/extract/shell/serve")).unwrap();
    std::fs::write(dir.path().join("serve"), &serve).unwrap();
    std::fs::write(
        dir.path().join("RUN.SH"),
        "vllm serve Qwen/Qwen3-8B --max-model-len 8192\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("serve.zsh"),
        "vllm serve Qwen/Qwen3-8B --max-model-len 8192\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("DEPLOY.YAML"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n  - name: v\n    \
         image: vllm/vllm-openai:v0.19.0\n    args: [Qwen/Qwen3-8B, --max-model-len, \"8192\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes"), "vllm serve Qwen/Qwen3-8B\n").unwrap();
    let d = dir.path().to_string_lossy().into_owned();
    let run = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", &d]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mut files: Vec<String> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let f = l["file"].as_str().unwrap_or_default();
            f.rsplit('/').next().unwrap_or(f).to_string()
        })
        .collect();
    files.sort();
    // `notes` has no shebang and no extension: not an input.
    assert_eq!(files, ["DEPLOY.YAML", "RUN.SH", "serve", "serve.zsh"]);
}

#[test]
fn yaml_on_stdin_gives_the_same_verdict_as_the_file() {
    let path = "fixtures/extract/shell/deployment-multidoc.yaml";
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let by_name = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", path]);
    let piped = kvlint_stdin(
        &["check", "--gpu", "h100-80gb", "--format", "json", "-"],
        Some(&text),
    );
    assert_eq!(by_name.code, 1, "{}", by_name.stderr);
    assert_eq!(piped.code, by_name.code, "{}", piped.stderr);
    assert_eq!(rules(&piped.stdout), rules(&by_name.stdout));
    assert_eq!(rules(&piped.stdout), ["VER001"]);
    let named = kvlint_stdin(
        &[
            "check",
            "--gpu",
            "h100-80gb",
            "--stdin-filename",
            "chart.yaml",
            "-",
        ],
        Some(&text),
    );
    assert!(
        named
            .stdout
            .contains("chart.yaml:15: sglang 0.5.12 prefill"),
        "{}",
        named.stdout
    );
}

#[test]
fn stdin_filename_picks_the_reader() {
    // Without a name the content decides; a name picks the reader (here a Dockerfile).
    let script = "vllm serve Qwen/Qwen3-8B --max-model-len 8192\n";
    let as_shell = kvlint_stdin(&["check", "--gpu", "h100-80gb", "-"], Some(script));
    assert!(
        as_shell.stdout.contains("<stdin>:1: vllm"),
        "{}",
        as_shell.stdout
    );
    let dockerfile = "FROM vllm/vllm-openai:v0.11.0\nCMD [\"Qwen/Qwen3-8B\"]\n";
    let named = kvlint_stdin(
        &[
            "check",
            "--gpu",
            "h100-80gb",
            "--stdin-filename",
            "Dockerfile",
            "-",
        ],
        Some(dockerfile),
    );
    assert!(
        named.stdout.contains("Dockerfile:1: vllm 0.11.0"),
        "{}",
        named.stdout
    );
}

#[test]
fn what_a_script_hides_is_inp004_and_what_it_breaks_inp001() {
    for (path, rule) in [
        ("fixtures/INP004/fire-trailing-args.sh", "INP004"),
        ("fixtures/INP004/fire-extra-args.sh", "INP004"),
        ("fixtures/INP004/fire-unknown-array.sh", "INP004"),
        ("fixtures/INP004/fire-branch-context.sh", "INP004"),
        ("fixtures/INP004/fire-default-from-caller.sh", "INP004"),
        ("fixtures/INP004/fire-command-output.sh", "INP004"),
        (
            "fixtures/INP004/fire-command-output-quoted-parens.sh",
            "INP004",
        ),
        ("fixtures/INP004/fire-alternate-expansion.sh", "INP004"),
        ("fixtures/INP004/fire-envsubst-template.yaml.tpl", "INP004"),
        ("fixtures/INP001/fire-unterminated-quote.sh", "INP001"),
        ("fixtures/INP001/fire-unterminated-heredoc.sh", "INP001"),
    ] {
        let run = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", path]);
        assert_eq!(run.code, 1, "{path}: {}", run.stderr);
        // The scripts name no image: VER002 (release unknown) comes with them.
        let found: Vec<String> = rules(&run.stdout)
            .into_iter()
            .filter(|r| r != "VER002")
            .collect();
        assert_eq!(found, [rule], "{path}");
    }
    let run = kvlint(&[
        "check",
        "--gpu",
        "h100-80gb",
        "fixtures/INP004/fire-branch-context.sh",
    ]);
    assert!(
        run.stdout
            .contains("CTX ($(cat /etc/long-context) or 8192, set in different"),
        "{}",
        run.stdout
    );
    let run = kvlint(&[
        "check",
        "--gpu",
        "h100-80gb",
        "fixtures/INP001/fire-unterminated-quote.sh",
    ]);
    assert!(
        run.stdout.contains("fire-unterminated-quote.sh:3:23"),
        "{}",
        run.stdout
    );
}

#[test]
fn bash_arrays_expand_element_by_element_with_their_spans() {
    let script = "TP=4\nPAR=(--tp \"$TP\" --dp 1)\nEMPTY=()\n\
                  python3 -m sglang.launch_server --model-path m \"${PAR[@]}\" \"${EMPTY[@]}\" --port 1\n";
    let mut sources = Sources::default();
    let id = sources.add("a.sh", script);
    let out = extract(id, &sources);
    assert!(out.findings.is_empty(), "{:#?}", out.findings);
    let l = &out.launches[0];
    assert_eq!(
        args(l),
        ["--model-path", "m", "--tp", "4", "--dp", "1", "--port", "1"]
    );
    assert_eq!(sources.text(l.args[3].loc), "\"${PAR[@]}\"");
}

#[test]
fn values_that_differ_between_paths_are_read_per_path_unless_a_path_leaves_them_unknown() {
    let script = "X=1\nif a; then\n  if b; then X=2; fi\nelse\n  X=1\nfi\n\
                  case $M in a) T=1;; b) T=2;; esac\n\
                  [ -n \"$Y\" ] && P=5\n\
                  for i in 1 2; do Q=3; done\n\
                  R=1; if c; then R=1; fi\n\
                  while d; do S=4; break; done; S=6\n\
                  vllm serve m --a $X --b $T --c $P --d $Q --e $R --f $S\n";
    let mut sources = Sources::default();
    let id = sources.add("b.sh", script);
    let out = extract(id, &sources);
    let got: Vec<Vec<(&str, Vec<&str>)>> = out
        .launches
        .iter()
        .map(|l| {
            l.args[1..]
                .iter()
                .skip(1)
                .step_by(2)
                .map(|a| {
                    (
                        a.text.as_str(),
                        a.unresolved.iter().map(String::as_str).collect(),
                    )
                })
                .collect()
        })
        .collect();
    // X is written on every path (2, or 1 on the other two): one launch per value. T may be
    // unset (no `*)` pattern), P too (the test may fail), Q is a loop's: unknown.
    let rest = [
        ("$T", vec!["T (1 or 2 or unset, set in different branches)"]),
        ("$P", vec!["P (5 or unset, set in different branches)"]),
        ("$Q", vec!["Q (3 or unset, set in different branches)"]),
        ("1", vec![]),
        ("6", vec![]),
    ];
    let with = |x| [vec![(x, vec![])], rest.to_vec()].concat();
    assert_eq!(got, [with("2"), with("1")]);
}

#[test]
fn a_command_is_read_once_per_path_with_each_branchs_values_together() {
    // TP and CTX come from the same branch; the role from a `case` whose `*)` exits.
    let script = "M=Qwen/Qwen3-8B\n\
                  if [ \"$BIG\" = 1 ]; then\n  TP=4\n  CTX=32768\nelse\n  TP=1\n  CTX=8192\nfi\n\
                  case \"$ROLE\" in\n  prefill) MODE=prefill ;;\n  decode) MODE=decode ;;\n\
                  *) echo \"unknown role\"; exit 1 ;;\nesac\n\
                  CMD=\"python3 -m sglang.launch_server --model-path $M --tp $TP\"\n\
                  $CMD --context-length $CTX --disaggregation-mode $MODE\n";
    let mut sources = Sources::default();
    let id = sources.add("r.sh", script);
    let out = extract(id, &sources);
    assert!(out.findings.is_empty(), "{:#?}", out.findings);
    let got: Vec<Vec<&str>> = out.launches.iter().map(args).collect();
    let launch = |tp: &'static str, ctx: &'static str, mode: &'static str| {
        vec![
            "--model-path",
            "Qwen/Qwen3-8B",
            "--tp",
            tp,
            "--context-length",
            ctx,
            "--disaggregation-mode",
            mode,
        ]
    };
    assert_eq!(
        got,
        [
            launch("4", "32768", "prefill"),
            launch("4", "32768", "decode"),
            launch("1", "8192", "prefill"),
            launch("1", "8192", "decode"),
        ]
    );
    // Each value points at the reference that brought it in.
    assert_eq!(sources.text(out.launches[0].args[5].loc), "$CTX");
}

#[test]
fn a_path_whose_value_is_not_written_keeps_the_variable_unknown() {
    // A path that may leave CTX unset (no `else`, nothing before), one whose value is a
    // command's output, or more paths than are read: INP004, never a guess.
    for script in [
        "if [ -n \"$LONG\" ]; then CTX=131072; fi\n",
        "CTX=8192\nif [ -n \"$LONG\" ]; then CTX=$(cat /etc/ctx); fi\n",
        "CTX=1\nfor a in 1 2 3 4; do if [ $a ]; then CTX=2; elif b; then CTX=3; fi; done\n",
        "case $A in a) C=1;; b) C=2;; *) C=3;; esac\n\
         case $B in a) D=1;; b) D=2;; *) D=3;; esac\nCTX=$C$D\n",
    ] {
        let script = format!("{script}vllm serve m --max-model-len $CTX\n");
        let mut sources = Sources::default();
        let id = sources.add("u.sh", &script);
        let out = extract(id, &sources);
        assert_eq!(out.launches.len(), 1, "{script}");
        assert!(!out.launches[0].args[2].unresolved.is_empty(), "{script}");
    }
}

#[test]
fn an_unknown_word_where_a_flag_may_stand_is_inp004_but_a_flags_value_is_left_to_the_engine() {
    let script = "if [ -n \"$E\" ]; then OPTS=\"--tp 2\"; else OPTS=$(extra_opts); fi\n\
                  python3 -m sglang.launch_server --model-path m \"$OPTS\" --port \"$PORT\"\n";
    let mut sources = Sources::default();
    let id = sources.add("o.sh", script);
    let out = extract(id, &sources);
    let at: Vec<(&str, &str)> = out
        .findings
        .iter()
        .map(|f| (f.rule, sources.text(f.primary.expect("a place"))))
        .collect();
    assert_eq!(at, [("INP004", "\"$OPTS\"")]);
    assert_eq!(
        out.findings[0].get("vars"),
        Some("OPTS (--tp 2 or $(extra_opts), set in different branches)")
    );
}

#[test]
fn sh_c_script_arguments_fill_its_positional_parameters() {
    // Kubernetes' `[bash, -c, SCRIPT, --, ARGS...]`: `--` is `$0`, ARGS are "$@".
    let script = "bash -c 'exec vllm serve \"$@\" --node-rank=$1' -- m --max-model-len 8192\n";
    let mut sources = Sources::default();
    let id = sources.add("p.sh", script);
    let out = extract(id, &sources);
    assert!(out.findings.is_empty(), "{:#?}", out.findings);
    let l = &out.launches[0];
    assert_eq!(args(l), ["m", "--max-model-len", "8192", "--node-rank=m"]);
    // Like any expansion, the words point at the reference that brought them in.
    assert_eq!(sources.text(l.args[2].loc), "\"$@\"");
}

#[test]
fn a_reference_the_outer_shell_cannot_expand_stays_unknown_inside_single_quotes() {
    // `"... '$M' ..."`: this shell expands `$M` before `bash -c` sees the quotes. Set in two
    // branches it is unknown, and the inner single quotes must not turn it into the text `$M`.
    let script = "M=Qwen/Qwen3-8B\nif [ -n \"$BIG\" ]; then M=$(cat /models/big); fi\n\
                  bash -c \"vllm serve '$M' --max-model-len 8192\"\n";
    let mut sources = Sources::default();
    let id = sources.add("q.sh", script);
    let out = extract(id, &sources);
    let l = &out.launches[0];
    assert_eq!(l.args[0].text, "$M");
    assert_eq!(
        l.args[0].unresolved,
        ["M ($(cat /models/big) or Qwen/Qwen3-8B, set in different branches)"]
    );
    assert!(!l.args[0].defaulted);
    assert!(l.args[1..].iter().all(|a| a.unresolved.is_empty()));
    // Set from the caller's `$1` on one path, it is the caller's default: the written value,
    // still unresolved.
    let script = script.replace("M=$(cat /models/big)", "M=$1");
    let id = sources.add("d.sh", script);
    let out = extract(id, &sources);
    let model = &out.launches[0].args[0];
    assert_eq!(model.text, "Qwen/Qwen3-8B");
    assert_eq!(
        model.unresolved,
        ["M (\"Qwen/Qwen3-8B\" unless the caller passes another through $1)"]
    );
    assert!(model.defaulted);
    // Known, the value goes through the inner quotes as it is.
    let id = sources.add("k.sh", "M=Qwen/Qwen3-8B\nbash -c \"vllm serve '$M'\"\n");
    let out = extract(id, &sources);
    assert_eq!(args(&out.launches[0]), ["Qwen/Qwen3-8B"]);
    assert!(out.launches[0].args[0].unresolved.is_empty());
}

#[test]
fn stdin_content_picks_the_reader() {
    use kvlint::extract::{kind, Kind};
    let list =
        std::fs::read_to_string(root().join("fixtures/extract/shell/kubectl-list.yaml")).unwrap();
    assert_eq!(kind("<stdin>", &list), Kind::Unknown);
    assert_eq!(kind("<stdin>", "{\"kind\": \"List\"}"), Kind::Json);
    assert_eq!(kind("<stdin>", "#!/bin/sh\nvllm serve m\n"), Kind::Shell);
    assert_eq!(
        kind("<stdin>", "FROM vllm/vllm-openai:v0.11.0\n"),
        Kind::Dockerfile
    );
    assert_eq!(kind("deploy.YAML", "vllm serve m"), Kind::Yaml);
    assert_eq!(kind("RUN.SH", "kind: x"), Kind::Shell);
    // `kubectl get -o yaml` output on stdin is read as YAML: the same verdict as the file.
    let path = "fixtures/extract/shell/kubectl-list.yaml";
    let by_name = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", path]);
    let piped = kvlint_stdin(
        &["check", "--gpu", "h100-80gb", "--format", "json", "-"],
        Some(&list),
    );
    assert_eq!(
        (piped.code, rules(&piped.stdout)),
        (by_name.code, rules(&by_name.stdout))
    );
    let launches = |json: &str| -> usize {
        let doc: serde_json::Value = serde_json::from_str(json).unwrap();
        doc["launches"].as_array().map_or(0, Vec::len)
    };
    assert_eq!(launches(&piped.stdout), launches(&by_name.stdout));
}

#[test]
fn a_shell_test_bracket_on_stdin_is_still_shell() {
    use kvlint::extract::{kind, Kind};
    let script = "[ \"$X\" = 1 ] && vllm serve m --max-model-len 8192\n";
    assert_eq!(kind("<stdin>", script), Kind::Unknown);
    let mut sources = Sources::default();
    let id = sources.add("<stdin>", script);
    let out = extract(id, &sources);
    assert_eq!(out.launches.len(), 1);
    assert!(out.findings.is_empty(), "{:#?}", out.findings);
}

#[test]
fn dockerfile_build_args_and_stages_lead_to_the_base_image() {
    let text = "ARG VLLM_VERSION=v0.11.0\n\
                FROM vllm/vllm-openai:${VLLM_VERSION} AS base\n\
                RUN pip install x\n\
                FROM python:3.12 AS tools\n\
                FROM base\n\
                CMD [\"Qwen/Qwen3-8B\", \"--max-model-len\", \"8192\"]\n";
    let mut sources = Sources::default();
    let id = sources.add("Dockerfile", text);
    let out = extract(id, &sources);
    let l = &out.launches[0];
    assert_eq!(l.engine, Engine::Vllm);
    let (version, at) = l
        .engine_version
        .clone()
        .expect("version from the ARG default");
    assert_eq!(
        (version.as_str(), sources.text(at)),
        ("0.11.0", "vllm/vllm-openai:${VLLM_VERSION}")
    );
    assert_eq!(args(l), ["Qwen/Qwen3-8B", "--max-model-len", "8192"]);
}

#[test]
fn a_variable_set_from_a_substitution_is_one_unknown_value_not_its_texts_words() {
    // `$(( ... ))` kvlint cannot evaluate, `$(...)` and backquotes: each variable's value is only
    // known when the script runs, so `$R` unquoted is no flag and no positional of its own.
    let script = "R=$(( ${RANK:-0} * LOCAL ))\nN=`nvidia-smi -L | wc -l`\n\
                  C=$(grep -oP \"cache \\(\\K[0-9]+\" vllm.log)\n\
                  vllm serve m --data-parallel-start-rank $R --tensor-parallel-size $N --max-model-len $C\n";
    let mut sources = Sources::default();
    let id = sources.add("s.sh", script);
    let out = extract(id, &sources);
    let l = &out.launches[0];
    assert_eq!(
        args(l),
        [
            "m",
            "--data-parallel-start-rank",
            "$R",
            "--tensor-parallel-size",
            "$N",
            "--max-model-len",
            "$C"
        ]
    );
    assert_eq!(l.args[2].unresolved, ["$(( ${RANK:-0} * LOCAL ))"]);
    assert_eq!(l.args[4].unresolved, ["`nvidia-smi -L | wc -l`"]);
}

#[test]
fn docker_run_of_an_image_named_for_an_engine() {
    let (s, out) = read("fixtures/extract/shell/docker-run-engine-named.sh");
    assert_eq!(out.launches.len(), 2, "{:?}", out.launches);
    let rocm = &out.launches[0];
    assert_eq!(rocm.engine, Engine::Vllm);
    // The image's entrypoint takes the options: the launch stands at the image.
    assert_eq!(s.text(rocm.command), "rocm/vllm:rocm6.3.1_vllm_0.8.5");
    assert_eq!(
        args(rocm),
        ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2"]
    );
    assert_eq!(rocm.placement.gpus_per_pod, Some(2));
    // A command after the image runs as written: the `vllm serve` inside `bash -c`.
    let intel = &out.launches[1];
    assert_eq!(s.text(intel.command), "vllm serve");
    assert_eq!(args(intel)[0], "Qwen/Qwen3-32B");
}

#[test]
fn makefile_recipes_read_with_makes_variables() {
    let (s, out) = read("fixtures/extract/shell/serve.mk");
    assert_eq!(out.launches.len(), 1);
    let l = &out.launches[0];
    assert_eq!(l.engine, Engine::Vllm);
    assert_eq!(
        args(l)[..3],
        ["Qwen/Qwen3-8B", "--tensor-parallel-size", "2"]
    );
    // `TP = $(GPUS)` is expanded where it is used: the value is written on the GPUS line.
    assert_eq!(s.position(l.args[2].loc).line, 4);
    // `CTX ?= 16384` is a default the caller may override, read as `${CTX:-16384}`.
    let ctx = &l.args[4];
    assert_eq!(l.args[3].text, "--max-model-len");
    assert!(!ctx.unresolved.is_empty() && ctx.defaulted, "{ctx:?}");
    let run = kvlint(&[
        "check",
        "--gpu",
        "h100-80gb",
        "--format",
        "json",
        "fixtures/extract/shell/serve.mk",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json report");
    let inp004 = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["rule"] == "INP004")
        .expect("INP004");
    assert!(
        inp004["message"]
            .as_str()
            .unwrap()
            .contains("CTX (\"16384\" unless set by the caller)"),
        "{inp004}"
    );
    assert_eq!(doc["launches"][0]["tp"], 2);
}

#[test]
fn a_callers_default_is_listed_and_planned_but_the_caller_still_decides() {
    let path = "fixtures/extract/shell/caller-defaults.sh";
    let doc = refused(path);
    let launch = &doc["launches"][0];
    // What runs when the caller sets nothing, as a reader of the script lists it.
    assert_eq!(launch["model"], "Qwen/Qwen3-8B");
    assert_eq!(launch["tp"], 1);
    assert_eq!(launch["context_length"], 32768);
    assert_eq!(launch["verdict"], "refused");
    let inp004: Vec<(String, u64)> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "INP004")
        .map(|f| {
            (
                f["message"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    // Model, TP and context are defaults; the fraction's default is itself unknown; the port is
    // not a pool setting.
    let lines: Vec<u64> = inp004.iter().map(|(_, l)| *l).collect();
    assert_eq!(lines, [7, 8, 9, 11], "{inp004:?}");
    assert!(inp004[2]
        .0
        .contains("CTX (\"32768\" unless set by the caller)"));
    // A fraction with no known value stops the plan; the human line says so.
    let human = kvlint(&["check", "--gpu", "h100-80gb", path]);
    assert!(human
        .stdout
        .contains("planned with 32768, what runs when the caller sets nothing"));
    assert!(
        human.stdout.contains("value not known before deploy"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("no plan (see findings): refused"));
}

#[test]
fn what_a_script_writes_before_reading_its_options_is_the_callers_default() {
    let path = "fixtures/extract/shell/caller-options.sh";
    let doc = refused(path);
    let launch = &doc["launches"][0];
    assert_eq!(launch["model"], "Qwen/Qwen3-8B");
    assert_eq!(launch["tp"], 1);
    assert_eq!(launch["context_length"], 32768);
    // 0.9 on one path, a command's output on the other: no default, no plan.
    assert_eq!(launch["memory_fraction"], serde_json::Value::Null);
    assert_eq!(launch["verdict"], "refused");
    let messages: Vec<&str> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "INP004")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert!(messages[0]
        .contains("MODEL (\"Qwen/Qwen3-8B\" unless the caller passes another through $OPTARG)"));
    assert!(messages[2].contains("CTX (\"32768\" unless the caller passes another through $2)"));
    assert!(messages[3].starts_with("--mem-fraction-static is set from FRACTION"));
}

#[test]
fn a_default_inside_an_sh_c_script_is_still_the_callers() {
    // The outer shell expands `${CTX:-8192}` before `bash -c` reads it: 8192 is planned with,
    // and the caller still decides (once a silent 8192 that passed).
    let run = kvlint_stdin(
        &["check", "--gpu", "h100-80gb", "--stdin-filename", "serve.sh", "-"],
        Some("bash -c \"python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --context-length ${CTX:-8192}\"\n"),
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("planned with 8192, what runs when the caller sets nothing"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("for a context of 8,192: refused"),
        "{}",
        run.stdout
    );
}

/// The launches' TP and the INP004 messages of a script checked on an H100.
fn tps_and_unknowns(script: &str) -> (Vec<serde_json::Value>, Vec<String>) {
    let run = kvlint_stdin(
        &[
            "check",
            "--gpu",
            "h100-80gb",
            "--format",
            "json",
            "--stdin-filename",
            "serve.sh",
            "-",
        ],
        Some(script),
    );
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json report");
    let tps = doc["launches"].as_array().expect("launches");
    let unknowns = doc["findings"].as_array().expect("findings").iter();
    (
        tps.iter().map(|l| l["tp"].clone()).collect(),
        unknowns
            .filter(|f| f["rule"] == "INP004")
            .map(|f| f["message"].as_str().unwrap().to_string())
            .collect(),
    )
}

#[test]
fn a_tp_counted_from_a_gpu_list_through_text_utilities_is_worked_out() {
    // bash: `echo 0 | tr ',' '\n' | wc -l` is 1, `echo 0,1,2,3 | ...` is 4.
    let shape = |gpus: &str| {
        format!(
            "GPU={gpus}\n\
             if [ -n \"${{TP_OVERRIDE:-}}\" ]; then\n  TP=\"$TP_OVERRIDE\"\nelse\n  \
             TP=$(echo \"$GPU\" | tr ',' '\\n' | wc -l)\nfi\n\
             vllm serve Qwen/Qwen3-8B --max-model-len 8192 --tensor-parallel-size \"$TP\"\n"
        )
    };
    // The caller's CUDA_VISIBLE_DEVICES decides; unset, one GPU: TP 1 is planned with and the
    // caller's variable is named (INP004), as for any caller's default.
    let (tps, unknowns) = tps_and_unknowns(&shape("\"${CUDA_VISIBLE_DEVICES:-0}\""));
    assert_eq!(tps, [serde_json::Value::Null, 1.into()]);
    assert!(
        unknowns.iter().any(|m| m.starts_with(
            "--tensor-parallel-size is set from CUDA_VISIBLE_DEVICES (\"0\" unless set by the caller)"
        )),
        "{unknowns:?}"
    );
    // Written in the script: 4, nothing left to the caller but the override's own path.
    let (tps, unknowns) = tps_and_unknowns(&shape("0,1,2,3"));
    assert_eq!(tps, [serde_json::Value::Null, 4.into()]);
    assert!(
        unknowns.iter().all(|m| !m.contains("CUDA_VISIBLE_DEVICES")),
        "{unknowns:?}"
    );
    // Without the override, one launch; a here-string and awk read the same way.
    let direct = "GPU=0,1,2,3\nTP=$(awk -F, '{print NF}' <<< \"$GPU\")\n\
                  vllm serve Qwen/Qwen3-8B --max-model-len 8192 --tensor-parallel-size $TP\n";
    assert_eq!(tps_and_unknowns(direct), (vec![4.into()], Vec::new()));
    // What nvidia-smi prints is only known when the script runs.
    let smi = "TP=$(nvidia-smi -L | wc -l)\n\
               vllm serve Qwen/Qwen3-8B --max-model-len 8192 --tensor-parallel-size $TP\n";
    let (tps, unknowns) = tps_and_unknowns(smi);
    assert_eq!(tps, [serde_json::Value::Null]);
    assert!(
        unknowns[0].contains("$(nvidia-smi -L | wc -l)"),
        "{unknowns:?}"
    );
}
