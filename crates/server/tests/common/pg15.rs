//! A throwaway PostgreSQL 15 cluster beside turnstile, for tests that check
//! a tool's output against PostgreSQL's own in the same run: `initdb -E
//! UTF8 --locale=C -A trust` into a temporary directory (as the `postgres`
//! user when the tests run as root, since PostgreSQL refuses to run as
//! root), started with `pg_ctl` on a free port and a unix socket there,
//! stopped (`-m immediate`) when dropped. The binaries come from
//! `TURNSTILE_PG15_BIN` (default `/usr/lib/postgresql/15/bin`); without
//! them [`Pg15::start`] reports the tool missing through
//! [`super::missing_tool`] and returns `None`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Seconds `pg_ctl` waits for the server to start or stop.
const PG_CTL_WAIT_S: &str = "60";

/// A running PostgreSQL 15 cluster.
pub struct Pg15 {
    pub bin: PathBuf,
    pub port: u16,
    pub socket_dir: PathBuf,
    data: PathBuf,
    as_postgres: bool,
    _dir: tempfile::TempDir,
}

/// Where PostgreSQL 15's binaries are.
pub fn pg15_bin() -> PathBuf {
    std::env::var_os("TURNSTILE_PG15_BIN").map_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"), PathBuf::from)
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The `postgres` user's uid and gid (`id -u postgres`, `id -g postgres`).
fn postgres_ids() -> Option<(u32, u32)> {
    let id = |flag: &str| {
        let o = Command::new("id").args([flag, "postgres"]).output().ok()?;
        String::from_utf8_lossy(&o.stdout).trim().parse::<u32>().ok()
    };
    Some((id("-u")?, id("-g")?))
}

/// A free TCP port on 127.0.0.1 (the kernel's pick, released at once).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local address").port()
}

impl Pg15 {
    /// Starts a fresh cluster, or returns `None` (after
    /// [`super::missing_tool`]) when PostgreSQL 15 is not installed.
    pub fn start() -> Option<Pg15> {
        let bin = pg15_bin();
        if !bin.join("initdb").exists() || !bin.join("pg_ctl").exists() {
            super::missing_tool(
                &format!("PostgreSQL 15 is not installed in {}", bin.display()),
                "apt-get install postgresql-15",
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let as_postgres = is_root();
        if as_postgres {
            let (uid, gid) = postgres_ids().expect("running as root: a `postgres` user to run PostgreSQL as");
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).expect("chown the cluster directory");
            // The directory must be reachable by postgres: tempdir() is 0700 under /tmp.
            std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        let data = dir.path().join("data");
        let pg = Pg15 { bin, port: free_port(), socket_dir: dir.path().to_path_buf(), data, as_postgres, _dir: dir };
        let init =
            pg.run_as("initdb", &["-D", path(&pg.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"]);
        assert!(init.status.success(), "initdb failed: {}", String::from_utf8_lossy(&init.stderr));
        let opts = format!("-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off", pg.port, path(&pg.socket_dir));
        let log = pg.socket_dir.join("server.log");
        let start = pg.run_as(
            "pg_ctl",
            &["-D", path(&pg.data), "-l", path(&log), "-w", "-t", PG_CTL_WAIT_S, "-o", &opts, "start"],
        );
        assert!(
            start.status.success(),
            "pg_ctl start failed: {}\n{}",
            String::from_utf8_lossy(&start.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Some(pg)
    }

    /// Runs one of PostgreSQL's binaries, as `postgres` when root.
    fn run_as(&self, program: &str, args: &[&str]) -> Output {
        let exe = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        cmd.args(args).stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("run {program}: {e}"))
    }
}

impl Drop for Pg15 {
    fn drop(&mut self) {
        let _ = self.run_as("pg_ctl", &["-D", path(&self.data), "-m", "immediate", "-w", "-t", PG_CTL_WAIT_S, "stop"]);
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}
