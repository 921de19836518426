//! Which `free_gpu_memory_fraction` the engine uses when the command line sets one and the engine
//! YAML has a `kv_cache_config` block (tensorrt_llm/llmapi/llm_args.py ::
//! update_llm_args_with_extra_dict), per release:
//! - before 1.2.0, `llm_args | yaml` replaces the whole block: the YAML's fraction or the
//!   `KvCacheConfig` default of 0.9;
//! - from 1.2.0, the YAML block is merged over the command line's (`base_kv_config | yaml`,
//!   NVIDIA/TensorRT-LLM#9262, merged to main in November 2025): the YAML's fraction, else the
//!   command line's;
//! - `trtllm-serve` releases with NVIDIA/TensorRT-LLM#14812 (June 2026, `explicit_cli_keys`) let
//!   a typed command-line fraction win over the YAML's. Which 1.3 release candidate first has it
//!   is not known here, so from 1.3.0rc0 both outcomes are candidates.
//!
//! kvlint plans with the smallest candidate (a release it cannot tell apart never gets a larger
//! pool than planned), and TRT001 says when one of them is not the flag's value.

use super::{float_of, text_of, Front, Parser, DEFAULT_FRACTION, FRACTION};
use crate::engine::Setting;
use crate::finding::Finding;
use crate::source::Loc;
use crate::version::Version;

const KV_MERGE: Version = Version::new(1, 2, 0);
const CLI_WINS_FROM: Version = Version::new(1, 3, 0);

/// A fraction some release would use, and why.
struct Candidate {
    value: f64,
    source: &'static str,
}

impl Parser {
    /// Sets the planned fraction after the YAML's keys went in, and raises TRT001.
    pub(super) fn settle_fraction(&mut self, cli: &Setting, block: Loc, path: &Setting) {
        let Some(cli_value) = float_of(&cli.value) else {
            return;
        };
        let yaml = self.settings.get(FRACTION).and_then(|s| float_of(&s.value));
        let candidates = self.candidates(cli_value, yaml);
        let planned = candidates
            .iter()
            .map(|c| c.value)
            .fold(f64::INFINITY, f64::min);
        if yaml.is_some_and(|y| same(y, planned)) {
            // the YAML's own setting stays, with its span
        } else if same(planned, cli_value) {
            self.settings.insert(FRACTION.to_string(), cli.clone());
        } else {
            self.settings.remove(FRACTION);
        }
        if let Some(c) = candidates.iter().find(|c| !same(c.value, cli_value)) {
            let file = text_of(&path.value);
            self.fraction_overridden(cli, cli_value, c, yaml.is_some(), block, &file);
        }
    }

    /// Dynamo's `--override-engine-args` replaced `kv_cache_config` whole: the flag's fraction is
    /// gone unless the override repeats it. (A YAML's fraction is gone too; the plan follows.)
    pub(super) fn fraction_replaced_by_override(&mut self, before: &Setting, o: &Setting) {
        let Some(before_value) = float_of(&before.value) else {
            return;
        };
        if before.flag_loc.file != o.flag_loc.file {
            return; // it came from the engine YAML, not from a flag
        }
        let own = self.settings.get(FRACTION).and_then(|s| float_of(&s.value));
        let used = match own {
            Some(value) => Candidate {
                value,
                source: "the override's own value",
            },
            None => Candidate {
                value: DEFAULT_FRACTION,
                source: "the KvCacheConfig default",
            },
        };
        if !same(used.value, before_value) {
            let label = own.is_some();
            self.fraction_overridden(
                before,
                before_value,
                &used,
                label,
                o.value_loc,
                "--override-engine-args",
            );
        }
    }

    fn candidates(&self, cli: f64, yaml: Option<f64>) -> Vec<Candidate> {
        let (replace, merge) = match (self.release_known, self.version >= KV_MERGE) {
            (false, _) => (true, true),
            (true, merged) => (!merged, merged),
        };
        let both = replace && merge;
        let mut out = Vec::new();
        if replace {
            out.push(match yaml {
                Some(y) => Candidate {
                    value: y,
                    source: "the YAML's own value",
                },
                None if both => Candidate {
                    value: DEFAULT_FRACTION,
                    source: "the KvCacheConfig default, in releases before 1.2.0; later ones keep the flag's value",
                },
                None => Candidate {
                    value: DEFAULT_FRACTION,
                    source: "the KvCacheConfig default",
                },
            });
        }
        if merge {
            out.push(match yaml {
                Some(y) => Candidate {
                    value: y,
                    source: "the YAML's own value",
                },
                None => Candidate {
                    value: cli,
                    source: "",
                },
            });
            let cli_may_win = !self.release_known || self.version.release() >= CLI_WINS_FROM;
            if yaml.is_some() && self.front == Front::Serve && cli_may_win {
                out.push(Candidate {
                    value: cli,
                    source: "",
                });
            }
        }
        out
    }

    /// TRT001: a release the launch may run does not use the command line's fraction.
    fn fraction_overridden(
        &mut self,
        cli: &Setting,
        cli_value: f64,
        used: &Candidate,
        yaml_sets_it: bool,
        block: Loc,
        file: &str,
    ) {
        let flag = match self.front {
            Front::Serve => "--kv_cache_free_gpu_memory_fraction",
            Front::Dynamo => "--free-gpu-memory-fraction",
        };
        let label = if yaml_sets_it {
            "sets its own free_gpu_memory_fraction"
        } else {
            "replaces the whole kv_cache_config"
        };
        self.findings.push(
            Finding::new("TRT001", Some(cli.loc()))
                .var("flag", flag)
                .var("value", cli_value)
                .var("effective", used.value)
                .var("source", used.source)
                .var("file", file)
                .label("ignored by TensorRT-LLM")
                .also(block, label),
        );
    }
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}
