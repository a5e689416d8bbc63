//! The structure check (PostgreSQL's `amcheck` `bt_index_check`): walks
//! every level left to right and verifies the invariants the concurrent
//! algorithms rely on. Meant for a quiescent index (tests, after a crash
//! or a suspicion of corruption): it takes one shared lock at a time, so
//! a concurrent split could make it report a downlink that is simply not
//! inserted yet.
//!
//! Checked, per level `L` from the root down:
//!
//! * the first page is flagged leftmost, no other is; the last has no
//!   right link and no high key; every page is on level `L`;
//! * entries strictly increase; every entry is `< high key`; leaf entries
//!   are `≥` the page's low bound (its left sibling's high key) and decode
//!   as keys of the index's types; an inner page's first separator is
//!   empty (−∞) and the others are `>` the low bound;
//! * the downlinks of level `L`, in order, are exactly the pages of level
//!   `L − 1`, in right-link order, and each non-first separator equals its
//!   child's low bound (a first separator stands for the parent's low
//!   bound, which must then be the child's).

use super::error::Result;
use super::key::{self, split_entry};
use super::page::{self, Bad};
use super::tree::BTree;
use turnstile_storage::{BlockNumber, Fork};

/// What [`BTree::check`] found in a sound index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Pages per level, leaves first.
    pub pages_per_level: Vec<usize>,
    /// Leaf entries.
    pub entries: u64,
}

/// A page of a level, as the walk saw it.
struct LevelPage {
    block: BlockNumber,
    /// The left sibling's high key; `None` for the leftmost page (−∞).
    low: Option<Vec<u8>>,
}

/// A downlink of a level, with what its child's low bound must be.
struct Downlink {
    child: BlockNumber,
    expected_low: Option<Vec<u8>>,
}

impl BTree<'_> {
    /// Verifies the whole tree's structure; the first violation is
    /// returned as [`super::BtreeError::Corrupt`].
    pub fn check(&self) -> Result<CheckReport> {
        let m = self.meta()?;
        let nblocks = self.pool.store().nblocks(self.rel, Fork::Main)? as usize;
        let mut report = CheckReport { pages_per_level: vec![0; usize::from(m.level) + 1], entries: 0 };
        let mut expected: Vec<Downlink> = vec![Downlink { child: m.root, expected_low: None }];
        let mut level = m.level;
        loop {
            let first = expected.first().map_or(m.root, |d| d.child);
            let (pages, downlinks, entries) = self.check_level(first, level, nblocks)?;
            if pages.len() != expected.len() {
                return Err(self.corrupt(
                    first,
                    format!(
                        "level {level} has {} pages but the level above has {} downlinks",
                        pages.len(),
                        expected.len()
                    ),
                ));
            }
            for (p, d) in pages.iter().zip(&expected) {
                if p.block != d.child {
                    return Err(self.corrupt(
                        p.block,
                        format!("page is reached by right links, but the downlink there points to block {}", d.child),
                    ));
                }
                if p.low != d.expected_low {
                    return Err(self.corrupt(
                        p.block,
                        "the page's low bound (left sibling's high key) is not its separator in the parent",
                    ));
                }
            }
            report.pages_per_level[usize::from(level)] = pages.len();
            if level == 0 {
                report.entries = entries;
                return Ok(report);
            }
            expected = downlinks;
            level -= 1;
        }
    }

    /// Walks one level from its leftmost page; returns its pages, the
    /// downlinks it holds (inner levels) and its entry count.
    fn check_level(
        &self,
        first: BlockNumber,
        level: u16,
        nblocks: usize,
    ) -> Result<(Vec<LevelPage>, Vec<Downlink>, u64)> {
        let mut pages: Vec<LevelPage> = Vec::new();
        let mut downlinks = Vec::new();
        let mut entries = 0u64;
        let mut next = Some(first);
        let mut low: Option<Vec<u8>> = None;
        while let Some(block) = next {
            if pages.len() > nblocks {
                return Err(
                    self.corrupt(block, format!("level {level} has more pages than the relation (right-link cycle)"))
                );
            }
            let bad = |r: Bad| self.corrupt(block, r);
            let pin = self.pin(block)?;
            let p = pin.lock_shared();
            let op = self.tree_page(&p, block, level)?;
            if op.is_leftmost() != pages.is_empty() {
                return Err(self.corrupt(
                    block,
                    "the leftmost flag is set on a page with a left sibling, or missing on the first page",
                ));
            }
            let high = page::high_key(&p, &op).map_err(bad)?;
            let mut prev: Option<&[u8]> = None;
            for i in 0..page::count(&p) {
                let e = page::entry(&p, i).map_err(bad)?;
                let k = if level == 0 {
                    let (kb, _) = split_entry(e).ok_or_else(|| bad("a leaf entry is too short to hold a TID"))?;
                    if key::decode_key(&self.opts.key_types, kb).is_none() {
                        return Err(bad("a leaf entry does not decode as a key of the index's types"));
                    }
                    if low.as_deref().is_some_and(|l| e < l) {
                        return Err(bad("a leaf entry is below the page's low bound"));
                    }
                    entries += 1;
                    e
                } else {
                    let (child, sep) = page::downlink(e).map_err(bad)?;
                    let expected_low = if i == 0 {
                        if !sep.is_empty() {
                            return Err(bad("the first separator of an inner page is not minus infinity"));
                        }
                        low.clone()
                    } else {
                        if low.as_deref().is_some_and(|l| sep <= l) {
                            return Err(bad("a separator is not above the page's low bound"));
                        }
                        Some(sep.to_vec())
                    };
                    downlinks.push(Downlink { child, expected_low });
                    sep
                };
                if prev.is_some_and(|q| k <= q) {
                    return Err(bad("entries are not in strictly increasing order"));
                }
                if high.is_some_and(|h| k >= h) {
                    return Err(bad("an entry is not below the page's high key"));
                }
                prev = Some(k);
            }
            pages.push(LevelPage { block, low: low.take() });
            low = high.map(<[u8]>::to_vec);
            next = op.right;
        }
        Ok((pages, downlinks, entries))
    }
}
