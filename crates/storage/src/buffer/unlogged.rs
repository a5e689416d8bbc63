//! Which relations are unlogged: their changes bypass the WAL
//! ([`crate::page_log`]). Asked on every logged change, so the common
//! answer costs one atomic load: with no unlogged relation at all, a flag;
//! otherwise each thread keeps the set it last read and re-reads it (under
//! a mutex) only when its generation moved — it moves when a relation is
//! marked, which is DDL. The set hashes with hashbrown's foldhash: std's
//! SipHash made this lookup, done twice per logged change, a tenth of a
//! `COPY` into an unlogged table.

use crate::rel::RelFileId;
use hashbrown::HashSet;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use turnstile_sync::sync::counter::{AtomicU64, Ordering};

/// The pool's set of unlogged relations.
#[derive(Debug, Default)]
pub(super) struct Unlogged {
    set: Mutex<Arc<HashSet<RelFileId>>>,
    /// 0: no relation was ever marked; else bumped at each change.
    generation: AtomicU64,
}

/// (pool address, generation, set) as a thread last read them.
type Seen = Option<(usize, u64, Arc<HashSet<RelFileId>>)>;

thread_local! {
    static SEEN: RefCell<Seen> = const { RefCell::new(None) };
}

impl Unlogged {
    /// Marks `rel` unlogged (or logged again).
    pub(super) fn set(&self, rel: RelFileId, unlogged: bool) {
        let mut set = self.set.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = HashSet::clone(&set);
        if unlogged {
            next.insert(rel);
        } else {
            next.remove(&rel);
        }
        *set = Arc::new(next);
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Whether `rel` is unlogged; `me` tells this pool's set from
    /// another's in the thread's cache.
    pub(super) fn contains(&self, rel: RelFileId, me: usize) -> bool {
        let generation = self.generation.load(Ordering::Acquire);
        if generation == 0 {
            return false;
        }
        SEEN.with(|seen| {
            let mut seen = seen.borrow_mut();
            match &*seen {
                Some((pool, g, set)) if *pool == me && *g == generation => set.contains(&rel),
                _ => {
                    let set = Arc::clone(&self.set.lock().unwrap_or_else(|p| p.into_inner()));
                    let answer = set.contains(&rel);
                    *seen = Some((me, generation, set));
                    answer
                }
            }
        })
    }
}
