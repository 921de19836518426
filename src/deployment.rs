//! Launches grouped into deployments: the halves of a prefill/decode pair, replicas, and the
//! launches of one script or compose file. Rules that compare launches (`PD*`, `GPU001`) run on
//! these groups.
//!
//! Launches of one object share `Launch.group` (DisaggregatedSet, Dynamo, OME, LLMInferenceService,
//! RoleBasedGroup, StormService, production-stack values). Launches without one are grouped by
//! file (a shell script, a compose file). Then a deployment that is only a prefill half is joined
//! with one that is only a decode half when their names agree once the role words are removed
//! (`ds-prefill-main` + `ds-decode-main`), or else when they serve the same model and no other
//! half could be the partner.

use crate::capacity::Role;
use crate::engine::{EngineArgs, SettingValue};
use crate::launch::{Engine, Launch};
use crate::outcome::LaunchOutcome;
use crate::source::Sources;
use std::borrow::Cow;

/// One launch of a deployment and the half it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// Index into the run's launch list.
    pub launch: usize,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    /// The group id (`Kind/namespace/name`, `file:NAME`), or the ids of joined halves with ` + `.
    pub id: String,
    pub members: Vec<Member>,
}

impl Deployment {
    pub fn with_role(&self, role: Role) -> impl Iterator<Item = usize> + '_ {
        self.members
            .iter()
            .filter(move |m| m.role == role)
            .map(|m| m.launch)
    }

    /// Whether the deployment has both a prefill and a decode half.
    pub fn is_pd_pair(&self) -> bool {
        self.with_role(Role::Prefill).next().is_some()
            && self.with_role(Role::Decode).next().is_some()
    }

    /// The prefill × decode pairs whose settings must agree. With several of each, only halves
    /// serving the same model are paired (two models disaggregated side by side).
    pub fn pd_pairs(&self, launches: &[LaunchOutcome]) -> Vec<(usize, usize)> {
        let prefill: Vec<usize> = self.with_role(Role::Prefill).collect();
        let decode: Vec<usize> = self.with_role(Role::Decode).collect();
        let many = prefill.len() > 1 && decode.len() > 1;
        let model = |i: usize| launches.get(i).and_then(|l| model_text(&l.args));
        let mut out = Vec::new();
        for &p in &prefill {
            for &d in &decode {
                if !many || model(p) == model(d) {
                    out.push((p, d));
                }
            }
        }
        out
    }

    /// The members' roles that are not unified, when they are all one half.
    fn half(&self) -> Option<Role> {
        let first = self.members.first()?.role;
        let one = self.members.iter().all(|m| m.role == first);
        (one && first != Role::Unified).then_some(first)
    }
}

/// The role the engine settings give a launch: SGLang and TensorRT-LLM (Dynamo's `dynamo.trtllm`)
/// `--disaggregation-mode`, vLLM `--kv-transfer-config` `kv_role` (`kv_producer` prefills,
/// `kv_consumer` decodes; `kv_both` says nothing about which half).
pub fn engine_role(args: &EngineArgs) -> Option<Role> {
    match args.engine {
        Engine::Sglang | Engine::Trtllm => match args.text("disaggregation_mode")? {
            "prefill" => Some(Role::Prefill),
            "decode" => Some(Role::Decode),
            _ => None,
        },
        _ => match kv_transfer(args)?.get("kv_role")?.as_str()? {
            "kv_producer" => Some(Role::Prefill),
            "kv_consumer" => Some(Role::Decode),
            _ => None,
        },
    }
}

/// The launch's role: the engine settings, else the role its object gives it.
pub fn role_of(launch: &Launch, args: &EngineArgs) -> Role {
    engine_role(args).unwrap_or_else(|| {
        let hint = launch
            .role_hint
            .as_deref()
            .unwrap_or("")
            .to_ascii_lowercase();
        if hint.contains("prefill") {
            Role::Prefill
        } else if hint.contains("decode") {
            Role::Decode
        } else {
            Role::Unified
        }
    })
}

/// vLLM `--kv-transfer-config` as JSON.
pub fn kv_transfer(args: &EngineArgs) -> Option<serde_json::Value> {
    match &args.get("kv_transfer_config")?.value {
        SettingValue::Text(t) => serde_json::from_str(t).ok(),
        _ => None,
    }
}

/// The engine option that names the model.
pub fn model_dest(engine: Engine) -> &'static str {
    match engine {
        Engine::Sglang => "model_path",
        _ => "model",
    }
}

/// URI schemes of object stores: a model there is downloaded by the serving side, and kvlint
/// never reads it (INP002, with the model listed as written).
pub const OBJECT_STORES: &[&str] = &["s3://", "gs://", "gcs://", "az://", "abfs://", "abfss://"];

/// The model as written, without a trailing `/`.
pub fn model_text(args: &EngineArgs) -> Option<&str> {
    args.text(model_dest(args.engine))
        .map(|m| m.trim_end_matches('/'))
}

/// Groups a run's launches into deployments, in the order their first launch appears.
pub fn group(launches: &[LaunchOutcome], sources: &Sources) -> Vec<Deployment> {
    let mut deps: Vec<Deployment> = Vec::new();
    // Each group's place in `deps` by id: a search of `deps` per launch made a render of
    // thousands of objects quadratic.
    // Keys borrow the launches' group ids: one copy per deployment, none per launch.
    let mut at: std::collections::HashMap<Cow<str>, usize> = std::collections::HashMap::new();
    for (i, lo) in launches.iter().enumerate() {
        let id = match &lo.launch.group {
            Some(g) => Cow::Borrowed(g.as_str()),
            None => Cow::Owned(format!("file:{}", sources.get(lo.file).name)),
        };
        let member = Member {
            launch: i,
            role: role_of(&lo.launch, &lo.args),
        };
        match at.get(&id) {
            Some(&k) => deps[k].members.push(member),
            None => {
                deps.push(Deployment {
                    id: id.to_string(),
                    members: vec![member],
                });
                at.insert(id, deps.len() - 1);
            }
        }
    }
    join_halves(deps, launches)
}

/// Joins lone prefill halves with lone decode halves of the same input set.
fn join_halves(mut deps: Vec<Deployment>, launches: &[LaunchOutcome]) -> Vec<Deployment> {
    let mut i = 0;
    while i < deps.len() {
        if deps[i].half() == Some(Role::Prefill) {
            if let Some(j) = partner(&deps, i, launches) {
                let decode = deps.remove(j);
                let d = &mut deps[if j < i { i - 1 } else { i }];
                d.id = format!("{} + {}", d.id, decode.id);
                d.members.extend(decode.members);
                d.members.sort_by_key(|m| m.launch);
                continue;
            }
        }
        i += 1;
    }
    deps.sort_by_key(|d| d.members.first().map_or(usize::MAX, |m| m.launch));
    deps
}

/// The decode half for the prefill half `deps[p]`: the one whose name matches, else the only
/// one serving the same model when `deps[p]` is also the only prefill half serving it.
fn partner(deps: &[Deployment], p: usize, launches: &[LaunchOutcome]) -> Option<usize> {
    let decodes: Vec<usize> = (0..deps.len())
        .filter(|&j| deps[j].half() == Some(Role::Decode))
        .collect();
    let stem_p = stem(&deps[p].id);
    if let Some(&j) = decodes.iter().find(|&&j| stem(&deps[j].id) == stem_p) {
        return Some(j);
    }
    let model = |d: &Deployment| -> Option<String> {
        let l = launches.get(d.members.first()?.launch)?;
        model_text(&l.args).map(str::to_string)
    };
    let m = model(&deps[p])?;
    let ns = namespace(&deps[p].id);
    let fits = |d: &Deployment| model(d).as_ref() == Some(&m) && namespace(&d.id) == ns;
    let same: Vec<usize> = decodes.into_iter().filter(|&j| fits(&deps[j])).collect();
    let prefills = (0..deps.len())
        .filter(|&k| deps[k].half() == Some(Role::Prefill) && fits(&deps[k]))
        .count();
    match (same.as_slice(), prefills) {
        ([j], 1) => Some(*j),
        _ => None,
    }
}

/// A group id with the role words removed, so the two halves of one deployment compare equal.
fn stem(id: &str) -> String {
    let name = id.rsplit('/').next().unwrap_or(id).to_ascii_lowercase();
    let bare = name.replace("prefill", "").replace("decode", "");
    format!("{}/{bare}", namespace(id))
}

/// The namespace of a `Kind/namespace/name` id (for `file:` ids, the directory).
fn namespace(id: &str) -> &str {
    let parts: Vec<&str> = id.split('/').collect();
    match parts.len() {
        n if n > 2 => parts[n - 2],
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn halves_named_after_their_role_share_a_stem() {
        assert_eq!(
            stem("LeaderWorkerSet/deepseekr10528-prefill-main"),
            stem("LeaderWorkerSet/deepseekr10528-decode-main")
        );
        assert_eq!(
            stem("Deployment/llm/qwen-prefill"),
            stem("LeaderWorkerSet/llm/qwen-decode")
        );
        assert_ne!(
            stem("Deployment/a/qwen-prefill"),
            stem("Deployment/b/qwen-decode")
        );
        assert_eq!(stem("file:run-prefill.sh"), stem("file:run-decode.sh"));
    }
}
