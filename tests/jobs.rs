//! `--jobs N` reads the documents of a large YAML file on N threads; the reports must be
//! byte-identical to a one-thread run: same findings, same order, same lines, a broken document
//! in the middle still an INP001 at its own line.

mod common;

use common::{kvlint, kvlint_env};
use std::path::PathBuf;

/// INP007 (a router, not checked) is off by default; these runs report it.
const SELECT: &str = "--extend-select";

/// Documents of the render before the broken one.
const BEFORE_BROKEN: usize = 150;

/// A Helm-style render of 301 documents (well over the 64 KiB below which a file is read on
/// one thread): vLLM Deployments on one L4, every third with a 128k context that does not fit
/// (KV001), one of those suppressed with a reason, their Services but one, which a router and
/// an unread engine mention replace, and one broken document in the middle. Returns the text and
/// the 1-based line of the broken document's bad flow sequence.
fn render() -> (String, usize) {
    let mut s = String::new();
    let mut broken_line = 0;
    for i in 0..BEFORE_BROKEN * 2 {
        if i == BEFORE_BROKEN {
            s.push_str("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata:\n");
            broken_line = s.lines().count() + 1;
            s.push_str("  flags: [--max-model-len, 4096\n");
            continue;
        }
        if i == 41 {
            // Read by the whole-text scan that runs beside the documents' reading: a router
            // (INP007) and an engine named where kvlint finds no launch (INP006).
            s.push_str("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: front\ndata:\n  run: vllm-router --port 8000\n");
            s.push_str("---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  run: vllm serve m\n");
            continue;
        }
        if i % 2 == 1 {
            let name = format!("engine-{}", i / 2);
            s.push_str(&format!(
                "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n  ports:\n    - port: 8000\n"
            ));
            continue;
        }
        let n = i / 2;
        let context = if n % 3 == 0 { 131072 } else { 8192 };
        let ignore = if n == 9 {
            "  annotations:\n    kvlint.io/ignore: \"KV001=a test of the suppression\"\n"
        } else {
            ""
        };
        s.push_str(&format!(
            "---\n# Source: chart/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: engine-{n}\n{ignore}spec:\n  template:\n    spec:\n      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-L4\n      containers:\n        - name: engine\n          image: vllm/vllm-openai:v0.11.0\n          command: [\"vllm\", \"serve\"]\n          args: [\"meta-llama/Llama-3.1-8B-Instruct\", \"--max-model-len\", \"{context}\"]\n          resources:\n            limits:\n              nvidia.com/gpu: \"1\"\n"
        ));
    }
    (s, broken_line)
}

/// The render written under `name` (one file per test: tests run at the same time).
fn written_render(name: &str) -> (PathBuf, usize) {
    let (text, line) = render();
    assert!(text.len() > 64 * 1024, "the render must be read on threads");
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).expect("write the render");
    (path, line)
}

/// Fails at the first line where the `--jobs 4` output departs from the `--jobs 1` one (whole
/// reports are too long to print).
fn assert_same(one: &str, four: &str, what: &str) {
    let first = one.lines().zip(four.lines()).position(|(a, b)| a != b);
    if let Some(i) = first {
        let (a, b) = (one.lines().nth(i), four.lines().nth(i));
        panic!(
            "{what}: line {} differs\n--jobs 1: {a:?}\n--jobs 4: {b:?}",
            i + 1
        );
    }
    assert_eq!(
        one.len(),
        four.len(),
        "{what}: one output is a prefix of the other"
    );
}

#[test]
fn reports_are_the_same_on_one_thread_and_on_four() {
    let (path, broken_line) = written_render("jobs-same.yaml");
    let path = path.to_str().expect("utf-8 path");
    for format in ["json", "human", "sarif", "github"] {
        let run = |jobs| {
            kvlint(&[
                "check", "--format", format, "-j", jobs, SELECT, "INP007", path,
            ])
        };
        let (one, four) = (run("1"), run("4"));
        assert_eq!(one.code, 1, "{format}: KV001 fires\n{}", one.stderr);
        assert_eq!(four.code, one.code, "{format}: exit codes differ");
        assert_same(&one.stdout, &four.stdout, &format!("{format} stdout"));
        assert_same(&one.stderr, &four.stderr, &format!("{format} stderr"));
    }

    let json = kvlint(&[
        "check", "--format", "json", "-j", "4", SELECT, "INP007", path,
    ]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json report");
    let findings = report["findings"].as_array().expect("findings");
    let rules: Vec<&str> = findings
        .iter()
        .map(|f| f["rule"].as_str().unwrap_or(""))
        .collect();
    // The broken document takes the place of deployment 75; of the others, 0, 3, ..., 147 fire
    // KV001 (49), and 9's is suppressed.
    assert_eq!(
        rules.iter().filter(|r| **r == "KV001").count(),
        48,
        "{rules:?}"
    );
    assert!(
        !rules.contains(&"SUP002"),
        "the suppression is used: {rules:?}"
    );
    assert_eq!(report["suppressed"], 1);
    let inp: Vec<&serde_json::Value> = findings.iter().filter(|f| f["rule"] == "INP001").collect();
    assert_eq!(inp.len(), 1, "{rules:?}");
    assert_eq!(inp[0]["line"], broken_line, "{}", inp[0]);
    for rule in ["INP006", "INP007"] {
        assert_eq!(
            rules.iter().filter(|r| **r == rule).count(),
            1,
            "{rule}: {rules:?}"
        );
    }
    assert_eq!(report["launches"].as_array().map(Vec::len), Some(149));
}

#[test]
fn jobs_come_from_the_environment_and_must_be_positive_or_blank() {
    let (path, _) = written_render("jobs-env.yaml");
    let path = path.to_str().expect("utf-8 path");
    let one = kvlint(&["check", "--format", "json", "--jobs", "1", path]);
    let env = kvlint_env(
        &["check", "--format", "json", path],
        None,
        &[("KVLINT_JOBS", "3")],
    );
    assert_eq!((env.code, &env.stdout), (one.code, &one.stdout));

    // Empty (a CI input left blank, `KVLINT_JOBS=`) is the default, one thread per CPU.
    let blank = kvlint(&["check", "--format", "json", "--jobs", "", path]);
    assert_eq!((blank.code, &blank.stdout), (one.code, &one.stdout));

    let zero = kvlint(&["check", "--jobs", "0", path]);
    assert_eq!(zero.code, 2, "{}", zero.stderr);
    assert!(zero.stderr.contains("--jobs"), "{}", zero.stderr);
}

/// Past the first window of documents read on threads (512), the launches and findings still come
/// in document order: four renders back to back, 1,204 documents with 4 broken ones.
#[test]
fn extraction_keeps_document_order_across_rounds() {
    let text = render().0.repeat(4);
    let mut sources = kvlint::source::Sources::default();
    let file = sources.add("render.yaml", text);
    let one = kvlint::extract::extract_with(file, &sources, 1);
    for jobs in [2, 3, 8] {
        let many = kvlint::extract::extract_with(file, &sources, jobs);
        assert_eq!(many.launches.len(), 4 * 149, "jobs {jobs}");
        assert!(
            many.launches == one.launches,
            "jobs {jobs}: launches differ"
        );
        assert!(
            many.findings == one.findings,
            "jobs {jobs}: findings differ"
        );
    }
    let broken = one.findings.iter().filter(|f| f.rule == "INP001").count();
    assert_eq!(broken, 4);
}

/// Compose documents after the render (one file may mix kinds): every third service loads
/// `--config engine.yaml` beside the input, whose 128k context does not fit one L4; every fifth
/// gives `--max-model-len` an invalid `$$CTX` (CFG004), so that on every fifteenth the config's
/// context applies (KV001 in engine.yaml, at one position for all of them: ties that only the
/// order of the launches breaks), while elsewhere the command line's 8192 wins.
fn compose_tail(services: usize) -> String {
    let mut s = String::new();
    for i in 0..services {
        let config = if i % 3 == 0 {
            ", \"--config\", \"engine.yaml\""
        } else {
            ""
        };
        let context = if i % 5 == 0 { "$$CTX" } else { "8192" };
        s.push_str(&format!(
            "---\nservices:\n  svc-{i}:\n    image: vllm/vllm-openai:v0.11.0\n    command: [\"meta-llama/Llama-3.1-8B-Instruct\", \"--max-model-len\", \"{context}\"{config}]\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: 1\n              capabilities: [gpu]\n"
        ));
    }
    s
}

/// Launches are checked while other threads read the documents after them; a launch that loads a
/// file (`--config`) adds it to the run meanwhile. Reports stay byte-identical for 1, 2 and 4
/// threads, and findings at one position keep the order of their launches.
#[test]
fn checking_beside_reading_keeps_reports_identical() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("jobs-config");
    std::fs::create_dir_all(&dir).expect("a directory for the render");
    std::fs::write(dir.join("engine.yaml"), "max-model-len: 131072\n").expect("write the config");
    let (text, broken_line) = render();
    let path = dir.join("render.yaml");
    std::fs::write(&path, text + &compose_tail(120)).expect("write the render");
    let path = path.to_str().expect("utf-8 path");
    for format in ["json", "human"] {
        let run = |jobs| {
            let args = [
                "check", "--format", format, "--gpu", "l4", "-j", jobs, SELECT, "INP007", path,
            ];
            kvlint(&args)
        };
        let one = run("1");
        assert_eq!(one.code, 1, "{format}: KV001 fires\n{}", one.stderr);
        for jobs in ["2", "4"] {
            let many = run(jobs);
            assert_eq!(many.code, one.code, "{format} -j {jobs}: exit codes differ");
            assert_same(
                &one.stdout,
                &many.stdout,
                &format!("{format} -j {jobs} stdout"),
            );
            assert_same(
                &one.stderr,
                &many.stderr,
                &format!("{format} -j {jobs} stderr"),
            );
        }
    }

    let json = kvlint(&["check", "--format", "json", "--gpu", "l4", "-j", "2", path]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("json report");
    let findings = report["findings"].as_array().expect("findings");
    let in_config: Vec<&str> = findings
        .iter()
        .filter(|f| f["file"] == "engine.yaml")
        .map(|f| {
            assert_eq!(
                (&f["rule"], &f["line"], &f["column"]),
                (&"KV001".into(), &1.into(), &1.into()),
                "{f}"
            );
            f["object"]["name"].as_str().unwrap_or("")
        })
        .collect();
    let expected: Vec<String> = (0..120).step_by(15).map(|i| format!("svc-{i}")).collect();
    assert_eq!(
        in_config, expected,
        "one KV001 per service that loads the config, in their order"
    );
    let unknown = findings
        .iter()
        .filter(|f| {
            // Compose turns `$$CTX` into the text `$CTX`, which no shell expands in an exec-form
            // command: the engine is given `$CTX` and refuses it.
            f["rule"] == "CFG004"
                && f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("does not take $CTX"))
        })
        .count();
    assert_eq!(
        unknown, 24,
        "services 0, 5, ..., 115 give --max-model-len a value vLLM refuses"
    );
    let inp: Vec<&serde_json::Value> = findings.iter().filter(|f| f["rule"] == "INP001").collect();
    assert_eq!(inp.len(), 1, "the broken document, in the middle");
    assert_eq!(inp[0]["line"], broken_line, "{}", inp[0]);
    assert_eq!(report["launches"].as_array().map(Vec::len), Some(149 + 120));
}

/// The render checked on two threads, with its findings and the suppressed ones.
fn checked_render() -> (
    kvlint::pipeline::Outcome,
    Vec<kvlint::report::Rendered>,
    Vec<kvlint::report::Rendered>,
) {
    use kvlint::pipeline::{Options, Outcome};
    use kvlint::report;
    let mut outcome = Outcome::default();
    let file = outcome.sources.add("render.yaml", render().0);
    let opts = Options {
        jobs: 2,
        ..Options::default()
    };
    outcome.check_file(file, &opts, None);
    outcome.finish(2);
    outcome.apply_suppressions(&opts.rules);
    let findings = report::render_all(&outcome);
    let suppressed = report::render_suppressed(&outcome, &opts.rules);
    assert!(findings.len() > 40 && outcome.launches.len() > 100 && !suppressed.is_empty());
    (outcome, findings, suppressed)
}

/// The `check` document written in pieces on threads is the text serde_json writes for the whole
/// document at once, for any thread count.
#[test]
fn the_json_report_on_threads_is_serde_jsons_pretty_text() {
    let (outcome, findings, _) = checked_render();
    let whole = serde_json::to_string_pretty(&kvlint::report::json::check(&outcome, &findings))
        .expect("json")
        + "\n";
    for jobs in [0, 1, 2, 4] {
        let mut out = Vec::new();
        kvlint::report::json::write_check(&mut out, &outcome, &findings, jobs).expect("written");
        assert_same(
            &whole,
            &String::from_utf8(out).expect("utf-8"),
            &format!("-j {jobs}"),
        );
    }
}

/// The SARIF log written in pieces on threads is the text serde_json writes for the whole log.
#[test]
fn the_sarif_report_on_threads_is_serde_jsons_pretty_text() {
    use kvlint::report::sarif;
    let (outcome, findings, suppressed) = checked_render();
    let log = sarif::log(&outcome, &findings, &suppressed);
    let whole = serde_json::to_string_pretty(&log).expect("sarif") + "\n";
    for jobs in [0, 1, 2, 4] {
        let text = sarif::render(&outcome, &findings, &suppressed, jobs);
        assert_same(&whole, &text, &format!("-j {jobs}"));
    }
}
