//! The shell reader's budgets: expansion bombs end in `INP001` where the budget ran out, within a
//! counted number of heap bytes, and a long one-line launch costs memory in proportion to its
//! length with a small constant.
//!
//! Measured with a counting global allocator (this test binary only): the peak of live heap
//! bytes while reading, above what was live before. The allocations are deterministic, so the
//! figures are too. One test in this binary, so no other test allocates meanwhile; time is
//! bounded by the reader's step budget (checked by the `INP001` it leaves), not by a clock.

use kvlint::extract::shell;
use kvlint::source::FileId;

mod counting;

const MB: usize = 1 << 20;

/// Peak heap bytes above the start while reading `text` as a script, and the rules found.
fn read_peak(text: &str) -> (usize, Vec<String>, usize) {
    let (peak, out) = counting::peak_during(|| shell::script(FileId(0), text));
    let rules = out.findings.iter().map(|f| f.rule.to_string()).collect();
    (peak, rules, out.launches.len())
}

/// Hostile scripts of under 1 KB, each of which grew without bound (9 GB) or ran for minutes.
fn bombs() -> Vec<(&'static str, String)> {
    let doubled =
        |head: &str, step: &str, n: usize, tail: &str| format!("{head}{}{tail}", step.repeat(n));
    vec![
        (
            "a variable doubled 30 times",
            doubled("a=x\n", "a=$a$a\n", 30, "vllm serve m --max-model-len $a\n"),
        ),
        (
            "doubled on one line",
            doubled("a=x; ", "a=$a$a; ", 30, "vllm serve m\n"),
        ),
        (
            "doubled with spaces, then split",
            doubled("a=x\n", "a=\"$a $a\"\n", 30, "vllm serve m $a\n"),
        ),
        (
            "a big value copied line after line",
            doubled("a=x\n", "a=$a$a\n", 19, &"b=$a\n".repeat(150)),
        ),
        (
            "a big exported value handed to 100 shells",
            doubled("export a=x\n", "a=$a$a\n", 19, &"sh -c :\n".repeat(100)),
        ),
        (
            "eval of a doubled string",
            doubled("a=': ;'\n", "a=$a$a\n", 30, "eval \"$a\"\n"),
        ),
        (
            "an array doubled",
            doubled(
                "a=(x)\n",
                "a=(\"${a[@]}\" \"${a[@]}\")\n",
                30,
                "vllm serve m\n",
            ),
        ),
        (
            "an unset variable's reference doubled",
            doubled("a=$u\n", "a=$a$a\n", 30, "vllm serve m $a\n"),
        ),
        (
            "a default word doubled",
            doubled("a=x\n", "a=${u:-$a$a}\n", 30, "vllm serve m\n"),
        ),
    ]
}

#[test]
fn expansion_bombs_are_cut_and_long_argv_costs_memory_in_proportion() {
    for (what, text) in bombs() {
        assert!(text.len() < 1100, "{what}: {} bytes", text.len());
        let (peak, rules, launches) = read_peak(&text);
        eprintln!("{what}: {} bytes, peak {} KB", text.len(), peak / 1024);
        assert!(
            rules.iter().any(|r| r == "INP001"),
            "{what}: not cut ({rules:?})"
        );
        // Nothing after the cut is read as a launch: its words may be cut short.
        assert_eq!(launches, 0, "{what}");
        assert!(peak < 256 * MB, "{what}: peaked at {} MB", peak / MB);
    }
    long_argv_costs_memory_in_proportion();
    an_oversized_script_is_refused_before_it_is_lexed();
}

/// `vllm serve m --flag-N N ...` on one line, `bytes` long.
fn long_line(bytes: usize) -> String {
    let mut s = String::from("vllm serve m");
    let mut i = 0;
    while s.len() < bytes {
        s.push_str(&format!(" --flag-{i} {i}"));
        i += 1;
    }
    s.push('\n');
    s
}

/// Held per input byte: the script's characters as the lexer reads them (24 bytes each) and its
/// words (as many again), then the fields. It was 130 here (180 end to end) before the words
/// were dropped once expanded, the characters once lexed, and the fields sized up front.
fn long_argv_costs_memory_in_proportion() {
    let mut per = Vec::new();
    for size in [MB / 2, 4 * MB] {
        let text = long_line(size);
        let (peak, rules, launches) = read_peak(&text);
        assert_eq!((launches, rules.len()), (1, 0), "{rules:?}");
        let per_byte = peak as f64 / text.len() as f64;
        eprintln!(
            "one line of {} bytes: peak {} KB, {per_byte:.1} bytes per input byte",
            text.len(),
            peak / 1024
        );
        assert!(per_byte < 64.0, "{per_byte:.1} bytes per input byte");
        per.push(per_byte);
    }
    // In proportion: eight times the line, about eight times the memory.
    assert!(per[1] < per[0] * 1.25, "{per:?} bytes per input byte");
}

/// A script past the 16 MiB a script read takes is refused where it starts, before the lexer
/// holds its characters: a 64 MiB line would otherwise take about 4 GB.
fn an_oversized_script_is_refused_before_it_is_lexed() {
    let text = long_line(17 * MB);
    let (peak, rules, launches) = read_peak(&text);
    assert_eq!((launches, rules), (0, vec!["INP001".to_string()]));
    assert!(peak < MB, "peaked at {} KB", peak / 1024);
}
