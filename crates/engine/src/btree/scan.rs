//! Searches and range scans: descend to the first leaf that can hold the
//! lower bound, then walk right along the leaf level, one page lock at a
//! time.
//!
//! A scan copies *all* qualifying entries of a leaf and its right link
//! under one shared lock, then releases it before returning any of them
//! (PostgreSQL's `_bt_readpage`). This is what makes following a saved
//! right link safe after the lock is gone: if the page splits later, the
//! entries that move right were already copied, and every entry that was
//! to the right of the page when it was read is reachable from the saved
//! link, because entries only ever move right. So a scan returns every
//! entry present when it started exactly once, in order, without ever
//! holding two locks or blocking a splitter for longer than one page read.

use super::error::Result;
use super::key::{self, split_entry};
use super::page::{self, Bad};
use super::tree::BTree;
use crate::tid::Tid;
use crate::types::Value;
use std::borrow::Cow;
use std::ops::Bound;
use turnstile_storage::{BlockNumber, PinnedBuffer};

/// One entry returned by a scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// The key, one value per index column.
    pub key: Vec<Value>,
    /// The heap tuple it points to.
    pub tid: Tid,
}

/// Where a scan goes next.
#[derive(Clone, Copy, Debug)]
enum Next {
    /// Descend to the lower bound.
    Start,
    /// Read this leaf.
    Page(BlockNumber),
    /// Done.
    End,
}

/// The raw scan: entry bytes (`key ‖ tid`) in order.
#[derive(Debug)]
struct RawScan<'t, 'p> {
    tree: &'t BTree<'p>,
    /// The bounds, encoded; borrowed when the caller encoded them
    /// ([`BTree::equal_encoded`]).
    lower: Bound<Cow<'t, [u8]>>,
    upper: Bound<Cow<'t, [u8]>>,
    next: Next,
    batch: Vec<Vec<u8>>,
    /// The leaf the batch was copied from (for error messages).
    batch_block: BlockNumber,
    pos: usize,
    last: Option<Vec<u8>>,
    moves: u32,
}

/// An ordered scan over a key range ([`BTree::range`]): an iterator of
/// entries in key order (TID order within a key). It holds no lock
/// between calls to `next`.
#[derive(Debug)]
pub struct RangeScan<'t, 'p> {
    raw: RawScan<'t, 'p>,
}

impl<'p> BTree<'p> {
    /// Every entry with `lower ≤ key ≤ upper` (per the bounds), in order.
    /// A bound may give fewer values than the index has columns: it is then
    /// a prefix (`Included([7])` as upper bound admits `(7, anything)`).
    pub fn range(&self, lower: Bound<&[Value]>, upper: Bound<&[Value]>) -> Result<RangeScan<'_, 'p>> {
        Ok(RangeScan { raw: self.raw_scan(self.encode_bound(lower)?, self.encode_bound(upper)?) })
    }

    /// The TIDs of every entry whose key starts with `key` (all of them
    /// when `key` has a value for every column), in TID order.
    pub fn search(&self, key: &[Value]) -> Result<Vec<Tid>> {
        let k = self.encode_prefix(key)?;
        let mut scan = self.raw_scan(Bound::Included(Cow::Borrowed(&k)), Bound::Included(Cow::Borrowed(&k)));
        let mut out = Vec::new();
        while let Some(e) = scan.next_entry()? {
            let (_, tid) = split_entry(&e)
                .ok_or_else(|| self.corrupt(scan.batch_block, "a leaf entry is too short to hold a TID"))?;
            out.push(tid);
        }
        Ok(out)
    }

    /// `key`, a prefix of this index's key columns, encoded as entries
    /// are: for [`BTree::equal_encoded`], so that a caller probing many
    /// indexes with one value encodes it once.
    pub fn encode_prefix(&self, key: &[Value]) -> Result<Vec<u8>> {
        key::encode_key(&self.opts.key_types, key).map_err(|e| self.key_error(e))
    }

    /// Every entry whose key starts with the encoded `key` (from
    /// [`BTree::encode_prefix`] on an index with the same key types), in
    /// order: [`BTree::range`] with `key` as both bounds, without
    /// encoding or copying it.
    pub fn equal_encoded<'t>(&'t self, key: &'t [u8]) -> RangeScan<'t, 'p> {
        RangeScan { raw: self.raw_scan(Bound::Included(Cow::Borrowed(key)), Bound::Included(Cow::Borrowed(key))) }
    }

    fn raw_scan<'t>(&'t self, lower: Bound<Cow<'t, [u8]>>, upper: Bound<Cow<'t, [u8]>>) -> RawScan<'t, 'p> {
        RawScan {
            tree: self,
            lower,
            upper,
            next: Next::Start,
            batch: Vec::new(),
            batch_block: 0,
            pos: 0,
            last: None,
            moves: 0,
        }
    }

    fn encode_bound(&self, b: Bound<&[Value]>) -> Result<Bound<Cow<'static, [u8]>>> {
        let enc = |k: &[Value]| self.encode_prefix(k).map(Cow::Owned);
        Ok(match b {
            Bound::Included(k) => Bound::Included(enc(k)?),
            Bound::Excluded(k) => Bound::Excluded(enc(k)?),
            Bound::Unbounded => Bound::Unbounded,
        })
    }
}

/// Whether `e` is within `lower`.
fn lower_ok(lower: &Bound<Cow<'_, [u8]>>, e: &[u8]) -> bool {
    match lower {
        Bound::Unbounded => true,
        Bound::Included(p) => e >= &p[..],
        Bound::Excluded(p) => e > &p[..] && !e.starts_with(p),
    }
}

impl<'t, 'p> RawScan<'t, 'p> {
    /// Whether `e` (and so everything after it) is beyond the upper bound.
    fn past_upper(&self, e: &[u8]) -> bool {
        match &self.upper {
            Bound::Unbounded => false,
            Bound::Included(p) => e > &p[..] && !e.starts_with(p),
            Bound::Excluded(p) => e >= &p[..],
        }
    }

    fn next_entry(&mut self) -> Result<Option<Vec<u8>>> {
        loop {
            if self.pos < self.batch.len() {
                self.pos += 1;
                return Ok(Some(std::mem::take(&mut self.batch[self.pos - 1])));
            }
            // The lower bound is lent to `read_leaf` (the first leaf's probe
            // is borrowed from it, not copied) and put back.
            let lower = std::mem::replace(&mut self.lower, Bound::Unbounded);
            let result = match self.next {
                Next::End => {
                    self.lower = lower;
                    return Ok(None);
                }
                Next::Start => {
                    let probe: &[u8] = match &lower {
                        Bound::Included(p) | Bound::Excluded(p) => p,
                        Bound::Unbounded => &[],
                    };
                    self.tree
                        .descend(probe)
                        .and_then(|d| self.read_leaf(&lower, d.leaf, Some((probe, d.unverified_root))))
                }
                Next::Page(block) => self.tree.pin(block).and_then(|pin| self.read_leaf(&lower, pin, None)),
            };
            self.lower = lower;
            if let Err(e) = result {
                self.next = Next::End;
                return Err(e);
            }
        }
    }

    /// Copies the qualifying entries of a leaf and notes where to go next.
    /// `first` is set for the first leaf, reached by a descent: the probe,
    /// and whether the leaf is an unverified cached root (checked once
    /// locked; if stale, the descent is redone from the metapage's root).
    /// Then move right while the probe is `≥` the high key, and start at its
    /// lower bound.
    fn read_leaf(
        &mut self,
        lower: &Bound<Cow<'t, [u8]>>,
        mut pin: PinnedBuffer<'p>,
        first: Option<(&[u8], bool)>,
    ) -> Result<()> {
        let (probe, mut unverified_root) = match first {
            Some((probe, unverified)) => (Some(probe), unverified),
            None => (None, false),
        };
        loop {
            let block = pin.block();
            let bad = |r: Bad| self.tree.corrupt(block, r);
            let p = pin.lock_shared();
            if std::mem::take(&mut unverified_root) && self.tree.root_is_stale(&p, 0) {
                drop(p);
                let probe = probe.expect("only a descent ends at a cached root");
                pin = self.tree.descend_refreshed(probe)?.leaf;
                continue;
            }
            let op = self.tree.tree_page(&p, block, 0)?;
            let right = match probe {
                Some(probe) => self.tree.right_of(&p, &op, block, probe)?,
                None => None,
            };
            if let Some(right) = right {
                pin = self.tree.move_right(p, block, right, &mut self.moves)?;
                continue;
            }
            let start = match probe {
                Some(probe) if self.tree.opts.edge_precheck => {
                    page::lower_bound_at_edges(&p, &op, probe).map_err(bad)?
                }
                Some(probe) => page::lower_bound(&p, probe).map_err(bad)?,
                None => 0,
            };
            self.batch.clear();
            self.batch_block = block;
            self.pos = 0;
            let mut ended = false;
            for i in start..page::count(&p) {
                let e = page::entry(&p, i).map_err(bad)?;
                if !lower_ok(lower, e) {
                    continue;
                }
                if self.past_upper(e) {
                    ended = true;
                    break;
                }
                let previous = self.batch.last().or(self.last.as_ref());
                if previous.is_some_and(|prev| e <= prev.as_slice()) {
                    return Err(self.tree.corrupt(block, "leaf entries are not in strictly increasing order"));
                }
                self.batch.push(e.to_vec());
            }
            if !ended {
                ended = page::high_key(&p, &op).map_err(bad)?.is_some_and(|hk| self.past_upper(hk));
            }
            if let Some(e) = self.batch.last() {
                self.last = Some(e.clone());
            }
            self.next = match op.right {
                Some(right) if !ended => {
                    self.tree.count_move(&mut self.moves, block)?;
                    Next::Page(right)
                }
                _ => Next::End,
            };
            return Ok(());
        }
    }
}

impl Iterator for RangeScan<'_, '_> {
    type Item = Result<IndexEntry>;

    fn next(&mut self) -> Option<Result<IndexEntry>> {
        let e = match self.raw.next_entry() {
            Ok(Some(e)) => e,
            Ok(None) => return None,
            Err(err) => return Some(Err(err)),
        };
        let tree = self.raw.tree;
        let decoded = split_entry(&e).and_then(|(k, tid)| Some((key::decode_key(&tree.opts.key_types, k)?, tid)));
        Some(match decoded {
            Some((key, tid)) => Ok(IndexEntry { key, tid }),
            None => {
                self.raw.next = Next::End;
                Err(tree
                    .corrupt(self.raw.batch_block, "a leaf entry does not decode as a key of the index's column types"))
            }
        })
    }
}
