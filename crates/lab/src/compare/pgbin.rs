//! Finding PostgreSQL's programs, and the user PostgreSQL runs as.

use crate::CliError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The programs compare runs, all from one directory.
const PROGRAMS: [&str; 5] = ["initdb", "postgres", "pgbench", "psql", "pg_isready"];

/// What to install when they are missing (Debian and Ubuntu).
pub const INSTALL_HINT: &str = "install PostgreSQL 15's server and client programs: \
`apt-get install postgresql-15 postgresql-client-15` (Debian 12; elsewhere add the PGDG apt repository first), \
or pass --pg-bin DIR with the directory holding initdb, postgres, pgbench, psql and pg_isready";

/// PostgreSQL's program directory.
#[derive(Clone, Debug)]
pub struct PgBin {
    dir: PathBuf,
    /// `postgres --version`, e.g. `15.18`.
    pub version: String,
}

impl PgBin {
    /// `--pg-bin` if given, else `pg_config --bindir`, else the highest
    /// `/usr/lib/postgresql/*/bin`; the directory must hold every program
    /// compare runs.
    pub fn find(explicit: Option<&Path>) -> Result<PgBin, CliError> {
        let mut tried = Vec::new();
        let candidates: Vec<PathBuf> = match explicit {
            Some(dir) => vec![dir.to_owned()],
            None => {
                let mut c = Vec::new();
                if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
                    if out.status.success() {
                        c.push(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
                    }
                }
                let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
                    .collect();
                versions.sort();
                c.extend(versions.into_iter().rev().map(|(_, p)| p));
                c
            }
        };
        for dir in candidates {
            let missing: Vec<&str> = PROGRAMS.iter().copied().filter(|p| !dir.join(p).is_file()).collect();
            if missing.is_empty() {
                let version = server_version(&dir)?;
                return Ok(PgBin { dir, version });
            }
            tried.push(format!("{} (no {})", dir.display(), missing.join(", ")));
        }
        let looked = if tried.is_empty() {
            "pg_config is not on PATH and /usr/lib/postgresql has no versions".to_owned()
        } else {
            format!("looked in {}", tried.join("; "))
        };
        Err(format!("PostgreSQL's programs not found ({looked}): {INSTALL_HINT}").into())
    }

    /// The path of program `name`.
    pub fn program(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The major version (`15`).
    pub fn major(&self) -> u32 {
        self.version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0)
    }
}

/// `postgres --version` → `15.18`.
fn server_version(dir: &Path) -> Result<String, CliError> {
    let out = Command::new(dir.join("postgres")).arg("--version").output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    text.split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_owned)
        .ok_or_else(|| format!("cannot read the version from {:?}", text.trim()).into())
}

/// The user the PostgreSQL server runs as: ourselves, or when we are root
/// (which `initdb` and `postgres` refuse) the `postgres` user.
#[derive(Clone, Copy, Debug)]
pub struct RunAs {
    /// `Some((uid, gid))` when the server must switch user.
    pub switch: Option<(u32, u32)>,
}

impl RunAs {
    /// Decides whom PostgreSQL runs as.
    pub fn detect() -> Result<RunAs, CliError> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Ok(RunAs { switch: None });
        }
        let ids = lookup_user("postgres").ok_or(
            "running as root, and there is no `postgres` user to run the PostgreSQL server as \
             (initdb and postgres refuse root): create one (`useradd --system postgres`; the postgresql-15 package does it)",
        )?;
        Ok(RunAs { switch: Some(ids) })
    }

    /// Makes `cmd` run as the server's user.
    pub fn apply(&self, cmd: &mut Command) {
        use std::os::unix::process::CommandExt;
        if let Some((uid, gid)) = self.switch {
            cmd.uid(uid).gid(gid);
        }
    }

    /// Hands `path` to the server's user.
    pub fn chown(&self, path: &Path) -> Result<(), CliError> {
        if let Some((uid, gid)) = self.switch {
            std::os::unix::fs::chown(path, Some(uid), Some(gid))
                .map_err(|e| format!("chown {} to the postgres user: {e}", path.display()))?;
        }
        Ok(())
    }
}

/// uid and gid of `name` from the passwd database.
fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let cname = std::ffi::CString::new(name).ok()?;
    let mut pwd = std::mem::MaybeUninit::<libc::passwd>::zeroed();
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call: `cname` is NUL-terminated,
    // `pwd` and `result` are out parameters, `buf` is writable for its length.
    let rc = unsafe { libc::getpwnam_r(cname.as_ptr(), pwd.as_mut_ptr(), buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() {
        return None;
    }
    // SAFETY: getpwnam_r succeeded and set `result` to `pwd`, now initialised.
    let pwd = unsafe { pwd.assume_init() };
    Some((pwd.pw_uid, pwd.pw_gid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_without_the_programs_is_refused_with_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let err = PgBin::find(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("apt-get install postgresql-15"), "{err}");
        assert!(err.contains("no initdb"), "{err}");
    }
}
