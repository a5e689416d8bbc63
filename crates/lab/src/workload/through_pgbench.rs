//! The pgbench form of a workload, as `turnstile compare` runs it against
//! PostgreSQL and `turnstile serve`: a variant's own database, the steps
//! that load it, the files pgbench reads, its arguments, and the query the
//! lock census counts.

use super::{Mode, Sizes};
use serde_json::{Map, Value as Json};
use std::path::Path;

/// What `turnstile compare` asks of a workload.
pub struct PgbenchSetup<'a> {
    /// The values of the workload's swept parameter (empty if it has none).
    pub values: &'a [u32],
    /// The data sizes.
    pub sizes: Sizes,
    /// The directory the variants' files are written into.
    pub scripts: &'a Path,
}

impl PgbenchSetup<'_> {
    /// The path of the file `name` under the scripts directory.
    pub fn file(&self, name: &str) -> String {
        self.scripts.join(name).display().to_string()
    }
}

/// One step of loading a variant's database.
#[derive(Clone, Debug)]
pub enum Step {
    /// `pgbench -i` with these extra arguments.
    PgbenchInit(Vec<String>),
    /// SQL run by psql, stopping at the first error.
    Sql(String),
}

/// One point of a workload's parameter lists through pgbench.
#[derive(Clone, Debug)]
pub struct PgbenchVariant {
    /// Its parameters (`{"partitions":100}`), without the mode.
    pub params: Map<String, Json>,
    /// The database it lives in.
    pub db: String,
    /// Loading steps, after `CREATE DATABASE`.
    pub setup: Vec<Step>,
    /// The files pgbench reads, `(name under the scripts directory,
    /// contents)`: its script (none for a built-in), data files.
    pub files: Vec<(String, String)>,
    /// pgbench arguments besides connection, clients, duration and mode.
    pub pgbench_args: Vec<String>,
    /// The query counted in the lock census (`$1` for the parameter).
    pub query: Option<String>,
}

/// The params of a point: `{key: value}`.
pub fn params(pairs: &[(&str, Json)]) -> Map<String, Json> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

/// The params with the mode, as the JSON reports a point.
pub fn params_with(params: &Map<String, Json>, mode: Mode) -> Json {
    let mut p = params.clone();
    p.insert("mode".into(), Json::from(mode.name()));
    Json::Object(p)
}
