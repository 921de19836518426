//! Commands that print documentation: shell completions, the man page, rules and their docs.

use super::{exit, ListFormat, Run, UsageError};
use crate::rules;

pub(super) fn completions(shell: clap_complete::Shell) -> Run {
    clap_complete::generate(
        shell,
        &mut super::command(),
        "kvlint",
        &mut std::io::stdout(),
    );
    Ok(exit::CLEAN)
}

pub(super) fn man() -> Run {
    clap_mangen::Man::new(super::command())
        .render(&mut std::io::stdout())
        .map_err(|e| UsageError(format!("cannot write the man page: {e}")))?;
    Ok(exit::CLEAN)
}

pub(super) fn explain(key: &str) -> Run {
    let rule = rules::find(key).ok_or_else(|| {
        let hint = rules::select::suggest(key)
            .map_or(String::new(), |m| format!(" (did you mean `{m}`?)"));
        UsageError(format!("no rule {key:?}{hint}; `kvlint rules` lists them"))
    })?;
    print!("{}", rules::explain(rule));
    Ok(exit::CLEAN)
}

pub(super) fn list_rules(format: ListFormat) -> Run {
    match format {
        ListFormat::Json => println!(
            "{:#}",
            serde_json::to_value(rules::all()).unwrap_or_default()
        ),
        ListFormat::Human => {
            let width = terminal_size::terminal_size_of(std::io::stdout())
                .map_or(100, |(w, _)| usize::from(w.0))
                .max(40);
            let indent = " ".repeat(8);
            // Break at spaces only: `--tp-size` stays whole.
            let wrap = textwrap::Options::new(width)
                .initial_indent(&indent)
                .subsequent_indent(&indent)
                .word_separator(textwrap::WordSeparator::AsciiSpace)
                .word_splitter(textwrap::WordSplitter::NoHyphenation)
                .break_words(false);
            for r in rules::all() {
                println!(
                    "{:<7} {:<30} {:<5} {}",
                    r.id,
                    r.name,
                    r.level.name(),
                    r.category
                );
                println!("{}", textwrap::fill(&rules::description(r), &wrap));
            }
        }
    }
    Ok(exit::CLEAN)
}
