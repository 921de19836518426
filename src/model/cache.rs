//! The local Hugging Face cache in huggingface_hub's layout, which vLLM and SGLang read on a GPU
//! node: `<cache>/models--{org}--{name}/refs/{revision}` holds a commit hash, and
//! `snapshots/{commit}/` the files of that commit (links into `blobs/`).
//! Locations follow huggingface_hub `constants.py`: `HF_HUB_CACHE`, else `$HF_HOME/hub`, else
//! `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`.

use std::path::{Path, PathBuf};

/// A Hugging Face hub cache directory.
#[derive(Debug, Clone, PartialEq)]
pub struct HubCache {
    pub dir: PathBuf,
}

/// A snapshot directory found in the cache, with its commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub dir: PathBuf,
    pub commit: String,
}

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`.
pub fn hf_home() -> Option<PathBuf> {
    var("HF_HOME")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("huggingface")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("huggingface")))
}

/// Whether `id` is written as a Hub repository id (`name` or `org/name`), not a path.
pub fn is_repo_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('/').collect();
    let ok = |p: &str| {
        !p.is_empty()
            && !p.starts_with('.')
            && !p.contains("..")
            && p.len() <= 96
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    parts.len() <= 2 && parts.iter().all(|p| ok(p))
}

fn is_commit(rev: &str) -> bool {
    rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit())
}

impl HubCache {
    /// The cache this environment points at (`HF_HUB_CACHE`, `HF_HOME`, ...).
    pub fn from_env() -> Option<HubCache> {
        let dir = var("HF_HUB_CACHE")
            .or_else(|| var("HUGGINGFACE_HUB_CACHE"))
            .or_else(|| hf_home().map(|h| h.join("hub")))?;
        Some(HubCache { dir })
    }

    /// `models--{org}--{name}`.
    pub fn repo_dir(&self, id: &str) -> PathBuf {
        self.dir.join(format!("models--{}", id.replace('/', "--")))
    }

    /// The snapshot of `revision` (a commit hash, or a branch or tag read from `refs/`) that
    /// holds a `config.json`; `None` when the cache lacks it.
    pub fn snapshot(&self, id: &str, revision: &str) -> Option<Snapshot> {
        let repo = self.repo_dir(id);
        let commit = if is_commit(revision) {
            revision.to_string()
        } else {
            let text = crate::input::read_regular(&repo.join("refs").join(revision)).ok()?;
            text.trim().to_string()
        };
        let dir = repo.join("snapshots").join(&commit);
        has_config(&dir).then_some(Snapshot { dir, commit })
    }
}

fn has_config(dir: &Path) -> bool {
    !dir.as_os_str().is_empty() && dir.join("config.json").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_ids_and_paths() {
        for id in ["Qwen/Qwen3-8B", "gpt2", "meta-llama/Llama-3.1-8B-Instruct"] {
            assert!(is_repo_id(id), "{id}");
        }
        for p in [
            "/models/Qwen3-8B",
            "./m",
            "../m",
            "a/b/c",
            "",
            "org/..",
            "~/m",
        ] {
            assert!(!is_repo_id(p), "{p}");
        }
    }

    #[test]
    fn snapshot_by_ref_or_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = HubCache {
            dir: tmp.path().to_path_buf(),
        };
        let commit = "0123456789abcdef0123456789abcdef01234567";
        let repo = cache.repo_dir("org/m");
        assert!(repo.ends_with("models--org--m"));
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::create_dir_all(repo.join("snapshots").join(commit)).unwrap();
        std::fs::write(repo.join("refs/main"), format!("{commit}\n")).unwrap();
        assert_eq!(cache.snapshot("org/m", "main"), None, "no config.json yet");
        std::fs::write(
            repo.join("snapshots").join(commit).join("config.json"),
            "{}",
        )
        .unwrap();
        let s = cache.snapshot("org/m", "main").unwrap();
        assert_eq!(s.commit, commit);
        assert_eq!(cache.snapshot("org/m", commit), Some(s));
        assert_eq!(cache.snapshot("org/m", "v2"), None);
        assert_eq!(cache.snapshot("org/other", "main"), None);
    }
}
