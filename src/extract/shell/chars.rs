//! A word's characters, each with the file bytes it was written at, held compactly: a word read
//! verbatim from the file (nearly all of them) is its text and one offset; only a word whose
//! characters came from elsewhere (escapes, expansions) keeps a byte range per character. A
//! padded argv of 120,000 words then costs its text, not 24 bytes per character.

/// Characters mapped to the file: `(char, start, end)` in, the same out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chars {
    text: String,
    /// `None` while character `i` sits at `base` plus its byte offset in `text`. Boxed so that
    /// the many words without it pay 8 bytes, not 24; it still grows by pushes.
    #[allow(clippy::box_collection)]
    at: Option<Box<Vec<(usize, usize)>>>,
    base: usize,
}

impl Chars {
    /// `text` as written at `base`.
    pub fn verbatim(text: &str, base: usize) -> Self {
        Chars {
            text: text.to_string(),
            at: None,
            base: if text.is_empty() { 0 } else { base },
        }
    }

    /// Appends a character. The representation depends only on the sequence pushed, so two equal
    /// sequences compare equal.
    pub fn push(&mut self, (c, start, end): (char, usize, usize)) {
        if let Some(at) = &mut self.at {
            at.push((start, end));
        } else if self.text.is_empty() && end == start + c.len_utf8() {
            self.base = start;
        } else if start != self.base + self.text.len() || end != start + c.len_utf8() {
            let mut at: Vec<(usize, usize)> = self.iter().map(|(_, s, e)| (s, e)).collect();
            at.push((start, end));
            self.at = Some(Box::new(at));
        }
        self.text.push(c);
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            chars: self.text.char_indices(),
            at: self.at.as_deref().map(|at| at.iter()),
            base: self.base,
        }
    }

    /// The characters as text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The characters as text, moved out.
    pub fn into_string(self) -> String {
        self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The number of characters.
    pub fn len(&self) -> usize {
        self.at
            .as_ref()
            .map_or_else(|| self.text.chars().count(), |at| at.len())
    }

    pub fn get(&self, i: usize) -> Option<(char, usize, usize)> {
        self.iter().nth(i)
    }

    /// The characters from the `skip`th on.
    pub fn tail(&self, skip: usize) -> Chars {
        self.iter().skip(skip).collect()
    }
}

impl FromIterator<(char, usize, usize)> for Chars {
    fn from_iter<I: IntoIterator<Item = (char, usize, usize)>>(iter: I) -> Self {
        let mut out = Chars::default();
        out.extend(iter);
        out
    }
}

impl Extend<(char, usize, usize)> for Chars {
    fn extend<I: IntoIterator<Item = (char, usize, usize)>>(&mut self, iter: I) {
        for ch in iter {
            self.push(ch);
        }
    }
}

/// The characters of [`Chars`] with their byte ranges.
pub struct Iter<'a> {
    chars: std::str::CharIndices<'a>,
    at: Option<std::slice::Iter<'a, (usize, usize)>>,
    base: usize,
}

impl Iterator for Iter<'_> {
    type Item = (char, usize, usize);

    fn next(&mut self) -> Option<Self::Item> {
        let (i, c) = self.chars.next()?;
        match &mut self.at {
            Some(at) => at.next().map(|&(s, e)| (c, s, e)),
            None => Some((c, self.base + i, self.base + i + c.len_utf8())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbatim_text_keeps_no_ranges_and_others_keep_one_per_character() {
        let w: Chars = "é-x"
            .char_indices()
            .map(|(i, c)| (c, 10 + i, 10 + i + c.len_utf8()))
            .collect();
        assert_eq!(w, Chars::verbatim("é-x", 10));
        assert!(w.at.is_none());
        assert_eq!(w.iter().nth(1), Some(('-', 12, 13)));
        assert_eq!(w.len(), 3);
        // An escape (`\"` read as one `"`) breaks the run: from there each character is mapped.
        let mut e = w.clone();
        e.push(('"', 14, 16));
        e.push(('y', 16, 17));
        let all: Vec<_> = e.iter().collect();
        assert_eq!(
            all,
            [
                ('é', 10, 12),
                ('-', 12, 13),
                ('x', 13, 14),
                ('"', 14, 16),
                ('y', 16, 17)
            ]
        );
        assert_eq!(e.as_str(), "é-x\"y");
        assert_eq!(
            e.tail(3),
            [('"', 14, 16), ('y', 16, 17)].into_iter().collect()
        );
        assert_eq!(e.tail(4), Chars::verbatim("y", 16));
        assert_eq!(e.get(4), Some(('y', 16, 17)));
        assert_eq!(e.tail(9), Chars::default());
    }
}
