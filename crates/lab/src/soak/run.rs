//! One soak run: a fresh data directory and `turnstile serve --profile P`,
//! `pgbench -i`, the transaction-id probes, then the mix in chunks with a
//! [`Sample`] after each, optionally beside a [`LongSnapshot`].
//!
//! Order of a run (every step failing fails the run, with the server's log
//! when it has exited):
//! 1. start the server in `<root>/<profile>-<plain|long-snapshot>`, load
//!    `pgbench -i -s <scale>`;
//! 2. with `long_snapshot`, open the `REPEATABLE READ` session;
//! 3. the probes: `pgbench -b select-only`, then `-b tpcb-like`, each alone
//!    for [`Plan::probe_transactions`]; the delta of `xids_assigned` over
//!    each, divided by the transactions it processed, is
//!    `xids_per_read_only` and `xids_per_write`;
//! 4. the mix, `pgbench -n -b tpcb-like@1 -b select-only@1 -c C -j min(C,2)
//!    -t T` per chunk, until `--transactions` have been processed, sampling
//!    after each chunk and checking that the server and the session live;
//! 5. commit the session, stop the server (SIGTERM: a clean exit is
//!    required) and remove the directory.

use super::long_snapshot::LongSnapshot;
use super::pgbench_output::{Processed, SELECT_ONLY, TPCB_LIKE};
use super::report::{Figures, RunReport};
use super::sample::{self, Sample};
use super::Plan;
use crate::cli::ProfileArg;
use crate::compare::client::Conn;
use crate::compare::pgbin::{PgClients, RunAs};
use crate::compare::server::{Server, ServerId, TurnstileSpec};
use crate::CliError;
use indicatif::ProgressBar;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long one chunk of pgbench may take before the server counts as hung.
const CHUNK_LIMIT: Duration = Duration::from_secs(1800);
/// How long `pgbench -i` may take.
const INIT_LIMIT: Duration = Duration::from_secs(900);
/// The database the runs use.
const DB: &str = "postgres";

/// Runs `profile` once, with or without the long session, under `root`.
pub fn run(
    plan: &Plan,
    profile: ProfileArg,
    long_snapshot: bool,
    root: &Path,
    clients: &PgClients,
    bar: &ProgressBar,
) -> Result<RunReport, CliError> {
    let name = format!("{profile} {}", if long_snapshot { "with the long REPEATABLE READ session" } else { "plain" });
    let dir = root.join(format!("{profile}-{}", if long_snapshot { "long-snapshot" } else { "plain" }));
    std::fs::create_dir_all(&dir)?;
    let id = match profile {
        ProfileArg::Classic => ServerId::Classic,
        ProfileArg::Scalable => ServerId::Scalable,
    };
    let spec = TurnstileSpec { exe: std::env::current_exe()?, set: plan.set.clone(), stand_in: false };
    bar.set_message(format!("{name}: starting the server"));
    let mut server = Server::start(id, &dir, &[], clients, RunAs { switch: None }, &spec, plan.clients + 2)
        .map_err(|e| format!("{name}: {e}"))?;
    let figures = measure(plan, &mut server, clients, long_snapshot, bar);
    let figures = figures.map_err(|e| with_server_state(&name, &mut server, e))?;
    server.stop().map_err(|e| format!("{name}: {e}"))?;
    std::fs::remove_dir_all(&dir)?;
    Ok(RunReport::new(plan, profile, long_snapshot, figures))
}

/// Steps 1 (the load) to 5 (the commit) on a running server.
fn measure(
    plan: &Plan,
    server: &mut Server,
    clients: &PgClients,
    long_snapshot: bool,
    bar: &ProgressBar,
) -> Result<Figures, CliError> {
    let pid = server.pid();
    let data = server.data_dir();
    let conn = server.conn(clients, DB);
    bar.set_message(format!("{}: pgbench -i -s {}", server.id.key(), plan.scale));
    conn.pgbench_init(&["-s".to_owned(), plan.scale.to_string()], INIT_LIMIT)?;
    let mut session = if long_snapshot { Some(LongSnapshot::open(&conn)?) } else { None };
    let xids_per_read_only = xids_per_transaction(&conn, plan, "select-only")?;
    let xids_per_write = xids_per_transaction(&conn, plan, "tpcb-like")?;

    let xids_before = sample::xids_assigned(&conn)?;
    let mut samples = vec![Sample::take(&conn, pid, &data, 0, 0.0)?];
    let (mut done, mut writes, mut reads) = (0u64, 0u64, 0u64);
    let started = Instant::now();
    let mut pgbench_seconds = 0.0;
    while done < plan.transactions {
        let per_client = plan.per_client_per_chunk.min((plan.transactions - done).div_ceil(plan.clients as u64));
        bar.set_message(format!("{}: mix, {done} of {} transactions", server.id.key(), plan.transactions));
        let chunk_started = Instant::now();
        let p = pgbench(&conn, plan.clients, per_client, &["tpcb-like@1", "select-only@1"])?;
        pgbench_seconds += chunk_started.elapsed().as_secs_f64();
        if p.total == 0 {
            return Err("a chunk of the mix processed no transaction".into());
        }
        (done, writes, reads) = (done + p.total, writes + p.of(TPCB_LIKE), reads + p.of(SELECT_ONLY));
        if let Some(s) = session.as_mut() {
            s.check()?;
        }
        samples.push(Sample::take(&conn, pid, &data, done, started.elapsed().as_secs_f64())?);
        bar.inc(1);
    }
    let mix_xids = sample::xids_assigned(&conn)?.saturating_sub(xids_before);
    if let Some(s) = session {
        s.commit()?;
    }
    Ok(Figures {
        samples,
        transactions: done,
        mix_writes: writes,
        mix_reads: reads,
        mix_xids,
        pgbench_seconds,
        xids_per_read_only,
        xids_per_write,
    })
}

/// Transaction ids assigned per transaction of built-in `script` run alone
/// for [`Plan::probe_transactions`].
fn xids_per_transaction(conn: &Conn<'_>, plan: &Plan, script: &str) -> Result<f64, CliError> {
    let before = sample::xids_assigned(conn)?;
    let per_client = plan.probe_transactions.div_ceil(plan.clients as u64);
    let p = pgbench(conn, plan.clients, per_client, &[script])?;
    let after = sample::xids_assigned(conn)?;
    if p.total == 0 {
        return Err(format!("pgbench -b {script} processed no transaction").into());
    }
    let assigned = after.checked_sub(before).ok_or_else(|| {
        format!("pg_stat_xact_log.xids_assigned went down over pgbench -b {script}: {before} then {after}")
    })?;
    Ok(assigned as f64 / p.total as f64)
}

/// `pgbench -n -b <script>… -c <clients> -j min(clients, 2) -t <per_client>`.
fn pgbench(conn: &Conn<'_>, clients: usize, per_client: u64, scripts: &[&str]) -> Result<Processed, CliError> {
    let mut args = vec!["-n".to_owned()];
    for s in scripts {
        args.extend(["-b".to_owned(), (*s).to_owned()]);
    }
    args.extend(
        ["-c", &clients.to_string(), "-j", &clients.min(2).to_string(), "-t", &per_client.to_string()]
            .map(str::to_owned),
    );
    let (_, text) = conn.pgbench_with(&args, CHUNK_LIMIT)?;
    Processed::parse(&text).ok_or_else(|| {
        format!("pgbench {} printed no per-script counts that add up: {}", args.join(" "), text.trim()).into()
    })
}

/// `e` for run `name`, with the server's log when it has exited.
fn with_server_state(name: &str, server: &mut Server, e: CliError) -> CliError {
    if server.alive() {
        format!("{name}: {e}").into()
    } else {
        format!("{name}: {e}; the server exited:\n{}", server.log_tail()).into()
    }
}
