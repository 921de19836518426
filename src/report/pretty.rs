//! serde_json's pretty layout written in pieces, so that a large array is serialized on the
//! `--jobs` threads and still comes out byte for byte as `serde_json::to_writer_pretty` writes the
//! whole document. The pretty formatter indents by depth alone: a value serialized on its own by a
//! formatter that starts at the depth where the value sits is the same text.

use crate::parallel;
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Items serialized by one thread at a time: enough to outweigh the hand-over.
const CHUNK: usize = 32;
/// Chunks serialized ahead of the one written: bounds the text held at once.
const WINDOW: usize = 16;

/// `serde_json`'s pretty indent.
const INDENT: &[u8] = b"  ";

/// A pretty formatter whose values sit `depth` levels deep, as inside that many arrays.
fn at_depth(depth: usize) -> PrettyFormatter<'static> {
    let mut f = PrettyFormatter::new();
    for _ in 0..depth {
        // Only the indent level counts; the bracket goes nowhere.
        let _ = f.begin_array(&mut io::sink());
    }
    f
}

fn indent<W: Write + ?Sized>(w: &mut W, depth: usize) -> io::Result<()> {
    for _ in 0..depth {
        w.write_all(INDENT)?;
    }
    Ok(())
}

/// `value` as the pretty serializer writes it `depth` levels deep.
pub fn value<W: Write + ?Sized, T: Serialize + ?Sized>(
    w: &mut W,
    depth: usize,
    value: &T,
) -> io::Result<()> {
    let mut s = serde_json::Serializer::with_formatter(w, at_depth(depth));
    value.serialize(&mut s).map_err(io::Error::from)
}

/// A JSON object written field by field, `depth` levels deep.
pub struct Object<'w, W: Write + ?Sized> {
    w: &'w mut W,
    depth: usize,
    fields: usize,
}

impl<'w, W: Write + ?Sized> Object<'w, W> {
    pub fn new(w: &'w mut W, depth: usize) -> io::Result<Self> {
        w.write_all(b"{")?;
        Ok(Object {
            w,
            depth,
            fields: 0,
        })
    }

    /// A field whose value `write` writes, one level deeper than the object.
    pub fn field_with(
        &mut self,
        key: &str,
        write: impl FnOnce(&mut W, usize) -> io::Result<()>,
    ) -> io::Result<()> {
        let w = &mut *self.w;
        w.write_all(if self.fields == 0 { b"\n" } else { b",\n" })?;
        indent(w, self.depth + 1)?;
        serde_json::to_writer(&mut *w, key)?;
        w.write_all(b": ")?;
        self.fields += 1;
        write(w, self.depth + 1)
    }

    pub fn field<T: Serialize + ?Sized>(&mut self, key: &str, v: &T) -> io::Result<()> {
        self.field_with(key, |w, depth| value(w, depth, v))
    }

    pub fn end(self) -> io::Result<()> {
        if self.fields > 0 {
            self.w.write_all(b"\n")?;
            indent(self.w, self.depth)?;
        }
        self.w.write_all(b"}")
    }
}

/// An array of one element, which `write` writes one level deeper than the array.
pub fn single<W: Write + ?Sized>(
    w: &mut W,
    depth: usize,
    write: impl FnOnce(&mut W, usize) -> io::Result<()>,
) -> io::Result<()> {
    w.write_all(b"[\n")?;
    indent(w, depth + 1)?;
    write(w, depth + 1)?;
    w.write_all(b"\n")?;
    indent(w, depth)?;
    w.write_all(b"]")
}

/// `items` as a JSON array `depth` levels deep, each element the value `item` gives: serialized
/// in chunks on up to `jobs` threads and written in order as each chunk and those before it are
/// done, so that only a window of chunks is held at once.
pub fn array<'a, W, T, V>(
    w: &mut W,
    depth: usize,
    items: &'a [T],
    jobs: usize,
    item: impl Fn(&'a T) -> V + Sync,
) -> io::Result<()>
where
    W: Write + ?Sized,
    T: Sync,
    V: Serialize,
{
    if items.is_empty() {
        return w.write_all(b"[]");
    }
    w.write_all(b"[")?;
    let chunks: Vec<(usize, &'a [T])> = items
        .chunks(CHUNK)
        .enumerate()
        .map(|(i, c)| (i * CHUNK, c))
        .collect();
    // After a failed write, the chunks still to come are not serialized.
    let failed = AtomicBool::new(false);
    let serialize = |&(first, chunk): &(usize, &'a [T])| -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        if failed.load(Ordering::Relaxed) {
            return Ok(buf);
        }
        for (i, x) in chunk.iter().enumerate() {
            buf.extend_from_slice(if first + i == 0 { b"\n" } else { b",\n" });
            indent(&mut buf, depth + 1)?;
            value(&mut buf, depth + 1, &item(x))?;
        }
        Ok(buf)
    };
    let mut result = Ok(());
    parallel::for_each_ordered(&chunks, jobs, WINDOW, serialize, |piece| {
        if result.is_ok() {
            result = piece.and_then(|bytes| w.write_all(&bytes));
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
        }
    });
    result?;
    w.write_all(b"\n")?;
    indent(w, depth)?;
    w.write_all(b"]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Objects, arrays (empty ones too) and scalars nested as a report nests them.
    fn items(n: usize) -> Vec<serde_json::Value> {
        (0..n)
            .map(|i| {
                json!({
                    "i": i,
                    "name": format!("launch \"{i}\"\n"),
                    "empty_list": [],
                    "empty_map": {},
                    "nested": {"a": [1, {"b": null}], "c": [[]]},
                    "maybe": if i % 2 == 0 { json!(null) } else { json!([i, i + 1]) },
                })
            })
            .collect()
    }

    /// The pieces written by hand, against serde_json writing the same document whole.
    #[test]
    fn pieces_are_the_text_serde_json_writes_whole() {
        for n in [0, 1, 2, CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK + 3] {
            let list = items(n);
            let whole = serde_json::to_string_pretty(&json!({
                "count": n,
                "items": list,
                "inner": {"items": list, "none": {}},
                "one": [{"items": list}],
                "last": "end",
            }))
            .expect("serializes");
            for jobs in [0, 1, 2, 4] {
                let mut out = Vec::new();
                let mut o = Object::new(&mut out, 0).expect("write");
                o.field("count", &n).expect("write");
                o.field_with("items", |w, d| array(w, d, &list, jobs, |x| x))
                    .expect("write");
                o.field_with("inner", |w, d| {
                    let mut inner = Object::new(w, d)?;
                    inner.field_with("items", |w, d| array(w, d, &list, jobs, |x| x))?;
                    inner.field_with("none", |w, d| Object::new(w, d)?.end())?;
                    inner.end()
                })
                .expect("write");
                o.field_with("one", |w, d| {
                    single(w, d, |w, d| {
                        let mut inner = Object::new(w, d)?;
                        inner.field_with("items", |w, d| array(w, d, &list, jobs, |x| x))?;
                        inner.end()
                    })
                })
                .expect("write");
                o.field("last", "end").expect("write");
                o.end().expect("write");
                assert_eq!(
                    String::from_utf8(out).expect("utf-8"),
                    whole,
                    "{n} items, {jobs} jobs"
                );
            }
        }
    }

    /// A writer that fails after `room` bytes.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.room {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "full"));
            }
            self.room -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_is_returned() {
        let list = items(10 * CHUNK);
        for jobs in [1, 2] {
            let mut w = Full { room: 5000 };
            let err = array(&mut w, 1, &list, jobs, |x| x).expect_err("the writer is full");
            assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        }
    }
}
