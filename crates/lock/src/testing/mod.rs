//! Test support shared by this crate's stress test (`tests/stress.rs`) and
//! the lab's `turnstile stress locks`, behind the `testing` feature: one
//! independent [`Checker`], one [`Quiescer`] that stops the stress threads
//! between transactions so [`LockManager::check_invariants`] can run while
//! nothing moves, and the stress runs' mode weights ([`random_mode`]).
//!
//! Nothing here is used by the lock manager itself.
//!
//! [`LockManager::check_invariants`]: crate::LockManager::check_invariants

mod checker;
mod modes;
mod quiesce;

pub use checker::{Checker, Stall};
pub use modes::random_mode;
pub use quiesce::{Quiescer, QuiescerMember};
