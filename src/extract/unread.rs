//! What an input names but kvlint does not check, said out loud: an engine entrypoint that no launch
//! was built from (INP006), and the parts skipped on purpose (INP007): routers, frontends and
//! sidecars, which hold no KV pool, and Helm chart templates, which are only meaningful rendered.

use super::images::EngineImage;
use super::Extracted;
use crate::finding::Finding;
use crate::source::{FileId, Loc, SourceFile};
use memchr::memmem::Finder;
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;
use words::{find_words, mentions, BENCHMARK_WORDS, ENGINE_WORDS, ROUTER_WORDS};

mod words;

/// Words that start a serving engine, and the engine's name.
const ENGINES: &[(&str, &str)] = &[
    ("sglang.launch_server", "SGLang"),
    ("sglang serve", "SGLang"),
    (
        "sglang_router.launch_server",
        "SGLang (router with its workers)",
    ),
    ("dynamo.sglang", "SGLang (Dynamo worker)"),
    ("vllm serve", "vLLM"),
    ("vllm.entrypoints", "vLLM"),
    ("dynamo.vllm", "vLLM (Dynamo worker)"),
    // TRL's generation server (trl/scripts/vllm_serve.py): its own `ScriptArguments`, handed to
    // `vllm.LLM(...)` in each data-parallel worker, which kvlint does not read.
    ("trl vllm-serve", "vLLM (TRL's vllm-serve)"),
    ("trtllm-serve", "TensorRT-LLM"),
    ("tensorrt_llm.commands.serve", "TensorRT-LLM"),
    ("dynamo.trtllm", "TensorRT-LLM (Dynamo worker)"),
    // Triton's TensorRT-LLM backend: its launcher script and the backend's model repository.
    (
        "launch_triton_server.py",
        "TensorRT-LLM (Triton's tensorrtllm backend)",
    ),
    (
        "tensorrtllm_backend",
        "TensorRT-LLM (Triton's tensorrtllm backend)",
    ),
];

/// Processes that route requests to engines and hold no KV pool of their own.
const NOT_ENGINES: &[(&str, &str)] = &[
    ("sglang_router.launch_router", "the SGLang router"),
    ("dynamo.frontend", "Dynamo's frontend"),
    ("vllm-router", "the vLLM router"),
    ("routing-sidecar", "the llm-d routing sidecar"),
    (
        "trtllm-serve disaggregated",
        "the TensorRT-LLM disaggregated router",
    ),
];

/// Programs that load an engine in their own process for a fixed benchmark batch and serve no
/// requests (sglang `bench_one_batch.py`, formerly `bench_latency.py`, builds its `ModelRunner`
/// from `ServerArgs` in-process; `bench_offline_throughput.py` runs an in-process `Engine`): no
/// deployment, so said and skipped, like a router.
const BENCHMARKS: &[(&str, &str)] = &[
    (
        "sglang.bench_latency",
        "SGLang's in-process latency benchmark (sglang.bench_latency)",
    ),
    (
        "sglang.bench_one_batch",
        "SGLang's in-process one-batch benchmark (sglang.bench_one_batch)",
    ),
    (
        "sglang.bench_offline_throughput",
        "SGLang's in-process throughput benchmark (sglang.bench_offline_throughput)",
    ),
];

/// Lines that mention an engine without starting it.
const MENTIONS: &[&str] = &[
    "echo ", "printf ", "grep ", "pgrep ", "pkill ", "pip ", "install ",
];

/// What [`note`] needs from the text alone: the documents' byte ranges and where routers and
/// engine entrypoints are named. It does not depend on what reading the documents found, so a
/// large file is scanned beside that reading.
pub struct Scan {
    docs: Vec<Range<usize>>,
    routers: Vec<(Range<usize>, &'static str)>,
    engines: Vec<(Range<usize>, &'static str)>,
}

/// Scans the file once for each list of words, however many documents it holds.
pub fn scan(src: &SourceFile) -> Scan {
    Scan {
        docs: documents(src),
        routers: [&ROUTER_WORDS, &BENCHMARK_WORDS]
            .into_iter()
            .flat_map(|list| mentions(&src.text, list))
            .collect(),
        engines: mentions(&src.text, &ENGINE_WORDS),
    }
}

/// Adds INP007 for each skipped router or frontend, and INP006 for each YAML document (or non-YAML
/// file) that names an engine entrypoint but gave no launch and no finding saying why.
pub fn note(file: FileId, src: &SourceFile, scan: Scan, out: &mut Extracted) {
    let docs = scan.docs;
    let doc_of = |at: usize| {
        let i = docs.partition_point(|d| d.end <= at);
        docs.get(i).filter(|d| d.contains(&at)).map(|_| i)
    };
    // Routers said once per document, counting what the object's reader said already (a Dynamo
    // `componentType: frontend`).
    let mut said: HashSet<(String, Option<usize>)> = out
        .findings
        .iter()
        .filter(|f| f.rule == "INP007")
        .filter_map(|f| Some((f.get("what")?.to_string(), doc_of(f.primary?.start))))
        .collect();
    for (at, what) in scan.routers {
        if !said.insert((what.to_string(), doc_of(at.start))) {
            continue;
        }
        let benchmark = BENCHMARKS.iter().any(|(_, w)| *w == what);
        let (reason, help) = if benchmark {
            (
                "it loads the engine in its own process for one benchmark batch and serves no \
                 requests: it is no server launch",
                "check the server launch you deploy (`python -m sglang.launch_server` with the same flags)",
            )
        } else {
            (
                "it routes requests to engines and holds no KV pool",
                "the engines it routes to are checked where they are launched",
            )
        };
        out.findings.push(
            Finding::new("INP007", Some(Loc::new(file, at)))
                .var("what", what)
                .var("reason", reason)
                .var("help", help),
        );
    }
    let mut covered = vec![false; docs.len()];
    // A launch covers the documents of its command and of its args (a template's launch whose
    // args also come from the object that names the template).
    let starts = out
        .launches
        .iter()
        .flat_map(|l| std::iter::once(l.command).chain(l.args.iter().map(|a| a.loc)))
        .chain(
            out.findings
                .iter()
                .filter(|f| f.rule != "INP007")
                .filter_map(|f| f.primary),
        );
    for loc in starts.filter(|l| l.file == file) {
        if let Some(i) = doc_of(loc.start) {
            covered[i] = true;
        }
    }
    // Parts skipped on purpose name their engine there (an ephemeral container).
    let skipped: Vec<Range<usize>> = out
        .findings
        .iter()
        .filter(|f| f.rule == "INP007")
        .filter_map(|f| f.primary.filter(|p| p.file == file).map(|p| p.range()))
        .collect();
    let kustomize = super::is_yaml_name(&src.name)
        .then(|| kustomize_dir(&src.name))
        .flatten();
    let help = match &kustomize {
        Some(_) => build_help(&src.name),
        None => "give the launch in a form kvlint reads: a container command/args, a script \
                 line, or an engine config file; or check the rendered command"
            .to_string(),
    };
    let mut named = vec![false; docs.len()];
    for (at, engine) in scan.engines {
        let Some(i) = doc_of(at.start) else { continue };
        let said = skipped.iter().any(|s| s.contains(&at.start));
        if covered[i] || named[i] || said || routes(&src.text, &at) {
            continue;
        }
        named[i] = true;
        out.findings.push(
            Finding::new("INP006", Some(Loc::new(file, at)))
                .var("engine", engine)
                .var("reason", "no launch was found in this document")
                .var("help", help.clone()),
        );
    }
    // Still silent: a document that sets an engine's sizing option but gave no launch.
    for (i, doc) in docs.iter().enumerate() {
        let said = |at: &Range<usize>| skipped.iter().any(|s| s.contains(&at.start));
        if covered[i] || named[i] || kustomize.is_some() {
            continue;
        }
        let text = &src.text[doc.clone()];
        let option =
            engine_option(text).map(|(at, flag)| (at, format!("an engine option ({flag})")));
        // An engine named as a value counts where the file gave no launch at all: a NIMCache
        // beside the NIMService that runs it is that launch's part.
        let by_value = || out.launches.is_empty().then(|| engine_value(src, text))?;
        let by_image = || out.launches.is_empty().then(|| engine_image(src, text))?;
        let by_env = || super::engine_named::image_with_sizing_env(text);
        let Some((at, what)) = option.or_else(by_value).or_else(by_image).or_else(by_env) else {
            continue;
        };
        let at = doc.start + at.start..doc.start + at.end;
        if said(&at) {
            continue;
        }
        named[i] = true;
        out.findings.push(
            Finding::new("INP006", Some(Loc::new(file, at)))
                .var("engine", what)
                .var("reason", "no launch was found in this document")
                .var("help", help.clone()),
        );
    }
    // A part of a Kustomize build that gave no launch: a patch or a base, whole only once built.
    // One that sets an engine's sizing options is an engine's settings kvlint did not check.
    if kustomize.is_some() && out.launches.is_empty() && !named.contains(&true) {
        let reason = "it is part of a Kustomize build (a patch or a base): its objects are whole, \
                      and its patches applied, only once the kustomization is built";
        let finding = match engine_option(&src.text) {
            Some((at, flag)) => Finding::new("INP006", Some(Loc::new(file, at)))
                .var("engine", format!("an engine option ({flag})"))
                .var("reason", reason),
            None => Finding::new(
                "INP007",
                Some(Loc::new(
                    file,
                    0..src.text.find('\n').unwrap_or(src.text.len()),
                )),
            )
            .var("what", "a part of a Kustomize build (a patch or a base)")
            .var("reason", reason),
        };
        out.findings.push(finding.var("help", help));
    }
}

/// Options that size an engine's KV pool, in the engines' own spellings: a file that sets one is
/// about an engine even where it names none.
const SIZING_OPTIONS: &[&str] = &[
    "--max-model-len",
    "--context-length",
    "--max_seq_len",
    "--max-seq-len",
    "--gpu-memory-utilization",
    "--mem-fraction-static",
    "--kv-cache-dtype",
    "--tensor-parallel-size",
    "--kv_cache_free_gpu_memory_fraction",
];

/// Whether an env var's name is an engine sizing option in env form (`MAX_MODEL_LEN`,
/// `GPU_MEMORY_UTILIZATION`, `VLLM_MAX_MODEL_LEN`): a wrapper script passes it on as the flag.
pub fn sizing_env(name: &str) -> bool {
    // Compared in place: this runs on every env name of every uncovered document, and an
    // allocation per name and option was an eighth of a 10,000-object render.
    let name = name.as_bytes();
    SIZING_OPTIONS.iter().any(|flag| {
        let option = flag.trim_start_matches('-').as_bytes();
        let Some(cut) = name.len().checked_sub(option.len()) else {
            return false;
        };
        let same = name[cut..]
            .iter()
            .zip(option)
            .all(|(n, o)| n.to_ascii_lowercase() == if *o == b'-' { b'_' } else { *o });
        same && (cut == 0 || name[cut - 1] == b'_')
    })
}

/// Whether a key folded to lower case without `-` and `_` (`maxModelLen` → `maxmodellen`) is one
/// of the sizing options.
pub fn sizing_option_folded(folded: &str) -> bool {
    SIZING_OPTIONS.iter().any(|flag| {
        flag.chars()
            .filter(|c| *c != '-' && *c != '_')
            .eq(folded.chars())
    })
}

/// A YAML document's engine named as a setting's value (`engine: {type: vllm}`; `backend:
/// tensorrt_llm` in an object or beside `tensorParallelism`), as the key that names it.
fn engine_value(src: &SourceFile, text: &str) -> Option<(Range<usize>, String)> {
    if !super::is_yaml_name(&src.name) {
        return None;
    }
    let named = super::engine_named::named_as_value(text)?;
    let beside = if named.sized {
        ", beside settings that size it"
    } else {
        ""
    };
    Some((
        named.at,
        format!("{} (its `{}`{beside})", named.engine, named.key),
    ))
}

/// A YAML document's image whose entrypoint is an engine's server (a chart's `image.repository:
/// vllm/vllm-openai`), where the document is no object or compose file that would run it.
fn engine_image(src: &SourceFile, text: &str) -> Option<(Range<usize>, String)> {
    if !super::is_yaml_name(&src.name) {
        return None;
    }
    let (at, image, kind) = super::engine_named::entrypoint_image(text)?;
    let why = match kind {
        EngineImage::Entrypoint(_) => "whose entrypoint is `vllm serve`".to_string(),
        EngineImage::Named(_) => "named for it".to_string(),
    };
    Some((
        at,
        format!("{} (the image `{image}`, {why})", kind.engine().title()),
    ))
}

/// The first sizing option set outside comments, and where.
fn engine_option(text: &str) -> Option<(Range<usize>, &'static str)> {
    // Searchers built once per run: this reads every document that gave no launch.
    static SEARCH: OnceLock<Vec<Finder<'static>>> = OnceLock::new();
    let search = SEARCH.get_or_init(|| SIZING_OPTIONS.iter().map(Finder::new).collect());
    SIZING_OPTIONS
        .iter()
        .zip(search)
        .filter_map(|(flag, finder)| {
            finder
                .find_iter(text.as_bytes())
                .find(|&at| {
                    let line = text[..at].rfind('\n').map_or(0, |n| n + 1);
                    !text[line..at].contains('#')
                })
                .map(|at| (at..at + flag.len(), *flag))
        })
        .min_by_key(|(at, _)| at.start)
}

/// A Helm chart template (a `templates/` file, or one that uses `.Values`/`.Release`): not YAML
/// until rendered, so it is skipped with a finding that says how to check the rendered chart:
/// INP006 where it names an engine, INP007 where it does not.
pub fn helm_template(file: FileId, src: &SourceFile) -> Option<Extracted> {
    if !is_template(file, src) {
        return None;
    }
    let help = render_help(&src.name);
    let at = Loc::new(file, 0..src.text.find('\n').unwrap_or(src.text.len()));
    let reason = "it is a Helm chart template, whose values are filled in only when rendered";
    // An engine's entrypoint, else the launch its shape alone gives (a serving resource whose
    // engine is its kind's), else an engine's sizing option: each names what the chart runs.
    let named = mentions(&src.text, &ENGINE_WORDS)
        .into_iter()
        .next()
        .map(|(range, engine)| (range, engine.to_string()))
        .or_else(|| skeleton_engine(file, src))
        .or_else(|| {
            engine_option(&src.text).map(|(at, flag)| (at, format!("an engine option ({flag})")))
        });
    let finding = match named {
        Some((range, engine)) => Finding::new("INP006", Some(Loc::new(file, range)))
            .var("engine", engine)
            .var("reason", reason),
        None => Finding::new("INP007", Some(at))
            .var("what", "a Helm chart template")
            .var(
                "reason",
                "it names no engine, and is not YAML until rendered",
            ),
    };
    Some(Extracted {
        launches: Vec::new(),
        findings: vec![finding.var("help", help)],
    })
}

/// A `templates/` or `.tpl` file with `{{`, or a YAML file with Helm directives of which no
/// document parses (a file with one broken document among good ones is an `INP001` instead).
fn is_template(file: FileId, src: &SourceFile) -> bool {
    let (name, text) = (src.name.as_str(), src.text.as_str());
    let lower = name.to_ascii_lowercase();
    let yaml = [".yaml", ".yml", ".tpl"].iter().any(|e| lower.ends_with(e));
    let in_templates = Path::new(name)
        .components()
        .any(|c| c.as_os_str() == "templates");
    let directives = [
        "{{ .Values",
        "{{ .Release",
        "{{- ",
        "{{ include",
        "{{ template",
    ]
    .iter()
    .any(|d| text.contains(d));
    let unparsed = || {
        crate::yaml::parse_documents(file, src)
            .iter()
            .all(Result::is_err)
    };
    // `.Values`/`.Release` references are Helm's alone, even where the YAML parses (a quoted
    // `"{{ .Values.model }}"`); `{{- ` alone may be a Jinja chat template in a ConfigMap.
    // Only where every document is templated: a manifest with one broken document among
    // whole ones is an INP001 in that document.
    let helm_refs = || {
        ["{{ .Values", "{{ .Release", "{{ include \""]
            .iter()
            .any(|d| text.contains(d))
            && crate::yaml::document_ranges(src)
                .iter()
                .all(|r| text[r.clone()].contains("{{"))
    };
    // A chart's values that a platform reads, holding a `{{ .Values.x }}` the chart renders
    // through `tpl` (llm-d modelservice: `uri: hf://"{{ .Values.modelArtifacts.name }}"`).
    let platform_values = || {
        crate::yaml::parse_documents(file, src)
            .iter()
            .flatten()
            .any(|d| {
                super::by_platform::find(crate::platform::registry().plain(), src, d).is_some()
            })
    };
    yaml && text.contains("{{")
        && (in_templates
            || lower.ends_with(".tpl")
            || (helm_refs() && !platform_values())
            || (directives && unparsed()))
}

/// The first launch a chart template gives with its `{{ }}` directives blanked (its shape alone:
/// a KServe InferenceService, a Deployment whose command starts an engine), and its engine. What
/// the directives render is unknown, so only the engine is taken, never the launch.
fn skeleton_engine(file: FileId, src: &SourceFile) -> Option<(Range<usize>, String)> {
    let skeleton = SourceFile::new(src.name.clone(), blank_directives(&src.text));
    crate::yaml::parse_documents(file, &skeleton)
        .iter()
        .flatten()
        .find_map(|doc| {
            let launches = if super::k8s::is_object(doc) {
                super::k8s::read(file, &skeleton, doc).0
            } else {
                let registry = crate::platform::registry();
                let p = super::by_platform::find(registry.plain(), &skeleton, doc)?;
                super::by_platform::read(p, file, &skeleton, doc, None).launches
            };
            let l = launches.into_iter().next()?;
            let engine = match l.engine {
                crate::launch::Engine::Sglang => "SGLang",
                crate::launch::Engine::Vllm => "vLLM",
                crate::launch::Engine::Trtllm => "TensorRT-LLM",
            };
            Some((l.command.range(), engine.to_string()))
        })
}

/// `text` with each `{{ ... }}` directive replaced by spaces (newlines kept), so that the bytes
/// around it stay where they are.
fn blank_directives(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| from + i) {
        let Some(close) = text[open..].find("}}").map(|i| open + i + 2) else {
            break;
        };
        for b in &mut out[open..close] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        from = close;
    }
    // Only ASCII bytes were written over whole directives, which start and end on ASCII braces.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// A Kustomize kustomization (`kustomization.yaml`, `kind: Kustomization`): it names resources
/// and patches, and the objects it builds are whole only once built. INP006 where it names an
/// engine (an inline patch), INP007 where it does not; either way, the command that builds it.
pub fn kustomization(file: FileId, src: &SourceFile) -> Option<Extracted> {
    let base = Path::new(&src.name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let named = matches!(
        base,
        "kustomization.yaml" | "kustomization.yml" | "Kustomization"
    );
    let kind = src.text.contains("kustomize.config.k8s.io/")
        && (src.text.contains("kind: Kustomization") || src.text.contains("kind: Component"));
    if !named && !kind {
        return None;
    }
    let at = Loc::new(file, 0..src.text.find('\n').unwrap_or(src.text.len()));
    let help = build_help(&src.name);
    let finding = match engines_in(&src.text).into_iter().next() {
        Some((range, engine)) => Finding::new("INP006", Some(Loc::new(file, range)))
            .var("engine", engine)
            .var(
                "reason",
                "it is a Kustomize kustomization, whose patches apply only when it is built",
            ),
        None => Finding::new("INP007", Some(at))
            .var("what", "a Kustomize kustomization")
            .var(
                "reason",
                "it lists resources and patches; the objects it makes are whole only once built",
            ),
    };
    Some(Extracted {
        launches: Vec::new(),
        findings: vec![finding.var("help", help)],
    })
}

/// The directory of a kustomization beside `name` (a patch's or base's folder), if any.
fn kustomize_dir(name: &str) -> Option<String> {
    // Only a file on disk has a folder (standard input named `-` or `<stdin>` has none).
    let path = Path::new(name);
    if !path.is_file() {
        return None;
    }
    let dir = path.parent()?;
    ["kustomization.yaml", "kustomization.yml", "Kustomization"]
        .iter()
        .any(|k| dir.join(k).is_file())
        .then(|| match dir.display().to_string() {
            d if d.is_empty() => ".".to_string(),
            d => d,
        })
}

/// How to check what a kustomization builds.
fn build_help(name: &str) -> String {
    let dir = kustomize_dir(name).unwrap_or_else(|| "DIR".to_string());
    format!(
        "build it and check the result: `kustomize build {dir} | kvlint check -` (or `kubectl kustomize {dir} | kvlint check -`)"
    )
}

/// How to check the rendered chart: the exact `helm template` command when `helm` is on PATH and
/// the chart's root (the directory above `templates/` holding `Chart.yaml`) is found.
fn render_help(name: &str) -> String {
    let chart = Path::new(name)
        .ancestors()
        .find(|d| d.join("Chart.yaml").is_file())
        .map(|d| d.display().to_string());
    let helm = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("helm").is_file()));
    match (chart, helm) {
        (Some(chart), true) => format!(
            "render the chart and check the result: `helm template {} | kvlint check -` (add your -f values files)",
            if chart.is_empty() { "." } else { &chart }
        ),
        (Some(chart), false) => format!(
            "render the chart and check the result: `helm template {chart} | kvlint check -` (helm is not on PATH here)"
        ),
        (None, _) => "render the chart and check the result: `helm template RELEASE CHART -f values.yaml | kvlint check -`".into(),
    }
}

/// Where `text` (an object, a container's command) starts an engine, as [`note`] finds them:
/// outside comments and mentions (`echo`, `pip install`), and not as a router's command.
pub fn engines_in(text: &str) -> Vec<(Range<usize>, &'static str)> {
    let mut found = mentions(text, &ENGINE_WORDS);
    found.retain(|(at, _)| !routes(text, at));
    found
}

/// The first engine a script's code names anywhere, even where it only mentions it (`pkill -f
/// trtllm-serve`): comments aside, such a mention says what the script is about.
pub fn named_in_code(text: &str) -> Option<&'static str> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| l.find(" #").map_or(l, |n| &l[..n]))
        .find_map(|code| {
            ENGINES
                .iter()
                .find(|(p, _)| find_words(code, p).is_some())
                .map(|(_, what)| *what)
        })
}

/// Whether the engine words at `at` are part of a router's command (`trtllm-serve disaggregated`).
fn routes(text: &str, at: &Range<usize>) -> bool {
    let line_end = text[at.start..]
        .find('\n')
        .map_or(text.len(), |i| at.start + i);
    let rest = &text[at.start..line_end];
    NOT_ENGINES.iter().any(|(p, _)| rest.starts_with(p))
}

/// Byte ranges of the YAML documents (split at `---` lines); any other file is one range.
fn documents(src: &SourceFile) -> Vec<Range<usize>> {
    if !super::is_yaml_name(&src.name) {
        return std::iter::once(0..src.text.len()).collect();
    }
    let text = &src.text;
    let mut out = Vec::new();
    let mut start = 0;
    // Only lines that start with `---` can be separators: found by one SIMD search.
    for at in memchr::memmem::find_iter(text.as_bytes(), b"---") {
        if at > 0 && text.as_bytes()[at - 1] != b'\n' {
            continue;
        }
        let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |n| at + n + 1);
        let line = &text[at..end];
        if line.trim_end() == "---" || line.starts_with("--- ") {
            out.push(start..at);
            start = end;
        }
    }
    out.push(start..text.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_env_names_are_the_options_in_env_form() {
        for name in [
            "MAX_MODEL_LEN",
            "VLLM_MAX_MODEL_LEN",
            "max_model_len",
            "Tensor_Parallel_Size",
            "KV_CACHE_FREE_GPU_MEMORY_FRACTION",
            "SGLANG_MEM_FRACTION_STATIC",
        ] {
            assert!(sizing_env(name), "{name}");
        }
        for name in [
            "XMAX_MODEL_LEN",
            "MAX-MODEL-LEN",
            "MAX_MODEL",
            "",
            "_",
            "MODEL_LEN",
        ] {
            assert!(!sizing_env(name), "{name}");
        }
    }

    #[test]
    fn engine_words_are_found_however_they_are_quoted() {
        let hit = |line: &str, p: &str| find_words(line, p).map(|r| line[r].to_string());
        assert_eq!(
            hit("command: [\"vllm\", \"serve\", m]", "vllm serve").as_deref(),
            Some("vllm\", \"serve")
        );
        assert_eq!(
            hit("/usr/local/bin/vllm serve m", "vllm serve").as_deref(),
            Some("/usr/local/bin/vllm serve")
        );
        assert_eq!(
            hit(
                "python3 -m vllm.entrypoints.openai.api_server",
                "vllm.entrypoints"
            )
            .as_deref(),
            Some("vllm.entrypoints.openai.api_server")
        );
        assert_eq!(hit("pip install vllm; myvllm serve", "vllm serve"), None);
    }

    /// TRL's `trl vllm-serve` starts vLLM with TRL's own arguments: named, so never silent.
    #[test]
    fn trl_vllm_serve_names_vllm() {
        let src = SourceFile::new(
            "train.slurm",
            "srun --nodes=1 trl vllm-serve --model $MODEL --tensor_parallel_size 8 &\n",
        );
        let found: Vec<&str> = mentions(&src.text, &ENGINE_WORDS)
            .iter()
            .map(|(_, e)| *e)
            .collect();
        assert_eq!(found, ["vLLM (TRL's vllm-serve)"]);
    }

    #[test]
    fn comments_and_echoes_only_mention_engines() {
        let src = SourceFile::new(
            "run.sh",
            "# vllm serve m\necho \"vllm serve m\"\nsleep 1; vllm serve m\n",
        );
        let found: Vec<usize> = mentions(&src.text, &ENGINE_WORDS)
            .iter()
            .map(|(r, _)| r.start)
            .collect();
        assert_eq!(found, [src.text.rfind("vllm serve").unwrap()]);
    }

    #[test]
    fn a_line_is_read_once_however_often_it_names_an_engine() {
        // 20,000 mentions on one line, then a last line without a newline.
        let text = format!(
            "a: 1\n{}\nb: dynamo.vllm x",
            "vllm serve m; ".repeat(20_000)
        );
        let src = SourceFile::new("run.sh", text.as_str());
        let found: Vec<(usize, &str)> = mentions(&src.text, &ENGINE_WORDS)
            .iter()
            .map(|(r, what)| (r.start, *what))
            .collect();
        let last = text.rfind("dynamo.vllm").unwrap();
        assert_eq!(found, [(5, "vLLM"), (last, "vLLM (Dynamo worker)")]);
    }

    #[test]
    fn each_document_gets_one_note_per_engine_and_per_router() {
        let text = "a: vllm serve m\nb: vllm serve n\n---\nc: vllm-router\nd: vllm-router\n---\n\
                    e: python -m sglang.launch_server\n";
        let src = SourceFile::new("a.yaml", text);
        let mut out = Extracted::default();
        note(FileId(0), &src, scan(&src), &mut out);
        let got: Vec<(&str, usize)> = out
            .findings
            .iter()
            .map(|f| (f.rule, f.primary.map_or(0, |p| p.start)))
            .collect();
        assert_eq!(
            got,
            [
                ("INP007", text.find("vllm-router").unwrap()),
                ("INP006", text.find("vllm serve").unwrap()),
                ("INP006", text.find("python").unwrap() + 10),
            ]
        );
    }

    #[test]
    fn yaml_documents_split_at_separators_and_other_files_are_one() {
        let yaml = SourceFile::new("a.yaml", "a: 1\n---\nb: 2\n");
        assert_eq!(documents(&yaml), [0..5, 9..14]);
        let sh = SourceFile::new("a.sh", "a\n---\nb\n");
        assert_eq!(documents(&sh), vec![(0..8)]);
    }
}
