//! Model resolution once per distinct request in a run: a Helm render repeats a handful of
//! models over thousands of launches, and each resolution reads the environment, stats the
//! Hugging Face cache, may ask the Hub and parses the catalog. The answer depends only on what
//! the launch asks for (no span), so every launch of the run gets the same answer, and the Hub
//! is asked at most once per model.

use std::collections::HashMap;
use std::sync::Arc;

use super::resolve::{Resolver, Unresolved, Wanted};
use super::Geometry;

/// Distinct requests remembered per run; more are resolved each time, so a hostile input with
/// a million distinct models costs what it did before and holds no more than this.
const CAPACITY: usize = 1024;

/// A geometry is shared, not copied, by the launches that ask for it.
type Answer = Result<Arc<Geometry>, Result<String, Unresolved>>;

/// What a launch asks for, owned.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Key {
    model: String,
    revision: Option<String>,
    served: Vec<String>,
}

impl Key {
    fn of(want: &Wanted) -> Key {
        Key {
            model: want.model.to_string(),
            revision: want.revision.map(str::to_string),
            served: want.served.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// The answers of one run's resolver (one run: one resolver, one environment).
#[derive(Debug, Default)]
pub struct Memo {
    answers: HashMap<Key, Answer>,
}

impl Memo {
    /// [`Resolver::resolve`], remembered for the rest of the run.
    pub fn resolve(&mut self, resolver: &Resolver, want: &Wanted) -> Answer {
        let key = Key::of(want);
        if let Some(answer) = self.answers.get(&key) {
            return answer.clone();
        }
        let answer = resolver.resolve(want).map(Arc::new);
        if self.answers.len() < CAPACITY {
            self.answers.insert(key, answer.clone());
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want<'a>(model: &'a str, served: &[&'a str]) -> Wanted<'a> {
        Wanted {
            model,
            revision: None,
            served: served.to_vec(),
        }
    }

    #[test]
    fn a_repeated_request_gets_the_first_answer() {
        let (mut memo, resolver) = (Memo::default(), Resolver::default());
        let first = memo.resolve(&resolver, &want("Qwen/Qwen3-8B", &[]));
        let again = memo.resolve(&resolver, &want("Qwen/Qwen3-8B", &[]));
        let direct = resolver.resolve(&want("Qwen/Qwen3-8B", &[]));
        assert_eq!(first.as_deref().ok(), direct.as_ref().ok());
        assert_eq!(again.as_deref().ok(), direct.as_ref().ok());
        assert!(direct.is_ok(), "Qwen3-8B is in the embedded catalog");
        assert_eq!(memo.answers.len(), 1);
        // Another served name is another request: a `[models]` entry may map it.
        let other = memo.resolve(&resolver, &want("Qwen/Qwen3-8B", &["qwen"]));
        assert!(other.is_ok());
        assert_eq!(memo.answers.len(), 2);
    }

    #[test]
    fn the_memo_stays_bounded() {
        let (mut memo, resolver) = (Memo::default(), Resolver::default());
        let names: Vec<String> = (0..CAPACITY + 50).map(|i| format!("org/m{i}")).collect();
        for n in &names {
            assert!(memo.resolve(&resolver, &want(n, &[])).is_err());
        }
        assert_eq!(memo.answers.len(), CAPACITY);
        // Past the bound, answers are still right: computed, not remembered.
        let last = memo.resolve(&resolver, &want(&names[CAPACITY + 10], &[]));
        assert!(matches!(last, Err(Err(_))));
    }
}
