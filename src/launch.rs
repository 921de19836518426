//! One engine launch found in an input: which engine, its argv tokens with spans, and where it runs.

use crate::source::Loc;
use serde::Serialize;

/// A serving engine kvlint understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Sglang,
    Vllm,
    Trtllm,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sglang => "sglang",
            Engine::Vllm => "vllm",
            Engine::Trtllm => "trtllm",
        }
    }

    /// The engine's name as its project writes it: `SGLang`, `vLLM`, `TensorRT-LLM`.
    pub fn title(self) -> &'static str {
        match self {
            Engine::Sglang => "SGLang",
            Engine::Vllm => "vLLM",
            Engine::Trtllm => "TensorRT-LLM",
        }
    }
}

/// One argv token after shell unquoting. `unresolved` names the variables (`$VAR`, `${VAR}`,
/// `$(VAR)`) the token still contains because their value is not known.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub text: String,
    pub loc: Loc,
    pub unresolved: Vec<String>,
    /// Every variable in `unresolved` has a default the caller may override (`${CTX:-32768}`,
    /// `os.environ.get("CTX", 32768)`, an option's default): `text` is what runs when the caller
    /// sets none of them. The pool is planned with it, and INP004 still says the caller decides.
    pub defaulted: bool,
}

impl Arg {
    pub fn new(text: impl Into<String>, loc: Loc) -> Self {
        Arg {
            text: text.into(),
            loc,
            unresolved: Vec::new(),
            defaulted: false,
        }
    }
}

/// Kubernetes identity of the object a launch came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectRef {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub container: Option<String>,
}

/// What the deployment around the launch tells about its hardware. Every field is optional:
/// unknown stays unknown and is filled from `--gpu` or reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// GPU type as the input names it (node label, resource name), with where it was read.
    pub gpu: Option<(String, Loc)>,
    pub gpus_per_pod: Option<u32>,
    /// GPUs each of the pod's nodes has, when its instance type or a node label tells.
    pub gpus_per_node: Option<u32>,
    pub pods: Option<u32>,
    /// Container image, e.g. `lmsysorg/sglang:v0.5.20-cu129`.
    pub image: Option<(String, Loc)>,
}

/// An engine launch as found in an input file.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub engine: Engine,
    /// The command words that select the engine (`python3 -m sglang.launch_server`, `vllm serve`).
    pub command: Loc,
    /// Arguments after the command words; for `vllm serve MODEL` the model is the first one.
    pub args: Vec<Arg>,
    /// Environment known at the launch (`KEY=value` prefixes, container env).
    pub env: Vec<(String, Arg)>,
    pub object: Option<ObjectRef>,
    pub placement: Placement,
    /// The role the object gives the launch (`prefill`, `decode`): Dynamo `subComponentType`,
    /// DisaggregatedSet role names, LLMInferenceService `prefill`, OME decoder config.
    pub role_hint: Option<String>,
    /// Shared by the launches of one deployment object (`Kind/namespace/name`).
    pub group: Option<String>,
    /// The engine release the container image's tag names, with where the image is written.
    pub engine_version: Option<(String, Loc)>,
    /// Settings given as keyword arguments of the engine's args dataclass (an option map such as
    /// Ray Serve `engine_kwargs`): the engine parser checks each key against that release's fields
    /// (an unknown one is CFG001, never an abbreviation) and then reads its tokens.
    pub kwargs: Vec<Kwarg>,
    /// Files the launch names that its input itself provides (ConfigMap keys mounted into the
    /// container), or says it cannot; a path not listed is read beside the input.
    pub files: Vec<LaunchFile>,
}

/// One keyword argument: the field name as written, and the option tokens it stands for
/// (`--max-model-len 8192`), each with the span of its key or value.
#[derive(Debug, Clone, PartialEq)]
pub struct Kwarg {
    pub key: String,
    pub loc: Loc,
    pub tokens: Vec<Arg>,
    /// Also taken when it is a field of the engine's OpenAI server arguments (vLLM
    /// `FrontendArgs`): Ray Serve LLM splits `engine_kwargs` between the two.
    pub frontend: bool,
}

/// A file named in a launch's argv, as the input provides it.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchFile {
    /// The path as written in the argument.
    pub path: String,
    /// The file's display name and text (blanked outside the file's block, so spans point into
    /// the input), or why the input cannot provide the path.
    pub content: Result<(String, String), String>,
    /// The file's mapping, where the input holds it and its reader already read it (a platform's
    /// LLM-API options, which a Python call writes as keyword arguments that no YAML parser
    /// reads): the engine takes it in place of parsing `content`.
    pub mapping: Option<ReadMapping>,
}

/// An option mapping as the input's reader read it, with its places in the input.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadMapping {
    pub node: crate::yaml::Node,
    /// Its values that the input does not fix (an env read), each at the place of its value
    /// node, with what [`Arg::unresolved`] and [`Arg::defaulted`] would say of it as a token.
    pub unresolved: Vec<Arg>,
}

impl Launch {
    /// A launch with nothing known about where it runs.
    pub fn new(engine: Engine, command: Loc, args: Vec<Arg>) -> Self {
        Launch {
            engine,
            command,
            args,
            env: Vec::new(),
            object: None,
            placement: Placement::default(),
            role_hint: None,
            group: None,
            engine_version: None,
            kwargs: Vec::new(),
            files: Vec::new(),
        }
    }

    /// The span from the command words to the last argument.
    pub fn loc(&self) -> Loc {
        self.args
            .iter()
            .fold(self.command, |acc, a| acc.join(a.loc))
    }
}
