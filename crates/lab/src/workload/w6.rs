//! W6, LWLock starvation (Postgres Pro 2018), in process only: readers look
//! rows up through one hot B-tree while writers insert into the same table.
//! Its clients, and what they measure, are in `w6/starvation.rs`.

mod starvation;

use super::{
    ColType, Column, Definition, ExtraColumn, ExtraTable, Fill, InProcessForm, Index, Lookup, Mode, ModeUse, Modes,
    Param, Sweep, Table,
};
use serde_json::Value as Json;

/// W6.
pub const DEFINITION: Definition = Definition {
    name: "W6",
    summary: "LWLock starvation: readers through a hot B-tree root while writers insert and extend (Postgres Pro \
              2018; in process only).",
    title: "W6 LWLock starvation (Postgres Pro 2018): point lookups through a hot B-tree root while writers insert",
    sweep: Some(WRITERS),
    modes: Modes {
        in_process: ModeUse::Fixed(Mode::Prepared),
        pgbench: ModeUse::Fixed(Mode::Prepared),
        quick: &[Mode::Prepared],
    },
    // A reader beside the writers.
    min_clients: 2,
    in_process: InProcessForm::Own(starvation::Starvation::make),
    pgbench: None,
    growth_table: None,
    extra_table: Some(ExtraTable {
        title: "LWLock starvation (Postgres Pro 2018): inserts beside hot readers; BufferMapping waits",
        columns: &[
            ExtraColumn { header: "writers", pointer: "/writers_running", digits: 0 },
            ExtraColumn { header: "inserts/s", pointer: "/inserts_per_s", digits: 0 },
            ExtraColumn { header: "insert p50 us", pointer: "/insert_latency_us/p50", digits: 0 },
            ExtraColumn { header: "insert p99 us", pointer: "/insert_latency_us/p99", digits: 0 },
            ExtraColumn { header: "insert max us", pointer: "/insert_latency_us_max", digits: 0 },
            ExtraColumn { header: "excl. waits", pointer: "/exclusive_wait_us/count", digits: 0 },
            ExtraColumn { header: "excl. wait p50 us", pointer: "/exclusive_wait_us/p50", digits: 1 },
            ExtraColumn { header: "excl. wait p99 us", pointer: "/exclusive_wait_us/p99", digits: 0 },
            ExtraColumn { header: "excl. wait max us", pointer: "/exclusive_wait_us/max", digits: 0 },
            ExtraColumn { header: "map waits", pointer: "/mapping_waits", digits: 0 },
            ExtraColumn { header: "mean wait us", pointer: "/mapping_wait_us_mean", digits: 1 },
            ExtraColumn { header: "writer wait p99 us*", pointer: "/inserter_mapping_wait_us/p99", digits: 0 },
            ExtraColumn { header: "writer wait max us*", pointer: "/inserter_mapping_wait_us/max", digits: 0 },
        ],
        note: Some(note),
    }),
};

/// The writer counts (each clamped so that a reader remains).
pub const WRITERS: Sweep = Sweep {
    param: Param::Writers,
    min: 1,
    max: u32::MAX,
    full: &[2],
    quick: &[2],
    pgbench: &[],
    pgbench_quick: &[],
    alloc: &[],
};

/// What the columns of the extra table measure.
fn note(points: &[Json]) -> String {
    let poll = points
        .iter()
        .find_map(|p| p.pointer("/inserter_mapping_wait_us/resolution_us").and_then(Json::as_f64))
        .unwrap_or(0.0);
    format!(
        "excl. wait: exclusive BufferMapping acquisitions that waited (all sessions, measured phase), timed by the pool.\n\
         * writer wait: writer sessions seen waiting on LWLock:BufferMapping by a sampler polling every ~{poll:.0} us\n  \
         (shared and exclusive waits; waits shorter than a poll are mostly missed). map waits: all sessions, both modes.\n"
    )
}

/// The table readers and writers share.
pub const TABLE: &str = "w6_hot";
/// Bytes of filler per row, so heap pages fill and the heap extends often.
pub const FILLER_BYTES: usize = 200;

/// `w6_hot (k int, v int, filler text)`: `rows` rows `k = v = 1..=rows`.
pub fn table(rows: u32) -> Table {
    let columns = vec![
        Column::new("k", ColType::Int4, Fill::Row),
        Column::new("v", ColType::Int4, Fill::Row),
        Column::new("filler", ColType::Text, Fill::Repeat("r".repeat(FILLER_BYTES))),
    ];
    Table::new(TABLE, columns, rows)
}

/// The index every lookup goes through.
pub fn indexes() -> Vec<Index> {
    vec![Index { table: TABLE.into(), column: "k".into() }]
}

/// `SELECT v FROM w6_hot WHERE k = $1`.
pub fn lookup() -> Lookup {
    Lookup { select: vec!["v".into()], ..Lookup::new(TABLE, "k") }
}
