//! VACUUM's index pass (PostgreSQL's `btbulkdelete`): remove every leaf
//! entry that points at a heap tuple VACUUM is about to reclaim.
//!
//! The leaf level is walked left to right from the leftmost leaf, one page
//! at a time, each locked exclusive while its surviving entries are
//! written back in order. Entries are only removed — never moved left, and
//! high keys and right links are kept — so the Lehman & Yao invariants
//! hold throughout: a concurrent scan (which copies a whole page under its
//! lock) or insert sees either the page before or after the removal, and a
//! page emptied here stays in the tree (pages are never deleted).

use super::error::Result;
use super::key::split_entry;
use super::log::BtreeOp;
use super::page::{self, Bad};
use super::tree::BTree;
use crate::tid::Tid;
use std::collections::HashSet;
use turnstile_storage::page::{PageBuf, PAGE_SIZE};

impl BTree<'_> {
    /// Removes every leaf entry whose TID is in `dead`; returns how many.
    pub fn bulk_delete(&self, dead: &HashSet<Tid>) -> Result<u64> {
        if dead.is_empty() {
            return Ok(0);
        }
        let d = self.descend(&[])?;
        let mut next = Some(d.leaf.block());
        drop(d);
        let mut removed = 0;
        let mut moves = 0;
        let mut old: Box<PageBuf> = Box::new([0; PAGE_SIZE]);
        while let Some(block) = next {
            let pin = self.pin(block)?;
            let mut g = pin.lock_exclusive();
            let bad = |r: Bad| self.corrupt(block, r);
            let op = self.tree_page(&g, block, 0)?;
            let n = page::count(&g);
            let mut doomed = 0;
            for i in 0..n {
                let e = page::entry(&g, i).map_err(bad)?;
                let (_, tid) = split_entry(e).ok_or_else(|| self.corrupt(block, "a leaf entry is too short"))?;
                doomed += usize::from(dead.contains(&tid));
            }
            if doomed > 0 {
                old.copy_from_slice(&g[..]);
                g.begin_change();
                let high = page::high_key(&old, &op).map_err(bad)?;
                let mut keep = Vec::with_capacity(n - doomed);
                for i in 0..n {
                    let e = page::entry(&old, i).map_err(bad)?;
                    if !split_entry(e).is_some_and(|(_, tid)| dead.contains(&tid)) {
                        keep.push(e);
                    }
                }
                if !page::build(&mut g, op, high, keep) {
                    // Fewer entries than before always fit; restore and report.
                    g.copy_from_slice(&old[..]);
                    return Err(self.corrupt(block, "a leaf did not hold a subset of its own entries"));
                }
                self.log(BtreeOp::Vacuum, &mut [&mut g])?;
                removed += doomed as u64;
            }
            next = op.right;
            drop(g);
            if next.is_some() {
                self.count_move(&mut moves, block)?;
            }
        }
        Ok(removed)
    }
}
