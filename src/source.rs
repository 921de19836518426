//! Loaded input text: file ids, byte spans and the line/column each span maps to.
//! Every later stage keeps `Loc`s into these files so a finding can point at the exact flag.

use std::ops::Range;
use std::sync::Arc;

/// Index of a file in [`Sources`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub usize);

/// A byte range in one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Loc {
    pub file: FileId,
    pub start: usize,
    pub end: usize,
}

impl Loc {
    pub fn new(file: FileId, range: Range<usize>) -> Self {
        Loc {
            file,
            start: range.start,
            end: range.end,
        }
    }
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }
    /// The smallest span covering both (same file assumed).
    pub fn join(self, other: Loc) -> Loc {
        if self.file != other.file {
            return self;
        }
        Loc {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One loaded file (or stdin, or a synthetic command line).
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// Per [`BLOCK`]-byte block (and one for the end): what comes before the block's first byte,
    /// so that a line and column are found by scanning one block, not by counting from the start
    /// of the file or of a (possibly megabyte-long) line. 24 bytes per 512 of text, where a
    /// table of line starts took 8 bytes per line.
    blocks: Vec<Before>,
}

/// Counts before a block's first byte.
#[derive(Debug, Clone, Copy)]
struct Before {
    chars: usize,
    newlines: usize,
    /// Where the line holding the block's first byte starts.
    line_start: usize,
}

/// Bytes per block of [`SourceFile::blocks`].
const BLOCK: usize = 512;

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let mut blocks = Vec::with_capacity(text.len() / BLOCK + 2);
        let mut at = Before {
            chars: 0,
            newlines: 0,
            line_start: 0,
        };
        for (i, block) in text.as_bytes().chunks(BLOCK).enumerate() {
            blocks.push(at);
            at.chars += chars_in(block);
            at.newlines += newlines_in(block);
            if let Some(nl) = block.iter().rposition(|&b| b == b'\n') {
                at.line_start = i * BLOCK + nl + 1;
            }
        }
        // An entry for the end too, when it starts a block of its own.
        if text.len() % BLOCK == 0 {
            blocks.push(at);
        }
        SourceFile {
            name: name.into(),
            text,
            blocks,
        }
    }

    /// The counts before the block holding byte `offset` (at most the text's length), and the
    /// bytes from the block's start to `offset`.
    fn block_of(&self, offset: usize) -> (Before, &[u8]) {
        let block = offset / BLOCK;
        (
            self.blocks[block],
            &self.text.as_bytes()[block * BLOCK..offset],
        )
    }

    /// Characters before byte `offset`.
    fn char_index(&self, offset: usize) -> usize {
        let (before, head) = self.block_of(offset);
        before.chars + chars_in(head)
    }

    /// 1-based line and column (column counted in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let (before, head) = self.block_of(offset);
        let line = before.newlines + newlines_in(head);
        let col = match head.iter().rposition(|&b| b == b'\n') {
            // The line starts in this block: count its characters alone.
            Some(nl) => chars_in(&head[nl + 1..]),
            None => self.char_index(offset) - self.char_index(before.line_start),
        };
        (line + 1, col + 1)
    }

    /// Byte offset of a 1-based line and column (column in characters).
    pub fn offset_of(&self, line: usize, col: usize) -> usize {
        let Some(start) = self.line_start(line.saturating_sub(1)) else {
            return self.text.len();
        };
        self.text[start..]
            .char_indices()
            .nth(col.saturating_sub(1))
            .map_or(self.text.len(), |(i, _)| start + i)
    }

    /// Where the 0-based line `n` starts: after the `n`th newline.
    fn line_start(&self, n: usize) -> Option<usize> {
        if n == 0 {
            return Some(0);
        }
        // The last block with fewer than `n` newlines before it holds the `n`th.
        let block = self
            .blocks
            .partition_point(|b| b.newlines < n)
            .checked_sub(1)?;
        let from = block * BLOCK;
        let bytes = self.text.as_bytes().get(from..)?;
        let skip = n - self.blocks[block].newlines - 1;
        let nl = bytes
            .iter()
            .take(BLOCK)
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .nth(skip)?
            .0;
        Some(from + nl + 1)
    }
}

/// UTF-8 characters in a byte slice: bytes that do not continue a character.
fn chars_in(bytes: &[u8]) -> usize {
    count(bytes, |b| (b as i8) >= -0x40)
}

fn newlines_in(bytes: &[u8]) -> usize {
    count(bytes, |b| b == b'\n')
}

/// Bytes for which `is` holds, summed in byte lanes over runs of at most 255 bytes: the compiler
/// turns that into SIMD, where a filtered count cost 10 instructions a byte (callgrind).
fn count(bytes: &[u8], is: impl Fn(u8) -> bool) -> usize {
    bytes
        .chunks(255)
        .map(|run| usize::from(run.iter().fold(0u8, |n, &b| n + u8::from(is(b)))))
        .sum()
}

/// All files of one run. Each file is shared, so that threads reading a file's documents hold it
/// while the run adds the files its launches name (`--config`).
#[derive(Debug, Default)]
pub struct Sources {
    files: Vec<Arc<SourceFile>>,
}

impl Sources {
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(Arc::new(SourceFile::new(name, text)));
        FileId(self.files.len() - 1)
    }
    /// The id the next [`Sources::add`] returns.
    pub fn next_id(&self) -> FileId {
        FileId(self.files.len())
    }
    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0]
    }
    /// A handle on one file that outlives this borrow of `Sources`.
    pub fn shared(&self, id: FileId) -> Arc<SourceFile> {
        Arc::clone(&self.files[id.0])
    }
    /// Every loaded file with its id.
    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i), &**f))
    }
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files.iter().position(|f| f.name == name).map(FileId)
    }
    pub fn text(&self, loc: Loc) -> &str {
        self.get(loc.file).text.get(loc.range()).unwrap_or("")
    }
    /// The 1-based line a span starts on (half the work of [`Sources::position`]).
    pub fn line(&self, loc: Loc) -> usize {
        self.get(loc.file).line_col(loc.start).0
    }
    /// (line, column, end line, end column), all 1-based; the end is exclusive.
    pub fn position(&self, loc: Loc) -> Position {
        let f = self.get(loc.file);
        let (line, column) = f.line_col(loc.start);
        let (end_line, end_column) = f.line_col(loc.end);
        Position {
            line,
            column,
            end_line,
            end_column,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_count_chars() {
        let f = SourceFile::new("x", "ab\nçd --tp 8\n");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (2, 1));
        // 'ç' is two bytes: "--tp" starts at byte 7, the 4th character of line 2.
        assert_eq!(f.line_col(7), (2, 4));
        assert_eq!(f.offset_of(2, 4), 7);
    }

    #[test]
    fn lines_and_offsets_agree_across_blocks() {
        // Lines of every length from 0 to 1,200 bytes, some with two-byte characters, so that
        // line starts fall at, before and after block boundaries.
        let mut text = String::new();
        let mut starts = vec![0];
        for n in 0..1200 {
            text.push_str(&if n % 3 == 0 {
                "é".repeat(n / 2)
            } else {
                "x".repeat(n)
            });
            text.push('\n');
            starts.push(text.len());
        }
        let f = SourceFile::new("x", text.clone());
        for (line, &start) in starts.iter().enumerate() {
            assert_eq!(f.line_col(start), (line + 1, 1), "line {line}");
            assert_eq!(
                f.offset_of(line + 1, 1),
                start.min(text.len()),
                "line {line}"
            );
        }
        for offset in (0..text.len())
            .step_by(37)
            .filter(|&o| text.is_char_boundary(o))
        {
            let line = starts.partition_point(|&s| s <= offset) - 1;
            let col = text[starts[line]..offset].chars().count() + 1;
            assert_eq!(f.line_col(offset), (line + 1, col), "offset {offset}");
            assert_eq!(f.offset_of(line + 1, col), offset, "offset {offset}");
        }
        assert_eq!(f.offset_of(1202, 1), text.len());
        let exact = SourceFile::new("x", "a".repeat(BLOCK - 1) + "\n");
        assert_eq!(exact.line_col(BLOCK), (2, 1));
        assert_eq!(exact.offset_of(2, 1), BLOCK);
        assert_eq!(SourceFile::new("x", "").line_col(0), (1, 1));
    }

    #[test]
    fn columns_on_long_lines_count_characters_across_blocks() {
        let line = "é".repeat(5000) + "x";
        let f = SourceFile::new("x", format!("a\n{line}"));
        let x = f.text.len() - 1;
        assert_eq!(f.line_col(x), (2, 5001));
        assert_eq!(f.line_col(f.text.len()), (2, 5002));
    }
}
