//! Snapshots: which transactions' writes a statement sees.
//!
//! A snapshot is taken when a statement starts (`READ COMMITTED`) or when
//! the first statement of a transaction starts (`REPEATABLE READ`). It sees
//! exactly the transactions that had committed when it was taken, plus the
//! taking transaction itself. Two protocols, chosen by `txn.snapshot`:
//!
//! ## `procarray` (`classic`): PostgreSQL 15's `GetSnapshotData`
//!
//! * **Assigning an id** takes the `XidGen` lock exclusive, draws the next
//!   id and stores it in the backend's slot before releasing, so that an id
//!   below any completed id is always in its slot while it runs.
//! * **A snapshot** takes the `ProcArray` lock *shared*, sets `xmax` to the
//!   latest completed id + 1 and copies every connected backend's running
//!   id into `xip`: its cost grows with the number of connections.
//! * **Ending** sets the status word ([`super::clog`]) first, then takes the
//!   `ProcArray` lock *exclusive* to clear the slot and advance the latest
//!   completed id (`ProcArrayEndTransaction`). No snapshot runs in between,
//!   so a snapshot either lists the transaction as running or finds its
//!   final status.
//! * `xid` is visible to the snapshot iff it is the taker's own, or
//!   `xid < xmax`, not in `xip`, and committed.
//!
//! ## `csn` (`scalable`): a commit sequence number
//!
//! * **A snapshot** publishes the last commit number in the backend's slot,
//!   then reads it again and keeps that second reading: one store and two
//!   loads, whatever the number of connections, and no lock.
//! * **A commit** stores [`COMMITTING`] in its status word, draws the next
//!   number with one `fetch_add`, and stores the number in the status word.
//! * `xid` is visible iff it is the taker's own, or its status word holds a
//!   number no larger than the snapshot's. A reader that finds
//!   `COMMITTING` waits until the number is stored (the committer is
//!   between two stores and never blocks there). Because `COMMITTING` is
//!   stored before the number is drawn, a snapshot that read a number at
//!   least as large as the committer's can never take the transaction for
//!   one still running: it sees either `COMMITTING` or the number. A loom
//!   model (`tests/loom_snapshot.rs`) checks that no snapshot sees one of
//!   two commits without the other when they were made in order, under
//!   both protocols.
//!
//! ## Horizons
//!
//! VACUUM and the version store discard what no snapshot can need: a
//! [`Horizon`] below which every committed transaction is visible to every
//! snapshot still running or yet to be taken. Under `procarray` it is the
//! oldest running id or snapshot `xmin`; under `csn` the oldest published
//! snapshot number. Under `csn` a snapshot publishes before it reads, so a
//! horizon computed concurrently is never newer than the snapshot that
//! results (the second read is later than the horizon's scan of the slot).

use super::clog::{LogSize, NoStatusWord, Word, XactLog, Xid, ABORTED, COMMITTED, COMMITTING, FIRST_CSN};
use turnstile_sync::config::SnapshotProtocol;
use turnstile_sync::sync::atomic::{AtomicU64 as AtomicWord, Ordering};
use turnstile_sync::sync::counter::AtomicU64;
use turnstile_sync::sync::Mutex;
use turnstile_sync::{CachePadded, LwLock, LwLockPolicy, Tranche};

/// What one snapshot sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Snapshot {
    /// `procarray`: ids from `xmax` on, and those in `xip` (sorted), are
    /// invisible.
    Xip {
        /// The oldest id running when the snapshot was taken (or `xmax`).
        xmin: Xid,
        /// One past the latest completed id.
        xmax: Xid,
        /// The ids running below `xmax`, sorted.
        xip: Box<[Xid]>,
    },
    /// `csn`: commits numbered up to `csn` are visible.
    Csn {
        /// The last commit number when the snapshot was taken.
        csn: u64,
    },
}

/// Below it, a committed transaction is visible to every snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Horizon {
    /// `procarray`: committed ids below this one.
    Xid(Xid),
    /// `csn`: commits numbered up to this one.
    Csn(u64),
}

/// Counters of the snapshot protocol (the lab's per-transaction figures).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Snapshots taken.
    pub snapshots: u64,
    /// `ProcArray` and `XidGen` lock acquisitions (shared work; 0 under `csn`).
    pub shared_acquisitions: u64,
    /// Transaction ids assigned.
    pub xids: u64,
    /// Commits.
    pub commits: u64,
}

#[derive(Debug)]
struct ProcState {
    /// The latest id that committed or aborted.
    latest_completed: Xid,
    /// The slots of connected backends (PostgreSQL's dense `pgprocnos`).
    procs: Vec<u32>,
}

/// The shared state of both protocols.
#[derive(Debug)]
pub struct Snapshots {
    protocol: SnapshotProtocol,
    clog: XactLog,
    next_xid: AtomicWord,
    xid_gen: LwLock<()>,
    proc_array: LwLock<ProcState>,
    /// Per backend slot: its running id (`procarray`), 0 when none.
    slot_xid: Box<[AtomicWord]>,
    /// Per backend slot, each on its own cache line: its published
    /// snapshot and its counters (a `csn` snapshot writes only its own line).
    slots: Box<[CachePadded<Slot>]>,
    last_csn: AtomicWord,
    /// Ids handed out below this one are on disk in the limit file.
    xid_limit: AtomicWord,
    persist: Mutex<Option<std::path::PathBuf>>,
    /// Where [`Snapshots::mark_failed`] records ids.
    failed_path: Mutex<Option<std::path::PathBuf>>,
    /// `ProcArray` acquisitions of horizon computations (VACUUM, no slot).
    horizon_shared: AtomicU64,
}

/// One backend's published snapshot and counters.
#[derive(Debug)]
struct Slot {
    /// Its snapshot's `xmin` (`procarray`) or number (`csn`), 0 when it
    /// holds none. A backend publishes one snapshot at a time (the session
    /// keeps one: the statement's, or its `REPEATABLE READ` transaction's).
    snap: AtomicWord,
    snapshots: AtomicU64,
    shared: AtomicU64,
    xids: AtomicU64,
    commits: AtomicU64,
}

impl Slot {
    fn new() -> CachePadded<Slot> {
        CachePadded::new(Slot {
            snap: AtomicWord::new(0),
            snapshots: AtomicU64::new(0),
            shared: AtomicU64::new(0),
            xids: AtomicU64::new(0),
            commits: AtomicU64::new(0),
        })
    }
}

/// Ids reserved in the limit file at a time.
const XID_RESERVE: u64 = 1 << 20;

impl Snapshots {
    /// The state for `slots` backends, handing out ids from `first_xid`.
    pub fn new(protocol: SnapshotProtocol, policy: LwLockPolicy, slots: usize, first_xid: Xid) -> Snapshots {
        Snapshots::with_segment_bits(protocol, policy, slots, first_xid, 12)
    }

    /// As [`Snapshots::new`], with a status log of `2^segment_bits`-id
    /// segments ([`XactLog::with_segment_bits`]): loom tracks every atomic,
    /// and a model cannot afford a 2^16-word segment.
    #[doc(hidden)]
    pub fn with_segment_bits(
        protocol: SnapshotProtocol,
        policy: LwLockPolicy,
        slots: usize,
        first_xid: Xid,
        segment_bits: u32,
    ) -> Snapshots {
        let atomics = |n: usize| (0..n).map(|_| AtomicWord::new(0)).collect::<Box<[AtomicWord]>>();
        Snapshots {
            protocol,
            clog: XactLog::with_segment_bits(first_xid, segment_bits),
            next_xid: AtomicWord::new(first_xid),
            xid_gen: LwLock::new(Tranche::XidGen, policy, ()),
            proc_array: LwLock::new(
                Tranche::ProcArray,
                policy,
                ProcState { latest_completed: first_xid.wrapping_sub(1), procs: Vec::new() },
            ),
            slot_xid: atomics(slots),
            slots: (0..slots).map(|_| Slot::new()).collect(),
            last_csn: AtomicWord::new(FIRST_CSN - 1),
            xid_limit: AtomicWord::new(u64::MAX),
            failed_path: Mutex::new(None),
            persist: Mutex::new(None),
            horizon_shared: AtomicU64::new(0),
        }
    }

    /// Opens the id limit file `path` (creating it): ids start at the limit
    /// recorded there by the previous run (or at `start_xid` in a fresh data
    /// directory: the `txn.start_xid` test knob), and every id handed out
    /// stays below the limit on disk, so a restart — clean or not — never
    /// reuses one that a tuple may carry. The ids whose rollback left
    /// writes in place are read from `failed_path` and stay aborted.
    pub fn open(
        protocol: SnapshotProtocol,
        policy: LwLockPolicy,
        slots: usize,
        path: &std::path::Path,
        start_xid: Xid,
    ) -> std::io::Result<Snapshots> {
        let bad = |e: std::num::ParseIntError| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))
        };
        let first = match std::fs::read_to_string(path) {
            Ok(text) => text.trim().parse::<Xid>().map_err(bad)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => start_xid,
            Err(e) => return Err(e),
        }
        .max(super::FIRST_XID);
        let s = Snapshots::new(protocol, policy, slots, first);
        let failed_path = path.with_file_name("xact_failed");
        match std::fs::read_to_string(&failed_path) {
            Ok(text) => {
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    s.clog.mark_failed(line.trim().parse::<Xid>().map_err(bad)?);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        write_limit(path, first.saturating_add(XID_RESERVE))?;
        s.xid_limit.store(first.saturating_add(XID_RESERVE), Ordering::SeqCst);
        *s.persist.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(path.to_path_buf());
        *s.failed_path.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(failed_path);
        Ok(s)
    }

    /// Keeps `xid` aborted for ever, also across a restart: its rollback
    /// left writes in place ([`XactLog::mark_failed`]; the id is appended
    /// to `xact_failed` in the data directory and synced).
    pub fn mark_failed(&self, xid: Xid) -> std::io::Result<()> {
        use std::io::Write;
        self.clog.mark_failed(xid);
        let path = self.failed_path.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(path) = path.as_ref() {
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
            writeln!(f, "{xid}")?;
            f.sync_all()?;
        }
        Ok(())
    }

    /// The next id to be handed out.
    pub fn next_xid(&self) -> Xid {
        self.next_xid.load(Ordering::SeqCst)
    }

    /// Shrinks the status log to what can still be asked
    /// ([`XactLog::summarise`], [`XactLog::advance_base`]) and returns its
    /// size. Run by every VACUUM and background vacuum pass.
    pub fn compact_log(&self) -> LogSize {
        let next = self.next_xid.load(Ordering::SeqCst);
        match self.protocol {
            SnapshotProtocol::Procarray => {
                // Words say committed or aborted only; the snapshot's own
                // `xmax` and `xip` decide visibility, so any ended segment
                // can be summarised.
                self.clog.summarise(next, |_, _| true);
                if let Horizon::Xid(h) = self.horizon() {
                    self.clog.advance_base(|end, _| end <= h);
                }
            }
            SnapshotProtocol::Csn => {
                // Read before the slots: a snapshot published after the scan
                // of its slot holds a number at least this large.
                let last = self.last_csn.load(Ordering::SeqCst);
                loom_seq_cst();
                let published: Vec<u64> =
                    self.slots.iter().map(|s| s.snap.load(Ordering::SeqCst)).filter(|&c| c != 0).collect();
                self.clog.summarise(next, |lo, hi| hi <= last && published.iter().all(|&c| hi <= c || lo > c));
                if let Horizon::Csn(h) = self.horizon() {
                    self.clog.advance_base(|_, hi| hi <= h);
                }
            }
        }
        self.clog.size()
    }

    /// The protocol in use.
    pub fn protocol(&self) -> SnapshotProtocol {
        self.protocol
    }

    /// The transaction status log.
    pub fn clog(&self) -> &XactLog {
        &self.clog
    }

    /// A backend connects on `slot` (`ProcArrayAdd`).
    pub fn register(&self, slot: usize) {
        self.slot_xid[slot].store(0, Ordering::SeqCst);
        self.slots[slot].snap.store(0, Ordering::SeqCst);
        if self.protocol == SnapshotProtocol::Procarray {
            let mut p = self.proc_array.lock_exclusive();
            if !p.procs.contains(&(slot as u32)) {
                p.procs.push(slot as u32);
            }
        }
    }

    /// A backend on `slot` disconnects (`ProcArrayRemove`).
    pub fn unregister(&self, slot: usize) {
        if self.protocol == SnapshotProtocol::Procarray {
            let mut p = self.proc_array.lock_exclusive();
            p.procs.retain(|&s| s != slot as u32);
        }
        self.slot_xid[slot].store(0, Ordering::SeqCst);
        self.slots[slot].snap.store(0, Ordering::SeqCst);
    }

    /// A new transaction id for the backend on `slot`.
    pub fn assign_xid(&self, slot: usize) -> std::io::Result<Xid> {
        self.slots[slot].xids.fetch_add(1, turnstile_sync::sync::counter::Ordering::Relaxed);
        let xid = match self.protocol {
            SnapshotProtocol::Procarray => {
                let _gen = self.xid_gen.lock_exclusive();
                self.slots[slot].shared.fetch_add(1, turnstile_sync::sync::counter::Ordering::Relaxed);
                let x = self.next_xid.fetch_add(1, Ordering::SeqCst);
                self.clog.claim(x);
                self.slot_xid[slot].store(x, Ordering::SeqCst);
                x
            }
            SnapshotProtocol::Csn => {
                let x = self.next_xid.fetch_add(1, Ordering::SeqCst);
                self.clog.claim(x);
                x
            }
        };
        if self.clog.starts_segment(xid) {
            // As PostgreSQL extends and truncates `pg_xact` at page
            // boundaries: the log never waits for a VACUUM to shrink.
            self.compact_log();
        }
        if xid >= self.xid_limit.load(Ordering::SeqCst) {
            if let Err(e) = self.extend_limit(xid) {
                // The id ends here, so that its segment can still be summarised.
                let _ended = self.abort(slot, xid);
                return Err(e);
            }
        }
        Ok(xid)
    }

    /// Moves the limit on disk past `xid` (one backend at a time).
    fn extend_limit(&self, xid: Xid) -> std::io::Result<()> {
        let path = self.persist.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if xid < self.xid_limit.load(Ordering::SeqCst) {
            return Ok(());
        }
        let limit = xid.saturating_add(XID_RESERVE);
        if let Some(path) = path.as_ref() {
            write_limit(path, limit)?;
        }
        self.xid_limit.store(limit, Ordering::SeqCst);
        Ok(())
    }

    /// Takes a snapshot for the backend on `slot` and publishes its
    /// horizon there.
    pub fn take(&self, slot: usize) -> Snapshot {
        self.slots[slot].snapshots.fetch_add(1, turnstile_sync::sync::counter::Ordering::Relaxed);
        match self.protocol {
            SnapshotProtocol::Procarray => {
                let p = self.proc_array.lock_shared();
                self.slots[slot].shared.fetch_add(1, turnstile_sync::sync::counter::Ordering::Relaxed);
                let xmax = p.latest_completed.wrapping_add(1);
                let mut xmin = xmax;
                let mut xip = Vec::new();
                for &s in &p.procs {
                    let x = self.slot_xid[s as usize].load(Ordering::SeqCst);
                    if x != 0 && x < xmax {
                        xip.push(x);
                        xmin = xmin.min(x);
                    }
                }
                self.slots[slot].snap.store(xmin, Ordering::SeqCst);
                drop(p);
                xip.sort_unstable();
                Snapshot::Xip { xmin, xmax, xip: xip.into_boxed_slice() }
            }
            SnapshotProtocol::Csn => {
                self.slots[slot].snap.store(self.last_csn.load(Ordering::SeqCst), Ordering::SeqCst);
                loom_seq_cst();
                Snapshot::Csn { csn: self.last_csn.load(Ordering::SeqCst) }
            }
        }
    }

    /// The backend on `slot` holds no snapshot any more.
    pub fn release(&self, slot: usize) {
        self.slots[slot].snap.store(0, Ordering::SeqCst);
    }

    /// Commits `xid` of the backend on `slot`. Fails (ending nothing) if
    /// the status log has no word for `xid`.
    pub fn commit(&self, slot: usize, xid: Xid) -> Result<(), NoStatusWord> {
        self.slots[slot].commits.fetch_add(1, turnstile_sync::sync::counter::Ordering::Relaxed);
        match self.protocol {
            SnapshotProtocol::Procarray => {
                self.clog.set(xid, COMMITTED)?;
                self.end_in_proc_array(slot, xid);
            }
            SnapshotProtocol::Csn => {
                self.clog.set(xid, COMMITTING)?;
                let csn = self.last_csn.fetch_add(1, Ordering::SeqCst) + 1;
                self.clog.set(xid, csn)?;
            }
        }
        Ok(())
    }

    /// Ends `xid` of the backend on `slot` as rolled back. Its writes no
    /// longer count for anyone ([`super::visibility`]), undone or not. The
    /// slot is cleared even if the status log has no word for `xid`.
    pub fn abort(&self, slot: usize, xid: Xid) -> Result<(), NoStatusWord> {
        let set = self.clog.set(xid, ABORTED);
        if self.protocol == SnapshotProtocol::Procarray {
            self.end_in_proc_array(slot, xid);
        }
        set
    }

    fn end_in_proc_array(&self, slot: usize, xid: Xid) {
        let mut p = self.proc_array.lock_exclusive();
        self.slots[slot].shared.fetch_add(1, turnstile_sync::sync::counter::Ordering::Relaxed);
        self.slot_xid[slot].store(0, Ordering::SeqCst);
        p.latest_completed = p.latest_completed.max(xid);
    }

    /// Whether `xid`'s writes are visible to `snap` taken by a transaction
    /// whose id is `own` (0: none yet).
    #[inline]
    pub fn sees(&self, snap: &Snapshot, xid: Xid, own: Xid) -> bool {
        if xid == own {
            return true;
        }
        match snap {
            Snapshot::Xip { xmax, xip, .. } => {
                xid < *xmax && xip.binary_search(&xid).is_err() && self.clog.status(xid) >= COMMITTED
            }
            Snapshot::Csn { csn } => match self.clog.settled(xid) {
                Word::Settled => true,
                Word::Exact(s) => s >= FIRST_CSN && s <= *csn,
                // A summarised segment: every published snapshot sees all of
                // its commits or none (`clog`'s module documentation).
                Word::Range { hi, .. } => hi <= *csn,
            },
        }
    }

    /// The current horizon (see the module documentation).
    pub fn horizon(&self) -> Horizon {
        match self.protocol {
            SnapshotProtocol::Procarray => {
                let p = self.proc_array.lock_shared();
                self.horizon_shared.fetch_add(1, turnstile_sync::sync::counter::Ordering::Relaxed);
                let mut h = p.latest_completed.wrapping_add(1);
                for &s in &p.procs {
                    for x in [
                        self.slot_xid[s as usize].load(Ordering::SeqCst),
                        self.slots[s as usize].snap.load(Ordering::SeqCst),
                    ] {
                        if x != 0 {
                            h = h.min(x);
                        }
                    }
                }
                Horizon::Xid(h)
            }
            SnapshotProtocol::Csn => {
                let mut h = self.last_csn.load(Ordering::SeqCst);
                loom_seq_cst();
                for s in self.slots.iter() {
                    let x = s.snap.load(Ordering::SeqCst);
                    if x != 0 {
                        h = h.min(x);
                    }
                }
                Horizon::Csn(h)
            }
        }
    }

    /// Whether `xid` committed and is visible to every snapshot, present
    /// and future, at `horizon`.
    #[inline]
    pub fn all_visible(&self, horizon: Horizon, xid: Xid) -> bool {
        match (horizon, self.clog.settled(xid)) {
            (_, Word::Settled) => true,
            (Horizon::Xid(h), Word::Exact(s)) => xid < h && s >= COMMITTED,
            (Horizon::Xid(h), Word::Range { .. }) => xid < h,
            (Horizon::Csn(h), Word::Exact(s)) => s >= FIRST_CSN && s <= h,
            (Horizon::Csn(h), Word::Range { hi, .. }) => hi <= h,
        }
    }

    /// Whether `xid` committed (waiting out a commit under way).
    pub fn committed(&self, xid: Xid) -> bool {
        self.clog.committed(xid)
    }

    /// Whether `xid` rolled back.
    pub fn aborted(&self, xid: Xid) -> bool {
        self.clog.aborted(xid)
    }

    /// The counters.
    pub fn stats(&self) -> SnapshotStats {
        use turnstile_sync::sync::counter::Ordering::Relaxed;
        SnapshotStats {
            snapshots: self.slots.iter().map(|s| s.snapshots.load(Relaxed)).sum(),
            shared_acquisitions: self.horizon_shared.load(Relaxed)
                + self.slots.iter().map(|s| s.shared.load(Relaxed)).sum::<u64>(),
            xids: self.slots.iter().map(|s| s.xids.load(Relaxed)).sum(),
            commits: self.slots.iter().map(|s| s.commits.load(Relaxed)).sum(),
        }
    }
}

/// Under loom, a `SeqCst` fence; nothing otherwise. The `csn` horizon
/// argument (module documentation) is a store→load pattern across threads
/// — `take` stores its slot then loads `last_csn`, `horizon` loads
/// `last_csn` then the slots — that holds because all `SeqCst` accesses
/// fall in one total order. loom models `SeqCst` accesses as `AcqRel`,
/// which does not order a store before a later load, so without this its
/// model (`tests/loom_snapshot.rs`) reports a horizon ahead of a snapshot
/// that no real execution can produce; `SeqCst` fences it does model.
#[inline(always)]
fn loom_seq_cst() {
    #[cfg(loom)]
    turnstile_sync::sync::atomic::fence(Ordering::SeqCst);
}

fn write_limit(path: &std::path::Path, limit: Xid) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    writeln!(f, "{limit}")?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}
