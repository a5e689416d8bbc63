//! Foreign keys as the catalog keeps them (PostgreSQL's `pg_constraint`
//! rows with `contype = 'f'`): the referencing table and columns, the
//! referenced table and columns, and what a change of the referenced key
//! does (`confupdtype`, `confdeltype`).
//!
//! The catalog only stores them. The SQL layer enforces them at the end of
//! each statement (PostgreSQL's RI triggers): a referencing row's key must
//! be present in the referenced table, whose row it locks `FOR KEY SHARE`;
//! a referenced row's delete or key update runs the constraint's action.
//!
//! Invariants (checked when a key is added):
//! `columns.len() == ref_columns.len() ∈ 1..=MAX_FK_COLUMNS`, and
//! `ref_columns` are, as a set, the columns of a unique index of
//! `ref_table`.
//!
//! ```
//! use turnstile_engine::catalog::FkAction;
//! assert_eq!(FkAction::NoAction.code(), 'a');
//! assert_eq!(FkAction::SetDefault.clause(), "SET DEFAULT");
//! ```

use super::model::{CatalogData, DbId, RelId};
use serde::{Deserialize, Serialize};

/// Most columns in one foreign key (PostgreSQL's `INDEX_MAX_KEYS`).
pub const MAX_FK_COLUMNS: usize = 32;

/// What a delete or key update of a referenced row does to the rows that
/// reference it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FkAction {
    /// `NO ACTION` (the default): fails at the end of the statement if
    /// the old key is still referenced and no row has it any more.
    NoAction,
    /// `RESTRICT`: fails if the old key is still referenced.
    Restrict,
    /// `CASCADE`: deletes the referencing rows, or updates their key.
    Cascade,
    /// `SET NULL`: sets the referencing columns to NULL.
    SetNull,
    /// `SET DEFAULT`: sets the referencing columns to their defaults.
    SetDefault,
}

impl FkAction {
    /// `pg_constraint.confupdtype`/`confdeltype`'s letter.
    pub const fn code(self) -> char {
        match self {
            FkAction::NoAction => 'a',
            FkAction::Restrict => 'r',
            FkAction::Cascade => 'c',
            FkAction::SetNull => 'n',
            FkAction::SetDefault => 'd',
        }
    }

    /// The clause as `pg_get_constraintdef` prints it.
    pub const fn clause(self) -> &'static str {
        match self {
            FkAction::NoAction => "NO ACTION",
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
            FkAction::SetDefault => "SET DEFAULT",
        }
    }
}

/// One foreign key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// Its id, from the space relations use (so it can name a
    /// `pg_constraint` row of its own).
    pub id: u32,
    /// Its database.
    pub db: DbId,
    /// Its name, unique among the constraints of `table`.
    pub name: String,
    /// The referencing table (`conrelid`).
    pub table: RelId,
    /// The referencing columns' numbers (`conkey`, zero-based).
    pub columns: Vec<usize>,
    /// The referenced table (`confrelid`).
    pub ref_table: RelId,
    /// The referenced columns' numbers (`confkey`, zero-based), in the
    /// order matching `columns`.
    pub ref_columns: Vec<usize>,
    /// `ON UPDATE`.
    pub on_update: FkAction,
    /// `ON DELETE`.
    pub on_delete: FkAction,
}

impl CatalogData {
    /// The foreign keys whose referencing table is `table`, in id order.
    pub fn foreign_keys_of(&self, table: RelId) -> impl Iterator<Item = &ForeignKey> {
        self.foreign_keys.values().filter(move |k| k.table == table)
    }

    /// The foreign keys that reference `table`, in id order.
    pub fn referencing(&self, table: RelId) -> impl Iterator<Item = &ForeignKey> {
        self.foreign_keys.values().filter(move |k| k.ref_table == table)
    }

    /// Whether `table` takes part in a foreign key, on either side.
    pub fn has_foreign_keys(&self, table: RelId) -> bool {
        self.foreign_keys.values().any(|k| k.table == table || k.ref_table == table)
    }
}
