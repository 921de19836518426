//! Slurm batch scripts: the `#SBATCH` directives that fix the job's allocation, the `SLURM_*`
//! variables Slurm sets from it, and the GPUs the script's launches get.
//!
//! sbatch reads `#SBATCH` lines from the top of the script until the first line that is neither a
//! comment nor blank; text after a `#` on a directive line is a comment (Slurm `sbatch(1)`, "the
//! batch script may contain options preceded with #SBATCH before any executable commands").
//! Options given on sbatch's own command line override these; kvlint reads the file as written.

use super::expand::{Field, Value};
use super::walk::Walker;
use crate::gpu::catalog;
use crate::launch::Launch;

/// What the directives fix, each value with the byte range it is written at.
#[derive(Debug, Default)]
pub struct Job {
    nodes: Option<(u32, (usize, usize))>,
    gpus_per_node: Option<(u32, (usize, usize))>,
    /// `--gpus` (the whole job's GPUs).
    gpus: Option<(u32, (usize, usize))>,
    ntasks_per_node: Option<(u32, (usize, usize))>,
    ntasks: Option<(u32, (usize, usize))>,
    /// A GPU type the catalog knows, from `--gres=gpu:TYPE:N`, `--gpus[-per-node]=TYPE:N` or
    /// `--constraint=TYPE`.
    gpu: Option<(String, (usize, usize))>,
    partition: Option<(String, (usize, usize))>,
    job_name: Option<String>,
    /// Whether the script has any directive at all (an sbatch script).
    pub is_batch: bool,
}

/// Variables Slurm sets from the allocation; each is known only when a directive fixes it.
const ALLOCATION_VARS: &[&str] = &[
    "SLURM_NNODES",
    "SLURM_JOB_NUM_NODES",
    "SLURM_GPUS_ON_NODE",
    "SLURM_GPUS_PER_NODE",
    "SLURM_GPUS",
    "SLURM_NTASKS_PER_NODE",
    "SLURM_NTASKS",
    "SLURM_NPROCS",
    "SLURM_JOB_PARTITION",
];

impl Job {
    /// The directives at the top of `text`.
    pub fn read(text: &str) -> Job {
        let mut job = Job::default();
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let start = at;
            at += line.len();
            let trimmed = line.trim_start();
            if trimmed.is_empty() {
                continue;
            }
            if !trimmed.starts_with('#') {
                break;
            }
            let Some(rest) = trimmed.strip_prefix("#SBATCH") else {
                continue;
            };
            job.is_batch = true;
            let base = start + (line.len() - rest.len());
            job.directive(rest, base);
        }
        job
    }

    /// One directive line's options (`--nodes=2 -G 4`), up to a `#` comment.
    fn directive(&mut self, rest: &str, base: usize) {
        let mut words: Vec<(&str, usize)> = Vec::new();
        let mut i = 0;
        for w in rest.split_whitespace() {
            let off = i + rest[i..].find(w).unwrap_or(0);
            i = off + w.len();
            if w.starts_with('#') {
                break;
            }
            words.push((w, base + off));
        }
        let mut k = 0;
        while let Some(&(w, off)) = words.get(k) {
            k += 1;
            let (name, value) = match w.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some((v, off + n.len() + 1))),
                _ if w.starts_with('-') && !w.starts_with("--") && w.len() > 2 => {
                    (&w[..2], Some((&w[2..], off + 2)))
                }
                _ => (w, None),
            };
            let takes = matches!(
                name,
                "--nodes"
                    | "-N"
                    | "--gpus-per-node"
                    | "--gres"
                    | "--gpus"
                    | "-G"
                    | "--ntasks-per-node"
                    | "--ntasks"
                    | "-n"
                    | "--partition"
                    | "-p"
                    | "--constraint"
                    | "-C"
                    | "--job-name"
                    | "-J"
            );
            let value = match value {
                Some(v) => v,
                None if takes => match words.get(k) {
                    Some(&v) => {
                        k += 1;
                        v
                    }
                    None => continue,
                },
                None => continue,
            };
            self.option(name, value.0, (value.1, value.1 + value.0.len()));
        }
    }

    fn option(&mut self, name: &str, value: &str, span: (usize, usize)) {
        let count = |v: &str| v.parse::<u32>().ok().map(|n| (n, span));
        match name {
            // `--nodes=2-4` is a range: the count is Slurm's choice.
            "--nodes" | "-N" => self.nodes = count(value),
            "--ntasks-per-node" => self.ntasks_per_node = count(value),
            "--ntasks" | "-n" => self.ntasks = count(value),
            "--partition" | "-p" => self.partition = Some((value.to_string(), span)),
            "--job-name" | "-J" => self.job_name = Some(value.to_string()),
            "--gpus-per-node" => self.gpus_per_node = self.typed(value, span),
            "--gpus" | "-G" => self.gpus = self.typed(value, span),
            "--gres" => {
                let gpu = value
                    .split(',')
                    .find_map(|g| g.strip_prefix("gpu:").or((g == "gpu").then_some("1")));
                if let Some(g) = gpu {
                    self.gpus_per_node = self.typed(g, span);
                }
            }
            "--constraint" | "-C" if catalog::lookup(value).is_some() => {
                self.gpu = Some((value.to_string(), span))
            }
            _ => {}
        }
    }

    /// `N` or `TYPE:N`: the count, and the type kept when the catalog knows it (a site's own
    /// gres name is not a GPU name).
    fn typed(&mut self, value: &str, span: (usize, usize)) -> Option<(u32, (usize, usize))> {
        let (kind, n) = match value.rsplit_once(':') {
            Some((kind, n)) => (Some(kind), n),
            None => (None, value),
        };
        if let Some(kind) = kind.filter(|k| catalog::lookup(k).is_some()) {
            self.gpu = Some((kind.to_string(), span));
        }
        n.parse().ok().map(|n| (n, span))
    }

    /// The job's name (`--job-name`), else what sbatch names it after: the script.
    pub fn name(&self) -> &str {
        self.job_name.as_deref().unwrap_or("batch script")
    }

    /// The GPUs on each node of the job, when the directives fix them.
    fn per_node(&self) -> Option<(u32, (usize, usize))> {
        self.gpus_per_node.or_else(|| {
            let (total, at) = self.gpus?;
            let nodes = self.nodes.map_or(1, |n| n.0);
            (nodes > 0 && total % nodes == 0).then_some((total / nodes, at))
        })
    }

    /// Sets the allocation's variables in `walker`: a value where a directive fixes it, else
    /// unknown with the reason.
    pub fn seed(&self, walker: &mut Walker) {
        let num = |v: Option<(u32, (usize, usize))>| v.map(|(n, at)| (n.to_string(), at));
        for name in ALLOCATION_VARS {
            let known = match *name {
                "SLURM_NNODES" | "SLURM_JOB_NUM_NODES" => num(self.nodes),
                "SLURM_GPUS_ON_NODE" => num(self.per_node()),
                "SLURM_GPUS_PER_NODE" => num(self.gpus_per_node),
                "SLURM_GPUS" => num(self.gpus),
                "SLURM_NTASKS_PER_NODE" => num(self.ntasks_per_node),
                "SLURM_NTASKS" | "SLURM_NPROCS" => num(self.ntasks),
                _ => self.partition.clone(),
            };
            let value = match known {
                Some((text, (start, end))) => Value::Scalar(Field {
                    chars: text.chars().map(|c| (c, start, end)).collect(),
                    loc: walker.scope.loc((start, end)),
                    names: Vec::new(),
                    splat: None,
                    defaults: Vec::new(),
                }),
                None => Value::Unknown(format!(
                    "{name} (set by Slurm from the job's allocation, which no #SBATCH directive fixes)"
                )),
            };
            walker.scope.set(name, value, true);
        }
    }

    /// The job's GPUs on the launches: the type where a directive names one the catalog knows,
    /// the GPUs of each node, and, for a script with one launch not pinned to some devices, the
    /// whole allocation as that launch's GPUs.
    pub fn place(&self, walker: &Walker, launches: &mut [Launch]) {
        let per_node = self.per_node();
        let single = launches.len() == 1;
        for l in launches {
            if l.placement.gpu.is_none() {
                l.placement.gpu = self
                    .gpu
                    .as_ref()
                    .map(|(g, at)| (g.clone(), walker.scope.loc(*at)));
            }
            let Some((n, _)) = per_node else { continue };
            l.placement.gpus_per_node = Some(n);
            let pinned = l
                .env
                .iter()
                .any(|(k, _)| k == "CUDA_VISIBLE_DEVICES" || k == "NVIDIA_VISIBLE_DEVICES");
            if single && !pinned && l.placement.gpus_per_pod.is_none() {
                l.placement.gpus_per_pod = Some(n);
                l.placement.pods = Some(self.nodes.map_or(1, |(n, _)| n));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_at(text: &str, at: (usize, usize)) -> &str {
        &text[at.0..at.1]
    }

    #[test]
    fn directives_until_the_first_command_with_trailing_comments() {
        let text = "#!/bin/bash\n#SBATCH --nodes=2   # two\n#SBATCH -G h100:8\n\n# note\n\
                    #SBATCH --ntasks-per-node 4\n#SBATCH -p gpu --gres=gpu:a100:4,nvme:1\n\
                    echo hi\n#SBATCH --nodes=9\n";
        let job = Job::read(text);
        assert!(job.is_batch);
        assert_eq!(job.nodes.map(|n| n.0), Some(2));
        assert_eq!(job.gpus.map(|n| n.0), Some(8));
        assert_eq!(job.ntasks_per_node.map(|n| n.0), Some(4));
        assert_eq!(job.gpus_per_node.map(|n| n.0), Some(4));
        let (gpu, at) = job.gpu.clone().expect("a GPU type");
        assert_eq!(
            (gpu.as_str(), text_at(text, at)),
            ("a100", "gpu:a100:4,nvme:1")
        );
        assert_eq!(job.partition.clone().map(|p| p.0).as_deref(), Some("gpu"));
        assert_eq!(job.per_node().map(|n| n.0), Some(4));
    }

    #[test]
    fn ranges_site_names_and_plain_scripts_fix_nothing() {
        let job = Job::read("#SBATCH --nodes=2-4 --gres=gpu:mysite_big:2 -C ib\n");
        assert_eq!(job.nodes, None);
        assert_eq!(job.gpu, None);
        assert_eq!(job.gpus_per_node.map(|n| n.0), Some(2));
        assert!(!Job::read("#!/bin/sh\nvllm serve m\n").is_batch);
        // `--gpus` over the nodes: per node only when it divides evenly.
        let job = Job::read("#SBATCH -N 3\n#SBATCH --gpus=8\n");
        assert_eq!(job.per_node(), None);
    }
}
