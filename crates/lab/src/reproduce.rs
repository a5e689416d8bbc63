//! `turnstile reproduce`: every workload (W1–W7) at a small size under both
//! profiles, then the micro-benchmarks, in one process.
//!
//! Each workload runs as the `turnstile run …` command printed above its
//! tables (so any table can be re-made alone); the default plan takes
//! about 5 minutes on a 2-core machine and `--quick` (CI's smoke run)
//! about one, as the README says (295 s and 71 s in one release run). Tables go to the terminal; `<out>/` receives per workload
//! `W?.json` (the output contract), `W?.csv`, `W?-speedup.png` (heat map
//! of `scalable / classic`) and `W?-tps.png`, plus `micro.json`,
//! `report.txt` and `reproduce.json` (everything in one document, also what
//! `--json` prints).

use crate::cli::CliError;
use crate::report::Section;
use crate::run::{self, WorkloadId};
use crate::workload::{Mode, ModeUse};
use crate::{micro, progress};
use clap::Parser;
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `turnstile reproduce`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Directory for the JSON, CSV and PNG files (created if missing).
    #[arg(long, default_value = "turnstile-results")]
    pub out: PathBuf,
    /// Data directory for the workloads' tables (default: a new temporary
    /// directory, removed afterwards).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// The CI smoke plan: fewer variants and client counts, shorter points.
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// Parses a `turnstile run` command line (without the program name).
#[derive(Parser, Debug)]
#[command(name = "turnstile run", no_binary_name = true)]
struct RunLine {
    #[command(flatten)]
    args: run::Args,
}

/// The `turnstile run` arguments of each workload in the plan, from its
/// definition: the sweep's `quick` or `full` list, the modes (when the
/// workload takes `--mode`), and the client counts from its fewest.
pub fn plan(quick: bool) -> Vec<(WorkloadId, String)> {
    let (clients, timing): (&[usize], &str) =
        if quick { (&[1, 8], "--duration 0.3 --warmup 0.1") } else { (&[1, 2, 8, 32], "--duration 1 --warmup 0.3") };
    WorkloadId::all().iter().map(|&w| (w, command_line(w, quick, clients, timing))).collect()
}

/// `W1 --partitions 0,100 --mode simple,prepared --clients 1,8 …`.
fn command_line(w: WorkloadId, quick: bool, clients: &[usize], timing: &str) -> String {
    let d = w.definition();
    let list = |values: &mut dyn Iterator<Item = String>| values.collect::<Vec<_>>().join(",");
    let mut line = vec![w.name().to_owned()];
    if let Some(sweep) = d.sweep {
        let values = if quick { sweep.quick } else { sweep.full };
        line.push(format!("--{} {}", sweep.param.key(), list(&mut values.iter().map(u32::to_string))));
    }
    if d.modes.in_process == ModeUse::Swept {
        let modes: &[Mode] = if quick { d.modes.quick } else { &Mode::BOTH };
        line.push(format!("--mode {}", list(&mut modes.iter().map(|m| m.name().to_owned()))));
    }
    // A workload with a floor on its clients starts there.
    let mut counts: Vec<usize> = clients.iter().map(|&c| c.max(d.min_clients)).collect();
    counts.dedup();
    line.push(format!("--clients {} {timing}", list(&mut counts.iter().map(usize::to_string))));
    line.join(" ")
}

/// Runs the plan, prints its tables (or the JSON) and writes the files.
pub fn run(args: &Args) -> Result<(), CliError> {
    let started = Instant::now();
    std::fs::create_dir_all(&args.out)?;
    let temp = match &args.data_dir {
        Some(_) => None,
        None => Some(tempfile::Builder::new().prefix("turnstile-reproduce-").tempdir()?),
    };
    let data = args.data_dir.clone().or_else(|| temp.as_ref().map(|t| t.path().to_owned())).ok_or("no data dir")?;
    let mut text = String::new();
    let mut workloads = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    for (w, line) in plan(args.quick) {
        let command = format!("turnstile run {line}");
        let mut parsed = RunLine::try_parse_from(line.split_whitespace()).map_err(|e| format!("{command}: {e}"))?.args;
        parsed.data_dir = Some(data.clone());
        let report = run::run(&parsed)?;
        let name = w.name();
        let report_json = report.json();
        let json_path = args.out.join(format!("{name}.json"));
        std::fs::write(&json_path, serde_json::to_string_pretty(&report_json)?)?;
        let csv_path = args.out.join(format!("{name}.csv"));
        std::fs::write(&csv_path, report.csv()?)?;
        files.extend([json_path, csv_path]);
        files.extend(report.plot(&args.out)?);
        let block = format!("$ {command}\n\n{}\n", report.tables());
        emit(args.json, &block);
        text.push_str(&block);
        workloads.push(json!({ "command": command, "report": report_json }));
    }
    let spinner = progress::spinner("micro", "micro-benchmarks".into());
    let sections = micro::reproduce_sections()?;
    spinner.finish_and_clear();
    for s in &sections {
        let block = format!("{}\n", s.text);
        emit(args.json, &block);
        text.push_str(&block);
    }
    let micro_json = Json::Array(sections.iter().map(|s: &Section| s.json.clone()).collect());
    let micro_path = args.out.join("micro.json");
    std::fs::write(&micro_path, serde_json::to_string_pretty(&micro_json)?)?;
    files.push(micro_path);
    let elapsed_s = started.elapsed().as_secs_f64();
    let doc = json!({
        "quick": args.quick,
        "elapsed_s": elapsed_s,
        "workloads": workloads,
        "micro": micro_json,
    });
    let doc_path = args.out.join("reproduce.json");
    std::fs::write(&doc_path, serde_json::to_string_pretty(&doc)?)?;
    let text_path = args.out.join("report.txt");
    std::fs::write(&text_path, &text)?;
    files.extend([doc_path, text_path]);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "turnstile reproduce{}: {elapsed_s:.0} s; files in {}:",
            if args.quick { " --quick" } else { "" },
            args.out.display()
        );
        for f in &files {
            println!("  {}", f.file_name().map(Path::new).unwrap_or(f).display());
        }
    }
    Ok(())
}

/// Prints a block of tables now (so a long run shows its progress), unless
/// the JSON document is what stdout is for.
fn emit(json: bool, block: &str) {
    if !json {
        println!("{block}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick plan, as the definitions give it.
    #[test]
    fn the_quick_plan_follows_the_definitions() {
        let lines: Vec<String> = plan(true).into_iter().map(|(_, l)| l).collect();
        let timing = "--duration 0.3 --warmup 0.1";
        assert_eq!(
            lines,
            [
                format!("W1 --partitions 0,100 --mode simple,prepared --clients 1,8 {timing}"),
                format!("W2 --dimensions 1,10 --mode prepared --clients 1,8 {timing}"),
                format!("W3 --indexes 1,60 --clients 1,8 {timing}"),
                format!("W4 --clients 1,8 {timing}"),
                format!("W5 --mode prepared --clients 1,8 {timing}"),
                format!("W6 --writers 2 --clients 2,8 {timing}"),
                format!("W7 --clients 1,8 {timing}"),
            ]
        );
    }

    #[test]
    fn every_planned_command_parses_and_names_its_workload() {
        for quick in [true, false] {
            let plan = plan(quick);
            assert_eq!(plan.len(), WorkloadId::all().len());
            for (w, line) in plan {
                let parsed = RunLine::try_parse_from(line.split_whitespace()).unwrap().args;
                assert_eq!(parsed.workload, w, "{line}");
                assert!(!parsed.clients.is_empty());
            }
        }
    }
}
