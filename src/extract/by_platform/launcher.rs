//! A platform's launcher script run by a shell (`python3 launch_triton_server.py --world_size 1
//! --model_repo DIR`): the engine launch it starts, its flags read as the platform's `[launcher]`
//! says. The script's own flags are no engine options; what it leaves to files the input does not
//! hold (a prebuilt engine's TP, PP and longest sequence) are values kvlint cannot see.

use super::flag_value;
use crate::launch::{Arg, Launch, ObjectRef};
use crate::platform::{Launcher, Platform};
use crate::source::Loc;

/// The platform whose launcher a command runs at word `j` (the script itself, or `python`
/// running it), and the index of the script's first argument.
pub fn at(texts: &[&str], j: usize) -> Option<(&'static Platform, usize)> {
    let python = base(texts[j])
        .strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    // `python3 [-u] SCRIPT`: the first word that is no interpreter switch.
    let script = match python {
        true => (j + 1..texts.len()).find(|&k| !texts[k].starts_with('-'))?,
        false => j,
    };
    let word = base(texts[script]);
    let (p, _) = crate::platform::registry()
        .launchers()
        .find(|(_, l)| l.script == word)?;
    Some((p, script + 1))
}

/// The launch a launcher starts: its model flag as the engine's model, its ranks as TP and PP
/// (one rank: both 1; more: split where the input does not show), and the options it leaves
/// to files the input lacks as unknown values, at the script's words.
pub fn launch(p: &Platform, command: Loc, args: &[Arg]) -> Option<Launch> {
    let l = p.launcher.as_ref()?;
    let engine = p.engine?.into();
    let mut argv = Vec::new();
    let value = |flag: &Option<String>| {
        let a = flag_value(args, flag.as_deref()?)?;
        let text = a.text.split_once('=').map_or(a.text.as_str(), |(_, v)| v);
        Some(Arg {
            text: text.to_string(),
            ..a.clone()
        })
    };
    argv.extend(value(&l.model));
    argv.extend(ranks(l, value(&l.ranks), command));
    for (flag, why) in &l.unknown {
        argv.push(Arg::new(flag.clone(), command));
        argv.push(unknown(command, why));
    }
    let mut launch = Launch::new(engine, command, argv);
    launch.object = Some(ObjectRef {
        kind: p.title.clone(),
        namespace: None,
        name: String::new(),
        container: None,
    });
    Some(launch)
}

/// `--tp_size` and `--pp_size` from the ranks: 1 and 1 for one rank, else values kvlint cannot
/// see (their product is the ranks, their split the engine's).
fn ranks(l: &Launcher, given: Option<Arg>, command: Loc) -> Vec<Arg> {
    let given = given.unwrap_or_else(|| Arg::new(l.ranks_default.to_string(), command));
    let one = given.unresolved.is_empty() && given.text.trim() == "1";
    let at = given.loc;
    ["--tp_size", "--pp_size"]
        .into_iter()
        .flat_map(|flag| {
            let value = match one {
                true => Arg::new("1", at),
                false => unknown(at, &format!("{} ranks split by {}", given.text, l.split)),
            };
            [Arg::new(flag, at), value]
        })
        .collect()
}

/// A path's last part.
fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A value the input does not show, set where `why` says.
pub(super) fn unknown(at: Loc, why: &str) -> Arg {
    Arg {
        text: "?".into(),
        loc: at,
        unresolved: vec![why.to_string()],
        defaulted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::at;

    #[test]
    fn the_launcher_is_run_directly_or_by_python() {
        let name = |t: &[&str]| at(t, 0).map(|(p, i)| (p.name.as_str(), i));
        let script = "/opt/tensorrtllm_backend/scripts/launch_triton_server.py";
        let by_python = ["python3", "-u", script, "--world_size", "2"];
        assert_eq!(name(&by_python), Some(("triton-trtllm-launcher", 3)));
        assert_eq!(name(&[script]), Some(("triton-trtllm-launcher", 1)));
        assert_eq!(name(&["python3", "serve.py", script]), None);
        assert_eq!(name(&["python3"]), None);
    }
}
