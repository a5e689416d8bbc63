//! The workloads W1–W7, each defined once, in its own file: the tables it
//! creates (schema), the rows they hold (data), the query its clients run,
//! the parameter it sweeps with each command's default list, its query
//! modes, its in-process form and its pgbench form, and its special
//! behaviours ([`Definition`]). `registry.rs` lists the definitions; the
//! commands name no workload, table, column or size.
//!
//! Two renderers read the schema and the queries:
//!
//! * [`through_pgbench`] and each definition's pgbench form write them as
//!   SQL and pgbench scripts for the real pgbench, against PostgreSQL and
//!   `turnstile serve` (and the repository's `workloads/` directory, which
//!   a unit test in `compare::workloads` keeps equal to what they generate);
//! * [`engine`] turns them into calls of the engine's API (`create_table`,
//!   `insert_many`, a typed `Query`), which `turnstile run` measures in
//!   process through [`in_process`].
//!
//! W1 and W5 use pgbench's own tables: through pgbench they are made by
//! `pgbench -i`, in process by [`pgbench::accounts`] and
//! [`pgbench::branches`], which describe what `pgbench -i` creates.
//! The write-ups each workload comes from are in `docs/sources.md`.
//!
//! Adding a workload: a file `w7.rs` with its `DEFINITION`, and one line in
//! `registry.rs`.

mod definition;
pub mod engine;
mod id;
pub mod in_process;
mod lookup;
mod lookup_run;
mod mode;
pub mod pgbench;
mod registry;
mod schema;
mod sizes;
pub mod through_pgbench;
pub mod w1;
pub mod w2;
pub mod w3;
pub mod w4;
pub mod w5;
pub mod w6;
pub mod w7;

pub use definition::{
    Dataset, Definition, ExtraColumn, ExtraTable, InProcessForm, Key, ModeUse, Modes, Param, PgbenchForm, Sweep,
};
pub use id::WorkloadId;
pub use lookup::{JoinOn, Lookup};
pub use lookup_run::in_process as make_in_process;
pub use mode::Mode;
pub use schema::{ColType, Column, Datum, Fill, Index, Table};
pub use sizes::Sizes;
