//! Loaded input text: file ids, byte spans and the line/column each span maps to.
//! Every later stage keeps `Loc`s into these files so a finding can point at the exact flag.

use std::ops::Range;

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
    line_starts: Vec<usize>,
    /// Characters before each [`CHAR_BLOCK`]-byte block: a column is then found in a bounded
    /// count, not by counting from the start of a (possibly megabyte-long) line.
    chars_before: Vec<usize>,
}

/// Bytes per block of [`SourceFile::chars_before`].
const CHAR_BLOCK: usize = 512;

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut chars_before = Vec::with_capacity(text.len() / CHAR_BLOCK + 1);
        let mut count = 0;
        for block in text.as_bytes().chunks(CHAR_BLOCK) {
            chars_before.push(count);
            count += chars_in(block);
        }
        SourceFile {
            name: name.into(),
            text,
            line_starts,
            chars_before,
        }
    }

    /// Characters before byte `offset`.
    fn char_index(&self, offset: usize) -> usize {
        let block = offset / CHAR_BLOCK;
        let before = self.chars_before.get(block).copied().unwrap_or(0);
        let start = (block * CHAR_BLOCK).min(self.text.len());
        before + chars_in(&self.text.as_bytes()[start..offset.min(self.text.len())])
    }

    /// 1-based line and column (column counted in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self.char_index(offset) - self.char_index(start);
        (line + 1, col + 1)
    }

    /// Byte offset of a 1-based line and column (column in characters).
    pub fn offset_of(&self, line: usize, col: usize) -> usize {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        self.text[start..]
            .char_indices()
            .nth(col.saturating_sub(1))
            .map_or(self.text.len(), |(i, _)| start + i)
    }
}

/// UTF-8 characters in a byte slice: bytes that do not continue a character.
fn chars_in(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// All files of one run.
#[derive(Debug, Default)]
pub struct Sources {
    files: Vec<SourceFile>,
}

impl Sources {
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile::new(name, text));
        FileId(self.files.len() - 1)
    }
    /// The id the next [`Sources::add`] returns.
    pub fn next_id(&self) -> FileId {
        FileId(self.files.len())
    }
    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0]
    }
    /// Every loaded file with its id.
    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(i, f)| (FileId(i), f))
    }
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files.iter().position(|f| f.name == name).map(FileId)
    }
    pub fn text(&self, loc: Loc) -> &str {
        self.get(loc.file).text.get(loc.range()).unwrap_or("")
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
    fn columns_on_long_lines_count_characters_across_blocks() {
        let line = "é".repeat(5000) + "x";
        let f = SourceFile::new("x", format!("a\n{line}"));
        let x = f.text.len() - 1;
        assert_eq!(f.line_col(x), (2, 5001));
        assert_eq!(f.line_col(f.text.len()), (2, 5002));
    }
}
