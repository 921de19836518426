//! A mapping that names the engine it configures by a key's value (`framework: sglang` beside
//! `tpSize: 16` in a recipe chart's values, `engine: {type: vllm}` beside `maxModelLen`): that
//! engine's settings even where most of its keys are the platform's own (`image`,
//! `serviceAccountName`, `extraEnv`), once at least two of them are the engine's options. Which
//! key names what runs, and when a key that may name other things (`framework`, `backend`) does,
//! is [`engine_named`]'s judgement. A string or list of the mapping whose words are mostly the
//! engine's flags (`extraArgs: "--trust-remote-code --dcp-size 16"`) is passed after the options,
//! as a chart appends such a value to the command it renders; its `image` and `resources` place
//! the launch as a container's do.

use super::{argv, kebab, known_flags, settings_launch};
use crate::extract::{argv_shape, engine_named};
use crate::launch::{Arg, Engine, Launch};
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value};

/// The launch of the mapping `map` at `path` when it names its engine and holds at least two of
/// its options; `model` gives the model its file names beside it. The other keys are left out.
/// Mappings under labels, selectors or annotations configure nothing; TensorRT-LLM's options are
/// no launch of their own (its server takes them as a file), as for any option map.
pub(super) fn launch<'a>(
    file: FileId,
    src: &SourceFile,
    map: &Node,
    path: &str,
    model: impl FnOnce() -> Option<&'a Node>,
) -> Option<Launch> {
    let Value::Map(entries) = &map.value else {
        return None;
    };
    // `spec.containers[0]` holds the keys `spec` and `containers`.
    let keys = || path.split(['.', '[']).filter(|s| !s.ends_with(']'));
    if keys().any(engine_named::not_settings) {
        return None;
    }
    let engine = named_engine(entries, keys().next_back().unwrap_or_default())?;
    if engine == Engine::Trtllm {
        return None;
    }
    let options = options(engine, entries);
    if options.len() < 2 {
        return None;
    }
    // A key a template leaves out (null, an empty string) gives the engine's default.
    let options = options
        .into_iter()
        .filter(|(_, v)| !matches!(&v.value, Value::Null) && v.as_str() != Some(""))
        .collect();
    let flags = entries
        .iter()
        .filter(|(k, _)| option_name(engine, k).is_none())
        .flat_map(|(_, v)| flag_words(engine, file, src, v))
        .collect();
    let mut launch = settings_launch(engine, options, map.loc, path, model(), flags)?;
    argv_shape::placed(&mut launch, map);
    Some(launch)
}

/// The engine the mapping names as what runs, by one of its entries (`framework: sglang`, under
/// `parent`), or by the `type` or `name` of a mapping it holds under a key that says so (`engine:
/// {type: vllm}`), judged beside whether its keys size an engine.
fn named_engine(entries: &[(Node, Node)], parent: &str) -> Option<Engine> {
    fn text(n: &Node) -> &str {
        n.as_str().unwrap_or_default()
    }
    let sized = entries
        .iter()
        .any(|(k, _)| engine_named::sizes_engine(text(k)));
    entries.iter().find_map(|(k, v)| match &v.value {
        Value::Map(inner) => inner
            .iter()
            .filter(|(k2, _)| matches!(text(k2), "type" | "name"))
            .find_map(|(k2, v2)| engine_named::entry_names(text(k2), text(k), v2.as_str()?, sized)),
        _ => engine_named::entry_names(text(k), parent, v.as_str()?, sized),
    })
}

/// The entries that are the engine's options, one per option, each key spelled as its flag
/// without dashes (camelCase and `_` folded: `tpSize`, `tp_size` → `tp-size`). Two keys for one
/// option (`model` and `modelPath`, both SGLang's `--model-path`) are two of the platform's
/// fields, of which it passes one: the key spelled as the option's own name is kept, else the
/// last.
fn options(engine: Engine, entries: &[(Node, Node)]) -> Vec<(Node, Node)> {
    let named: Vec<(String, &str, &Node, &Node)> = entries
        .iter()
        .filter_map(|(k, v)| option_name(engine, k).map(|(flag, dest)| (flag, dest, k, v)))
        .collect();
    let own_name = |flag: &str, dest: &str| flag == dest.replace('_', "-");
    let kept = |i: usize| {
        let dest = named[i].1;
        let best = named
            .iter()
            .enumerate()
            .filter(|(_, n)| n.1 == dest)
            .max_by_key(|(j, n)| (own_name(&n.0, n.1), *j));
        best.map(|(j, _)| j) == Some(i)
    };
    (0..named.len())
        .filter(|i| kept(*i))
        .map(|i| {
            let (flag, _, k, v) = &named[i];
            let key = Node {
                value: Value::Str(flag.clone()),
                loc: k.loc,
            };
            (key, (*v).clone())
        })
        .collect()
}

/// An entry's key spelled as the engine's flag without dashes, and the option's destination,
/// when it is one of the engine's options.
fn option_name(engine: Engine, key: &Node) -> Option<(String, &'static str)> {
    let flag = kebab(key.as_str()?).replace('_', "-");
    let dest = crate::engine::option_dest(engine, &format!("--{flag}"))?;
    Some((flag, dest))
}

/// The words of a string (split as a shell splits it, `\` line continuations included) or a
/// list, when they start with a flag and their flags are mostly the engine's.
fn flag_words(engine: Engine, file: FileId, src: &SourceFile, v: &Node) -> Vec<Arg> {
    if !matches!(v.value, Value::Str(_) | Value::Seq(_)) {
        return Vec::new();
    }
    let words = argv(file, src, v);
    let texts: Vec<String> = words.iter().map(|a| a.text.clone()).collect();
    match known_flags(engine, &texts) {
        Some(known) if known > 0 => words,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The argv of the mapping at `path` in `text`, when it is a launch.
    fn argv_at(text: &str, path: &str) -> Option<Vec<String>> {
        let mut sources = crate::source::Sources::default();
        let file = sources.add("values.yaml", text);
        let src = sources.get(file);
        let doc = crate::yaml::parse_document(file, src).unwrap();
        let map = path
            .split('.')
            .filter(|k| !k.is_empty())
            .try_fold(&doc, |n, k| n.get(k))?;
        let l = launch(file, src, map, path, || None)?;
        Some(l.args.into_iter().map(|a| a.text).collect())
    }

    #[test]
    fn an_engine_named_beside_its_options_is_its_settings_with_its_flag_strings() {
        let values =
            "framework: vllm\ntensorParallelSize: 2\nmaxNumSeqs: 64\nimage: vllm/vllm-openai\n\
                      serviceAccountName: sa\nextraEnv: [{name: A, value: b}]\n\
                      pipPackages: \"flashinfer hf_transfer\"\n\
                      engineArgs: [--max-model-len, \"8192\", --enforce-eager]\n";
        assert_eq!(
            argv_at(values, "").unwrap(),
            [
                "--tensor-parallel-size",
                "2",
                "--max-num-seqs",
                "64",
                "--max-model-len",
                "8192",
                "--enforce-eager"
            ]
        );
        // `engine: {type: ...}` names it too; a key that names engines alone needs no sizing.
        let crd = "engine: {type: vLLM}\nservedModelName: q\nmaxModelLen: 4096\nreplicas: 2\n\
                   resources: {}\nstorage: {}\n";
        assert_eq!(
            argv_at(crd, "").unwrap(),
            ["--served-model-name", "q", "--max-model-len", "4096"]
        );
    }

    /// `model` and `modelPath` are both SGLang's `--model-path`: the platform passes one, and
    /// the key spelled as the option's own name is the one kept.
    #[test]
    fn two_keys_for_one_option_give_it_once() {
        let values = "model: org/m\nmodelPath: /models/m\nframework: sglang\ntpSize: 4\n\
                      image: x\nsa: y\nenv: []\n";
        assert_eq!(
            argv_at(values, "").unwrap(),
            ["--model-path", "/models/m", "--tp-size", "4"]
        );
    }

    #[test]
    fn a_name_without_settings_is_no_launch() {
        for (text, path) in [
            // A benchmark client's backend: no setting beside it sizes an engine.
            (
                "backend: vllm\nmodel: m\ntokenizer: m\nnum_prompts: 100\n",
                "",
            ),
            // One option among the platform's keys.
            ("framework: sglang\ntpSize: 8\nimage: x\nreplicas: 1\n", ""),
            // A framework that is no engine, and labels, which configure nothing.
            ("framework: pytorch\ntpSize: 8\nnnodes: 2\n", ""),
            (
                "labels:\n  engine: vllm\n  max-model-len: '8192'\n  tensor-parallel-size: '2'\n",
                "labels",
            ),
            // TensorRT-LLM's options are given to its server as a file.
            ("engine: trtllm\ntp_size: 2\nmax_seq_len: 8192\n", ""),
        ] {
            assert_eq!(argv_at(text, path), None, "{text}");
        }
    }
}
