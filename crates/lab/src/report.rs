//! Report output: aligned text tables in the write-ups' form, and JSON.

use crate::cli::CliError;

/// One benchmark's output: a JSON document (the contract other tools
/// parse) and the same figures as text tables for people.
#[derive(Debug, Clone)]
pub struct Section {
    /// The machine-readable report.
    pub json: serde_json::Value,
    /// The human-readable report.
    pub text: String,
}

impl Section {
    /// Prints the JSON (`json`) or the text.
    pub fn print(&self, json: bool) -> Result<(), CliError> {
        if json {
            println!("{}", serde_json::to_string_pretty(&self.json)?);
        } else {
            println!("{}", self.text);
        }
        Ok(())
    }
}

/// A plain text table: a header row, then rows, columns right-aligned
/// except the first.
#[derive(Debug, Clone, Default)]
pub struct Table {
    title: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with a title line and column names.
    pub fn new(title: impl Into<String>, header: &[&str]) -> Table {
        Table { title: title.into(), header: header.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    /// Appends a row (cells beyond the header are kept, missing ones blank).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders the table.
    pub fn render(&self) -> String {
        let cols = self.header.len().max(self.rows.iter().map(Vec::len).max().unwrap_or(0));
        let mut width = vec![0usize; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate() {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let line = |r: &Vec<String>| {
            let mut s = String::new();
            for (i, w) in width.iter().enumerate() {
                let c = r.get(i).map(String::as_str).unwrap_or("");
                if i == 0 {
                    s.push_str(&format!("{c:<w$}"));
                } else {
                    s.push_str(&format!(" | {c:>w$}"));
                }
            }
            s.trim_end().to_owned()
        };
        let mut out = format!("{}\n", self.title);
        out.push_str(&line(&self.header));
        out.push('\n');
        out.push_str(&"-".repeat(width.iter().sum::<usize>() + 3 * (cols.saturating_sub(1))));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

/// Formats a float with `digits` decimals.
pub fn f(value: f64, digits: usize) -> String {
    format!("{value:.digits$}")
}
