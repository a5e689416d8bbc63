//! Re-export of `turnstile_sync::sync`, the loom facade: every atomic of
//! this crate comes from here.

pub(crate) use turnstile_sync::sync::*;
