//! A platform's docs as `kvlint platforms NAME` prints them and as the book's platform page
//! (`docs/src/platforms.md`) and the README table show them, from the same data.

use super::Platform;

/// The engine a platform runs, or where it is named.
pub fn engine(p: &Platform) -> String {
    match (&p.engine, &p.engine_from) {
        (Some(e), _) => serde_json::to_value(e)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        (None, Some(from)) => {
            let mut at: Vec<String> = Vec::new();
            at.extend((!from.path.is_empty()).then(|| from.path.clone()));
            at.extend(from.or.iter().cloned());
            at.extend(from.flag.clone());
            let default = from.default.and_then(|d| {
                let v = serde_json::to_value(d).ok()?;
                Some(format!(", else {}", v.as_str()?))
            });
            let unnamed = from.unnamed.as_ref().map(|u| {
                let each: Vec<String> = u
                    .engines
                    .iter()
                    .filter_map(|e| Some(serde_json::to_value(e).ok()?.as_str()?.to_string()))
                    .collect();
                format!(", else planned on each of {}", each.join(", "))
            });
            let otherwise = default.or(unnamed).unwrap_or_default();
            format!("from {}{otherwise}", at.join(" or "))
        }
        (None, None) if p.launches.iter().any(|s| s.reads_commands()) => "from the commands".into(),
        (None, None) if p.elsewhere.is_some() => "in the files that hold its launch".into(),
        (None, None) => String::new(),
    }
}

/// How the platform's files are told apart, in words.
pub fn recognition(p: &Platform) -> String {
    let r = &p.recognize;
    let mut parts = Vec::new();
    if !r.kinds.is_empty() {
        parts.push(format!("Kubernetes kind {}", r.kinds.join(" or ")));
    }
    if let Some(e) = &r.embedded_in {
        parts.push(format!(
            "YAML in `{}` of a {}",
            e.path,
            e.kinds.join(" or ")
        ));
    }
    if !r.files.is_empty() {
        parts.push(format!("file named {}", r.files.join(" or ")));
    }
    if !r.images.is_empty() {
        parts.push(format!("a container of image {}", r.images.join(" or ")));
    }
    if !r.commands.is_empty() {
        parts.push(format!(
            "whose command, if any, runs {}",
            r.commands.join(" or ")
        ));
    }
    if let Some(l) = &p.launcher {
        parts.push(format!("a command that runs its script `{}`", l.script));
    }
    let mut values: Vec<String> = r
        .values
        .iter()
        .map(|(k, v)| format!("`{k}` {}", listed(v)))
        .collect();
    values.sort();
    if !values.is_empty() {
        parts.push(format!("where {}", values.join(", ")));
    }
    if !r.paths.is_empty() {
        let paths: Vec<String> = r.paths.iter().map(|p| format!("`{p}`")).collect();
        parts.push(format!("with {}", paths.join(", ")));
    }
    if !r.absent.is_empty() {
        let paths: Vec<String> = r.absent.iter().map(|p| format!("`{p}`")).collect();
        parts.push(format!("without {}", paths.join(", ")));
    }
    let mut not: Vec<String> = r
        .not_values
        .iter()
        .map(|(k, v)| format!("`{k}` {}", listed(v)))
        .collect();
    not.sort();
    if !not.is_empty() {
        parts.push(format!("unless {}", not.join(", ")));
    }
    parts.join("; ")
}

/// Recognition values in words: the empty value is the path not set (a missing path holds it).
fn listed(values: &[String]) -> String {
    let words: Vec<&str> = values
        .iter()
        .map(|v| if v.is_empty() { "unset" } else { v.as_str() })
        .collect();
    words.join(" or ")
}

/// The full docs of one platform, as plain text.
pub fn text(p: &Platform) -> String {
    let mut out = format!("{} — {} (engine: {})\n\n", p.name, p.title, engine(p));
    out.push_str(&format!("What:        {}\n", p.docs.what));
    out.push_str(&format!("Settings:    {}\n", p.docs.settings));
    out.push_str(&format!("Recognized:  {}\n", recognition(p)));
    out.push_str(&format!("Docs:        {}\n", p.docs.source));
    for e in &p.docs.examples {
        out.push_str(&format!("Example:     {e}\n"));
    }
    out
}

/// How to write a platform file: the head of the book page.
const SCHEMA: &str = r#"## Writing a platform file

One file, `platforms/<name>.toml` (or a `[[platform]]` table in `kvlint.toml`), with fixtures in
`fixtures/platforms/<name>/`: `fire-*` files in the platform's real shape, each with one
`# expect: engine= role= tp= context= model= gpu=` line per launch, and `pass-*` files it must not
read (`tests/platforms.rs` runs them all).

```toml
name = "ray-serve-config"            # kvlint platforms NAME
title = "Ray Serve LLM config"       # the launches' object kind
engine = "vllm"                      # or [engine_from] path = "backend.type", values = { vllm = "vllm" }
                                     # (or = [more paths], flag = "--backend", default = "vllm", keys `vllm-*` prefixes)
# [engine_from.unnamed] engines = ["trtllm", "vllm"]  why = "..."  unlisted = "... {value} ..."
#                                    none named (or a value naming none): planned on each, each INP004

[recognize]                          # every test given must hold
kinds = []                           # Kubernetes kinds; api_versions = ["ray.io/"] prefixes
files = []                           # file-name globs (model.json)
paths = ["applications[].args"]      # key paths that must exist; absent = [...] must not
# embedded_in = { kinds = ["RayService"], path = "spec.serveConfigV2" }  # YAML held in a string
#                                    (`/`-paths of `pod` and `gpu_type` start at the object)
# values = { "spec.predictor.model.modelFormat.name" = ["huggingface"] }  # paths holding a value (`nim-*`: a prefix, `""`: not set)
# not_values = { backend = ["vllm"] }   # paths that must not hold one of these values
# images = ["nvcr.io/nim/*"]  commands = ["djl-serving"]  # a container of any workload, by image
# not_images = ["nvcr.io/nim/*embed*"]   # images of those that run no engine

[[launch]]                           # one per kind of launch site
at = "applications[].args.llm_configs[]"   # `[]` each item, `[name=main]` those named, `*` each value, `/` from the document
                                     # a key holding `.` or `/` in double quotes: 'labels."ray.io/accelerator-type"'
options = "engine_kwargs"            # the option map
keys = "kwargs"                      # kwargs (dataclass fields) | flags (--config names) | camel
frontend_fields = true               # kwargs: vLLM FrontendArgs fields too
# flag_names = { maxModelLen = "--max-model-len" }   only these keys, each to its flag
# only_options = true                keys that are no engine option are the platform's own
# argv = ["extraArgs"]               an argv list or string, appended (a mapping: `--key value`
#                                    each, keys sorted, an empty value the bare `--key`)
# argv_names = { "--model_id" = "--model", "--model_name" = "" }  the platform's flags; "" drops
# switches = ["TRUST_REMOTE_CODE"]   keys whose true/1/yes gives the bare flag, else nothing
# max_gpus = ["--tensor-parallel-size"]  `max` there is every GPU the launch is given
# link = { kind = "NIMCache", name = "storage.nimCache.name", as = "cache" }  another object, by name
#   text = ["data", "inference_config.yaml"]  the YAML held in its string; required = true: INP006 when absent
# command = ["docker_server.start_command"]  a whole command line, read as a container's (sh -c too)
# script = ["run"]  env = ["envs"]   a shell script read as `bash -c` reads it, with these variables
# exports = { NUM_GPUS = "{gpus}", NUM_NODES = "{pods}", RANK = "0" }  variables the platform sets
#   TP_SIZE = "${parallelism.tensor:-1}"  the site's value at a path (absent, no default: unknown)
# option_value = "string_value"      path from each option's value to its scalar (Triton parameters)
# shared_options = "/"               a mapping whose keys apply where options lack them
# llm_api_options = ""  drop = [...] TensorRT-LLM: this mapping is --extra_llm_api_options, in place
model = ["model_loading_config.model_source", "model_loading_config.model_id"]
gpu_type = ["accelerator_type"]      # `H100:8` gives the count too; gpu_marks = ["!"] drops `H100!`'s mark
                                     # (a path reaching several GPUs (worker groups) gives the least-memory one)
# gpu_type_prefix = ["nvidia-gpu-"]  prefixes before the GPU's name (a name without one: no GPU)
# model_url = true                   the model is a URL (`hf://org/name`): what follows the scheme
# model_untagged = true              the model is an image's name: its tag or digest dropped
gpu_count = ["engine_kwargs.tensor_parallel_size * engine_kwargs.pipeline_parallel_size"]
gpu_count_default = 1
# role = "prefill" | role_from = { path = "...", values = { kv_producer = "prefill" } } | role_name = ["name"]
#                                    (a `"*"` value: any value there, a mapping too)
# pod_template = ["template"]        a pod template, read as a workload's (no `engine`: the commands')
# lws_template = ["spec.leaderWorkerTemplate"]  a LeaderWorkerSet template, read as one's
# container = ["extraPodSpec.mainContainer"]  one container whose command is the launch, in pod spec `pod`
# mounts = { "/mnt/models" = [{ path = "model.uri", strip = "hf://", until = ":" }] }  with `container`:
#   an argument that is the path (or `--flag=PATH`) is read as what the first derivation gives
# runs_in = ["template.containers[name=main]"]  the container a launch built here runs in (resources, image)
# not_engine = { path = "componentType", values = ["frontend"], what = "...", reason = "..." }  INP007, not read
# base = { kinds = ["ConfigMap"], name = "/spec.baseConfigMapRef.name", text = ["data", "decodeDeployment"],
#   section = "decode", pod_template = "spec.template", containers = "containers", args = ["prepend", "append"],
#   node_affinity = "acceleratorTypes", tensor = "parallelism.tensor", engines = { vllm = "vllm" },
#   model = ["HFModelName"], vars = { HFModelName = [{ path = "/spec.modelArtifacts.uri", strip = "hf://" }] },
#   lookups = { getPort = { list = "/spec.routing.ports", key = "name", value = "port" } }, help = "..." }
#                                    a workload template held in another object of the input (of the
#                                    first of `kinds` that has the name), as YAML text, its Go-template
#                                    actions filled from `vars` (a derivation: `strip` a prefix, drop
#                                    from `until`, `skip` path segments, put `before`, or a fixed
#                                    `value`) and `lookups`, the `section`'s containers merged over it by
#                                    name (args before or after the template's, one entry per controller
#                                    release: two that differ make an option both set a value kvlint
#                                    cannot see), `node_affinity` a required node-selector term
#   Or the object itself is the template (no `text`; KServe's runtime): pod_template = "" (its `spec`
#   is the pod spec), container = { path = "model", into = "kserve-container", image_tag =
#   "model.runtimeVersion" } (one container merged into the template's of that name), pod = "" (pod
#   fields merged over its pod spec), mounts = { "/mnt/models" = "StorageModel" } (an argument that is
#   the path is read as the variable's value), select = { value = "model.modelFormat.name", version =
#   "...", list = "spec.supportedModelFormats", key = "name", version_key = "version", auto =
#   "autoSelect", priority = "priority", disabled = "spec.disabled" } (the object picked when the site
#   names none: the highest `priority` of those whose item supports the value with `auto`; two alike,
#   or a named one that does not support it, render nothing: INP006)
# resources = ["resources"]  pod = ["nodeSelector parent"]  image = [...]  image_tag = [...]  name = [...]
# instance_type = ["deployment.instanceType"]  the GPU (and count) of a cloud instance type
# pods = ["modelParameters.pipelineParallelSize"]  pods per replica (a LeaderWorkerSet's size; `worker.size + 1`)
# pods_default = 4                   pods per replica when `pods` finds none (else 1)
# gpu_resource = ["requestGPUType"]  a MIG resource name names the device
# node_selector_terms = ["nodeSelectorTerms"]  required node-affinity terms: the GPU they pin
# node_label = ["acceleratorTypes"]  a {labelKey, labelValues} pair rendered as `key In values`: the GPU it pins
# [[launch.render]]                  words a template renders from values, `${path}` filled in
#                                    (`${path:-16}`: 16 where the path is missing, `| default 16`)
# when = ["lmcacheConfig.enabled"]   words = ["--kv-transfer-config", '{"kv_role":"${lmcacheConfig.kvRole}"}']
# before_argv = true                 rendered before the `argv` values, as the template writes them
#                                    (after, by default): argparse keeps the last of a flag given twice

# unknown = { "--max_seq_len" = "the engine's build" }  options set where the input does not show: INP004

# [launcher]                         # a script of the platform's that a shell runs (no [recognize], no [[launch]])
# script = "launch_triton_server.py"  model = "--model_repo"  ranks = "--world_size"  ranks_default = 1
# split = "..."                      # where several ranks are split into TP and PP (one rank: both 1)
# unknown = { "--max_seq_len" = "..." }

# [elsewhere]                        # where the launch is when a document holds none
# what = "the engine's settings are in `1/model.json` beside this config.pbtxt"
# files = ["*/model.json"]           # from the document's folder (`**/` anywhere): checked with it, nothing is said;
#                                    # a fixed-depth glob is also looked for on disk beside a file checked alone
# help = "kvlint check MODEL_DIR/"   # the command that gives kvlint the real launch

[docs]
what = "..."
settings = "..."
source = "https://..."
examples = ["https://..."]
```

A document a platform recognizes that gives no launch and no finding is INP006 at what made it
the platform's (the value, the image), naming the platform: never silence. A platform whose
documents never hold the launch (a Triton `config.pbtxt` whose backend reads `model.json`) gives `[elsewhere]` and no `[[launch]]` (its `engine`, if
any, is for the docs): INP006 then says where the launch is and how to check it, and says nothing
when a file of `files` is checked in the same run (a directory) or written by the same script.
A document checked alone whose `files` (a glob of fixed depth, such as `*/model.json`) match files
on disk beside it has them read and checked with it (at most 8; `**` globs are never searched).
Its fire fixtures are that INP006 (`# rules: INP006`, no `# expect:`); a `pass-*` folder checks
the document with the file that holds its launch.

A site with `base` reads the object that holds its template from the same file (or stream): an
action of the template that neither `vars` nor `lookups` fills stays as written, a value kvlint
cannot see (INP004 where the pool needs it), and control flow (`{{ if }}`, `{{ range }}`) is not
rendered (INP006). An object that is the template (no `text`) and that a site of the input renders
is read there, merged, never on its own. Without the object, each container of the section whose name or image holds a
word of `engines` is listed with what the site says (the first of `model`, its args, `tensor` as
`--tensor-parallel-size`, `node_affinity`'s GPU), each with INP006 at the object's name and `help`:
never passed. Its fire fixtures hold both cases: one without the object has no `# expect:` line.

A platform whose sites are all commands (`command`, `script`, `pod_template`, `lws_template`,
`container`, `base`) may leave `engine` out: the commands name it. A platform whose launches are commands a
built-in reader finds gives `reader` instead of `engine`
(`slurm`, `github-actions`, `apptainer`). With `reader = "python"`, each `[[launch]]` is a decorator
or call of a Python file (`at = "modal:function[]"`: the callee's top module and last name, as
imported) whose function or class holds the argv lists the Python reader finds (`subprocess.Popen`,
a returned `__command__` list); the site says only where they run (`gpu_type`, `gpu_count`,
`image`, `role`, `name`), and a keyword whose value is a call reads as `{function, args, kwargs}`.
Its `env` (BentoML's `envs = [{name, value}]`, or a mapping) is what the code of that function or
class runs with: `os.environ.get("X", d)` there is the value set for `X`; for a variable listed with
no value (given at deploy time), or not listed (the caller's), it is `d` as a caller's default
(`os.getenv`, `setdefault` too; an argparse option's `default=` likewise): the launch lists it and
the pool is planned with it, and INP004 still refuses the launch (the caller may set `X`).
The decorator's own arguments are read where the service is built, in an environment kvlint does
not see. `[[value_of]]` (`call = "bentoml.models.HuggingFaceModel"`, `value = ["args[0]",
"kwargs.model_id"]`) names a call of the platform's API whose value, where a launch reads it, is
one of its arguments (the repository whose download folder it is).

Option maps read as `kwargs` follow the engine's args dataclass, per release (vLLM `EngineArgs`,
`AsyncEngineArgs`; SGLang `ServerArgs`; `src/engine/fields.toml`, generated by
`tools/extract_engine_fields.py`): exact field names only, no abbreviations, no `--no-x`; a key
that is no field is CFG001 at the key. An options path that reaches a Kubernetes env list
(`- name: NIM_MAX_MODEL_LEN`) reads it as its names and values. A value that still holds a `${NAME}`
or `$NAME` placeholder (a template the platform fills later) is a value kvlint cannot see (INP004).
Files in protobuf text format (`*.pbtxt`) and Java properties (`*.properties`, dotted keys as
paths) are read into the same tree as YAML.

"#;

/// The book page listing every built-in platform.
pub fn book_page(all: &[Platform]) -> String {
    let mut out = String::from(
        "<!-- Generated from platforms/*.toml by `KVLINT_UPDATE_BOOK=1 cargo test --test platforms`; do not edit. -->\n\
         # Platforms as data\n\n\
         kvlint reads each platform below as its data file in `platforms/` describes it (see\n\
         `kvlint platforms NAME`). A site adds its own in `kvlint.toml` as a `[[platform]]` table in\n\
         the same schema. A document no reader or platform takes is still searched: a mapping whose\n\
         keys are mostly one engine's options (or any under a key that names the engine,\n\
         `sglang:`; or two or more in a mapping that names the engine as a value, `framework: sglang`,\n\
         with its strings of the engine's flags, `extraArgs`, passed after them) is read as its\n\
         settings, a list of words that starts with an engine command as\n\
         its argv (or, under a key that names the engine, with that engine's flags: `vllm:\n\
         {args: [--model, ...]}`), a mapping's `command` and `args` that together start one (a\n\
         container's shape: `{command: [/bin/sh, -c], args: [\"vllm serve ...\"]}`) as one argv, with\n\
         `sh -c` scripts read by the shell reader, and engine options that give no launch are INP006. Options that name no model\n\
         take the one named nearest them (`model`, `model_id`, or `model: {id: ...}` beside the\n\
         options or an enclosing mapping), and the GPU is that of the one cloud instance type the\n\
         document names (two with different GPUs leave it unknown, INP003).\n\n",
    );
    out.push_str(SCHEMA);
    out.push_str("## The platforms\n\n");
    for p in all {
        out.push_str(&format!("### {}\n\n", p.title));
        out.push_str(&format!("`{}` · engine: {}\n\n", p.name, engine(p)));
        out.push_str(&format!("{}\n\n", p.docs.what));
        out.push_str(&format!("**Settings.** {}\n\n", p.docs.settings));
        out.push_str(&format!("**Recognized by.** {}\n\n", recognition(p)));
        out.push_str(&format!("**Docs.** <{}>\n\n", p.docs.source));
        for e in &p.docs.examples {
            out.push_str(&format!("**Example.** <{e}>\n\n"));
        }
    }
    out
}

/// The README's table of platforms (between its `platforms` markers).
pub fn readme_table(all: &[Platform]) -> String {
    let mut out = String::from("| platform | engine | where the settings are |\n|---|---|---|\n");
    for p in all {
        let settings = p.docs.settings.replace('|', "\\|");
        out.push_str(&format!(
            "| [{}]({}) | {} | {} |\n",
            p.title,
            p.docs.source,
            engine(p),
            settings
        ));
    }
    out
}
