//! Platforms as data: one `platforms/<name>.toml` per platform (Ray Serve LLM, a Helm chart's
//! values, a serving CRD) says how to recognize its files and where each engine launch's settings,
//! model, GPUs, role and image are. The files are compiled in (build.rs), as rules are; a site adds
//! its own in `kvlint.toml` (`[[platform]]`, the same schema). `extract::by_platform` applies them;
//! no reader knows a platform by name. The schema is described for authors in
//! `docs/src/platforms.md`.

mod base;
mod check;
pub use check::check;
pub mod docs;
mod launcher;
pub mod path;

pub use base::{ArgsOrder, Base, Derive, Lookup, Overlay, Select};
pub use launcher::Launcher;

use crate::launch::Engine;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/platform_files.rs"));

/// One platform file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// The file's name without `.toml`: `kvlint platforms NAME`.
    pub name: String,
    /// What the launches' `object.kind` says (`Ray Serve LLM config`).
    pub title: String,
    /// The engine every launch runs, unless `engine_from` reads it from the file.
    #[serde(default)]
    pub engine: Option<EngineName>,
    #[serde(default)]
    pub engine_from: Option<EngineFrom>,
    #[serde(default)]
    pub recognize: Recognize,
    /// A built-in reader for a platform whose launch sites are scripts (a Slurm batch script, a
    /// workflow's `run:` steps): the engine and the launches come from the commands it reads, so
    /// such a platform gives no `engine` and no `[[launch]]`.
    #[serde(default)]
    pub reader: Option<Reader>,
    /// Where the launches are: one entry per kind of launch site (a PD config has two).
    #[serde(rename = "launch", default)]
    pub launches: Vec<Site>,
    /// Where the launch is when a document of the platform holds none (a Triton `config.pbtxt`
    /// whose backend reads `model.json`): what INP006 says there.
    #[serde(default)]
    pub elsewhere: Option<Elsewhere>,
    /// A script of the platform's own that a shell runs to start the engine: its flags read as
    /// this says. Such a platform is recognized by the script alone: no `[recognize]` tests.
    #[serde(default)]
    pub launcher: Option<Launcher>,
    /// A `python` platform's calls whose value, where a launch reads it, is one of their
    /// arguments (BentoML's `HuggingFaceModel(model_id)` is the folder it downloads that
    /// repository to, which holds that repository's files).
    #[serde(rename = "value_of", default)]
    pub values: Vec<CallValue>,
    pub docs: Docs,
}

/// A call (its dotted name as the file imports it) and the argument that is its value: the first
/// of `value`'s paths, from the call read as `{args: [...], kwargs: {...}}`, that it gives.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CallValue {
    pub call: String,
    pub value: Vec<String>,
}

/// Where a recognized document's launch lives when the document does not hold it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Elsewhere {
    /// Where the launch is, in words (`model.json` in the model's version folder).
    pub what: String,
    /// Globs of the input files that hold it, from the document's folder (`*/model.json`), or
    /// anywhere in the run (`**/model.json`): when one is checked in the same run, the document
    /// is only its part and nothing is said.
    #[serde(default)]
    pub files: Vec<String>,
    /// The command that gives kvlint the real launch, where one exists.
    #[serde(default)]
    pub help: Option<String>,
}

/// An engine by its name in platform files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineName {
    Vllm,
    Sglang,
    Trtllm,
}

impl From<EngineName> for Engine {
    fn from(e: EngineName) -> Engine {
        match e {
            EngineName::Vllm => Engine::Vllm,
            EngineName::Sglang => Engine::Sglang,
            EngineName::Trtllm => Engine::Trtllm,
        }
    }
}

/// The built-in readers a platform file may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reader {
    /// A shell script with `#SBATCH` directives (`extract::shell`, `shell/slurm.rs`).
    Slurm,
    /// `run:` steps of a workflow or composite action (`extract::shell::actions`).
    GithubActions,
    /// `%runscript`/`%startscript`/`%apprun` of a definition file (`extract::shell::apptainer`).
    Apptainer,
    /// The argv lists a Python file runs or returns (`subprocess.Popen([...])`, BentoML's
    /// `__command__`; `extract::python`). Here each `[[launch]]` is a decorator or call (`at`)
    /// whose function or class holds such launches, and says only where they run: GPU type and
    /// count, image, role, name (Modal's `@app.function(gpu="H100:8")`).
    Python,
}

/// The engine named by a value in the file (`backend.type: sglang`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EngineFrom {
    /// Path (from the launch site, or `/` from the document) to the value.
    #[serde(default)]
    pub path: String,
    /// Further paths, tried in order when `path` is not there.
    #[serde(default)]
    pub or: Vec<String>,
    /// Or a flag of the site's `argv` whose value names the engine (`--backend=vllm`).
    #[serde(default)]
    pub flag: Option<String>,
    /// Value as written → engine; a key ending in `*` matches values that start with the rest
    /// (`vllm-*`: NIM profile names). A value not listed is INP006 at the value.
    pub values: HashMap<String, EngineName>,
    /// The engine when neither the path nor the flag is given (the platform's own default).
    #[serde(default)]
    pub default: Option<EngineName>,
    /// The engines the platform itself may start when the file names none (NIM picks a profile
    /// for the GPUs it finds): the launch is planned on each, and each carries INP004 saying so.
    #[serde(default)]
    pub unnamed: Option<Unnamed>,
}

/// The engines a platform may pick at startup, and why, for a file that names none.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Unnamed {
    pub engines: Vec<EngineName>,
    /// Who picks, and by what (INP004 names it as the value the engine comes from).
    pub why: String,
    /// Why a value that names no engine (a profile given by its ID) still runs one of `engines`;
    /// without it such a value is INP006.
    #[serde(default)]
    pub unlisted: Option<String>,
}

/// A role named by a value: value as written → role. Other values leave the role open.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoleFrom {
    pub path: String,
    pub values: HashMap<String, String>,
}

/// How a document is told to be this platform's. Every given test must hold.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Recognize {
    /// Kubernetes kinds (the document has `apiVersion` and `kind`). Empty: not a Kubernetes
    /// object, and a document with `apiVersion`+`kind` never matches.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// `apiVersion` prefixes (`ray.io/`), when `kinds` is given.
    #[serde(default)]
    pub api_versions: Vec<String>,
    /// File name globs (`model.json`, `*.properties`); empty: any name.
    #[serde(default)]
    pub files: Vec<String>,
    /// Key paths that must exist (`applications[].args`).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Key paths that must not exist.
    #[serde(default)]
    pub absent: Vec<String>,
    /// Key paths that must hold one of the listed values (ASCII case ignored; `""` holds where
    /// the path is not set).
    #[serde(default)]
    pub values: HashMap<String, Vec<String>>,
    /// Key paths that must not hold one of the listed values (ASCII case ignored).
    #[serde(default)]
    pub not_values: HashMap<String, Vec<String>>,
    /// Container image globs (`nvcr.io/nim/*`): the platform reads a container (of any
    /// Kubernetes workload, or a compose service) that runs such an image and gave no launch of
    /// its own; its sites' paths start at the container, whose `env` list (a compose service's
    /// `environment`) reads as a mapping of names to values (`env.HF_MODEL_ID`).
    #[serde(default)]
    pub images: Vec<String>,
    /// Images of `images` that run no engine of the platform's (a NIM that serves embeddings).
    #[serde(default)]
    pub not_images: Vec<String>,
    /// With `images`: a container that gives a command runs the platform's server only when a
    /// word of it is one of these (`djl-serving`); one without a command runs the image's own.
    #[serde(default)]
    pub commands: Vec<String>,
    /// The document is YAML held in a string of a Kubernetes object (KubeRay `RayService`
    /// `spec.serveConfigV2`); `paths` and the sites apply to it, `/`-paths of `pod` and `gpu_type`
    /// to the object.
    #[serde(default)]
    pub embedded_in: Option<Embedded>,
    /// `files` compiled once: a glob compiles to a regex, and compiled per document it cost a
    /// 10,000-object render 12 % of its time.
    #[serde(skip)]
    file_globs: OnceLock<Option<globset::GlobSet>>,
}

impl Recognize {
    /// Whether a file's name (without its folder) is one `files` names; any name when `files` is
    /// empty. A glob that does not parse names nothing (`platform::check` refuses it).
    pub fn file_matches(&self, name: &str) -> bool {
        if self.files.is_empty() {
            return true;
        }
        let set = self.file_globs.get_or_init(|| {
            let mut b = globset::GlobSetBuilder::new();
            for g in self.files.iter().filter_map(|g| globset::Glob::new(g).ok()) {
                b.add(g);
            }
            b.build().ok()
        });
        set.as_ref().is_some_and(|s| s.is_match(name))
    }
}

/// A Kubernetes kind and the path of the string that holds the platform's document.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Embedded {
    pub kinds: Vec<String>,
    pub path: String,
}

/// How an option map's keys become engine options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Keys {
    /// Keyword arguments of the engine's args dataclass (vLLM `EngineArgs`, SGLang `ServerArgs`):
    /// exact field names only; an unknown key is a TypeError at startup (CFG001 at the key).
    Kwargs,
    /// Option names without their dashes (`max-model-len`, `max_model_len`), read as the engine
    /// reads its `--config` file: argparse semantics.
    Flags,
    /// camelCase names (`maxModelLen`) that the platform renders as `--max-model-len`.
    Camel,
}

/// One kind of launch site.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Site {
    /// Path to each site (`applications[].args.llm_configs[]`). Empty: the document itself.
    #[serde(default)]
    pub at: String,
    /// The role every launch here plays (`prefill`, `decode`).
    #[serde(default)]
    pub role: Option<String>,
    /// The option map (path from the site).
    #[serde(default)]
    pub options: Option<String>,
    #[serde(default = "default_keys")]
    pub keys: Keys,
    /// With `keys = "kwargs"`: a key that is a field of the engine's OpenAI server arguments
    /// (vLLM `FrontendArgs`) is taken too (Ray Serve LLM sends it there).
    #[serde(default)]
    pub frontend_fields: bool,
    /// Keys that are no option of the engine are the platform's own and are not passed on
    /// (Runpod's worker passes only the vLLM flags it knows).
    #[serde(default)]
    pub only_options: bool,
    /// Only these keys of the option map, each to the flag it renders (`maxModelLen =
    /// "--max-model-len"`): charts that render a fixed list. Other keys are not the engine's. A
    /// dotted name reaches into a nested mapping (`kv_cache_config.free_gpu_memory_fraction`).
    #[serde(default)]
    pub flag_names: HashMap<String, String>,
    /// Path from each option's value to the scalar it holds, when values are wrapped (Triton
    /// `parameters { key value { string_value } }`: `string_value`).
    #[serde(default)]
    pub option_value: Option<String>,
    /// A mapping whose entries apply where the site's own options lack the key (top-level keys
    /// that `trtllm-serve disaggregated` copies into each server section).
    #[serde(default)]
    pub shared_options: Option<String>,
    /// TensorRT-LLM: a mapping of LLM-API fields (path from the site) that the platform gives the
    /// engine as its `--extra_llm_api_options` file; it stays in the input, so its keys keep their
    /// spans. `drop` names its keys that are the platform's own, not the engine's.
    #[serde(default)]
    pub llm_api_options: Option<String>,
    #[serde(default)]
    pub drop: Vec<String>,
    /// A whole command line (a list, or a string split as a shell splits it) read as a
    /// container's command is: the engine launches in it (through `sh -c`, env prefixes), each
    /// with this site's role, GPUs and image. The platform's engine is the one it expects there.
    #[serde(default)]
    pub command: Vec<String>,
    /// Docker's ENTRYPOINT beside `command` as its CMD (an ECS container definition's
    /// `entryPoint` and `command`): the command line is the entrypoint, or without one the
    /// image's own (a `vllm/vllm-openai` image's `vllm serve`, from `image`), then `command`.
    #[serde(default)]
    pub entrypoint: Vec<String>,
    /// A shell script (SkyPilot's `run:`), or a list of command lines run in sequence (dstack's
    /// `commands`), read as `bash -c` reads it: the engine launches in it, each placed and named
    /// as the site says, as with `command`.
    #[serde(default)]
    pub script: Vec<String>,
    /// A mapping of environment variables (or a Kubernetes env list) that `command` or `script`
    /// sees.
    #[serde(default)]
    pub env: Vec<String>,
    /// Variables the platform itself sets for `command` or `script`: name → value, where `{gpus}`
    /// and `{pods}` are the GPUs per pod and the pods read for the site, `{all_gpus}` the GPUs of
    /// all its pods, and `${path}` /
    /// `${path:-default}` the site's value at `path` (absent with no default: a value kvlint does
    /// not know).
    #[serde(default)]
    pub exports: BTreeMap<String, String>,
    /// A Kubernetes pod template (`metadata`, `spec.containers`) whose containers are read as a
    /// workload's are (command, args, env, resources, node selectors), each launch with this
    /// site's role and pods. The engine comes from the commands.
    #[serde(default)]
    pub pod_template: Vec<String>,
    /// A LeaderWorkerSet `leaderWorkerTemplate` (`size`, `leaderTemplate`, `workerTemplate`), read
    /// as a LeaderWorkerSet's is.
    #[serde(default)]
    pub lws_template: Vec<String>,
    /// A container whose command and args are the launch (a CRD that keeps one container, not a
    /// pod template: Dynamo's `mainContainer`, OME's `runner`): read as a workload's container, in
    /// the pod spec `pod` (path from the site), with this site's role, pods and `resources`. A
    /// site reached through `*` names the container by its key when the container has no name.
    #[serde(default)]
    pub container: Vec<String>,
    /// The container a launch this site builds (from `model`, `options`, `argv`) runs in, as the
    /// platform's controller fills it in: its `resources` and `image` are the launch's unless the
    /// site names its own, and it is not read again as a container of its own.
    #[serde(default)]
    pub runs_in: Vec<String>,
    /// A template of the workload the platform's controller renders for the site, held as YAML
    /// text in another object of the input (llm-d's BaseConfig ConfigMap), with the Go-template
    /// variables it fills and what the site merges over it ([`Base`]). Read as a pod template.
    #[serde(default)]
    pub base: Option<Base>,
    /// Paths in a `container` site's pod where the controller puts what the document names
    /// (KServe downloads an LLMInferenceService's `spec.model.uri` to /mnt/models): an argument
    /// that is such a path (alone or as `--flag=PATH`) is read as the first derivation the
    /// document gives, at the place it is written; none given leaves the path.
    #[serde(default)]
    pub mounts: BTreeMap<String, Vec<Derive>>,
    /// Pod specs whose first container, when it gives no `command`, runs a command the platform's
    /// controller writes (KubeRay's `ray start`), not its image's entrypoint: no launch there.
    #[serde(default)]
    pub platform_command: Vec<String>,
    /// A value that marks the site as no engine (Dynamo's `componentType: frontend`, a router):
    /// INP007 there, and the site is not read, nor its pod templates.
    #[serde(default)]
    pub not_engine: Option<NotEngine>,
    /// An argv list (or a string split as a shell splits it, or a mapping of flag names to
    /// values, rendered in sorted order as `--name value`, an empty value the bare `--name`)
    /// appended to the launch.
    #[serde(default)]
    pub argv: Vec<String>,
    /// The platform's own flags in that argv, each to the engine's flag it sets (`--model_id =
    /// "--model"`); `""` drops a flag that is no engine option, with its value.
    #[serde(default)]
    pub argv_names: HashMap<String, String>,
    /// Option keys whose value turns a bare flag on: `true`, `1` or `yes` give the flag (as
    /// `flag_names` names it), anything else nothing (an env var a worker reads as a switch).
    #[serde(default)]
    pub switches: Vec<String>,
    /// Engine options set where the input does not show them (a prebuilt engine's
    /// `--max_seq_len`), each with where: the launch gets them as values kvlint cannot see (INP004).
    #[serde(default)]
    pub unknown: BTreeMap<String, String>,
    /// Flags whose value `max` means every GPU the launch is given (DJL
    /// `tensor_parallel_degree=max`): that count, or a value kvlint cannot see (INP004).
    #[serde(default)]
    pub max_gpus: Vec<String>,
    /// Another object of the input that this site names (a NIMService's NIMCache): it is read
    /// as if it were held under the key `as` of the site.
    #[serde(default)]
    pub link: Option<Link>,
    /// The model: first path that exists.
    #[serde(default)]
    pub model: Vec<String>,
    /// The model is a URL whose scheme says where it is fetched from (`hf://org/name`): the engine
    /// is given what follows the scheme.
    #[serde(default)]
    pub model_url: bool,
    /// The model is named by a container image (a NIM's): its tag or digest names the image's
    /// release, not the model, and is dropped.
    #[serde(default)]
    pub model_untagged: bool,
    /// The GPU type as the platform names it (`L4`, `H100`, `nvidia-gpu-h100`): first that exists.
    /// `H100:8` and a one-entry mapping `{H100: 8}` give the count too; a mapping of several
    /// GPUs (any of them) gives only their count, when they agree. A path that reaches several
    /// values (each worker group's label) gives the least-memory GPU of them: any may run it.
    #[serde(default)]
    pub gpu_type: Vec<String>,
    /// Marks the platform writes after a GPU name that leave the GPU the same (Modal's `H100!`,
    /// an H100 never upgraded to an H200): dropped before the name is looked up.
    #[serde(default)]
    pub gpu_marks: Vec<String>,
    /// Prefixes the platform puts before a GPU's name in `gpu_type` (`nvidia-gpu-` of KubeAI's
    /// `nvidia-gpu-h100`); when given, a name with none of them names no GPU (`cpu`).
    #[serde(default)]
    pub gpu_type_prefix: Vec<String>,
    /// GPUs per replica: first alternative whose paths exist; `a * b` multiplies (a missing
    /// factor is 1 when another exists).
    #[serde(default)]
    pub gpu_count: Vec<String>,
    /// GPUs per replica when `gpu_count` finds nothing (Ray Serve places one GPU per worker).
    #[serde(default)]
    pub gpu_count_default: Option<u32>,
    /// A cloud instance type (`p5.48xlarge`, `Standard_ND96asr_v4`): the GPU, and the count when
    /// nothing above gives one, from kvlint's instance table.
    #[serde(default)]
    pub instance_type: Vec<String>,
    /// Pods per replica (a LeaderWorkerSet's size): first that exists; `pods_default` (else 1)
    /// when none does.
    #[serde(default)]
    pub pods: Vec<String>,
    /// Pods per replica when `pods` finds nothing (a chart's `| default 4`).
    #[serde(default)]
    pub pods_default: Option<u32>,
    /// The name of the Kubernetes resource the GPUs are requested as (`nvidia.com/mig-3g.40gb`):
    /// a MIG slice names the device the engine sees.
    #[serde(default)]
    pub gpu_resource: Vec<String>,
    /// Required node-affinity terms (`nodeSelectorTerms`), read as a pod's: the GPU they pin.
    #[serde(default)]
    pub node_selector_terms: Vec<String>,
    /// A `{labelKey, labelValues}` pair a chart renders as a required node-affinity term (`key In
    /// values`: llm-d modelservice's `acceleratorTypes`): the GPU it pins, read as such a term.
    #[serde(default)]
    pub node_label: Vec<String>,
    /// Words a chart's template adds to the argv from values, under a condition.
    #[serde(default)]
    pub render: Vec<Render>,
    /// A pod spec whose node selector or affinity names the GPU type.
    #[serde(default)]
    pub pod: Vec<String>,
    /// A Kubernetes `resources` block (`limits`/`requests`): GPUs per replica from its GPU
    /// resource, the device from a MIG slice.
    #[serde(default)]
    pub resources: Vec<String>,
    /// The role as the file writes it (`roles[].name: prefill`): first that exists.
    #[serde(default)]
    pub role_name: Vec<String>,
    /// The role named by a value in the file (`lmcacheConfig.kvRole: kv_producer` → prefill).
    #[serde(default)]
    pub role_from: Option<RoleFrom>,
    /// Container image: a path to `repo:tag`, or `repository` + `tag` paths joined.
    #[serde(default)]
    pub image: Vec<String>,
    #[serde(default)]
    pub image_tag: Vec<String>,
    /// The launch's name in `object.name`.
    #[serde(default)]
    pub name: Vec<String>,
}

/// An object of the same input, found by its kind and the name a path from the site gives.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub kind: String,
    pub name: String,
    #[serde(rename = "as")]
    pub key: String,
    /// The keys, in order, of a string in the object that holds YAML (a ConfigMap's
    /// `data` / `inference_config.yaml`): that document is linked instead, with its places in the
    /// input.
    #[serde(default)]
    pub text: Vec<String>,
    /// When the site names an object that is not in the input, the launch is not read (INP006):
    /// what the object sets is not known, and the platform's defaults would be a guess.
    #[serde(default)]
    pub required: bool,
}

/// Values at a path (from the site) that say the site runs no engine, and what INP007 says.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NotEngine {
    pub path: String,
    pub values: Vec<String>,
    /// What it is (`Dynamo's frontend`) and why it holds no KV pool.
    pub what: String,
    pub reason: String,
}

/// Words a chart's template renders (`--kv-transfer-config` and its JSON), each `${path}` in them
/// replaced by the value at that path from the site, and `${path:-default}` by `default` where the
/// path is missing (a template's `{{ .Values.x | default 16 }}`). Left out when a `when` path is
/// missing or false as Go templates take it, or a `${path}` without a default is missing.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Render {
    #[serde(default)]
    pub when: Vec<String>,
    pub words: Vec<String>,
    /// The template writes these words before the `argv` values (`--tp-size {{ .tpSize }}` then
    /// `extraArgs`): a flag given in both is the argv's, as argparse keeps the last.
    #[serde(default)]
    pub before_argv: bool,
}

impl Render {
    /// The paths of the `${path}` placeholders in `word`.
    pub fn placeholders(word: &str) -> impl Iterator<Item = &str> {
        Self::references(word).map(|(_, path, _)| path)
    }

    /// Each `${...}` placeholder in `word`: what its braces hold, its path and its default.
    pub fn references(word: &str) -> impl Iterator<Item = (&str, &str, Option<&str>)> {
        word.split("${").skip(1).filter_map(|rest| {
            let (inner, _) = rest.split_once('}')?;
            let (path, default) = match inner.split_once(":-") {
                Some((p, d)) => (p, Some(d)),
                None => (inner, None),
            };
            Some((inner, path, default))
        })
    }
}

impl Site {
    /// Whether the site's launches are in Kubernetes pod templates, read by the Kubernetes reader.
    pub fn reads_pods(&self) -> bool {
        !self.pod_template.is_empty()
            || !self.lws_template.is_empty()
            || !self.container.is_empty()
            || !self.platform_command.is_empty()
            || self.base.is_some()
    }

    /// Whether the site's launches are commands (a pod's, a script's), which name their engine.
    pub fn reads_commands(&self) -> bool {
        self.reads_pods()
            || !self.command.is_empty()
            || !self.entrypoint.is_empty()
            || !self.script.is_empty()
    }
}

fn default_keys() -> Keys {
    Keys::Kwargs
}

/// What `kvlint platforms` and the book say about a platform.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Docs {
    /// What the platform is, in one sentence.
    pub what: String,
    /// Where its engine settings are written.
    pub settings: String,
    /// The platform's own documentation or source.
    pub source: String,
    /// Public example files this data was checked against.
    #[serde(default)]
    pub examples: Vec<String>,
}

/// A platform file that does not hold the schema.
#[derive(Debug, thiserror::Error)]
#[error("platform {name}: {reason}")]
pub struct PlatformError {
    pub name: String,
    pub reason: String,
}

/// Reads one platform file's text.
pub fn parse(name: &str, text: &str) -> Result<Platform, PlatformError> {
    let err = |reason: String| PlatformError {
        name: name.to_string(),
        reason,
    };
    let p: Platform = toml::from_str(text).map_err(|e| err(e.to_string()))?;
    check(&p).map_err(err)?;
    Ok(p)
}

/// The platforms compiled in, by name. A broken file fails the build's tests
/// (`tests/platforms.rs`), never a run: it is left out here.
pub fn builtin() -> &'static [Platform] {
    static ALL: OnceLock<Vec<Platform>> = OnceLock::new();
    ALL.get_or_init(|| {
        PLATFORM_FILES
            .iter()
            .filter_map(|(file, text)| parse(file.trim_end_matches(".toml"), text).ok())
            .collect()
    })
}

/// Every compiled-in platform file that does not parse, with why.
pub fn builtin_errors() -> Vec<PlatformError> {
    PLATFORM_FILES
        .iter()
        .filter_map(|(file, text)| parse(file.trim_end_matches(".toml"), text).err())
        .collect()
}

/// The compiled-in platforms and the site's own (`kvlint.toml`), site first so that a site can
/// replace a compiled-in platform of the same name.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    site: Vec<Platform>,
}

impl Registry {
    pub fn with_site(site: Vec<Platform>) -> Registry {
        Registry { site }
    }

    pub fn all(&self) -> impl Iterator<Item = &Platform> + '_ {
        let site = &self.site;
        site.iter().chain(
            builtin()
                .iter()
                .filter(move |b| !site.iter().any(|s| s.name == b.name)),
        )
    }

    /// Platforms that may read a Kubernetes object of `kind`.
    pub fn for_kind<'r>(&'r self, kind: &'r str) -> impl Iterator<Item = &'r Platform> + 'r {
        self.all()
            .filter(move |p| p.recognize.kinds.iter().any(|k| k == kind))
    }

    /// Platforms whose document is held in a string of a Kubernetes object of `kind`.
    pub fn embedded_in<'r>(&'r self, kind: &'r str) -> impl Iterator<Item = &'r Platform> + 'r {
        self.all().filter(move |p| {
            p.recognize
                .embedded_in
                .as_ref()
                .is_some_and(|e| e.kinds.iter().any(|k| k == kind))
        })
    }

    /// Whether any platform reads Kubernetes objects of `kind`, directly or embedded.
    pub fn knows_kind(&self, kind: &str) -> bool {
        self.for_kind(kind).next().is_some() || self.embedded_in(kind).next().is_some()
    }

    /// Platforms that read documents that are not Kubernetes objects.
    pub fn plain(&self) -> impl Iterator<Item = &Platform> + '_ {
        self.all().filter(|p| {
            let r = &p.recognize;
            let tested = !(r.paths.is_empty() && r.files.is_empty());
            r.kinds.is_empty() && r.embedded_in.is_none() && r.images.is_empty() && tested
        })
    }

    /// Platforms that read a container by its image.
    pub fn containers(&self) -> impl Iterator<Item = &Platform> + '_ {
        self.all().filter(|p| !p.recognize.images.is_empty())
    }

    pub fn get(&self, name: &str) -> Option<&Platform> {
        self.all().find(|p| p.name == name)
    }

    /// Platforms whose launcher script a shell may run.
    pub fn launchers(&self) -> impl Iterator<Item = (&Platform, &Launcher)> + '_ {
        self.all().filter_map(|p| Some((p, p.launcher.as_ref()?)))
    }

    /// The platform a built-in reader reads, for the title its launches carry.
    pub fn by_reader(&self, reader: Reader) -> Option<&Platform> {
        self.all().find(|p| p.reader == Some(reader))
    }
}

/// The registry the readers use: the compiled-in platforms plus those `kvlint.toml` adds
/// ([`set_site`]).
pub fn registry() -> &'static Registry {
    SITE.get_or_init(Registry::default)
}

static SITE: OnceLock<Registry> = OnceLock::new();

/// Adds a site's platforms (from `kvlint.toml`) for the rest of the run; `false` when the
/// registry was already in use (it is set once, before any input is read).
pub fn set_site(site: Vec<Platform>) -> bool {
    SITE.set(Registry::with_site(site)).is_ok()
}
