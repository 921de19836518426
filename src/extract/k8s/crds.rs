//! The pod-level sites a platform file names in a custom resource (`pod_template`, `lws_template`,
//! `container`, `platform_command`, `not_engine`; `platforms/*.toml`), read by [`Cx::pod_sites`],
//! and the LeaderWorkerSet template reader they share. No custom resource is known here by its
//! kind (`../shared/reference/k8s-webhook.md` §1.1 maps the shapes the platform files describe).

use super::placement::{self, count_of};
use super::{Cx, Group};
use crate::extract::by_platform::{self, product};
use crate::launch::Launch;
use crate::platform::path::{first_of, Path};
use crate::platform::{Platform, Site};
use crate::yaml::Node;

impl Cx<'_> {
    /// LeaderWorkerSet template: a group of `size` pods, the leader from `leaderTemplate` (else
    /// from `workerTemplate`, as LWS does) and `size - 1` workers. Both templates are read, the
    /// workers' only where there are any.
    /// When the leader runs an engine, the group is one engine over all `size` pods, and a worker
    /// launch that differs from the leader's only in its rank and address flags is a rank of it,
    /// not a launch of its own. When the leader runs something else (a router, a proxy), the
    /// workers' engine spans the `size - 1` worker pods.
    pub(super) fn lws(&mut self, lwt: Option<&Node>, g: Group) {
        let Some(lwt) = lwt else { return };
        let size = lwt.get("size").and_then(count_of).unwrap_or(1);
        let whole = Group {
            pods: Some(size),
            ..g.clone()
        };
        let Some(leader) = lwt.get("leaderTemplate") else {
            return self.pod_template(lwt.get("workerTemplate"), &whole);
        };
        let first = self.out.len();
        self.pod_template(Some(leader), &whole);
        let leaders = self.out.len() - first;
        // A group of one pod (`size: 1`, LWS's default) is its leader: no worker pod runs.
        let alone = lwt.get("size").map_or(Some(1), count_of) == Some(1);
        if alone {
            let spec = lwt.get("workerTemplate").and_then(|t| t.get("spec"));
            for key in ["containers", "initContainers"] {
                let containers = super::items(spec.and_then(|s| s.get(key)));
                self.read.extend(containers.map(|c| c.loc.start));
            }
            return;
        }
        let workers = Group {
            pods: Some(if leaders > 0 {
                size
            } else {
                size.saturating_sub(1).max(1)
            }),
            ..g
        };
        self.pod_template(lwt.get("workerTemplate"), &workers);
        let (led, rest) = self.out[first..].split_at(leaders);
        let ranks: Vec<bool> = rest
            .iter()
            .map(|w| led.iter().any(|l| same_engine(l, w)))
            .collect();
        let mut rank = ranks.into_iter();
        let mut i = 0;
        self.out.retain(|_| {
            i += 1;
            i <= first + leaders || !rank.next().unwrap_or(false)
        });
    }

    /// The pod templates a platform file's sites name (`pod_template`, `lws_template`:
    /// RoleBasedGroup, StormService, DisaggregatedSet roles), each read as a workload's, with the
    /// site's role and pods.
    pub(super) fn pod_sites(&mut self, p: &Platform, doc: &Node) {
        for site in p.launches.iter().filter(|s| s.reads_pods()) {
            let Ok(at) = Path::parse(&site.at) else {
                continue;
            };
            for (key, node) in at.all_keyed(doc, doc) {
                if self.site_not_engine(site, doc, node) {
                    continue;
                }
                self.platform_command(site, doc, node);
                let g = Group {
                    role: by_platform::role(site, doc, node),
                    pods: site.pods.iter().find_map(|e| product(e, doc, node)),
                    gpus: placement::gpus(first_of(&site.resources, doc, node)).0,
                    service: key.and_then(Node::scalar_text),
                };
                if site.base.is_some() {
                    self.base_site(p, site, doc, node, &g);
                } else if let Some(c) = first_of(&site.container, doc, node) {
                    let first = self.out.len();
                    self.container(c, first_of(&site.pod, doc, node), &g);
                    mounted(&mut self.out[first..], site, doc, node);
                } else if let Some(lwt) = first_of(&site.lws_template, doc, node) {
                    self.lws(Some(lwt), g);
                } else {
                    self.pod_template(first_of(&site.pod_template, doc, node), &g);
                }
            }
        }
    }

    /// The first container of each of the site's `platform_command` pod specs, when it gives no
    /// `command`, runs the platform's command (KubeRay: `ray start`, ray-project/kuberay
    /// ray-operator/controllers/ray/common/pod.go `BuildPod`), whatever its image's entrypoint: no
    /// launch there.
    fn platform_command(&mut self, site: &Site, doc: &Node, node: &Node) {
        let specs = site
            .platform_command
            .iter()
            .filter_map(|p| Path::parse(p).ok());
        for spec in specs.flat_map(|p| p.all(doc, node)) {
            if let Some(first) = placement::items(spec.get("containers")).next() {
                if first.get("command").is_none() {
                    self.read.insert(first.loc.start);
                }
            }
        }
    }

    /// A site whose value says it runs no engine (a frontend, a router): INP007 there, and it is
    /// not read, nor walked for pod templates.
    fn site_not_engine(&mut self, site: &Site, doc: &Node, node: &Node) -> bool {
        let Some(not) = &site.not_engine else {
            return false;
        };
        let at = first_of(std::slice::from_ref(&not.path), doc, node);
        let Some(at) = at.filter(|v| v.scalar_text().is_some_and(|t| not.values.contains(&t)))
        else {
            return false;
        };
        self.skipped.push(node.loc.range());
        self.findings.push(
            crate::finding::Finding::new("INP007", Some(at.loc))
                .var("what", &not.what)
                .var("reason", &not.reason)
                .var(
                    "help",
                    "the engines it routes to are checked where they are launched",
                ),
        );
        true
    }
}

/// Flags in which the ranks of one multi-node engine differ: their rank, the leader's address,
/// and the serving front end only rank 0 runs (sglang `server_args.py`: `--node-rank`,
/// `--dist-init-addr`; vllm `arg_utils.py`: `--headless`, `--data-parallel-start-rank`,
/// `--data-parallel-address`, `--data-parallel-rpc-port`), each with its value unless it takes none.
const RANK_FLAGS: &[(&str, bool)] = &[
    ("--node-rank", true),
    ("--dist-init-addr", true),
    ("--headless", false),
    ("--data-parallel-start-rank", true),
    ("-dpr", true),
    ("--data-parallel-rank", true),
    ("--data-parallel-address", true),
    ("-dpa", true),
    ("--data-parallel-rpc-port", true),
    ("-dpp", true),
    ("--host", true),
    ("--port", true),
];

/// Whether a worker's launch is a rank of the leader's: the same engine, with the same
/// arguments once the rank flags are set aside.
fn same_engine(leader: &Launch, worker: &Launch) -> bool {
    leader.engine == worker.engine && settings(leader) == settings(worker)
}

fn settings(l: &Launch) -> Vec<&str> {
    let mut out = Vec::new();
    let mut args = l.args.iter().map(|a| a.text.as_str());
    while let Some(a) = args.next() {
        let name = a.split_once('=').map_or(a, |(n, _)| n);
        match RANK_FLAGS.iter().find(|(f, _)| *f == name) {
            Some((_, true)) if !a.contains('=') => {
                args.next();
            }
            Some(_) => {}
            None => out.push(a),
        }
    }
    out
}

/// A `container` site's `mounts`: each argument that is a mount path read as what the document
/// says the controller puts there (`by_platform::base::mount`).
fn mounted(launches: &mut [Launch], site: &Site, doc: &Node, node: &Node) {
    for (path, derivations) in &site.mounts {
        let Some((value, at)) = by_platform::base::derive(derivations, doc, node) else {
            continue;
        };
        for l in launches.iter_mut() {
            by_platform::base::mount(l, path, (&value, at));
        }
    }
}
