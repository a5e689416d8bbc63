//! `turnstile`: the lab's command line.
//!
//! ```text
//! turnstile reproduce [--out DIR]        every experiment, both profiles, seed-style tables
//! turnstile micro lwlock|lock [--json]   micro-benchmarks (ratios against reference primitives)
//! turnstile config [--profile P] [--set k=v]…   print the effective configuration
//! ```

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use turnstile_sync::config::{Config, Profile};

mod harness;
mod micro;
mod report;
mod run;

/// Many-core lock and resource manager lab: reproduces PostgreSQL
/// scalability experiments under the `classic` and `scalable` profiles.
#[derive(Parser, Debug)]
#[command(name = "turnstile", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run every experiment that exists at its default size under both
    /// profiles and print the tables.
    Reproduce {
        /// Data directory for workloads that store data (default: a new
        /// temporary directory, removed afterwards).
        #[arg(long)]
        data_dir: Option<std::path::PathBuf>,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Run one seed workload under both profiles over lists of parameters
    /// and client counts (e.g. `turnstile run W1 --partitions 0,100 --clients 1,8`).
    Run(run::Args),
    /// Micro-benchmarks of single primitives.
    Micro {
        #[command(subcommand)]
        bench: micro::MicroBench,
    },
    /// Print the effective configuration as TOML.
    Config {
        /// Preset to start from.
        #[arg(long, default_value = "scalable")]
        profile: String,
        /// TOML file applied on top of the preset.
        #[arg(long)]
        file: Option<std::path::PathBuf>,
        /// Override one knob, e.g. `--set lock.partitions=64` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("turnstile: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Any failure of a command, printed as one line.
pub type CliError = Box<dyn std::error::Error + Send + Sync>;

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Reproduce { data_dir, json } => reproduce(data_dir, json),
        Command::Micro { bench } => micro::run(bench),
        Command::Run(args) => {
            let json = args.json;
            run::run(&args)?.print(json)
        }
        Command::Config { profile, file, set } => {
            let config = build_config(Profile::parse(&profile)?, file.as_deref(), &set)?;
            print!("{}", config.to_toml_string());
            Ok(())
        }
    }
}

/// A profile's preset, then a TOML file, then `--set` overrides.
pub fn build_config(profile: Profile, file: Option<&std::path::Path>, set: &[String]) -> Result<Config, CliError> {
    let mut config = match file {
        Some(path) => Config::from_toml_file(profile, path)?,
        None => Config::preset(profile),
    };
    for assignment in set {
        config.apply_override(assignment)?;
    }
    Ok(config)
}

fn reproduce(data_dir: Option<std::path::PathBuf>, json: bool) -> Result<(), CliError> {
    let _ = data_dir; // no workload stores data yet
    let sections = micro::reproduce_sections()?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::Value::Array(sections.iter().map(|s| s.json.clone()).collect()))?
        );
    } else {
        for s in &sections {
            println!("{}", s.text);
        }
    }
    Ok(())
}
