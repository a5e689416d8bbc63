//! One sample of a running server, taken after each chunk of the mix:
//! resident memory, the data directory's size on disk, and the tables'
//! sizes; and the server's count of assigned transaction ids.
//!
//! Resident memory is `VmRSS` from `/proc/<pid>/status` of the
//! `turnstile serve` process (its backends are threads, so this is the
//! whole server). The data directory's size is what its files occupy on
//! disk (`st_blocks` × 512, as `du`), so preallocated or sparse files
//! count as the disk sees them. Table sizes are the server's own
//! `pg_relation_size`: the tables the mix updates (`pgbench_accounts`,
//! `pgbench_tellers`, `pgbench_branches`) summed, and the append-only
//! `pgbench_history` apart, since it grows by one row per write
//! transaction by design. Beside them, what MVCC keeps in memory, from the
//! server's views: the status log's bytes (`pg_stat_xact_log.bytes`) and
//! the version store's bytes and fallbacks (`pg_stat_version_store`), so
//! that RSS growth can be told apart from the structures issue 33 bounds.

use crate::compare::client::Conn;
use crate::CliError;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// The tables the tpcb-like script updates in place.
pub const UPDATED_TABLES: [&str; 3] = ["pgbench_accounts", "pgbench_tellers", "pgbench_branches"];
/// The table it only appends to.
pub const HISTORY_TABLE: &str = "pgbench_history";

/// How long one sampling query may take.
const QUERY_LIMIT: Duration = Duration::from_secs(120);

/// The server's figures at one point of the mix.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// Mix transactions processed before the sample.
    pub transactions: u64,
    /// Seconds since the mix began.
    pub seconds: f64,
    /// The server's resident memory, MB (2^20 bytes).
    pub rss_mb: f64,
    /// The data directory's size on disk, bytes.
    pub data_dir_bytes: u64,
    /// `pg_relation_size` of the updated tables, summed, bytes.
    pub updated_tables_bytes: u64,
    /// `pg_relation_size` of `pgbench_history`, bytes.
    pub history_bytes: u64,
    /// `pg_stat_xact_log.bytes`: the transaction status log.
    pub xact_log_bytes: u64,
    /// `pg_stat_version_store.bytes`: older row versions kept in memory.
    pub version_store_bytes: u64,
    /// `pg_stat_version_store.fallbacks`: updates that wrote a new tuple
    /// version because the store was full.
    pub version_store_fallbacks: u64,
}

impl Sample {
    /// Samples the server `pid` with data directory `data` through `conn`.
    pub fn take(conn: &Conn<'_>, pid: u32, data: &Path, transactions: u64, seconds: f64) -> Result<Sample, CliError> {
        let rss_mb = rss_kb(pid)? as f64 / 1024.0;
        let data_dir_bytes = disk_usage(data)?;
        let v = server_figures(conn)?;
        Ok(Sample {
            transactions,
            seconds,
            rss_mb,
            data_dir_bytes,
            updated_tables_bytes: v[0] + v[1] + v[2],
            history_bytes: v[3],
            xact_log_bytes: v[4],
            version_store_bytes: v[5],
            version_store_fallbacks: v[6],
        })
    }
}

/// `VmRSS` of process `pid`, kB.
pub fn rss_kb(pid: u32) -> Result<u64, CliError> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e} (has the server exited?)"))?;
    parse_vm_rss(&status).ok_or_else(|| format!("{path} has no readable VmRSS line").into())
}

/// The `VmRSS:   123456 kB` line of a `/proc/<pid>/status`, in kB.
fn parse_vm_rss(status: &str) -> Option<u64> {
    let rest = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let mut words = rest.split_whitespace();
    let kb = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(kb)
}

/// Bytes that the files under `dir` occupy on disk (as `du -s`).
pub fn disk_usage(dir: &Path) -> Result<u64, CliError> {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut pending = vec![dir.to_owned()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", d.display()))?;
            // A file removed between the listing and the stat (a dropped
            // segment) occupies nothing.
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else { continue };
            total += meta.blocks() * 512;
            if meta.is_dir() {
                pending.push(entry.path());
            }
        }
    }
    Ok(total)
}

/// What the server reports, in this order: `pg_relation_size` of the
/// three updated tables and of `pgbench_history`, the status log's bytes,
/// the version store's bytes and fallbacks.
fn server_figures(conn: &Conn<'_>) -> Result<[u64; 7], CliError> {
    let sizes: Vec<String> =
        UPDATED_TABLES.iter().chain([&HISTORY_TABLE]).map(|t| format!("pg_relation_size('{t}')")).collect();
    let sql = format!(
        "SELECT {};\nSELECT bytes FROM pg_stat_xact_log;\nSELECT bytes, fallbacks FROM pg_stat_version_store;\n",
        sizes.join(", ")
    );
    let out = conn.psql(&sql, QUERY_LIMIT)?;
    let values: Result<Vec<u64>, _> =
        out.lines().flat_map(|l| l.split(',')).filter(|v| !v.trim().is_empty()).map(|v| v.trim().parse()).collect();
    values.ok().and_then(|v| <[u64; 7]>::try_from(v).ok()).ok_or_else(|| {
        format!("the table sizes, pg_stat_xact_log and pg_stat_version_store answered {:?}", out.trim()).into()
    })
}

/// The server's count of transaction ids assigned since it started
/// (`SELECT xids_assigned FROM pg_stat_xact_log`).
pub fn xids_assigned(conn: &Conn<'_>) -> Result<u64, CliError> {
    let out = conn.psql("SELECT xids_assigned FROM pg_stat_xact_log;\n", QUERY_LIMIT)?;
    out.trim().parse().map_err(|e| format!("pg_stat_xact_log.xids_assigned answered {:?}: {e}", out.trim()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_is_read_in_kb() {
        let status = "Name:\tturnstile\nVmPeak:\t  912340 kB\nVmSize:\t  901200 kB\nVmHWM:\t   50212 kB\n\
VmRSS:\t   48920 kB\nRssAnon:\t   40000 kB\n";
        assert_eq!(parse_vm_rss(status), Some(48920));
        assert_eq!(parse_vm_rss("Name:\tkthreadd\nState:\tS (sleeping)\n"), None, "a kernel thread has no VmRSS");
        assert_eq!(parse_vm_rss("VmRSS:\t 12 MB\n"), None, "only kB is understood");
    }

    #[test]
    fn our_own_rss_and_a_directory_on_disk_are_measured() {
        assert!(rss_kb(std::process::id()).unwrap() > 0);
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("base")).unwrap();
        std::fs::write(dir.path().join("base/1"), vec![7u8; 64 * 1024]).unwrap();
        let used = disk_usage(dir.path()).unwrap();
        assert!(used >= 64 * 1024, "{used} bytes on disk for a 64 kB file");
        assert!(disk_usage(&dir.path().join("missing")).is_err());
    }
}
