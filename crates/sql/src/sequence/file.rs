//! A sequence's file, written whole: a temporary file renamed over it,
//! so a crash leaves the old text or the new one.

use crate::error::SqlError;
use std::io::Write;
use std::path::Path;
use turnstile_lock::SqlState;

pub(crate) fn io_error(what: &str, path: &Path, e: std::io::Error) -> SqlError {
    SqlError::new(SqlState::IO_ERROR, format!("could not {what} sequence file \"{}\": {e}", path.display()))
}

/// Writes `text` to `path` through a temporary file renamed over it
/// (`sync`: fsynced, with its directory).
pub(crate) fn write_atomically(path: &Path, text: &str, sync: bool) -> Result<(), SqlError> {
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp).map_err(|e| io_error("create", &tmp, e))?;
    f.write_all(text.as_bytes()).map_err(|e| io_error("write", &tmp, e))?;
    if sync {
        f.sync_all().map_err(|e| io_error("fsync", &tmp, e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| io_error("rename", path, e))?;
    if sync {
        if let Some(dir) = path.parent() {
            std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io_error("fsync", dir, e))?;
        }
    }
    Ok(())
}
