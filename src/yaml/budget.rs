//! serde-saphyr 2.2's default budget per document (`de/budget.rs` `Budget::default`,
//! `de/options.rs` `AliasLimits::default`), which kvlint read YAML through before, with its
//! error texts: what keeps hostile YAML (alias bombs, deep nesting, floods of nodes) bounded.

/// Deepest nesting of sequences and maps (`Budget::max_depth`).
pub(super) const MAX_DEPTH: usize = 64;
/// Parser events per document (`Budget::max_events`).
const MAX_EVENTS: usize = 1_000_000;
/// Scalars, sequences and maps per document, alias copies included (`Budget::max_nodes`).
const MAX_NODES: usize = 250_000;
/// Alias references (`Budget::max_aliases`) and anchors (`Budget::max_anchors`).
const MAX_ALIASES: usize = 50_000;
const MAX_ANCHORS: usize = 50_000;
/// Events copied through aliases, nested copies included (`AliasLimits::max_total_replayed_events`).
const MAX_REPLAYED_EVENTS: usize = 1_000_000;
/// Bytes of scalar and tag text (`Budget::max_total_scalar_bytes`).
const MAX_SCALAR_BYTES: usize = 64 * 1024 * 1024;
/// Merge keys (`Budget::max_merge_keys`).
const MAX_MERGE_KEYS: usize = 10_000;
/// From this many aliases on, a document needs an anchor for every ten of them
/// (`Budget::alias_anchor_min_aliases`, `alias_anchor_ratio_multiplier`).
const RATIO_MIN_ALIASES: usize = 100;
const RATIO_MULTIPLIER: usize = 10;

/// Where and why a document could not be read; `at` is a byte offset in the document.
pub(super) struct Failure {
    pub message: String,
    pub at: usize,
}

impl Failure {
    pub(super) fn new(message: impl Into<String>, at: usize) -> Failure {
        Failure {
            message: message.into(),
            at,
        }
    }
}

/// serde-saphyr's words for a breach (`budget breached: {BudgetBreach:?}`). Cold, so that the
/// counting inlined into every event stays a few instructions.
#[cold]
#[inline(never)]
fn breach(what: String, at: usize) -> Failure {
    Failure::new(format!("budget breached: {what}"), at)
}

/// The counters of one document.
#[derive(Default)]
pub(super) struct Counts {
    events: usize,
    /// Nodes so far, alias copies included.
    pub nodes: usize,
    aliases: usize,
    anchors: usize,
    replayed: usize,
    scalar_bytes: usize,
    merge_keys: usize,
}

impl Counts {
    /// Every parser event counts, as serde-saphyr's budget observed them.
    #[inline]
    pub(super) fn event(&mut self, at: usize) -> Result<(), Failure> {
        self.events += 1;
        if self.events > MAX_EVENTS {
            return Err(breach(format!("Events {{ events: {} }}", self.events), at));
        }
        Ok(())
    }

    /// A scalar, sequence or map, its tag's bytes and its anchor.
    #[inline]
    pub(super) fn node(
        &mut self,
        anchored: bool,
        tag_bytes: usize,
        at: usize,
    ) -> Result<(), Failure> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(breach(format!("Nodes {{ nodes: {} }}", self.nodes), at));
        }
        self.scalar_bytes(tag_bytes, at)?;
        if anchored {
            self.anchors += 1;
            if self.anchors > MAX_ANCHORS {
                return Err(breach(
                    format!("Anchors {{ anchors: {} }}", self.anchors),
                    at,
                ));
            }
        }
        Ok(())
    }

    #[inline]
    pub(super) fn scalar_bytes(&mut self, bytes: usize, at: usize) -> Result<(), Failure> {
        self.scalar_bytes = self.scalar_bytes.saturating_add(bytes);
        if self.scalar_bytes > MAX_SCALAR_BYTES {
            let total = self.scalar_bytes;
            return Err(breach(
                format!("ScalarBytes {{ total_scalar_bytes: {total} }}"),
                at,
            ));
        }
        Ok(())
    }

    pub(super) fn merge_key(&mut self, at: usize) -> Result<(), Failure> {
        self.merge_keys += 1;
        if self.merge_keys > MAX_MERGE_KEYS {
            let n = self.merge_keys;
            return Err(breach(format!("MergeKeys {{ merge_keys: {n} }}"), at));
        }
        Ok(())
    }

    /// An alias that copies `nodes` nodes, `events` events deep: what refuses an alias bomb
    /// before it is expanded.
    pub(super) fn alias(&mut self, nodes: usize, events: usize, at: usize) -> Result<(), Failure> {
        self.aliases += 1;
        if self.aliases > MAX_ALIASES {
            return Err(breach(
                format!("Aliases {{ aliases: {} }}", self.aliases),
                at,
            ));
        }
        // Nodes copied count against the node budget too, as serde-saphyr's replayed events did.
        self.nodes += nodes;
        if self.nodes > MAX_NODES {
            return Err(breach(format!("Nodes {{ nodes: {} }}", MAX_NODES + 1), at));
        }
        self.replayed += events;
        if self.replayed > MAX_REPLAYED_EVENTS {
            let over = MAX_REPLAYED_EVENTS + 1;
            return Err(Failure::new(
                format!("alias replay limit exceeded: total_replayed_events={over} > {MAX_REPLAYED_EVENTS}"),
                at,
            ));
        }
        Ok(())
    }

    /// Nesting `depth` levels deep.
    #[inline]
    pub(super) fn depth(depth: usize, at: usize) -> Result<(), Failure> {
        if depth > MAX_DEPTH {
            return Err(breach(format!("Depth {{ depth: {depth} }}"), at));
        }
        Ok(())
    }

    /// At the end of the document: many aliases need anchors in proportion.
    pub(super) fn ratio(&self, at: usize) -> Result<(), Failure> {
        let (aliases, anchors) = (self.aliases, self.anchors);
        if aliases >= RATIO_MIN_ALIASES && (anchors == 0 || aliases > RATIO_MULTIPLIER * anchors) {
            return Err(breach(
                format!("AliasAnchorRatio {{ aliases: {aliases}, anchors: {anchors} }}"),
                at,
            ));
        }
        Ok(())
    }
}
