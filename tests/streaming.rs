//! A multi-document YAML file is read one document at a time: the memory extraction needs on top
//! of the input stays that of one document's tree, however many documents the file holds.
//!
//! Measured with a counting global allocator (this test binary only): the peak of live heap
//! bytes during `extract`, above what was live before it. The allocations are deterministic,
//! so the figures are too. One test in this binary, so no other test allocates meanwhile.

use kvlint::extract::extract_with;
use kvlint::source::Sources;

mod counting;

/// `docs` ConfigMaps of 300 keys each (about 11 KB of YAML, a tree of some 40 KB): objects
/// that hold no launch, so extraction keeps nothing of them and only its working memory counts.
fn render(docs: usize) -> String {
    let mut s = String::new();
    for d in 0..docs {
        s.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{d}\ndata:\n"
        ));
        for k in 0..300 {
            s.push_str(&format!("  key-{k}: \"value {d} {k}\"\n"));
        }
    }
    s
}

/// Peak heap bytes above the start while extracting `text` read under `name` on up to `jobs`
/// threads, and the number of launches and findings found (none expected).
fn extraction_peak(name: &str, text: String, jobs: usize) -> (usize, usize) {
    let mut sources = Sources::default();
    let file = sources.add(name, text);
    let (peak, out) = counting::peak_during(|| extract_with(file, &sources, jobs));
    (peak, out.launches.len() + out.findings.len())
}

#[test]
fn documents_are_read_one_at_a_time() {
    // A `.yaml` name, and standard input (named `<stdin>`), which is first sniffed for YAML.
    for name in ["render.yaml", "<stdin>"] {
        let (one, found_one) = extraction_peak(name, render(1), 1);
        let (many, found_many) = extraction_peak(name, render(100), 1);
        // On 4 threads (`--jobs 4`) each holds one tree at a time: 4 trees at most.
        let (threads, found_threads) = extraction_peak(name, render(100), 4);
        assert_eq!((found_one, found_many, found_threads), (0, 0, 0), "{name}");
        eprintln!("{name}: {threads} bytes above the input for 100 documents on 4 threads");
        assert!(
            threads < one * 9 / 2,
            "{name}: 4 threads peaked {threads} bytes above the input, one tree takes {one}"
        );
        eprintln!("{name}: {one} bytes above the input for 1 document, {many} for 100");
        // Holding every tree would take 100 times as much for 100 documents; one tree at a
        // time takes the same, plus a few bytes per document (their byte ranges).
        assert!(
            many < one * 3 / 2,
            "{name}: extraction peaked {one} bytes above its input for 1 document, {many} for 100"
        );
    }
}
