//! Lock tags: what a heavyweight lock is on (PostgreSQL's `LOCKTAG`).
//!
//! A tag is 16 bytes: a kind, a database id and up to three fields whose
//! meaning depends on the kind. Its [`LockTag::hash_code`] is a fixed
//! function of those bytes — the same in every process and every run — and
//! picks the shared-table partition, the strong-lock counter and the
//! backend-local table bucket.
//!
//! | kind | fields | `pg_locks.locktype` |
//! |---|---|---|
//! | relation | relation id | `relation` |
//! | relation extension | relation id | `extend` |
//! | page | relation id, block | `page` |
//! | tuple | relation id, block, offset | `tuple` |
//! | transaction id | xid | `transactionid` |
//! | object | class id, object id, sub-id | `object` |
//! | advisory | 64-bit key | `advisory` |
//! | speculative token | xid, token | `spectoken` |
//!
//! ```
//! use turnstile_lock::{LockTag, LockTagKind};
//! let t = LockTag::relation(5, 16384);
//! assert_eq!(t.kind(), LockTagKind::Relation);
//! assert_eq!(t.relation_id(), Some(16384));
//! assert_eq!(t.to_string(), "relation 5/16384");
//! assert_eq!(t.hash_code(), LockTag::relation(5, 16384).hash_code());
//! assert_ne!(t, LockTag::relation_extend(5, 16384));
//! ```

use std::fmt;
use turnstile_sync::LockWaitKind;

/// The kind of object a [`LockTag`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[repr(u8)]
pub enum LockTagKind {
    /// A whole relation (table, index, …).
    Relation = 0,
    /// The right to extend a relation. Never part of a deadlock check.
    RelationExtend,
    /// One page of a relation.
    Page,
    /// One tuple of a relation.
    Tuple,
    /// A transaction id (waiting for a transaction to end).
    TransactionId,
    /// A database object other than a relation.
    Object,
    /// An application-defined advisory lock.
    Advisory,
    /// A speculative insertion's token (PostgreSQL's
    /// `LOCKTAG_SPECULATIVE_TOKEN`): held exclusive by an upsert's insert
    /// until it confirms or kills its row; others wait on it in share mode
    /// (`speculative.rs` in the engine).
    SpeculativeToken,
}

impl LockTagKind {
    /// Every kind, in id order.
    pub const ALL: [LockTagKind; 8] = [
        LockTagKind::Relation,
        LockTagKind::RelationExtend,
        LockTagKind::Page,
        LockTagKind::Tuple,
        LockTagKind::TransactionId,
        LockTagKind::Object,
        LockTagKind::Advisory,
        LockTagKind::SpeculativeToken,
    ];
    /// Number of kinds (length of per-kind counter arrays).
    pub const COUNT: usize = Self::ALL.len();

    /// `pg_locks.locktype`: `relation`, `extend`, `page`, `tuple`,
    /// `transactionid`, `object`, `advisory`, `spectoken`.
    pub const fn name(self) -> &'static str {
        self.wait_kind().name()
    }

    /// The wait event shown (`Lock` / this) while a backend waits.
    pub const fn wait_kind(self) -> LockWaitKind {
        match self {
            LockTagKind::Relation => LockWaitKind::Relation,
            LockTagKind::RelationExtend => LockWaitKind::Extend,
            LockTagKind::Page => LockWaitKind::Page,
            LockTagKind::Tuple => LockWaitKind::Tuple,
            LockTagKind::TransactionId => LockWaitKind::TransactionId,
            LockTagKind::Object => LockWaitKind::Object,
            LockTagKind::Advisory => LockWaitKind::Advisory,
            LockTagKind::SpeculativeToken => LockWaitKind::SpeculativeToken,
        }
    }

    /// Index into per-kind counter arrays.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// What a heavyweight lock is on. Construct with the kind's constructor.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct LockTag {
    database: u32,
    field1: u32,
    field2: u32,
    field3: u16,
    kind: LockTagKind,
}

const _: () = assert!(std::mem::size_of::<LockTag>() == 16);

impl LockTag {
    /// A relation lock (`LOCK TABLE`, every query on the table).
    pub const fn relation(database: u32, relation: u32) -> LockTag {
        LockTag { database, field1: relation, field2: 0, field3: 0, kind: LockTagKind::Relation }
    }

    /// The relation-extension lock of a relation.
    pub const fn relation_extend(database: u32, relation: u32) -> LockTag {
        LockTag { database, field1: relation, field2: 0, field3: 0, kind: LockTagKind::RelationExtend }
    }

    /// A page lock.
    pub const fn page(database: u32, relation: u32, block: u32) -> LockTag {
        LockTag { database, field1: relation, field2: block, field3: 0, kind: LockTagKind::Page }
    }

    /// A tuple lock.
    pub const fn tuple(database: u32, relation: u32, block: u32, offset: u16) -> LockTag {
        LockTag { database, field1: relation, field2: block, field3: offset, kind: LockTagKind::Tuple }
    }

    /// A transaction-id lock on a 64-bit id: its low half is the first
    /// field (what `pg_locks.transactionid`, a 32-bit `xid`, shows), its
    /// high half (PostgreSQL's epoch) the second.
    pub const fn transaction_id(database: u32, xid: u64) -> LockTag {
        LockTag {
            database,
            field1: xid as u32,
            field2: (xid >> 32) as u32,
            field3: 0,
            kind: LockTagKind::TransactionId,
        }
    }

    /// An object lock (`pg_class`-style class id, object id, sub-id).
    pub const fn object(database: u32, class_id: u32, object_id: u32, sub_id: u16) -> LockTag {
        LockTag { database, field1: class_id, field2: object_id, field3: sub_id, kind: LockTagKind::Object }
    }

    /// An advisory lock on a 64-bit key (`pg_advisory_lock(bigint)`): as
    /// PostgreSQL's, the key's high half is `classid`, the low half
    /// `objid`, and `objsubid` is 1.
    pub const fn advisory(database: u32, key: u64) -> LockTag {
        LockTag { database, field1: (key >> 32) as u32, field2: key as u32, field3: 1, kind: LockTagKind::Advisory }
    }

    /// An advisory lock on two 32-bit keys (`pg_advisory_lock(int, int)`):
    /// `classid` and `objid`, `objsubid` 2 — a different lock from any
    /// 64-bit key's.
    pub const fn advisory_pair(database: u32, key1: u32, key2: u32) -> LockTag {
        LockTag { database, field1: key1, field2: key2, field3: 2, kind: LockTagKind::Advisory }
    }

    /// A speculative insertion's token (PostgreSQL's
    /// `SET_LOCKTAG_SPECULATIVE_INSERTION`): transaction `xid`'s insertion
    /// number `token`. The xid's low half is the first field (`pg_locks`
    /// shows it as `transactionid`), its high half the second, the token
    /// the third (`objid`). Tokens count per backend and wrap at 2^16: a
    /// transaction has one speculative insertion at a time, and a waiter
    /// re-checks after any wake-up, so a reused token costs at most one
    /// spurious wait.
    ///
    /// ```
    /// use turnstile_lock::{LockTag, LockTagKind};
    /// let t = LockTag::speculative_token(0, 7, 3);
    /// assert_eq!(t.kind(), LockTagKind::SpeculativeToken);
    /// assert_eq!(t.fields(), (7, 0, 3));
    /// assert_eq!(t.to_string(), "speculative token 3 of transaction 7");
    /// assert_ne!(t, LockTag::transaction_id(0, 7));
    /// ```
    pub const fn speculative_token(database: u32, xid: u64, token: u16) -> LockTag {
        LockTag {
            database,
            field1: xid as u32,
            field2: (xid >> 32) as u32,
            field3: token,
            kind: LockTagKind::SpeculativeToken,
        }
    }

    /// The tag's kind.
    #[inline(always)]
    pub const fn kind(&self) -> LockTagKind {
        self.kind
    }

    /// The database id.
    #[inline(always)]
    pub const fn database(&self) -> u32 {
        self.database
    }

    /// The relation id, for relation, extension, page and tuple tags.
    pub const fn relation_id(&self) -> Option<u32> {
        match self.kind {
            LockTagKind::Relation | LockTagKind::RelationExtend | LockTagKind::Page | LockTagKind::Tuple => {
                Some(self.field1)
            }
            _ => None,
        }
    }

    /// The raw fields `(field1, field2, field3)`; their meaning depends on
    /// the kind (see the module table).
    pub const fn fields(&self) -> (u32, u32, u16) {
        (self.field1, self.field2, self.field3)
    }

    /// Whether locks on this tag may use the fast path (relation tags only).
    #[inline(always)]
    pub(crate) fn is_relation(&self) -> bool {
        self.kind as u8 == LockTagKind::Relation as u8
    }

    /// The fast-path key of a relation tag: database and relation id.
    #[inline(always)]
    pub(crate) fn fast_path_key(&self) -> u64 {
        ((self.database as u64) << 32) | self.field1 as u64
    }

    /// The stable 64-bit hash of the tag: the same for equal tags in every
    /// process and run (a fixed multiply–xorshift of its fields, no random
    /// seed). Its low bits pick the partition, bits 32 and up the
    /// strong-lock counter; both vary with every field.
    #[inline(always)]
    pub const fn hash_code(&self) -> u64 {
        let a = ((self.database as u64) << 32) | self.field1 as u64;
        let b = ((self.field2 as u64) << 32) | ((self.field3 as u64) << 8) | self.kind as u64;
        let x = a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        x ^ (x >> 32)
    }
}

impl fmt::Display for LockTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (db, f1, f2, f3) = (self.database, self.field1, self.field2, self.field3);
        match self.kind {
            LockTagKind::Relation => write!(f, "relation {db}/{f1}"),
            LockTagKind::RelationExtend => write!(f, "extension of relation {db}/{f1}"),
            LockTagKind::Page => write!(f, "page {f2} of relation {db}/{f1}"),
            LockTagKind::Tuple => write!(f, "tuple ({f2},{f3}) of relation {db}/{f1}"),
            LockTagKind::TransactionId => {
                write!(f, "transaction {} in database {db}", (u64::from(f2) << 32) | u64::from(f1))
            }
            LockTagKind::Object => write!(f, "object {f1}/{f2}/{f3} of database {db}"),
            LockTagKind::Advisory if f3 == 2 => write!(f, "advisory lock [{db},{f1},{f2},2]"),
            LockTagKind::Advisory => {
                write!(f, "advisory lock [{db},{}]", ((f1 as u64) << 32) | f2 as u64)
            }
            LockTagKind::SpeculativeToken => {
                write!(f, "speculative token {f3} of transaction {}", (u64::from(f2) << 32) | u64::from(f1))
            }
        }
    }
}

impl fmt::Debug for LockTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LockTag({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_codes_are_stable_across_runs() {
        // Pinned values: a change here changes partition and counter
        // assignment, which must be deliberate.
        assert_eq!(LockTag::relation(1, 1).hash_code(), LockTag::relation(1, 1).hash_code());
        let pinned = LockTag::relation(1, 16384).hash_code();
        assert_eq!(pinned, 0x5db8_dbe7_c2bd_9be7, "{pinned:#x}");
    }

    #[test]
    fn kinds_with_equal_fields_differ() {
        let tags = [
            LockTag::relation(1, 2),
            LockTag::relation_extend(1, 2),
            LockTag::page(1, 2, 0),
            LockTag::tuple(1, 2, 0, 0),
            LockTag::transaction_id(1, 2),
            LockTag::object(1, 2, 0, 0),
            LockTag::advisory(1, 2),
        ];
        let past_2_32 = LockTag::transaction_id(1, (1 << 32) + 2);
        assert_ne!(past_2_32, LockTag::transaction_id(1, 2), "the high half of a 64-bit id counts");
        assert_eq!(past_2_32.to_string(), "transaction 4294967298 in database 1");
        for (i, a) in tags.iter().enumerate() {
            for b in &tags[i + 1..] {
                assert_ne!(a, b);
                assert_ne!(a.hash_code(), b.hash_code(), "{a} and {b}");
            }
        }
        assert_eq!(LockTag::advisory(1, 2).to_string(), "advisory lock [1,2]");
    }

    #[test]
    fn hashes_spread_over_partitions_and_counters() {
        for db in [1, 2] {
            let mut partitions = [0u32; 64];
            let mut counters = vec![0u32; 1024];
            for rel in 0..64_000 {
                let h = LockTag::relation(db, rel).hash_code();
                partitions[(h & 63) as usize] += 1;
                counters[((h >> 32) & 1023) as usize] += 1;
            }
            assert!(partitions.iter().all(|&b| (800..1200).contains(&b)), "{partitions:?}");
            assert!(counters.iter().all(|&b| (20..110).contains(&b)), "{:?}", counters.iter().max());
        }
        // Other kinds spread too (tuples differ only in block and offset).
        let mut partitions = [0u32; 16];
        for block in 0..400 {
            for offset in 0..40 {
                partitions[(LockTag::tuple(1, 5, block, offset).hash_code() & 15) as usize] += 1;
            }
        }
        assert!(partitions.iter().all(|&b| (800..1200).contains(&b)), "{partitions:?}");
    }
}
