//! How a workload's query is sent: the one query-mode type of the lab.
//! `turnstile run --mode`, `turnstile compare --mode` (pgbench's `-M`),
//! the reports' `"mode"` and the engine's [`QueryMode`] all come from it.

use turnstile_engine::query::QueryMode;

/// A query mode, reported by its lowercase name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Parsed and planned every time (`pgbench -M simple`).
    Simple,
    /// Planned once per session, executed with parameters (`pgbench -M
    /// prepared`: a generic plan after five executions).
    Prepared,
}

impl Mode {
    /// Both modes, `simple` first: the default of every `--mode`.
    pub const BOTH: [Mode; 2] = [Mode::Simple, Mode::Prepared];

    /// `simple` / `prepared`.
    ///
    /// ```text
    /// assert_eq!(Mode::Prepared.name(), "prepared");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Mode::Simple => "simple",
            Mode::Prepared => "prepared",
        }
    }

    /// Parses a `--mode` value.
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "simple" => Ok(Mode::Simple),
            "prepared" => Ok(Mode::Prepared),
            other => Err(format!("unknown --mode {other:?}: expected simple or prepared")),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<Mode> for QueryMode {
    fn from(m: Mode) -> QueryMode {
        match m {
            Mode::Simple => QueryMode::Simple,
            Mode::Prepared => QueryMode::Prepared,
        }
    }
}
