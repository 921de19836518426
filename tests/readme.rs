//! The README's rule table is generated from `rules/*.toml`; this test fails when it is stale.
//! Regenerate with `KVLINT_UPDATE_README=1 cargo test --test readme`.

const START: &str = "<!-- rules:start (generated from rules/*.toml by tests/readme.rs) -->";
const END: &str = "<!-- rules:end -->";

fn table() -> String {
    let mut t = String::from("| id | name | level | what it checks |\n|---|---|---|---|\n");
    for r in kvlint::rules::all() {
        // The whole description: a table cell cut at the first ". " broke sentences at "e.g. ".
        let what = kvlint::rules::description(r).replace('|', "\\|");
        t.push_str(&format!(
            "| {} | `{}` | {} | {what} |\n",
            r.id,
            r.name,
            r.level.name(),
        ));
    }
    t
}

#[test]
fn readme_rule_table_is_generated_from_the_rule_data() {
    let path = format!("{}/README.md", env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let (head, rest) = readme
        .split_once(START)
        .expect("README has the rules:start marker");
    let (_, tail) = rest
        .split_once(END)
        .expect("README has the rules:end marker");
    let fresh = format!("{head}{START}\n{}{END}{tail}", table());
    if std::env::var_os("KVLINT_UPDATE_README").is_some() {
        std::fs::write(&path, &fresh).expect("README written");
        return;
    }
    assert!(
        fresh == readme,
        "README rule table is stale: run KVLINT_UPDATE_README=1 cargo test --test readme"
    );
}
