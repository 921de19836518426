//! Engine versions as the image tags and `--engine-version` spell them (`0.5.10rc0`, `v0.5.8.post1`).

use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// Pre-release or post-release suffix as written (`rc0`, `post1`, `dev9+g5d264f4a`).
    pub suffix: Option<String>,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version {
            major,
            minor,
            patch,
            suffix: None,
        }
    }

    /// Parses `0.5.20`, `v0.5.20`, `0.5.10rc0`, `0.5.8.post1`, `0.11`, `0.6.4.dev9+g5d264f4a`.
    pub fn parse(s: &str) -> Option<Version> {
        let s = s.trim().trim_start_matches(['v', 'V']);
        let split = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let (nums, rest) = s.split_at(split);
        let nums = nums.trim_end_matches('.');
        let mut parts = nums.split('.').map(|p| p.parse::<u32>().ok());
        let major = parts.next()??;
        let minor = parts.next().unwrap_or(Some(0))?;
        let patch = parts.next().unwrap_or(Some(0))?;
        let suffix =
            (!rest.is_empty()).then(|| rest.trim_start_matches(['.', '-', '_']).to_string());
        Some(Version {
            major,
            minor,
            patch,
            suffix,
        })
    }

    fn suffix_rank(&self) -> i8 {
        match self.suffix.as_deref() {
            None => 0,
            Some(s) if s.starts_with("post") => 1,
            Some(_) => -1, // rc, dev, alpha: before the release
        }
    }

    /// The release this version belongs to, without any suffix.
    pub fn release(&self) -> Version {
        Version::new(self.major, self.minor, self.patch)
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch, self.suffix_rank()).cmp(&(
            other.major,
            other.minor,
            other.patch,
            other.suffix_rank(),
        ))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        match &self.suffix {
            Some(s) if s.starts_with("post") || s.starts_with("dev") => write!(f, ".{s}"),
            Some(s) => write!(f, "{s}"),
            None => Ok(()),
        }
    }
}

/// `--engine-version` / kvlint.toml `engine-version`: one release per engine
/// (`sglang=0.5.20,vllm=0.19.0`), or a bare release (`0.5.20`) for the engine that has it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineVersions {
    /// `(engine name, release)` as written.
    pub per_engine: Vec<(String, Version)>,
    pub bare: Option<Version>,
}

impl EngineVersions {
    pub fn parse(s: &str) -> Result<EngineVersions, String> {
        let mut out = EngineVersions::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || format!("{part:?} is not a version like 0.5.20 or sglang=0.5.20");
            match part.split_once('=') {
                Some((engine, v)) => {
                    let engine = engine.trim().to_ascii_lowercase();
                    if !matches!(engine.as_str(), "sglang" | "vllm" | "trtllm") {
                        return Err(format!(
                            "{engine:?} is not an engine (sglang, vllm, trtllm)"
                        ));
                    }
                    if out.per_engine.iter().any(|(e, _)| *e == engine) {
                        return Err(format!("{engine} is given two versions"));
                    }
                    out.per_engine
                        .push((engine, Version::parse(v).ok_or_else(bad)?));
                }
                None if out.bare.is_none() => {
                    out.bare = Some(Version::parse(part).ok_or_else(bad)?)
                }
                None => return Err("give one bare version, or ENGINE=VERSION per engine".into()),
            }
        }
        if out.per_engine.is_empty() && out.bare.is_none() {
            return Err("no version given".into());
        }
        Ok(out)
    }

    /// The release given for `engine` by name.
    pub fn named(&self, engine: &str) -> Option<&Version> {
        self.per_engine
            .iter()
            .find(|(e, _)| e == engine)
            .map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_spellings_engines_use() {
        assert_eq!(Version::parse("v0.5.20"), Some(Version::new(0, 5, 20)));
        assert_eq!(Version::parse("0.11"), Some(Version::new(0, 11, 0)));
        assert_eq!(
            Version::parse("0.5.10rc0").unwrap().to_string(),
            "0.5.10rc0"
        );
        assert_eq!(
            Version::parse("0.5.8.post1").unwrap().to_string(),
            "0.5.8.post1"
        );
        assert_eq!(Version::parse("latest"), None);
    }

    #[test]
    fn engine_versions_per_engine_or_bare() {
        let v = EngineVersions::parse("sglang=0.5.20,vllm=0.19.0").unwrap();
        assert_eq!(v.named("sglang"), Some(&Version::new(0, 5, 20)));
        assert_eq!(v.named("vllm"), Some(&Version::new(0, 19, 0)));
        assert_eq!(v.bare, None);
        let v = EngineVersions::parse("0.5.20").unwrap();
        assert_eq!(v.bare, Some(Version::new(0, 5, 20)));
        assert!(EngineVersions::parse("tgi=1.0").is_err());
        assert!(EngineVersions::parse("0.5.20,0.19.0").is_err());
        assert!(EngineVersions::parse("latest").is_err());
    }

    #[test]
    fn prereleases_sort_before_and_posts_after_their_release() {
        let v = |s| Version::parse(s).unwrap();
        assert!(v("0.5.10rc0") < v("0.5.10"));
        assert!(v("0.5.8.post1") > v("0.5.8"));
        assert!(v("0.5.9") < v("0.5.10rc0"));
    }
}
