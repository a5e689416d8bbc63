//! Wait events: what a backend is waiting for, named as PostgreSQL's
//! `pg_stat_activity.wait_event_type` / `wait_event` name it.
//!
//! A [`WaitEvent`] packs into one `u32` (`type << 16 | event`) so an
//! activity slot can publish it with a single atomic store and a sampler
//! can read it with a single atomic load (Postgres Pro 2018 diagnosed its
//! hang by grouping exactly these two columns).

use std::fmt;

/// A named group of lightweight locks (PostgreSQL's LWLock *tranche*).
/// Its name is the `wait_event` shown while a backend waits on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Tranche {
    /// A partition of the shared heavyweight lock table.
    LockManager = 0,
    /// A backend's fast-path lock slots.
    LockFastPath,
    /// A partition of the buffer mapping table.
    BufferMapping,
    /// The content lock of one shared buffer.
    BufferContent,
    /// The I/O-in-progress lock of one shared buffer.
    BufferIo,
    /// The free-space map of a relation.
    FreeSpaceMap,
    /// The storage manager's virtual file descriptor cache.
    FileCache,
    /// The system catalog.
    Catalog,
    /// The relation cache.
    RelCache,
    /// The array of running transactions that a `classic` snapshot scans
    /// (PostgreSQL's `ProcArrayLock`).
    ProcArray,
    /// Transaction-id assignment under `classic` (PostgreSQL's `XidGenLock`).
    XidGen,
    /// The write-ahead log's insertion locks (PostgreSQL's `WALInsert`
    /// tranche, `wal.insert = classic`).
    WalInsert,
    /// The lock of whoever writes and flushes the write-ahead log
    /// (PostgreSQL's `WALWriteLock`, `wal.insert = classic`).
    WalWrite,
    /// Locks created by benchmarks.
    Bench,
    /// Locks created by tests and examples.
    Test,
}

impl Tranche {
    /// Every tranche, in id order.
    pub const ALL: [Tranche; 15] = [
        Tranche::LockManager,
        Tranche::LockFastPath,
        Tranche::BufferMapping,
        Tranche::BufferContent,
        Tranche::BufferIo,
        Tranche::FreeSpaceMap,
        Tranche::FileCache,
        Tranche::Catalog,
        Tranche::RelCache,
        Tranche::ProcArray,
        Tranche::XidGen,
        Tranche::WalInsert,
        Tranche::WalWrite,
        Tranche::Bench,
        Tranche::Test,
    ];
    /// Number of tranches (the length of per-tranche counter arrays).
    pub const COUNT: usize = Self::ALL.len();

    /// The tranche's name, as shown in `wait_event`.
    pub const fn name(self) -> &'static str {
        match self {
            Tranche::LockManager => "LockManager",
            Tranche::LockFastPath => "LockFastPath",
            Tranche::BufferMapping => "BufferMapping",
            Tranche::BufferContent => "BufferContent",
            Tranche::BufferIo => "BufferIO",
            Tranche::FreeSpaceMap => "FreeSpaceMap",
            Tranche::FileCache => "FileCache",
            Tranche::Catalog => "Catalog",
            Tranche::RelCache => "RelCache",
            Tranche::ProcArray => "ProcArray",
            Tranche::XidGen => "XidGen",
            Tranche::WalInsert => "WALInsert",
            Tranche::WalWrite => "WALWrite",
            Tranche::Bench => "Bench",
            Tranche::Test => "Test",
        }
    }

    /// The tranche's index into counter arrays.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Tranche {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of heavyweight lock a backend waits for (`wait_event` under
/// `wait_event_type = Lock`), named as PostgreSQL's `pg_locks.locktype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum LockWaitKind {
    /// A table-level lock.
    Relation = 0,
    /// The relation-extension lock.
    Extend,
    /// A page lock.
    Page,
    /// A tuple lock.
    Tuple,
    /// A transaction id lock.
    TransactionId,
    /// A lock on a database object other than a relation.
    Object,
    /// An advisory lock.
    Advisory,
    /// A speculative insertion's token (`spectoken`).
    SpeculativeToken,
}

impl LockWaitKind {
    /// Every kind, in id order.
    pub const ALL: [LockWaitKind; 8] = [
        LockWaitKind::Relation,
        LockWaitKind::Extend,
        LockWaitKind::Page,
        LockWaitKind::Tuple,
        LockWaitKind::TransactionId,
        LockWaitKind::Object,
        LockWaitKind::Advisory,
        LockWaitKind::SpeculativeToken,
    ];

    /// PostgreSQL's name for it (`relation`, `extend`, …).
    pub const fn name(self) -> &'static str {
        match self {
            LockWaitKind::Relation => "relation",
            LockWaitKind::Extend => "extend",
            LockWaitKind::Page => "page",
            LockWaitKind::Tuple => "tuple",
            LockWaitKind::TransactionId => "transactionid",
            LockWaitKind::Object => "object",
            LockWaitKind::Advisory => "advisory",
            LockWaitKind::SpeculativeToken => "spectoken",
        }
    }
}

/// A file operation a backend waits for (`wait_event_type = IO`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum IoEvent {
    /// Reading a page of a relation file.
    DataFileRead = 0,
    /// Writing a page of a relation file.
    DataFileWrite,
    /// Extending a relation file.
    DataFileExtend,
    /// Flushing a relation file to stable storage.
    DataFileSync,
    /// Truncating a relation file.
    DataFileTruncate,
    /// Writing the catalog file.
    CatalogWrite,
    /// Writing the write-ahead log (PostgreSQL's `WALWrite` IO event).
    WalWrite,
    /// `fdatasync` of the write-ahead log (PostgreSQL's `WALSync`).
    WalSync,
}

impl IoEvent {
    /// Every event, in id order.
    pub const ALL: [IoEvent; 8] = [
        IoEvent::DataFileRead,
        IoEvent::DataFileWrite,
        IoEvent::DataFileExtend,
        IoEvent::DataFileSync,
        IoEvent::DataFileTruncate,
        IoEvent::CatalogWrite,
        IoEvent::WalWrite,
        IoEvent::WalSync,
    ];

    /// PostgreSQL's name for it.
    pub const fn name(self) -> &'static str {
        match self {
            IoEvent::DataFileRead => "DataFileRead",
            IoEvent::DataFileWrite => "DataFileWrite",
            IoEvent::DataFileExtend => "DataFileExtend",
            IoEvent::DataFileSync => "DataFileSync",
            IoEvent::DataFileTruncate => "DataFileTruncate",
            IoEvent::CatalogWrite => "CatalogWrite",
            IoEvent::WalWrite => "WALWrite",
            IoEvent::WalSync => "WALSync",
        }
    }
}

/// What a backend waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitEvent {
    /// A lightweight lock of the given tranche (`LWLock` / `<tranche>`).
    LwLock(Tranche),
    /// A heavyweight lock (`Lock` / `relation`, `extend`, …).
    Lock(LockWaitKind),
    /// File I/O (`IO` / `DataFileRead`, …).
    Io(IoEvent),
    /// Another backend's pin on a buffer (`BufferPin` / `BufferPin`).
    BufferPin,
}

const TYPE_SHIFT: u32 = 16;
const TYPE_LWLOCK: u32 = 1;
const TYPE_LOCK: u32 = 2;
const TYPE_IO: u32 = 3;
const TYPE_BUFFER_PIN: u32 = 4;

impl WaitEvent {
    /// `wait_event_type`: `LWLock`, `Lock`, `IO` or `BufferPin`.
    pub const fn type_name(self) -> &'static str {
        match self {
            WaitEvent::LwLock(_) => "LWLock",
            WaitEvent::Lock(_) => "Lock",
            WaitEvent::Io(_) => "IO",
            WaitEvent::BufferPin => "BufferPin",
        }
    }

    /// `wait_event`: the tranche, lock type or I/O operation.
    pub const fn name(self) -> &'static str {
        match self {
            WaitEvent::LwLock(t) => t.name(),
            WaitEvent::Lock(k) => k.name(),
            WaitEvent::Io(e) => e.name(),
            WaitEvent::BufferPin => "BufferPin",
        }
    }

    /// Packs the event into a non-zero `u32` (zero means "not waiting").
    pub const fn encode(self) -> u32 {
        match self {
            WaitEvent::LwLock(t) => (TYPE_LWLOCK << TYPE_SHIFT) | t as u32,
            WaitEvent::Lock(k) => (TYPE_LOCK << TYPE_SHIFT) | k as u32,
            WaitEvent::Io(e) => (TYPE_IO << TYPE_SHIFT) | e as u32,
            WaitEvent::BufferPin => TYPE_BUFFER_PIN << TYPE_SHIFT,
        }
    }

    /// Unpacks a value made by [`WaitEvent::encode`]; `None` for zero or
    /// anything `encode` cannot produce.
    pub fn decode(word: u32) -> Option<WaitEvent> {
        let index = (word & 0xffff) as usize;
        match word >> TYPE_SHIFT {
            TYPE_LWLOCK => Tranche::ALL.get(index).map(|&t| WaitEvent::LwLock(t)),
            TYPE_LOCK => LockWaitKind::ALL.get(index).map(|&k| WaitEvent::Lock(k)),
            TYPE_IO => IoEvent::ALL.get(index).map(|&e| WaitEvent::Io(e)),
            TYPE_BUFFER_PIN if index == 0 => Some(WaitEvent::BufferPin),
            _ => None,
        }
    }
}

impl fmt::Display for WaitEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.type_name(), self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_round_trips_through_its_encoding() {
        let mut all: Vec<WaitEvent> = Tranche::ALL.iter().map(|&t| WaitEvent::LwLock(t)).collect();
        all.extend(LockWaitKind::ALL.iter().map(|&k| WaitEvent::Lock(k)));
        all.extend(IoEvent::ALL.iter().map(|&e| WaitEvent::Io(e)));
        all.push(WaitEvent::BufferPin);
        for e in all {
            assert_ne!(e.encode(), 0, "{e} encodes to the idle value");
            assert_eq!(WaitEvent::decode(e.encode()), Some(e));
        }
        assert_eq!(WaitEvent::decode(0), None);
        assert_eq!(WaitEvent::decode((TYPE_LWLOCK << TYPE_SHIFT) | 999), None);
    }

    #[test]
    fn tranche_ids_match_their_position() {
        for (i, t) in Tranche::ALL.iter().enumerate() {
            assert_eq!(t.index(), i);
        }
        assert_eq!(WaitEvent::LwLock(Tranche::BufferMapping).to_string(), "LWLock:BufferMapping");
    }
}
