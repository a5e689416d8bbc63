//! SQL types and values of the front end: PostgreSQL's type OIDs, text
//! input and output, and the mapping to the engine's column types.
//!
//! # Why two value systems
//!
//! The engine's [`Value`]/[`ColumnType`] are what a row *stores*: a fixed
//! set of column types with an on-page encoding, and nothing else. The
//! front end's [`Datum`]/[`SqlType`] are what an *expression* computes:
//! they add what has no column (`unknown`-typed literals and parameters
//! before inference, `numeric` results of `sum`/`avg`, `name`, time
//! zones), PostgreSQL's OIDs and text forms for the protocol, and SQL's
//! comparison and cast rules. The two meet in one place each way:
//! [`Datum::to_engine`] when a value is written or pushed down as a filter,
//! and [`Datum::from_engine`] when a row comes back from a scan.
//!
//! # Files, one concept each
//!
//! | file | what |
//! |---|---|
//! | [`sql_type`] | [`SqlType`]: OIDs, names, modifiers, the engine column type |
//! | [`datum`] | [`Datum`]: the representation of each type, equality, hashing, SQL order |
//! | [`text`] | text input and output (PostgreSQL's `*in`/`*out` functions) |
//! | [`array`] | one-dimensional arrays: types, OIDs, text and binary forms |
//! | [`bytea`] | `bytea`'s text forms, read into and printed from bytes |
//! | [`cast`] | assignment, implicit and explicit casts |
//! | [`range`] | range checks (`22003`) shared by input, casts and arithmetic |
//! | [`engine`] | the bridge to the engine's [`Value`](turnstile_engine::types::Value) |
//! | [`zone`] | the session's time zone, for `timestamptz` input, output and casts |

mod array;
mod bytea;
mod cast;
mod datum;
mod engine;
mod range;
mod record;
mod sort_key;
mod sql_type;
mod text;
pub mod zone;

pub use array::ARRAY_ELEMENTS_MAX;
pub(crate) use array::{recv_array, send_array};
pub(crate) use bytea::bytea_from_text;
pub use bytea::write_bytea_hex;
pub use datum::{now_timestamp, timestamp_from_unix_micros, Datum};
pub use range::{float_check, int_in_range, out_of_range};
pub use sort_key::compare_key;
pub use sql_type::{RegKind, SqlType, NUMERIC};
pub use text::pad_char;
