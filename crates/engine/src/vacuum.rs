//! `VACUUM [FULL]` and `ANALYZE`.
//!
//! # What VACUUM does
//!
//! For each table (each partition of a partitioned one; every table of the
//! database when none is named), under `ShareUpdateExclusiveLock` on the
//! table and `RowExclusiveLock` on its indexes — so inserts, updates,
//! deletes and queries go on meanwhile, but not DDL, another VACUUM, or a
//! transaction that escalated to `ExclusiveLock` (see [`crate::txn`]):
//!
//! 1. **Heap scan.** Every page is read; tuples no snapshot can see are
//!    collected, by the VACUUM rule of [`crate::mvcc::visibility`]: those
//!    marked dead (rows of rolled-back or failed inserts), those written
//!    by an aborted transaction, and those whose `xmax` — a delete, or the
//!    move of an update — is visible to every snapshot at the current
//!    horizon ([`crate::mvcc::Horizon`]). A tuple deleted by a transaction
//!    that is still open, or that some running snapshot does not see as
//!    deleted, stays. The version store is pruned at the same horizon.
//! 2. **Index pass.** Every index of the table loses the entries pointing
//!    at the collected tuples ([`crate::btree::BTree::bulk_delete`]).
//! 3. **Heap pass.** On each page with collected tuples (locked exclusive),
//!    their line pointers become unused and the page is compacted
//!    (`PageRepairFragmentation`); the freed space is recorded in the
//!    free-space map, so inserts and moved updates reuse it and the slots.
//!    Every page's free space is recorded, as PostgreSQL's VACUUM does.
//!
//! `VACUUM FULL` does the same under `AccessExclusiveLock` (nothing else
//! runs on the table) and then cuts off the empty pages at the end of the
//! table. It does not move rows together (PostgreSQL rewrites the table);
//! a table with empty pages in the middle keeps them, recorded in the
//! free-space map.
//!
//! VACUUM is not allowed inside a transaction block (`25001`), as in
//! PostgreSQL. A tuple slot reclaimed here may be reused by
//! a later insert; an index scan that read a removed entry just before the
//! index pass may then fetch the new row — every scan re-checks its
//! predicates on the heap row, so it is filtered out.
//!
//! # The background vacuum
//!
//! (`crate::autovacuum`.) Every `txn.autovacuum_naptime_ms` a thread of the engine prunes the
//! version store at the current horizon and vacuums each table in which
//! more than `txn.autovacuum_vacuum_threshold` +
//! `txn.autovacuum_vacuum_scale_factor` × its rows (50 + 20% by default)
//! were deleted or moved away since it was last vacuumed, skipping a table whose lock it cannot
//! take at once, as autovacuum does. It runs as a session of its own and
//! stops when the engine is dropped.
//!
//! # ANALYZE
//!
//! Takes `ShareUpdateExclusiveLock` on each table and returns: the planner
//! here uses no statistics (index choice follows the predicates only), so
//! there is nothing to gather.

use crate::btree::{BTree, BtreeOptions};
use crate::catalog::{CatalogError, RelEntry, RelId, RelKind};
use crate::error::{EngineError, InvalidTransactionState, Result};
use crate::heap::TupleHeader;
use crate::mvcc::visibility::{self, VacuumVerdict};
use crate::session::Session;
use crate::tid::Tid;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use turnstile_lock::LockMode;
use turnstile_storage::page;
use turnstile_storage::rel::{BufferTag, Fork, RelFileId};

/// What one VACUUM did (summed over its tables).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VacuumReport {
    /// Tables (partitions) vacuumed.
    pub tables: u64,
    /// Heap pages scanned.
    pub pages: u64,
    /// Dead tuples reclaimed.
    pub dead_tuples: u64,
    /// Deleted tuples left because a running snapshot may still see them
    /// (or their deleter is still open).
    pub kept_locked: u64,
    /// Older row versions dropped from the version store.
    pub versions_pruned: u64,
    /// Live tuples left in the tables vacuumed.
    pub live_tuples: u64,
    /// Index entries removed.
    pub index_entries: u64,
    /// Pages cut off the end of tables (`FULL` only).
    pub truncated_pages: u64,
}

impl Session {
    /// `VACUUM [FULL] [table]`; see the module documentation.
    pub fn vacuum(&mut self, table: Option<&str>, full: bool) -> Result<VacuumReport> {
        if self.in_transaction {
            return Err(InvalidTransactionState::InsideBlock("VACUUM").into());
        }
        let text =
            format!("VACUUM{}{}", if full { " FULL" } else { "" }, table.map(|t| format!(" {t}")).unwrap_or_default());
        self.statement(&text, |s| {
            let mode = if full { LockMode::AccessExclusive } else { LockMode::ShareUpdateExclusive };
            let mut report = VacuumReport::default();
            for leaf in s.maintenance_targets(table, mode)? {
                s.vacuum_leaf(&leaf, full, &mut report)?;
            }
            let txns = s.engine.txns();
            report.versions_pruned += txns.versions().prune(txns.snapshots(), txns.refresh_horizon());
            txns.snapshots().compact_log();
            Ok(report)
        })
    }

    /// `ANALYZE [table]`: takes `ShareUpdateExclusiveLock` on each table;
    /// there are no statistics to gather (see the module documentation).
    pub fn analyze(&mut self, table: Option<&str>) -> Result<()> {
        let text = format!("ANALYZE{}", table.map(|t| format!(" {t}")).unwrap_or_default());
        self.statement(&text, |s| s.maintenance_targets(table, LockMode::ShareUpdateExclusive).map(|_| ()))
    }

    /// The tables with storage that `table` (or, for `None`, the whole
    /// database) stands for, each locked in `mode`, its indexes locked
    /// `RowExclusiveLock` (`AccessExclusiveLock` for FULL).
    fn maintenance_targets(&mut self, table: Option<&str>, mode: LockMode) -> Result<Vec<Arc<RelEntry>>> {
        let names: Vec<String> = match table {
            Some(t) => vec![t.to_owned()],
            None => {
                let cat = self.engine.catalog().snapshot();
                cat.relations
                    .values()
                    .filter(|r| r.db == self.db && r.parent.is_none())
                    .filter(|r| matches!(r.kind, RelKind::Table | RelKind::PartitionedTable))
                    .map(|r| r.name.clone())
                    .collect()
            }
        };
        let index_mode = if mode == LockMode::AccessExclusive { mode } else { LockMode::RowExclusive };
        let mut out = Vec::new();
        for name in names {
            let t = match self.lock_by_name(&name, mode) {
                Ok(t) => t,
                // Dropped since the catalog was read: nothing to do.
                Err(EngineError::Catalog(CatalogError::UnknownRelation(_))) if table.is_none() => continue,
                Err(e) => return Err(e),
            };
            if !matches!(t.rel.kind, RelKind::Table | RelKind::PartitionedTable) {
                return Err(CatalogError::WrongKind { name, expected: "a table" }.into());
            }
            let leaves: Vec<RelId> = match t.rel.partition_key {
                None => vec![t.rel.id],
                Some(_) => t.partitions.iter().map(|(id, _)| *id).collect(),
            };
            for id in leaves {
                if id != t.rel.id {
                    self.lock_relation(id, mode)?;
                }
                let leaf = self.rel_entry(id)?;
                for ix in &leaf.indexes {
                    self.lock_relation(ix.id, index_mode)?;
                }
                out.push(leaf);
            }
        }
        Ok(out)
    }

    fn vacuum_leaf(&mut self, leaf: &RelEntry, full: bool, report: &mut VacuumReport) -> Result<()> {
        let engine = Arc::clone(&self.engine);
        let pool = engine.pool();
        let file = RelFileId::new(self.db, leaf.rel.id);
        report.tables += 1;
        let snaps = engine.txns().snapshots();
        let horizon = engine.txns().refresh_horizon();
        let cadence = engine.config().txn.interrupt_check_rows;
        // 1. Heap scan: tuples no snapshot can see, by page.
        let nblocks = pool.store().nblocks(file, Fork::Main)?;
        let mut dead: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for block in 0..nblocks {
            if u64::from(block) % cadence == 0 {
                self.check_interrupts()?;
            }
            report.pages += 1;
            let buf = pool.read_buffer(BufferTag::new(file, Fork::Main, block))?;
            let content = buf.lock_shared();
            if page::is_new(&content) {
                continue;
            }
            for slot in 0..page::item_count(&content) {
                let Some(h) = page::item(&content, slot).and_then(TupleHeader::read) else { continue };
                match visibility::for_vacuum(snaps, horizon, &h) {
                    VacuumVerdict::Remove => dead.entry(block).or_default().push(slot),
                    VacuumVerdict::RecentlyDead => report.kept_locked += 1,
                    VacuumVerdict::Live => report.live_tuples += 1,
                }
            }
            let free = page::free_space(&content);
            drop(content);
            pool.fsm().record(file, block, free);
        }
        // 2. Index pass.
        let tids: HashSet<Tid> =
            dead.iter().flat_map(|(b, slots)| slots.iter().map(move |s| Tid::new(*b, *s as u16))).collect();
        if !tids.is_empty() {
            for ix in &leaf.indexes {
                self.check_interrupts()?;
                let key_types = ix.key.types().to_vec();
                let opts = BtreeOptions::new(ix.name.clone(), key_types, ix.unique, engine.config());
                let tree = BTree::attach(pool, RelFileId::new(self.db, ix.id), opts)?;
                report.index_entries += tree.bulk_delete(&tids)?;
            }
        }
        // 3. Heap pass.
        for (block, slots) in &dead {
            let buf = pool.read_buffer(BufferTag::new(file, Fork::Main, *block))?;
            let mut content = buf.lock_exclusive();
            content.begin_change();
            page::remove_items(&mut content, slots);
            crate::heap::log::log_page(pool, &mut content)?;
            for &slot in slots {
                engine.txns().versions().forget(file, Tid::new(*block, slot as u16));
            }
            let free = page::free_space(&content);
            drop(content);
            pool.fsm().record(file, *block, free);
            report.dead_tuples += slots.len() as u64;
        }
        if full {
            // Cut off the empty pages at the end (nobody else has the table).
            let mut keep = nblocks;
            while keep > 0 {
                let buf = pool.read_buffer(BufferTag::new(file, Fork::Main, keep - 1))?;
                let content = buf.lock_shared();
                if !page::is_new(&content) && page::item_count(&content) > 0 {
                    break;
                }
                keep -= 1;
            }
            if keep < nblocks {
                engine.truncate_relation(file, keep)?;
                report.truncated_pages += u64::from(nblocks - keep);
            }
        }
        Ok(())
    }
}

impl Session {
    /// The background vacuum's pass over relation file `file`: vacuums it
    /// if its lock can be had at once (`None` otherwise, or if it is no
    /// table of this session's database); returns its live tuples.
    pub(crate) fn autovacuum_rel(&mut self, file: RelFileId) -> Result<Option<u64>> {
        let name = match self.engine.catalog().snapshot().relations.get(&file.rel) {
            Some(r) if r.db == file.db && r.kind == RelKind::Table => r.name.clone(),
            _ => return Ok(None),
        };
        self.statement(&format!("autovacuum: VACUUM {name}"), |s| {
            let tag = turnstile_lock::LockTag::relation(s.db, file.rel);
            if s.backend.lock(tag, LockMode::ShareUpdateExclusive, turnstile_lock::Wait::NoWait).is_err() {
                return Ok(None);
            }
            let leaf = s.rel_entry(file.rel)?;
            for ix in &leaf.indexes {
                s.lock_relation(ix.id, LockMode::RowExclusive)?;
            }
            let mut report = VacuumReport::default();
            s.vacuum_leaf(&leaf, false, &mut report)?;
            Ok(Some(report.live_tuples))
        })
    }
}
