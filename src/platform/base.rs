//! A platform site's workload template held as text in another object of the input (llm-d's
//! BaseConfig ConfigMap): the schema `extract::by_platform::base` reads.

use super::EngineName;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A workload template held as text in another object, rendered and merged as the platform's
/// controller does it: the text's Go-template actions filled from `vars` and `lookups` (an
/// action neither gives is a value kvlint cannot see, INP004 where the pool needs it; control
/// flow is not rendered), then the site's containers merged over the template's by name (a
/// `command` replaces the template's, `args` go before or after its own as `args` says, `image`
/// replaces, `env` and `resources` merge by name), `node_affinity` added as a required node
/// affinity term. When the object is not in the input, the launch holds only what the site says
/// (its args, `model`, `tensor`, the engine that `engines` shows) and INP006 says where the rest is.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    /// The kind of the object that holds the template (`ConfigMap`).
    pub kind: String,
    /// Path to its name (`/spec.baseConfigMapRef.name`).
    pub name: String,
    /// The keys, in order, of the string that holds the template (`data`, `decodeDeployment`).
    pub text: Vec<String>,
    /// Path from the site to the section the controller merges over the template (`decode`); a
    /// site whose section is missing still runs the template alone.
    pub section: String,
    /// Path in the template to the pod template (`spec.template`).
    pub pod_template: String,
    /// Path from the section to the containers merged over the template's (`containers`).
    pub containers: String,
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
    /// The command that gives kvlint the rendered objects, for when the template's holder is not
    /// in the input.
    pub help: String,
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
/// value there, with `strip` required at its start and removed, then its first `skip`
/// `/`-separated segments dropped, then `before` put in front; or `value` in place of all that.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Derive {
    pub path: String,
    #[serde(default)]
    pub strip: Option<String>,
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
        [
            self.name.as_str(),
            &self.section,
            &self.pod_template,
            &self.containers,
        ]
        .into_iter()
        .chain(self.node_affinity.as_deref())
        .chain(self.tensor.as_deref())
        .chain(vars)
        .chain(lookups)
        .collect()
    }
}
