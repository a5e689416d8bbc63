//! SQL functions: each defined once ([`FuncDef`], in the file of its
//! family), registered in [`registry`], resolved by the compiler
//! ([`resolve`]) and called through its definition.

pub mod acl;
mod admin;
pub(crate) mod array;
mod catalog;
mod conditional;
mod datetime;
pub mod def;
mod info;
pub mod json;
mod math;
mod privilege;
pub mod registry;
mod regtype;
mod resolve;
mod sequence;
mod strings;
mod text;
mod wal;

pub(crate) use datetime::NOW;
pub use def::{FuncDef, Nulls, Signature, Volatility, MAX_ARGS};
pub(crate) use info::CURRENT_USER;
pub use info::VERSION;
pub(crate) use math::POWER;
pub use registry::lookup;
pub(crate) use regtype::{reg_cast_in, reg_cast_out};
pub(crate) use strings::{BTRIM, LTRIM, RTRIM, STRPOS};
pub(crate) use text::{LOWER, SUBSTR};
