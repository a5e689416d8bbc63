//! Foreign keys: `REFERENCES` and `FOREIGN KEY` constraints with
//! PostgreSQL's semantics (issue 36).
//!
//! The engine's catalog keeps each key ([`turnstile_engine::catalog::ForeignKey`]);
//! this module defines and enforces them:
//! - `define`: the clauses of `CREATE TABLE` and `ALTER TABLE … ADD
//!   CONSTRAINT`, resolved against the catalog (names chosen as
//!   PostgreSQL's `ChooseConstraintName` chooses them, the referenced
//!   columns a unique key: `42830`), and the check of the rows already
//!   there;
//! - [`enforce`]: the checks and actions at the end of each statement,
//!   with the referenced row locked `FOR KEY SHARE`;
//! - `defaults`: the values `SET DEFAULT` writes;
//! - [`violation`]: the `23503` errors, worded as PostgreSQL's.

mod attach;
mod defaults;
pub(crate) mod define;
pub mod enforce;
pub(crate) mod partitions;
pub mod violation;

pub use enforce::{after_statement, is_key_update, Written};
