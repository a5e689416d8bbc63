//! The query half of a workload's definition: a lookup of one row by one
//! parameter, joined with other tables on equal columns, and its SQL form.
//! (Its engine form, a typed `Query`, is in `engine.rs`.)

use std::fmt::Write as _;

/// `JOIN table alias ON (…)`: a column of the joined table equal to a
/// column of the `FROM` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinOn {
    /// The joined table.
    pub table: String,
    /// Its alias in SQL.
    pub alias: String,
    /// The column of the `FROM` table.
    pub outer: String,
    /// The column of the joined table.
    pub inner: String,
    /// Whether the SQL writes the joined table's column first
    /// (`ON (d1.id = f.d1)`) rather than the `FROM` table's
    /// (`ON (pa.bid = pb.bid)`): the write-ups' own spelling, kept so that
    /// pgbench sends the same text.
    pub inner_first: bool,
}

/// `SELECT cols FROM table [alias] JOIN … WHERE table.filter = $1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lookup {
    /// The `FROM` table.
    pub from: String,
    /// Its alias in SQL, if any.
    pub alias: Option<String>,
    /// The joins, in order.
    pub joins: Vec<JoinOn>,
    /// The column of the `FROM` table compared with the parameter.
    pub filter: String,
    /// The selected columns of the `FROM` table; empty for `*`.
    pub select: Vec<String>,
}

impl Lookup {
    /// `SELECT * FROM from WHERE filter = $1`.
    pub fn new(from: impl Into<String>, filter: impl Into<String>) -> Lookup {
        Lookup { from: from.into(), alias: None, joins: Vec::new(), filter: filter.into(), select: Vec::new() }
    }

    /// The SQL text, with `param` (`$1`, `:aid`, `42`) for the parameter.
    pub fn sql(&self, param: &str) -> String {
        let name = self.alias.as_deref().unwrap_or(&self.from);
        let qualify = |c: &str| if self.alias.is_some() { format!("{name}.{c}") } else { c.to_owned() };
        let cols = if self.select.is_empty() {
            "*".to_owned()
        } else {
            self.select.iter().map(|c| qualify(c)).collect::<Vec<_>>().join(", ")
        };
        let mut q = format!("SELECT {cols} FROM {}", self.from);
        if let Some(a) = &self.alias {
            let _ = write!(q, " {a}");
        }
        for j in &self.joins {
            let (outer, inner) = (format!("{name}.{}", j.outer), format!("{}.{}", j.alias, j.inner));
            let (l, r) = if j.inner_first { (inner, outer) } else { (outer, inner) };
            let _ = write!(q, " JOIN {} {} ON ({l} = {r})", j.table, j.alias);
        }
        let _ = write!(q, " WHERE {} = {param}", qualify(&self.filter));
        q
    }
}
