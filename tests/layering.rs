//! The pipeline's shape (issue 11): `engine/` parses what it is given. Files a launch names are
//! found in `extract/` (mounted ConfigMap keys: `extract/k8s/mounts.rs`) and reach the engine
//! parsers as `Launch::files`; the engine parsers never go back up to the readers.

mod common;

#[test]
fn engine_files_parse_what_they_are_given() {
    let dir = common::root().join("src/engine");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Unit tests may build their launches with the shell reader.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for word in ["crate::extract", "mounts"] {
            assert!(
                !code.contains(word),
                "{} uses {word}: resolve it in extract/ and hand the engine what it needs",
                path.display()
            );
        }
        read += 1;
    }
    assert!(read >= 8, "only {read} files in {}", dir.display());
}
