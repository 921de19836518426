//! Cuts JSON nesting below a fixed depth before the body is parsed. serde_json refuses nesting
//! past 128 levels and the YAML reader past 64, so a deep subtree in a field kvlint never reads
//! (`metadata.managedFields[].fieldsV1` takes free-form JSON on every kind) would otherwise make
//! the whole review unreadable. One linear pass over the bytes, no recursion.

/// Deepest nesting kept, counted from the AdmissionReview itself. The deepest field kvlint reads
/// (a container's args inside a CRD's pod template) sits near level 16.
pub const MAX_DEPTH: usize = 40;

/// The body with every array or object below `max_depth` replaced by `null`, and how many were
/// cut. Returns `None` when nothing is that deep (the body is used as it is). Text that is not
/// JSON passes through unchanged for the parser to reject.
pub fn prune(body: &[u8], max_depth: usize) -> Option<(Vec<u8>, usize)> {
    if deepest(body) <= max_depth {
        return None;
    }
    let mut out = Vec::with_capacity(body.len());
    let mut cut = 0;
    let mut scan = Scanner::default();
    // Depth at which the subtree being skipped opened; `None` while copying.
    let mut skipping: Option<usize> = None;
    for &b in body {
        let before = scan.depth;
        scan.step(b);
        match skipping {
            Some(at) => {
                if scan.depth < at {
                    skipping = None;
                }
            }
            None if scan.depth > max_depth && before == max_depth => {
                skipping = Some(scan.depth);
                cut += 1;
                out.extend_from_slice(b"null");
            }
            None => out.push(b),
        }
    }
    Some((out, cut))
}

/// The deepest nesting of arrays and objects in the text.
fn deepest(body: &[u8]) -> usize {
    let mut scan = Scanner::default();
    let mut max = 0;
    for &b in body {
        scan.step(b);
        max = max.max(scan.depth);
    }
    max
}

/// Tracks nesting depth outside strings.
#[derive(Default)]
struct Scanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Scanner {
    fn step(&mut self, b: u8) {
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pruned(text: &str, depth: usize) -> (String, usize) {
        let (out, cut) = prune(text.as_bytes(), depth).unwrap_or((text.as_bytes().to_vec(), 0));
        (String::from_utf8(out).expect("UTF-8 kept"), cut)
    }

    #[test]
    fn subtrees_below_the_depth_become_null_and_strings_do_not_count() {
        let text = r#"{"a":{"b":[1,{"c":2}],"s":"{[\"{"},"d":[[[]]]}"#;
        assert_eq!(pruned(text, 4).0, text);
        assert_eq!(
            pruned(text, 2),
            (r#"{"a":{"b":null,"s":"{[\"{"},"d":[null]}"#.into(), 2)
        );
        let (out, _) = pruned(text, 2);
        assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok());
    }

    #[test]
    fn a_thousand_levels_parse_after_the_cut() {
        let deep = format!(
            "{{\"keep\":1,\"x\":{}1{}}}",
            "[".repeat(1000),
            "]".repeat(1000)
        );
        assert!(serde_json::from_str::<serde_json::Value>(&deep).is_err());
        let (out, cut) = pruned(&deep, MAX_DEPTH);
        assert_eq!(cut, 1);
        let v: serde_json::Value = serde_json::from_str(&out).expect("parses");
        assert_eq!(v["keep"], 1);
    }
}
