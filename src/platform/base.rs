//! A platform site's workload template held as text in another object of the input (llm-d's
//! BaseConfig ConfigMap): the schema `extract::by_platform::base` reads.

use super::EngineName;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A workload template held in another object of the input, rendered and merged as the
/// platform's controller does it: as text (llm-d's BaseConfig ConfigMap), its Go-template actions
/// filled from `vars` and `lookups` (an action neither gives is a value kvlint cannot see, INP004
/// where the pool needs it; control flow is not rendered), or as the object itself (a KServe
/// ServingRuntime), its strings' actions filled the same way; then the site's containers merged
/// over the template's by name, or its one container over the template's container `into` (a
/// `command` replaces the template's, `args` go before or after its own as `args` says, `image`
/// replaces, `env` and `resources` merge by name), its pod fields over the template's pod spec,
/// `node_affinity` added as a required node affinity term. When the object is not in the input,
/// the launch holds only what the site says (its args, `model`, `tensor`, the engine that
/// `engines` shows) and INP006 says where the rest is.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    /// The kinds of object that may hold the template, in the order the controller looks them up
    /// (`ConfigMap`; KServe's `ServingRuntime` of the namespace, then `ClusterServingRuntime`).
    pub kinds: Vec<String>,
    /// Path to its name (`/spec.baseConfigMapRef.name`); where the site names none, `select`
    /// picks it.
    pub name: String,
    #[serde(default)]
    pub select: Option<Select>,
    /// The keys, in order, of the string that holds the template (`data`, `decodeDeployment`).
    /// None: the object itself is the template, in YAML.
    #[serde(default)]
    pub text: Vec<String>,
    /// Path from the site to the section the controller merges over the template (`decode`; `""`
    /// the site itself); a site whose section is missing still runs the template alone.
    pub section: String,
    /// Path in the template to the pod template (`spec.template`; `""` the object, whose `spec`
    /// is the pod spec).
    pub pod_template: String,
    /// Path from the section to containers merged over the template's by name (`containers`).
    #[serde(default)]
    pub containers: Option<String>,
    /// One container of the section merged over one container of the template.
    #[serde(default)]
    pub container: Option<Overlay>,
    /// Path from the section to pod-spec fields merged over the template's pod spec as a
    /// strategic merge patch does (`nodeSelector` key by key, `affinity` field by field, lists
    /// replaced); its `containers` and the `container` overlay's key are not pod fields here.
    #[serde(default)]
    pub pod: Option<String>,
    /// Where the site's args go relative to the template's, one entry per controller release
    /// that orders them differently, the newest first: `prepend` or `append`. With more than one,
    /// an option both set to different values is a value kvlint cannot see.
    pub args: Vec<ArgsOrder>,
    /// Path from the section to `{labelKey, labelValues}` the controller turns into a required node
    /// affinity term (llm-d `acceleratorTypes`).
    #[serde(default)]
    pub node_affinity: Option<String>,
    /// Path from the section to a tensor-parallel size the site states, listed as
    /// `--tensor-parallel-size` only when the template is not in the input.
    #[serde(default)]
    pub tensor: Option<String>,
    /// Variables (of `vars`) whose value is the model, the first given one, for the launch listed
    /// when the template is not in the input (`HFModelName`, else `ModelName`).
    #[serde(default)]
    pub model: Vec<String>,
    /// Words in a container's name or image that show its engine, when the template is not in
    /// the input (`vllm`): without one, no launch is listed.
    #[serde(default)]
    pub engines: HashMap<String, EngineName>,
    /// Go-template variables (`{{ .HFModelName }}`): the first derivation that applies.
    #[serde(default)]
    pub vars: BTreeMap<String, Vec<Derive>>,
    /// Go-template functions that look a value up in a list (`{{ "app_port" | getPort }}`).
    #[serde(default)]
    pub lookups: BTreeMap<String, Lookup>,
    /// Paths in the pod where the controller puts what a variable names (KServe's storage
    /// initializer downloads `storageUri` to `/mnt/models`): an argument that is such a path
    /// (alone or as `--flag=PATH`) is read as the variable's value, when the document gives one.
    #[serde(default)]
    pub mounts: BTreeMap<String, String>,
    /// The command that gives kvlint the rendered objects, for when the template's holder is not
    /// in the input.
    pub help: String,
}

/// One container of the site merged over the template's container of a fixed name (KServe's
/// `model` over the runtime's `kserve-container`): a template without that container renders no
/// pod.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Overlay {
    /// Path from the section to the container (`model`).
    pub path: String,
    pub into: String,
    /// Path from the section to a tag that replaces the merged image's (KServe
    /// `model.runtimeVersion`), unless the image is pinned by digest.
    #[serde(default)]
    pub image_tag: Option<String>,
}

/// How the controller picks the template's object when the site names none, and what a named one
/// must support (KServe: a runtime whose `supportedModelFormats` holds the model's format).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Select {
    /// Path (from the site, or `/`) to the value the object must support, and to its version.
    pub value: String,
    #[serde(default)]
    pub version: Option<String>,
    /// Path in the object to the list of what it supports, and the keys of an item: its value,
    /// its version (an item without one supports any), whether it may be picked when the site
    /// names none, and its priority (the highest wins; a given one beats none).
    pub list: String,
    pub key: String,
    pub version_key: String,
    pub auto: String,
    pub priority: String,
    /// Path in the object that, true, takes it out (`spec.disabled`).
    #[serde(default)]
    pub disabled: Option<String>,
}

/// How a template's args and a site's are put together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgsOrder {
    /// The site's args first, then the template's.
    Prepend,
    /// The template's args first, then the site's.
    Append,
}

/// A template variable's value from a path (from the document, `/`-rooted, or the site): the
/// value there, with `strip` required at its start and removed, then what follows `until` dropped
/// (`org/name:revision`), then its first `skip` `/`-separated segments dropped, then `before` put
/// in front; or `value` in place of all that.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Derive {
    pub path: String,
    #[serde(default)]
    pub strip: Option<String>,
    #[serde(default)]
    pub until: Option<String>,
    #[serde(default)]
    pub skip: usize,
    #[serde(default)]
    pub before: String,
    #[serde(default)]
    pub value: Option<String>,
}

/// A template function of one string argument: the `value` of the item of the list at `list`
/// whose `key` is that argument.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Lookup {
    pub list: String,
    pub key: String,
    pub value: String,
}

impl Base {
    /// Every path the base names, for [`check`].
    pub(super) fn paths(&self) -> Vec<&str> {
        let vars = self.vars.values().flatten().map(|d| d.path.as_str());
        let lookups = self.lookups.values().map(|l| l.list.as_str());
        let select = self.select.iter().flat_map(|s| {
            [s.value.as_str(), &s.list]
                .into_iter()
                .chain(s.version.as_deref())
                .chain(s.disabled.as_deref())
        });
        let overlay = self
            .container
            .iter()
            .flat_map(|c| [c.path.as_str()].into_iter().chain(c.image_tag.as_deref()));
        [self.name.as_str(), &self.section, &self.pod_template]
            .into_iter()
            .chain(self.containers.as_deref())
            .chain(self.pod.as_deref())
            .chain(self.node_affinity.as_deref())
            .chain(self.tensor.as_deref())
            .chain(vars)
            .chain(lookups)
            .chain(select)
            .chain(overlay)
            .collect()
    }
}
