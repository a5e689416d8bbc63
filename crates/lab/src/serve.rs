//! `turnstile serve`: the engine behind PostgreSQL's wire protocol, for the
//! real `pgbench` and `psql` (crate `turnstile-server`).

use crate::cli::{CliError, ConfigArgs};
use std::io::Write;
use std::path::PathBuf;
use turnstile_server::{Server, ServerOptions, TerminationSignals};
use turnstile_sql::SqlEngine;

/// Arguments of `turnstile serve`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Data directory (created if missing; a new one holds the database `postgres`).
    #[arg(long)]
    data_dir: PathBuf,
    /// TCP addresses, comma-separated (`*` = all IPv4, empty = none), as `listen_addresses`.
    #[arg(long, default_value = "127.0.0.1")]
    listen: String,
    /// TCP port, also the number in the unix socket's name.
    #[arg(long, default_value_t = 5432)]
    port: u16,
    /// Directory for the unix socket `.s.PGSQL.<port>` (as libpq's `-h /dir`).
    #[arg(long)]
    socket_dir: Option<PathBuf>,
    /// `--profile`, `--config FILE` and `--set key=value`, as every command.
    #[command(flatten)]
    config: ConfigArgs,
}

/// Serves until SIGINT or SIGTERM, then stops the sessions and flushes.
pub fn run(args: &Args) -> Result<(), CliError> {
    let config = args.config.build()?;
    let max_connections = config.lock.max_backends;
    // Caught before the first connection, so a signal never kills a running server.
    let mut signals = TerminationSignals::register()?;
    let engine = SqlEngine::open(&args.data_dir, config)?;
    let options = ServerOptions { listen: args.listen.clone(), port: args.port, socket_dir: args.socket_dir.clone() };
    let server = Server::start(engine, &options)?;
    let mut places: Vec<String> = server.tcp_addresses().iter().map(|a| a.to_string()).collect();
    places.extend(server.socket_path().map(|p| p.display().to_string()));
    println!(
        "turnstile serve: listening on {} (profile {}, max_connections {max_connections}, data directory {})",
        places.join(" and "),
        args.config.profile,
        args.data_dir.display()
    );
    std::io::stdout().flush()?;
    let signal = signals.wait();
    eprintln!("turnstile serve: {signal} received, stopping");
    server.shutdown()?;
    Ok(())
}
