//! Files a script writes (`cat > F <<EOF`, `tee F <<'EOF'`, `>>`, `echo`/`printf`) and then names
//! in a launch: the launch reads what the script wrote, no file beside the script stands in for
//! it, and what the script leaves unknown in it is INP004. Expected values are what bash writes.

mod common;
use common::{kvlint, root};
use kvlint::extract::extract;
use kvlint::source::Sources;

const DIR: &str = "fixtures/extract/shell/written";

/// `check --format json` of one fixture: exit code, `(rule, file, line)` of each finding, and
/// `(context, fraction, kv dtype)` of each launch.
#[allow(clippy::type_complexity)]
fn check(name: &str) -> (i32, Vec<(String, String, i64)>, Vec<(i64, f64, String)>) {
    let path = format!("{DIR}/{name}");
    let run = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", &path]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let findings = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] != "VER002")
        .map(|f| {
            let file = f["file"].as_str().unwrap_or_default();
            (
                f["rule"].as_str().unwrap().to_string(),
                file.strip_prefix(&format!("{DIR}/"))
                    .unwrap_or(file)
                    .to_string(),
                f["line"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let launches = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["context_length"].as_i64().unwrap_or(-1),
                l["memory_fraction"].as_f64().unwrap_or(-1.0),
                l["kv_cache_dtype"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    (run.code, findings, launches)
}

/// The text each launch of a fixture is given for the files it names.
fn written(name: &str) -> Vec<Vec<(String, Result<String, String>)>> {
    let path = format!("{DIR}/{name}");
    let text = std::fs::read_to_string(root().join(&path)).unwrap();
    let mut sources = Sources::default();
    let file = sources.add(path, text);
    extract(file, &sources)
        .launches
        .iter()
        .map(|l| {
            l.files
                .iter()
                .map(|f| (f.path.clone(), f.content.clone().map(|(_, t)| t)))
                .collect()
        })
        .collect()
}

#[test]
fn an_unquoted_heredoc_is_expanded_and_read_by_the_launch_that_names_it() {
    let (code, findings, launches) = check("trtllm-heredoc.sh");
    // No CFG006: engine.yml is not looked for beside the script.
    assert_eq!(findings, []);
    assert_eq!(launches, [(16384, 0.6, "fp8".to_string())]);
    assert_eq!(code, 0);
    let files = written("trtllm-heredoc.sh");
    let [(path, Ok(text))] = files[0].as_slice() else {
        panic!("{files:?}")
    };
    // The launch writes `./$CONFIG`; the file was written as `engine.yml`.
    assert_eq!(path, "./engine.yml");
    // Each block sits at the line the script writes it at (line 6 on, and the append at 13), so
    // findings in it point at the script's lines; $FRACTION is expanded.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[5], "max_seq_len: 16384");
    assert_eq!(lines[8], "    free_gpu_memory_fraction: 0.6");
    assert_eq!(lines[12], "moe_config:");
    assert!(lines[..5].iter().all(|l| l.is_empty()), "{lines:?}");
}

#[test]
fn a_quoted_heredoc_given_to_tee_is_written_as_is() {
    let (code, findings, launches) = check("vllm-tee-quoted.sh");
    assert_eq!(findings, []);
    assert_eq!(launches, [(8192, 0.85, "bfloat16".to_string())]);
    assert_eq!(code, 0);
    let files = written("vllm-tee-quoted.sh");
    let [(path, Ok(text))] = files[0].as_slice() else {
        panic!("{files:?}")
    };
    assert_eq!(path, "vllm.yaml");
    assert!(text.contains("# $NOT_EXPANDED stays text\n"), "{text}");
}

#[test]
fn a_variable_the_script_does_not_set_in_a_written_file_is_inp004() {
    let (code, findings, _) = check("trtllm-unknown-in-heredoc.sh");
    let inp004: Vec<_> = findings.iter().filter(|f| f.0 == "INP004").collect();
    // At `$CTX` in the heredoc body (script line 4).
    assert_eq!(
        inp004,
        [&(
            "INP004".to_string(),
            "trtllm-unknown-in-heredoc.sh".to_string(),
            4
        )]
    );
    assert_eq!(code, 1);
}

#[test]
fn echo_and_printf_of_literal_text_write_files_too() {
    let (code, findings, launches) = check("echo-printf.sh");
    assert_eq!(findings, []);
    // echo.yaml: `>` then `>>`; printf.yml: the `\n` escapes are newlines.
    assert_eq!(launches[0], (4096, 0.8, "bfloat16".to_string()));
    assert_eq!(launches[1].1, 0.5);
    assert_eq!(code, 0);
}

#[test]
fn a_file_written_by_another_command_is_unreadable_and_says_why() {
    let (code, findings, _) = check("generated.sh");
    assert_eq!(
        findings,
        [("CFG006".to_string(), "generated.sh".to_string(), 4)]
    );
    let files = written("generated.sh");
    let [(_, Err(why))] = files[0].as_slice() else {
        panic!("{files:?}")
    };
    assert!(why.contains("written by `envsubst`"), "{why}");
    assert_eq!(code, 1);
}

#[test]
fn a_finding_inside_a_written_file_points_at_the_scripts_line() {
    let (_, findings, _) = check("invalid-value.sh");
    assert_eq!(
        findings,
        [(
            "CFG004".to_string(),
            "bad.yml (written by the script)".to_string(),
            5
        )]
    );
}

/// In a container's `sh -c` script, the file the script writes is read, not looked for among the
/// pod's ConfigMap mounts (CFG006 before).
#[test]
fn a_container_script_that_writes_its_config_is_read_like_a_script() {
    let path = format!("{DIR}/pod-sh-c.yaml");
    let run = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", &path]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    assert_eq!(doc["findings"], serde_json::json!([]));
    let l = &doc["launches"][0];
    // `$(CTX)` is the container env's, expanded by Kubernetes before the shell runs.
    assert_eq!(l["context_length"], 16384);
    assert_eq!(l["memory_fraction"], 0.8);
    assert_eq!(run.code, 0);
}

/// A file replaced with other text on another path of the script is unknown (CFG006 that says
/// so), never the last text written; the same text on every path is known.
#[test]
fn a_file_written_differently_in_branches_is_unknown() {
    let (code, findings, launches) = check("branches.sh");
    assert_eq!(
        findings,
        [("CFG006".to_string(), "branches.sh".to_string(), 12)]
    );
    let files = written("branches.sh");
    let [(_, Err(why))] = files[0].as_slice() else {
        panic!("{files:?}")
    };
    assert!(why.contains("different texts on different paths"), "{why}");
    assert_eq!(launches[1].0, 4096);
    assert_eq!(code, 1);
}

/// `check --format json` of one fixture, as JSON.
fn doc(name: &str) -> serde_json::Value {
    let path = format!("{DIR}/{name}");
    let run = kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", &path]);
    serde_json::from_str(&run.stdout).expect(&run.stderr)
}

/// A script that starts no engine itself but writes its settings (a model repository's
/// model.json, a manifest it applies) for a server kvlint does not read: the file it writes is read
/// as an input of its own kind, with its spans at the script's lines.
#[test]
fn a_file_a_script_writes_for_a_server_it_does_not_start_is_read_as_its_kind() {
    let (code, findings, launches) = check("image-server-model-json.sh");
    assert_eq!(findings, []);
    assert_eq!(launches, [(8192, 0.85, "bfloat16".to_string())]);
    assert_eq!(code, 0);
    let d = doc("image-server-model-json.sh");
    assert_eq!(
        d["launches"][0]["object"]["kind"],
        "Triton vLLM backend model.json"
    );
    // The launch is where the written JSON starts in the script.
    assert_eq!(d["launches"][0]["line"], 6);
    let (_, _, launches) = check("apply-manifest.sh");
    assert_eq!(launches.iter().map(|l| l.0).collect::<Vec<_>>(), [4096]);
    assert_eq!(
        doc("apply-manifest.sh")["launches"][0]["model"],
        "Qwen/Qwen3-8B"
    );
}

/// An unquoted heredoc's variables that the caller may set are values kvlint does not see
/// (INP004 at them); a switch given one is unknown, not a positional word taken as the model.
#[test]
fn variables_in_a_written_file_read_as_its_kind_stay_unknown() {
    let d = doc("image-server-unquoted.sh");
    let l = &d["launches"][0];
    assert_eq!(l["model"], "Qwen/Qwen3-8B");
    assert_eq!(l["context_length"], serde_json::Value::Null);
    let (_, findings, _) = check("image-server-unquoted.sh");
    let at_ctx = (
        "INP004".to_string(),
        "image-server-unquoted.sh".to_string(),
        10,
    );
    assert!(findings.contains(&at_ctx), "{findings:?}");
}

/// A file edited in place after it is written (`sed -i`) no longer holds the heredoc's text: it is
/// not read as written.
#[test]
fn a_written_file_edited_afterwards_is_not_read_as_written() {
    let (_, _, launches) = check("edited-after.sh");
    assert_eq!(launches, []);
}
