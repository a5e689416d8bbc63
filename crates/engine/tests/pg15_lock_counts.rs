//! Relation locks one execution of each W1–W3 query holds, against
//! PostgreSQL 15's, counted with `pg_locks` inside an open transaction
//! (`tests/fixtures/pg15_locks.csv`; how it was measured is in
//! `tests/fixtures/README.md`): simple mode (planned each time: the
//! planner locks every index of every table it plans) and prepared mode (a
//! generic plan: every range-table relation, then the indexes the plan
//! scans). The schemas are the workloads' (indexes per table included),
//! whose one definition is the lab's (`crates/lab/src/workload/`); the
//! engine sits below the lab and cannot use it, so this test keeps small
//! copies under short names. Relation counts depend only on the shapes;
//! sizes are small but keep PostgreSQL's plan shapes: `branches` and each
//! dimension fit in one page, `synth` is empty.
//!
//! `classic` must equal PostgreSQL 15 (16 fast-path slots, the rest in the
//! shared table); `scalable` takes the same locks, all on the fast path,
//! except that its planner (the index prefilter of Geier 2022, see
//! `docs/sources.md`) skips the indexes a simple plan cannot use.

use turnstile_engine::catalog::{PartitionBound, PartitionStrategy, RelKind};
use turnstile_engine::query::{Col, Operand, Query, QueryMode};
use turnstile_engine::types::ColumnType::{Int4, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, Session};
use turnstile_sync::{Config, Profile};

/// Locks held by one execution: (tables, indexes, fast path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    tables: usize,
    indexes: usize,
    fastpath: usize,
}

impl Held {
    fn total(&self) -> usize {
        self.tables + self.indexes
    }
}

/// Runs `q` once (warming the plan cache in prepared mode), then once more
/// inside a transaction, and counts this session's relation locks.
fn census(engine: &Engine, s: &mut Session, q: &Query, mode: QueryMode) -> Held {
    let mut slot = None;
    s.run(mode, q, &mut slot, &[Value::Int4(42)]).unwrap();
    s.begin().unwrap();
    s.run(mode, q, &mut slot, &[Value::Int4(42)]).unwrap();
    let me = s.backend().id();
    let catalog = engine.catalog().snapshot();
    let mut held = Held { tables: 0, indexes: 0, fastpath: 0 };
    for row in engine.locks_view().into_iter().filter(|r| r.backend == me && r.locktype == "relation") {
        let rel = catalog.relations.get(&row.relation.unwrap()).expect("a locked relation exists");
        match rel.kind {
            RelKind::Table | RelKind::PartitionedTable => held.tables += 1,
            RelKind::Index | RelKind::PartitionedIndex => held.indexes += 1,
        }
        held.fastpath += usize::from(row.fastpath);
    }
    s.commit().unwrap();
    held
}

/// W1: `accounts` range-partitioned on `aid` (P = 0: a plain table), with a
/// primary key and an index on `aid_parent` (each partition has both);
/// `branches` (`branches` rows, one page: 10 as at pgbench scale 10) with a
/// primary key.
fn load_w1(s: &mut Session, partitions: i64, branches: i32) {
    let cols = [("aid", Int4), ("bid", Int4), ("abalance", Int4), ("filler", Text), ("aid_parent", Int4)];
    let rows = 2 * partitions.max(1);
    if partitions == 0 {
        s.create_table("accounts", &cols, None).unwrap();
    } else {
        s.create_table("accounts", &cols, Some((PartitionStrategy::Range, "aid"))).unwrap();
        for p in 0..partitions {
            let bound = PartitionBound::Range { from: 2 * p, to: 2 * p + 2 };
            s.create_partition("accounts", &format!("accounts_{p}"), bound).unwrap();
        }
    }
    s.create_index("accounts", "accounts_pkey", &["aid"], true).unwrap();
    s.create_index("accounts", "accounts_aid_parent", &["aid_parent"], false).unwrap();
    s.insert_many(
        "accounts",
        (0..rows as i32)
            .map(|a| vec![a.into(), (a % branches).into(), 0.into(), Value::Text("f".repeat(84)), a.into()]),
    )
    .unwrap();
    s.create_table("branches", &[("bid", Int4), ("bbalance", Int4), ("filler", Text)], None).unwrap();
    s.create_index("branches", "branches_pkey", &["bid"], true).unwrap();
    s.insert_many("branches", (0..branches).map(|b| vec![b.into(), 0.into(), Value::Text("b".repeat(88))])).unwrap();
}

fn w1_query() -> Query {
    Query::from("accounts")
        .join("branches", Col::of("accounts", "bid"), "bid")
        .filter(Col::of("accounts", "aid_parent"), Operand::Param(1))
}

/// W2: `fact` (primary key, `d1..dN`) and `dim1..dimN` (100 rows, one page,
/// primary key).
fn load_w2(s: &mut Session, n: usize) {
    let names: Vec<String> = (1..=n).map(|i| format!("d{i}")).collect();
    let mut cols = vec![("id", Int4)];
    cols.extend(names.iter().map(|d| (d.as_str(), Int4)));
    s.create_table("fact", &cols, None).unwrap();
    s.create_index("fact", "fact_pkey", &["id"], true).unwrap();
    s.insert_many("fact", (0..100).map(|i| (0..=n as i32).map(|d| Value::Int4((i * (2 * d + 1) + d) % 100)).collect()))
        .unwrap();
    for k in 1..=n {
        let t = format!("dim{k}");
        s.create_table(&t, &[("id", Int4), ("val", Text)], None).unwrap();
        s.create_index(&t, &format!("{t}_pkey"), &["id"], true).unwrap();
        s.insert_many(&t, (0..100).map(|i| vec![i.into(), Value::Text(format!("{:032x}", i * 7919))])).unwrap();
    }
}

fn w2_query(n: usize) -> Query {
    let mut q = Query::from("fact").filter(Col::of("fact", "id"), Operand::Param(1));
    for k in 1..=n {
        q = q.join(format!("dim{k}"), Col::of("fact", format!("d{k}")), "id");
    }
    q
}

/// W3: an empty `synth` of 60 `int4` columns with K single-column indexes
/// (K = 1: `col5`; else `col1..colK`).
fn load_w3(s: &mut Session, k: usize) {
    let names: Vec<String> = (1..=60).map(|i| format!("col{i}")).collect();
    let cols: Vec<_> = names.iter().map(|c| (c.as_str(), Int4)).collect();
    s.create_table("synth", &cols, None).unwrap();
    let indexed: Vec<usize> = if k == 1 { vec![5] } else { (1..=k).collect() };
    for c in indexed {
        s.create_index("synth", &format!("synth_col{c}"), &[&format!("col{c}")], false).unwrap();
    }
}

fn w3_query() -> Query {
    Query::from("synth").filter("col5", Operand::Param(1))
}

/// PostgreSQL 15's relation locks for one execution, a row of
/// `tests/fixtures/pg15_locks.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pg15 {
    tables: usize,
    indexes: usize,
    fastpath: usize,
}

/// One case of the fixture: a schema and query, with PostgreSQL 15's
/// locks under a simple and a generic plan.
struct Expected {
    label: String,
    simple: Pg15,
    generic: Pg15,
}

/// Loads a case's schema into a session and returns its query.
type Build = Box<dyn Fn(&mut Session) -> Query>;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pg15_locks.csv");
const HEADER: &str = "label,how,fastpath,non_fastpath,user_rel_locks,tables,indexes,all_locks_incl_vxid_catalog";

/// Reads the fixture: (label, how, locks) per row, after checking that
/// each row's counts add up.
fn fixture() -> Vec<(String, String, Pg15)> {
    let text = std::fs::read_to_string(FIXTURE).unwrap_or_else(|e| panic!("cannot read {FIXTURE}: {e}"));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HEADER), "{FIXTURE}: unexpected header");
    let mut rows = Vec::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 8, "{FIXTURE}: malformed row `{line}`");
        let n = |i: usize| f[i].parse::<usize>().unwrap_or_else(|e| panic!("{FIXTURE}: `{line}`: {e}"));
        let (fastpath, shared, total, tables, indexes) = (n(2), n(3), n(4), n(5), n(6));
        assert_eq!(fastpath + shared, total, "{FIXTURE}: `{line}`: fast path + shared table");
        assert_eq!(tables + indexes, total, "{FIXTURE}: `{line}`: tables + indexes");
        rows.push((f[0].to_owned(), f[1].to_owned(), Pg15 { tables, indexes, fastpath }));
    }
    rows
}

/// The schema and query of a fixture label: `w1_P<partitions>`,
/// `w2_N<dimensions>`, `w3_idx<indexes>`.
fn build(label: &str) -> Build {
    let num = |prefix: &str| label.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
    if let Some(p) = num("w1_P") {
        Box::new(move |s| {
            load_w1(s, p as i64, 10);
            w1_query()
        })
    } else if let Some(n) = num("w2_N") {
        Box::new(move |s| {
            load_w2(s, n);
            w2_query(n)
        })
    } else if let Some(k) = num("w3_idx") {
        Box::new(move |s| {
            load_w3(s, k);
            w3_query()
        })
    } else {
        panic!("{FIXTURE}: unknown case `{label}`")
    }
}

/// Every case of the fixture, in its order, each with both plans.
fn pg15() -> Vec<(Expected, Build)> {
    let rows = fixture();
    let mut labels: Vec<&str> = Vec::new();
    for (label, _, _) in &rows {
        if !labels.contains(&label.as_str()) {
            labels.push(label);
        }
    }
    let pick = |label: &str, how: &str| {
        let found: Vec<Pg15> = rows.iter().filter(|(l, h, _)| l == label && h == how).map(|r| r.2).collect();
        assert_eq!(found.len(), 1, "{FIXTURE}: {label} needs exactly one `{how}` row");
        found[0]
    };
    let cases: Vec<(Expected, Build)> = labels
        .iter()
        .map(|&label| {
            let expected =
                Expected { label: label.to_owned(), simple: pick(label, "simple"), generic: pick(label, "generic") };
            (expected, build(label))
        })
        .collect();
    assert_eq!(rows.len(), 2 * cases.len(), "{FIXTURE}: a `how` other than simple or generic");
    // W1 at 0/10/100/1000 partitions, W2 at 1/10/100 dimensions, W3 at
    // 1/10/60 indexes: a fixture that lost rows would check less.
    assert_eq!(cases.len(), 10, "{FIXTURE}: expected 10 cases");
    cases
}

#[test]
fn classic_takes_postgresql_15s_locks_for_every_workload_query() {
    let mut table = String::from("case         mode     PG15(t+i/fp)  classic        scalable\n");
    let mut failures = Vec::new();
    for (expected, build) in pg15() {
        let mut got = Vec::new();
        for profile in Profile::ALL {
            let dir = tempfile::tempdir().unwrap();
            let engine = Engine::open(dir.path(), Config::preset(profile)).unwrap();
            let mut s = engine.session().unwrap();
            engine.catalog().defer_writes(true).unwrap();
            let q = build(&mut s);
            engine.catalog().defer_writes(false).unwrap();
            let simple = census(&engine, &mut s, &q, QueryMode::Simple);
            let prepared = census(&engine, &mut s, &q, QueryMode::Prepared);
            assert!(engine.locks_view().is_empty(), "{}: locks outlived the transaction", expected.label);
            got.push((profile, simple, prepared));
        }
        for (mode, pg) in [("simple", expected.simple), ("generic", expected.generic)] {
            let (t, i) = (pg.tables, pg.indexes);
            let pick = |p: Profile| {
                let (_, simple, prepared) = got.iter().find(|(q, _, _)| *q == p).unwrap();
                if mode == "simple" {
                    *simple
                } else {
                    *prepared
                }
            };
            let (c, sc) = (pick(Profile::Classic), pick(Profile::Scalable));
            let fmt = |h: Held| format!("{}+{}/{}", h.tables, h.indexes, h.fastpath);
            table.push_str(&format!(
                "{:<12} {:<8} {:<13} {:<14} {}\n",
                expected.label,
                mode,
                format!("{t}+{i}/{}", pg.fastpath),
                fmt(c),
                fmt(sc)
            ));
            let want = Held { tables: t, indexes: i, fastpath: pg.fastpath };
            if c != want {
                failures.push(format!("{} {mode}: classic {c:?}, PostgreSQL 15 {want:?}", expected.label));
            }
            if sc.fastpath != sc.total() || sc.tables != t || sc.total() > t + i {
                failures.push(format!("{} {mode}: scalable {sc:?} (PostgreSQL 15 {want:?})", expected.label));
            }
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}

/// pgbench scale 1 (`turnstile compare --quick`): `branches` holds one row.
/// PostgreSQL 15 reads it with a `Seq Scan` that drives a nested loop over
/// the accounts `Append` (the rest runs once, for its one row), in custom
/// and generic plans alike, whatever the partition count, so its generic
/// plan never locks `branches_pkey`: P + 2 tables, P `aid_parent` indexes
/// (P = 0: one), from `EXPLAIN EXECUTE` under `plan_cache_mode =
/// force_generic_plan`. (classic used to probe the one row through its
/// index once 10 partitions outnumbered it: 23 locks where PostgreSQL 15
/// takes 22.)
#[test]
fn classic_reads_a_one_row_branches_sequentially_under_any_partition_count() {
    for p in [0i64, 10, 100] {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), Config::preset(Profile::Classic)).unwrap();
        let mut s = engine.session().unwrap();
        load_w1(&mut s, p, 1);
        let held = census(&engine, &mut s, &w1_query(), QueryMode::Prepared);
        let want = (p as usize + 2, (p as usize).max(1));
        assert_eq!((held.tables, held.indexes), want, "P={p}, one branch: (tables, indexes) as PostgreSQL 15");
    }
}
