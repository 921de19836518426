//! `cargo bench --bench yaml -- FILE [raw|tree]`: how long reading every document of a YAML file
//! into kvlint's spanned trees (`yaml::parse_range`) takes, against granit-parser's bare event
//! loop over the same documents (comments off), the floor any tree built from its events has.
//! Prints the best of 5 runs and MB/s; with `raw` or `tree` it runs that one once (for callgrind).

use kvlint::source::{FileId, SourceFile};
use kvlint::yaml;
use std::time::Instant;

/// Events of every document, as granit-parser yields them.
fn raw(src: &SourceFile, ranges: &[std::ops::Range<usize>]) -> usize {
    let mut options = granit_parser::Options::default();
    options.emit_comments = false;
    let mut events = 0;
    for r in ranges {
        let parser =
            granit_parser::Parser::new_from_str_with_options(&src.text[r.clone()], options.clone());
        events += parser.take_while(Result::is_ok).count();
    }
    events
}

/// Trees of every document.
fn tree(src: &SourceFile, ranges: &[std::ops::Range<usize>]) -> usize {
    ranges
        .iter()
        .filter(|r| yaml::parse_range(FileId(0), src, (*r).clone()).is_ok())
        .count()
}

fn best(f: impl Fn() -> usize) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cargo bench --bench yaml -- FILE [raw|tree]");
        return;
    };
    let text = std::fs::read_to_string(path).expect("readable UTF-8 file");
    let src = SourceFile::new(path.as_str(), text);
    let ranges = yaml::document_ranges(&src);
    match args.get(1).map(String::as_str) {
        Some("raw") => println!("{} events", raw(&src, &ranges)),
        Some("tree") => println!("{} documents", tree(&src, &ranges)),
        _ => {
            let mb = src.text.len() as f64 / 1e6;
            let (r, t) = (best(|| raw(&src, &ranges)), best(|| tree(&src, &ranges)));
            println!("{} documents, {mb:.1} MB", ranges.len());
            println!("granit events: {r:.3} s ({:.1} MB/s)", mb / r);
            println!(
                "kvlint trees:  {t:.3} s ({:.1} MB/s), {:.2}x the events",
                mb / t,
                t / r
            );
        }
    }
}
