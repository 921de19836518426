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
    fn prereleases_sort_before_and_posts_after_their_release() {
        let v = |s| Version::parse(s).unwrap();
        assert!(v("0.5.10rc0") < v("0.5.10"));
        assert!(v("0.5.8.post1") > v("0.5.8"));
        assert!(v("0.5.9") < v("0.5.10rc0"));
    }
}
