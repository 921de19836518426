//! Serving CRDs: where each one keeps its pod templates, roles and group sizes
//! (`../shared/reference/k8s-webhook.md` §1.1 maps every shape). Those a platform file describes
//! (`pod_template`, `lws_template` sites) are read by [`Cx::pod_sites`].

use super::placement::{count_of, items};
use super::{arg_of, entries, named_or_first, scalar, Cx, Group};
use crate::extract::by_platform;
use crate::extract::shell::{self, MappedWord};
use crate::launch::{Engine, Launch};
use crate::platform::path::{first_of, Path};
use crate::platform::Platform;
use crate::yaml::Node;

fn text(node: Option<&Node>, key: &str) -> Option<String> {
    node?.get(key)?.scalar_text()
}

impl Cx<'_> {
    /// Custom resources, recognised by kind and, where two projects share a kind, by shape.
    pub(super) fn crd(&mut self, spec: Option<&Node>) {
        let Some(spec) = spec else { return };
        let g = Group::default();
        match self.kind.as_str() {
            "LeaderWorkerSet" => self.lws(spec.get("leaderWorkerTemplate"), g),
            "DynamoGraphDeployment" => self.dynamo(spec),
            "LLMInferenceService" => self.llm_inference_service(spec),
            "ClusterServingRuntime" | "ServingRuntime" | "InferenceService"
                if spec.get("engineConfig").is_some() || spec.get("engine").is_some() =>
            {
                self.ome(spec)
            }
            _ => {}
        }
    }

    /// LeaderWorkerSet template: a group of `size` pods, the leader from `leaderTemplate` (else
    /// from `workerTemplate`, as LWS does) and `size - 1` workers. Both templates are read.
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
            for node in at.all(doc, doc) {
                let g = Group {
                    role: site
                        .role
                        .clone()
                        .or_else(|| by_platform::role_name(site, doc, node)),
                    pods: first_of(&site.pods, doc, node).and_then(count_of),
                    ..Group::default()
                };
                match first_of(&site.lws_template, doc, node) {
                    Some(lwt) => self.lws(Some(lwt), g),
                    None => self.pod_template(first_of(&site.pod_template, doc, node), &g),
                }
            }
        }
    }

    /// NVIDIA Dynamo: v1alpha1 `services.<name>` (role in `subComponentType`, GPUs in Dynamo's own
    /// `resources.limits.gpu`, pods in `multinode.nodeCount`, argv in `extraPodSpec.mainContainer`);
    /// v1beta1 `components[]` (role in `type`, a pod template with a `main` container).
    fn dynamo(&mut self, spec: &Node) {
        for (name, svc) in entries(spec.get("services")) {
            if self.dynamo_frontend(svc.get("componentType")) {
                self.skipped.push(svc.loc.range());
                continue;
            }
            let g = Group {
                service: name.scalar_text(),
                ..dynamo_group(svc, "subComponentType")
            };
            let pod = svc.get("extraPodSpec");
            if let Some(main) = pod.and_then(|p| p.get("mainContainer")) {
                self.container(main, pod, &g);
            }
        }
        for comp in items(spec.get("components")) {
            if self.dynamo_frontend(comp.get("type")) {
                self.skipped.push(comp.loc.range());
                continue;
            }
            let g = dynamo_group(comp, "type");
            let pod = comp.get("podTemplate").and_then(|t| t.get("spec"));
            if let Some(main) = named_or_first(pod.and_then(|p| p.get("containers")), "main") {
                self.container(main, pod, &g);
            }
        }
    }

    /// A Dynamo frontend (`componentType`/`type: frontend`) routes requests and holds no KV pool:
    /// INP007, and no launch.
    fn dynamo_frontend(&mut self, kind: Option<&Node>) -> bool {
        let Some(kind) = kind.filter(|k| k.as_str() == Some("frontend")) else {
            return false;
        };
        self.findings.push(
            crate::finding::Finding::new("INP007", Some(kind.loc))
                .var("what", "Dynamo's frontend")
                .var(
                    "reason",
                    "it routes requests to engines and holds no KV pool",
                )
                .var(
                    "help",
                    "the engines it routes to are checked where they are launched",
                ),
        );
        true
    }

    /// OME runtimes and InferenceServices: `engineConfig`/`engine` (prefill when a decoder exists)
    /// and `decoderConfig`/`decoder` (decode), each a `runner` container or a `leader` + `worker`
    /// group of `worker.size` + 1 pods; the config itself carries the pod-level fields.
    fn ome(&mut self, spec: &Node) {
        let decoder = spec.get("decoderConfig").or_else(|| spec.get("decoder"));
        let engine = spec.get("engineConfig").or_else(|| spec.get("engine"));
        let engine_role = decoder.map(|_| "prefill".to_string());
        for (cfg, role) in [(engine, engine_role), (decoder, Some("decode".to_string()))] {
            let Some(cfg) = cfg else { continue };
            let worker_pods = cfg
                .get("worker")
                .and_then(|w| w.get("size"))
                .and_then(count_of);
            let g = Group {
                role,
                pods: worker_pods.map(|n| n + 1),
                ..Group::default()
            };
            let (pod, runner) = match cfg.get("leader") {
                Some(leader) => (leader, leader.get("runner")),
                None => (cfg, cfg.get("runner")),
            };
            if let Some(runner) = runner {
                self.container(runner, Some(pod), &g);
            }
        }
    }

    /// KServe LLMInferenceService: the controller's template runs
    /// `vllm serve /mnt/models ... {{ --tensor-parallel-size .Spec.Parallelism.Tensor }} ... ${VLLM_ADDITIONAL_ARGS}`
    /// (kserve config/llmisvcconfig/config-llm-template.yaml), so the launch is rebuilt from
    /// `spec.model.uri`, `parallelism` and that env var. Decode is `spec.template` when a
    /// `spec.prefill` exists, whose own template is the prefill half.
    fn llm_inference_service(&mut self, spec: &Node) {
        let prefill = spec.get("prefill");
        let main_role = prefill.map(|_| "decode".to_string());
        for (part, role) in [
            (Some(spec), main_role),
            (prefill, Some("prefill".to_string())),
        ] {
            let Some(part) = part else { continue };
            let pod = part.get("template");
            let Some(main) = named_or_first(pod.and_then(|p| p.get("containers")), "main") else {
                continue;
            };
            self.read.insert(main.loc.start);
            let g = Group {
                role,
                ..Group::default()
            };
            if let Some(launch) = self.llmisvc_launch(spec, part, main) {
                let launch = self.finish(launch, main, pod, &g);
                self.out.push(launch);
            }
        }
    }

    fn llmisvc_launch(&self, spec: &Node, part: &Node, main: &Node) -> Option<Launch> {
        let command = main.get("name").map_or(main.loc, |n| n.loc);
        let mut args = Vec::new();
        if let Some(uri) = spec.get("model").and_then(|m| m.get("uri")) {
            let w = scalar::word(self.src, uri)?;
            let skip = w.chars.as_str().find("://").map_or(0, |i| i + 3);
            args.push(arg_of(&MappedWord {
                chars: w.chars.tail(skip),
                ..w
            }));
        }
        let parallelism = part.get("parallelism").or_else(|| spec.get("parallelism"));
        for (key, flag) in [
            ("tensor", "--tensor-parallel-size"),
            ("pipeline", "--pipeline-parallel-size"),
            ("data", "--data-parallel-size"),
        ] {
            if let Some((k, v)) = entries(parallelism)
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
            {
                args.push(crate::launch::Arg::new(flag, k.loc));
                args.extend(scalar::word(self.src, v).map(|w| arg_of(&w)));
            }
        }
        let env = self.env(main);
        if let Some((_, extra)) = env.iter().find(|(n, _)| n == "VLLM_ADDITIONAL_ARGS") {
            args.extend(shell::split_words(self.file, extra).iter().map(arg_of));
        }
        args.extend(self.words(main.get("args"), &env).iter().map(arg_of));
        Some(Launch {
            env: env.iter().map(|(n, w)| (n.clone(), arg_of(w))).collect(),
            ..Launch::new(Engine::Vllm, command, args)
        })
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

fn dynamo_group(svc: &Node, role_key: &str) -> Group {
    let resources = svc.get("resources");
    Group {
        role: text(Some(svc), role_key),
        pods: svc
            .get("multinode")
            .and_then(|m| m.get("nodeCount"))
            .and_then(count_of),
        gpus: super::placement::gpus(resources).0,
        service: None,
    }
}
