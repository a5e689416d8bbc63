//! Nothing outlives `turnstile compare`: every child process and temporary
//! directory it creates is registered here, and a signal thread tears them
//! down when the command is interrupted.
//!
//! Three layers, each covering what the one before cannot:
//! 1. the normal path stops every server and removes its directory (the
//!    [`Registered`] guard and [`TempRoot`] do it on drop as well);
//! 2. SIGTERM, SIGINT and SIGHUP are blocked in every thread and taken by
//!    one thread with `sigwait`; it kills the clients (pgbench, psql),
//!    shuts the servers down (PostgreSQL: immediate shutdown with
//!    SIGQUIT, which also ends its backends; `turnstile serve`: SIGTERM),
//!    waits for them, removes the temporary directories and exits with
//!    `128 + signal`. Once it has started, [`spawn`] refuses new children;
//! 3. every child gets `PR_SET_PDEATHSIG`, so even a SIGKILL of compare
//!    takes its servers and clients with it; and a temporary directory
//!    left by a killed run (its `owner.pid` names a dead process) is
//!    removed by the next run.
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked the child ends,
//! so a thread that spawns a child waits for it before it ends (the
//! servers are started by the main thread, which lives until the end).

use crate::CliError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

/// What a registered process is, which decides how it is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A client (pgbench, psql, initdb): killed outright.
    Client,
    /// A PostgreSQL postmaster: SIGQUIT (immediate shutdown, ends its backends).
    Postmaster,
    /// `turnstile serve`: SIGTERM (clean stop).
    Turnstile,
}

impl Kind {
    /// The signal the child receives when its parent thread dies.
    fn death_signal(self) -> i32 {
        match self {
            Kind::Client => libc::SIGKILL,
            Kind::Postmaster => libc::SIGQUIT,
            Kind::Turnstile => libc::SIGKILL,
        }
    }

    /// The signal that asks the process to stop at teardown.
    fn stop_signal(self) -> i32 {
        match self {
            Kind::Client => libc::SIGKILL,
            Kind::Postmaster => libc::SIGQUIT,
            Kind::Turnstile => libc::SIGTERM,
        }
    }
}

/// Every live child and temporary directory of this process.
#[derive(Default)]
struct Registry {
    procs: BTreeMap<u32, Kind>,
    dirs: Vec<PathBuf>,
    /// Set by the signal thread: no new child may be started.
    stopping: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { procs: BTreeMap::new(), dirs: Vec::new(), stopping: false });

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether an interrupt is being handled (the process is about to exit).
pub fn stopping() -> bool {
    registry().stopping
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (and so in
/// every thread it starts afterwards) and starts the thread that handles
/// them. Call first thing, from the main thread, before any other thread
/// exists. [`spawn`] gives children an empty mask again.
pub fn install() -> Result<(), CliError> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        let set = signal_set();
        // SAFETY: `set` is an initialised sigset_t; pthread_sigmask only
        // reads it and changes the calling thread's mask.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        if rc != 0 {
            result = Err(format!("pthread_sigmask: {}", std::io::Error::from_raw_os_error(rc)).into());
            return;
        }
        if let Err(e) = std::thread::Builder::new().name("compare-signals".into()).spawn(move || signal_thread(set)) {
            result = Err(format!("cannot start the signal thread: {e}").into());
        }
    });
    result
}

fn signal_set() -> libc::sigset_t {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: sigemptyset initialises the set it is given; sigaddset only
    // adds valid signal numbers to an initialised set.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(set.as_mut_ptr(), sig);
        }
        set.assume_init()
    }
}

fn signal_thread(set: libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    loop {
        // SAFETY: `set` is initialised and `sig` is a valid out pointer.
        let rc = unsafe { libc::sigwait(&set, &mut sig) };
        if rc == 0 {
            break;
        }
    }
    eprintln!("turnstile: signal {sig}: stopping the servers and removing the temporary files");
    teardown();
    std::process::exit(128 + sig);
}

/// Stops everything registered: clients first, then the servers (waiting
/// for them, at most 20 s before SIGKILL), then removes the directories.
fn teardown() {
    let (procs, dirs) = {
        let mut r = registry();
        r.stopping = true;
        (std::mem::take(&mut r.procs), std::mem::take(&mut r.dirs))
    };
    for (&pid, &kind) in procs.iter().filter(|(_, k)| **k == Kind::Client) {
        signal(pid, kind.stop_signal());
    }
    for (&pid, &kind) in procs.iter().filter(|(_, k)| **k != Kind::Client) {
        signal(pid, kind.stop_signal());
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    for &pid in procs.keys() {
        while !reaped(pid) {
            if Instant::now() > deadline {
                signal(pid, libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    for d in dirs {
        let _ = std::fs::remove_dir_all(&d);
    }
}

fn signal(pid: u32, sig: i32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return };
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Reaps `pid` if it has exited; true when it is gone (also when another
/// thread reaped it first).
fn reaped(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return true };
    let mut status = 0;
    // SAFETY: waitpid writes the status into a valid local.
    let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    rc == pid || rc == -1
}

/// Starts `cmd` as a registered child of `kind`: it gets its own process
/// group (a terminal's Ctrl-C reaches compare only, which then stops the
/// children in order) and `PR_SET_PDEATHSIG`.
pub fn spawn(cmd: &mut Command, kind: Kind) -> Result<Registered, CliError> {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    let death = kind.death_signal();
    cmd.process_group(0);
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe functions (sigemptyset, sigprocmask, prctl,
    // getppid, _exit) on its own stack variables.
    unsafe {
        cmd.pre_exec(move || {
            // The child inherits compare's mask, which blocks the signals
            // the signal thread takes: a server would never see SIGTERM.
            let mut empty = std::mem::MaybeUninit::<libc::sigset_t>::zeroed();
            libc::sigemptyset(empty.as_mut_ptr());
            if libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, death as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let mut r = registry();
    if r.stopping {
        return Err("interrupted".into());
    }
    let program = cmd.get_program().to_string_lossy().into_owned();
    let child = cmd.spawn().map_err(|e| format!("cannot start {program}: {e}"))?;
    r.procs.insert(child.id(), kind);
    Ok(Registered { child: Some(child), kind })
}

/// A registered child; dropping it stops it (as the teardown would) and
/// forgets it.
pub struct Registered {
    child: Option<Child>,
    kind: Kind,
}

impl Registered {
    /// The child process.
    pub fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("a Registered child is present until dropped")
    }

    /// Sends the stop signal and waits up to `grace`, then SIGKILL.
    pub fn stop(&mut self, grace: Duration) -> Result<std::process::ExitStatus, CliError> {
        self.stop_with(self.kind.stop_signal(), grace)
    }

    /// Sends `sig` and waits up to `grace`, then SIGKILL.
    pub fn stop_with(&mut self, sig: i32, grace: Duration) -> Result<std::process::ExitStatus, CliError> {
        let Some(child) = self.child.as_mut() else { return Err("no child".into()) };
        let pid = child.id();
        if let Some(status) = child.try_wait()? {
            registry().procs.remove(&pid);
            return Ok(status);
        }
        signal(pid, sig);
        let deadline = Instant::now() + grace;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                break child.wait()?;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        registry().procs.remove(&pid);
        Ok(status)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop(Duration::from_secs(20));
        }
    }
}

/// The command's temporary directory: registered for the teardown,
/// removed on drop, and marked with the owner's pid so that the next run
/// removes it if this one is SIGKILLed.
pub struct TempRoot {
    path: PathBuf,
}

/// Prefix of compare's temporary directories.
const PREFIX: &str = "turnstile-compare-";
/// The file naming the process that owns a temporary directory.
const OWNER_FILE: &str = "owner.pid";

impl TempRoot {
    /// Creates a fresh directory under the system's temporary directory,
    /// first removing those of dead runs.
    pub fn create() -> Result<TempRoot, CliError> {
        remove_stale(&std::env::temp_dir());
        let dir = tempfile::Builder::new().prefix(PREFIX).tempdir()?;
        // Kept, not auto-deleted by tempfile: removal is ours (drop or teardown).
        let path = dir.keep();
        let root = TempRoot { path };
        registry().dirs.push(root.path.clone());
        std::fs::write(root.path.join(OWNER_FILE), std::process::id().to_string())?;
        Ok(root)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        registry().dirs.retain(|d| d != &self.path);
    }
}

/// Removes `turnstile-compare-*` directories in `tmp` whose owner process
/// no longer exists.
fn remove_stale(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let owner = std::fs::read_to_string(e.path().join(OWNER_FILE)).ok().and_then(|s| s.trim().parse::<i32>().ok());
        // SAFETY: kill with signal 0 only checks for existence.
        let alive = owner.is_some_and(|pid| unsafe { libc::kill(pid, 0) } == 0 || errno_is_eperm());
        if owner.is_some() && !alive {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn errno_is_eperm() -> bool {
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
