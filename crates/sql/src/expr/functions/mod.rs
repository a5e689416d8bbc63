//! SQL functions: each defined once ([`FuncDef`], in the file of its
//! family), registered in [`registry`], resolved by the compiler
//! ([`resolve`]) and called through its definition.

mod admin;
mod conditional;
mod datetime;
pub mod def;
mod info;
mod math;
pub mod registry;
mod resolve;
mod sequence;
mod text;

pub(crate) use datetime::NOW;
pub use def::{FuncDef, Nulls, Signature, Volatility, MAX_ARGS};
pub(crate) use info::CURRENT_USER;
pub use info::VERSION;
pub use registry::lookup;
pub(crate) use text::SUBSTR;
