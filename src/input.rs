//! Reading what `kvlint check` is given: stdin, files, and directories walked with ripgrep's
//! walker (`ignore`): `.gitignore` respected as ruff does, hidden and build directories skipped,
//! each real directory and file read once however many symlinks lead to it, and nothing but
//! regular files opened (a FIFO blocks a reader forever). Every read stops at a size cap.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One loaded input: its name in reports, its text, and the directory relative paths in it
/// (an engine `--config`) are resolved from.
#[derive(Debug)]
pub struct Input {
    pub name: String,
    pub text: String,
    pub base: Option<PathBuf>,
}

/// How inputs are read.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest input in bytes.
    pub max_size: u64,
    /// Whether `.gitignore`, `.git/info/exclude` and `.ignore` files apply in directories.
    pub vcs_ignores: bool,
    /// `--stdin-filename`: the name stdin is reported under (its extension picks the reader).
    pub stdin_name: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is larger than {max} bytes; --max-input-size raises the limit")]
    TooLarge { path: String, max: u64 },
    #[error("{path} is not valid UTF-8 text")]
    NotText { path: String },
    #[error("{path} is {what}, not a regular file; pipe it to `kvlint check -` to read it")]
    NotAFile { path: String, what: &'static str },
    #[error("{path} is {what}, not a regular file")]
    NotRegular { path: String, what: &'static str },
}

impl InputError {
    /// The message without the path, for errors that name the file themselves.
    pub fn reason(&self) -> String {
        match self {
            InputError::Read { source, .. } => format!("cannot read: {source}"),
            InputError::TooLarge { max, .. } => format!("larger than {max} bytes"),
            InputError::NotText { .. } => "not valid UTF-8 text".into(),
            InputError::NotAFile { what, .. } | InputError::NotRegular { what, .. } => {
                format!("{what}, not a regular file")
            }
        }
    }
}

/// The default of `--max-input-size`, and the limit on every other file kvlint reads.
pub const DEFAULT_MAX_SIZE: u64 = 256 * 1024 * 1024;

/// Reads a file kvlint is pointed at outside `check`'s inputs (a `--config`, a `--model-config`,
/// an engine config file, a launch file, a cache entry) with the checks `check` gives its own: a
/// regular file after symlinks (a FIFO or a device would block or never end), at most
/// [`DEFAULT_MAX_SIZE`] bytes, UTF-8.
pub fn read_regular(path: &Path) -> Result<String, InputError> {
    let (file, size) = open_regular(path)?;
    read_capped(file, &path.display().to_string(), DEFAULT_MAX_SIZE, size)
}

/// Opens a regular file (after symlinks) and returns it with its size; anything else is refused
/// before it is opened, as opening a FIFO blocks until a writer comes.
pub fn open_regular(path: &Path) -> Result<(std::fs::File, u64), InputError> {
    let name = path.display().to_string();
    let err = |source| InputError::Read {
        path: name.clone(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(err)?;
    let not_regular = |meta: &std::fs::Metadata| InputError::NotRegular {
        path: name.clone(),
        what: kind(&meta.file_type()),
    };
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let file = std::fs::File::open(path).map_err(err)?;
    // Swapped between the two looks: what was opened is what counts.
    let opened = file.metadata().map_err(err)?;
    if !opened.is_file() {
        return Err(not_regular(&opened));
    }
    Ok((file, opened.len()))
}

/// Reads `-` (stdin), a file, or the checkable files below a directory. `excluded` is
/// kvlint.toml's `exclude`.
pub fn read(
    input: &str,
    limits: &Limits,
    excluded: impl Fn(&Path) -> bool + Send + Sync + 'static,
) -> Result<Vec<Input>, InputError> {
    if input == "-" {
        let name = limits.stdin_name.as_deref().unwrap_or("<stdin>");
        let text = read_capped(std::io::stdin().lock(), name, limits.max_size, 0)?;
        return Ok(vec![Input {
            name: name.into(),
            text,
            base: std::env::current_dir().ok(),
        }]);
    }
    let path = Path::new(input);
    let files = if path.is_dir() {
        walk(path, limits, excluded)
    } else {
        let meta = std::fs::metadata(path).map_err(|source| InputError::Read {
            path: input.to_string(),
            source,
        })?;
        if !meta.is_file() {
            return Err(InputError::NotAFile {
                path: input.to_string(),
                what: kind(&meta.file_type()),
            });
        }
        vec![path.to_path_buf()]
    };
    files.into_iter().map(|f| read_file(&f, limits)).collect()
}

fn read_file(path: &Path, limits: &Limits) -> Result<Input, InputError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| InputError::Read {
        path: name.clone(),
        source,
    })?;
    // Sized from the start: grown by doubling, the buffer would peak at up to twice the file.
    let size = file.metadata().map_or(0, |m| m.len());
    let text = read_capped(file, &name, limits.max_size, size)?;
    Ok(Input {
        name,
        text,
        base: path.parent().map(Path::to_path_buf),
    })
}

/// Reads at most `max` bytes; more is an error, not a truncation. `size` is the expected length.
fn read_capped(reader: impl Read, name: &str, max: u64, size: u64) -> Result<String, InputError> {
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(max)).unwrap_or(0));
    reader
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Read {
            path: name.to_string(),
            source,
        })?;
    if bytes.len() as u64 > max {
        return Err(InputError::TooLarge {
            path: name.to_string(),
            max,
        });
    }
    String::from_utf8(bytes).map_err(|_| InputError::NotText {
        path: name.to_string(),
    })
}

/// Checkable files below a directory, sorted by path. Symlinks are followed, but a directory or
/// file reached before (a loop, or two links to one place) is skipped; what cannot be read and
/// what is not a regular file are skipped with a note on stderr.
fn walk(
    dir: &Path,
    limits: &Limits,
    excluded: impl Fn(&Path) -> bool + Send + Sync + 'static,
) -> Vec<PathBuf> {
    let seen: Mutex<HashSet<PathBuf>> = Mutex::default();
    let first_visit = move |path: &Path| {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        seen.lock().unwrap_or_else(|e| e.into_inner()).insert(real)
    };
    let mut builder = ignore::WalkBuilder::new(dir);
    builder
        .follow_links(true)
        .hidden(true)
        .parents(limits.vcs_ignores)
        .ignore(limits.vcs_ignores)
        .git_ignore(limits.vcs_ignores)
        .git_exclude(limits.vcs_ignores)
        .git_global(false)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            let name = e.file_name().to_str().unwrap_or("");
            let skipped_dir = e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && (name == "target" || name == "node_modules");
            !skipped_dir && !excluded(e.path()) && first_visit(e.path())
        });
    let mut out = Vec::new();
    for entry in builder.build() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                note(&format!("skipped {}", one_line(&e)));
                continue;
            }
        };
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name().to_str().unwrap_or("");
        if file_type.is_dir() {
            continue;
        }
        // Only a regular file is opened (a shebang is read from extensionless ones).
        if !file_type.is_file() {
            if checkable(name) {
                note(&format!(
                    "skipped {}: {}, not a regular file",
                    entry.path().display(),
                    kind(&file_type)
                ));
            }
            continue;
        }
        if crate::extract::is_input_file(entry.path()) {
            out.push(entry.into_path());
        }
    }
    out.sort();
    out
}

/// The walker's error on one line (a loop error names both ends).
fn one_line(e: &ignore::Error) -> String {
    e.to_string().replace('\n', " ")
}

fn note(text: &str) {
    eprintln!("kvlint: note: {text}");
}

fn kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Names a reader would take for inputs (extensions in any case): a file of this name that is not
/// a regular file is worth a note.
fn checkable(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map(|(_, e)| e);
    matches!(
        ext,
        Some("sh" | "bash" | "zsh" | "ksh" | "yaml" | "yml" | "json")
    ) || lower.starts_with("dockerfile")
}

/// `256M`, `1G`, `4096`: a size in bytes with an optional binary suffix.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("{text:?} is not a size like 256M")),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("{text:?} is not a size like 256M"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("lots").is_err());
    }
}
