//! Queries against an oracle (the same rows in a `Vec`): plain and
//! partitioned tables, with and without indexes, both modes, both
//! profiles; and the relation-lock counts of Vondra 2024's shapes.

use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::query::{Col, Operand, Query, QueryError, QueryMode};
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError, Session};
use turnstile_sync::{Config, Profile};

const N: i32 = 2000;
const BRANCHES: i32 = 20;

fn aid_parent(aid: i32) -> i32 {
    (aid * 7919 + 13) % N // a permutation of 0..N
}

fn account(aid: i32) -> Vec<Value> {
    vec![
        Value::Int4(aid),
        Value::Int4(aid % BRANCHES),
        Value::Int8(i64::from(aid) * 3),
        Value::Text("x".repeat(20)),
        Value::Int4(aid_parent(aid)),
    ]
}

fn branch(bid: i32) -> Vec<Value> {
    vec![Value::Int4(bid), Value::Int8(i64::from(bid) * 1000), Value::Text("b".into())]
}

/// `accounts` with `partitions` range partitions (0 = a plain table), a
/// primary key on `aid`, optionally an index on `aid_parent`; `branches`
/// with a primary key on `bid`.
fn load(s: &mut Session, partitions: i32, aid_parent_index: bool) {
    let cols = [("aid", Int4), ("bid", Int4), ("abalance", Int8), ("filler", Text), ("aid_parent", Int4)];
    if partitions == 0 {
        s.create_table("accounts", &cols, None).unwrap();
    } else {
        s.create_table("accounts", &cols, Some((PartitionStrategy::Range, "aid"))).unwrap();
        let width = N / partitions;
        for p in 0..partitions {
            let bound = PartitionBound::Range { from: i64::from(p * width), to: i64::from((p + 1) * width) };
            s.create_partition("accounts", &format!("accounts_{p}"), bound).unwrap();
        }
    }
    s.create_index("accounts", "accounts_pkey", &["aid"], true).unwrap();
    s.insert_many("accounts", (0..N).map(account)).unwrap();
    if aid_parent_index {
        s.create_index("accounts", "accounts_aid_parent", &["aid_parent"], false).unwrap();
    }
    s.create_table("branches", &[("bid", Int4), ("bbalance", Int8), ("filler", Text)], None).unwrap();
    s.insert_many("branches", (0..BRANCHES).map(branch)).unwrap();
    s.create_index("branches", "branches_pkey", &["bid"], true).unwrap();
}

fn w1_query() -> Query {
    Query::from("accounts")
        .join("branches", Col::of("accounts", "bid"), "bid")
        .filter(Col::of("accounts", "aid_parent"), Operand::Param(1))
        .select([
            Col::of("accounts", "aid"),
            Col::of("accounts", "abalance"),
            Col::of("branches", "bid"),
            Col::of("branches", "bbalance"),
        ])
}

fn oracle(parent: i32) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<Value>> = (0..N)
        .map(account)
        .filter(|a| a[4] == Value::Int4(parent))
        .flat_map(|a| {
            (0..BRANCHES)
                .map(branch)
                .filter(|b| b[0] == a[1])
                .map(|b| vec![a[0].clone(), a[2].clone(), b[0].clone(), b[1].clone()])
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort_by(|x, y| x[0].sql_cmp(&y[0]));
    out
}

#[test]
fn joins_match_the_oracle_in_every_variant() {
    for profile in Profile::ALL {
        for partitions in [0, 10] {
            for aid_parent_index in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let engine = Engine::open(dir.path(), Config::preset(profile)).unwrap();
                let mut s = engine.session().unwrap();
                load(&mut s, partitions, aid_parent_index);
                for mode in [QueryMode::Simple, QueryMode::Prepared] {
                    let mut slot = None;
                    for parent in [0, 1, 777, N - 1, N + 5] {
                        let mut got = s.run(mode, &w1_query(), &mut slot, &[Value::Int4(parent)]).unwrap();
                        got.sort_by(|x, y| x[0].sql_cmp(&y[0]));
                        assert_eq!(
                            got,
                            oracle(parent),
                            "{profile} P={partitions} index={aid_parent_index} {mode:?} parent={parent}"
                        );
                    }
                }
                // Point lookups by partition key prune to one partition.
                let q = Query::from("accounts").filter("aid", 1234).select(["aid_parent"]);
                assert_eq!(s.query(&q, &[]).unwrap(), vec![vec![Value::Int4(aid_parent(1234))]]);
                assert!(engine.locks().locks().is_empty());
                engine.check_invariants();
            }
        }
    }
}

/// Relation locks taken by one execution, as PostgreSQL 15 takes them on
/// the W1 query (`pg_locks` in an open transaction): with P partitions
/// each having two indexes, a simple execution locks 3P + 3 relations, a
/// prepared (generic) one 2P + 2: `branches` fits in one page and the 10
/// outer lookups are fewer than its rows, so it is hashed, not probed by
/// index (PostgreSQL 15's plan and count, 22, at P = 10). With
/// `index_prefilter` a simple plan skips the primary keys it cannot use:
/// 2P + 3.
#[test]
fn lock_counts_follow_postgresqls_shapes() {
    let p = 10u64;
    for profile in Profile::ALL {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), Config::preset(profile)).unwrap();
        let mut s = engine.session().unwrap();
        load(&mut s, p as i32, true);
        for mode in [QueryMode::Simple, QueryMode::Prepared] {
            let mut slot = None;
            s.run(mode, &w1_query(), &mut slot, &[Value::Int4(5)]).unwrap();
            let before = s.backend().stats();
            s.begin().unwrap();
            s.run(mode, &w1_query(), &mut slot, &[Value::Int4(5)]).unwrap();
            let locks = engine.locks().locks().len() as u64;
            s.commit().unwrap();
            let d = s.backend().stats().since(&before);
            let expected = match (profile, mode) {
                (Profile::Classic, QueryMode::Simple) => 3 * p + 3,
                (_, QueryMode::Simple) => 2 * p + 3,
                (_, QueryMode::Prepared) => 2 * p + 2,
            };
            assert_eq!(locks, expected, "{profile} {mode:?}: pg_locks rows");
            assert_eq!(d.fast_path_acquires + d.shared_acquires, expected, "{profile} {mode:?}: {d:?}");
            if profile == Profile::Classic {
                assert_eq!(d.fast_path_acquires, 16, "classic: 16 fast-path slots, the rest shared");
            } else {
                assert_eq!(d.shared_acquires, 0, "scalable: everything on the fast path");
            }
        }
        engine.check_invariants();
    }
}

#[test]
fn bad_queries_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    load(&mut s, 0, false);
    let cases: Vec<(Query, Vec<Value>)> = vec![
        (Query::from("nope"), vec![]),
        (Query::from("accounts").filter("nope", 1), vec![]),
        (Query::from("accounts").join("branches", "bid", "nope"), vec![]),
        (Query::from("accounts").filter("aid", "text"), vec![]),
        (Query::from("accounts").filter("aid", Operand::Param(2)), vec![Value::Int4(1)]),
        (Query::from("accounts_pkey"), vec![]),
    ];
    for (q, params) in cases {
        let err = s.query(&q, &params).unwrap_err();
        assert!(matches!(err, EngineError::Query(_) | EngineError::Catalog(_)), "{q}: {err}");
    }
    let err = s.query(&Query::from("accounts").join("branches", "bid", "bid").select(["filler"]), &[]).unwrap_err();
    assert!(matches!(err, EngineError::Query(QueryError::AmbiguousColumn(_))), "{err}");
    assert!(engine.locks().locks().is_empty(), "a failed query kept its locks");
    engine.check_invariants();
}

#[test]
fn a_prepared_plan_is_remade_after_ddl() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    load(&mut s, 0, false);
    let q = Query::from("accounts").filter("aid_parent", Operand::Param(1)).select(["aid"]);
    let mut p = s.prepare(&q).unwrap();
    assert!(p.plan().explain().contains("Seq Scan"));
    s.create_index("accounts", "ap", &["aid_parent"], false).unwrap();
    let rows = s.execute(&mut p, &[Value::Int4(aid_parent(42))]).unwrap();
    assert_eq!(rows, vec![vec![Value::Int4(42)]]);
    assert!(p.plan().explain().contains("Index Scan using ap"), "{}", p.plan().explain());
    engine.check_invariants();
}

/// Two index scans keyed by different parameters in one execution: each
/// probes with its own key. (The executor encodes a parameter's key once
/// per execution for all the partitions it probes; it must never hand one
/// scan's key to another.)
#[test]
fn two_parameter_keys_in_one_execution_each_probe_with_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    load(&mut s, 10, true);
    let select = [Col::of("accounts", "aid"), Col::of("branches", "bid")];
    let one = Query::from("accounts")
        .join("branches", Col::of("accounts", "bid"), "bid")
        .filter(Col::of("accounts", "aid_parent"), Operand::Param(1))
        .select(select.clone());
    let both = Query::from("accounts")
        .join("branches", Col::of("accounts", "bid"), "bid")
        .filter(Col::of("accounts", "aid_parent"), Operand::Param(1))
        .filter(Col::of("branches", "bid"), Operand::Param(2))
        .select(select.clone());
    let (mut one_slot, mut both_slot) = (None, None);
    let mut found = 0;
    for aid in (0..N).step_by(97) {
        for bid in [aid % BRANCHES, (aid + 1) % BRANCHES] {
            let params = [Value::Int4(aid_parent(aid)), Value::Int4(bid)];
            let all = s.run(QueryMode::Prepared, &one, &mut one_slot, &params[..1]).unwrap();
            let expected: Vec<_> = all.into_iter().filter(|r| r[1] == Value::Int4(bid)).collect();
            let got = s.run(QueryMode::Prepared, &both, &mut both_slot, &params).unwrap();
            assert_eq!(got, expected, "aid {aid}, bid {bid}");
            found += got.len();
        }
    }
    assert!(found > 0, "no probe found its row");
    let mut p = s.prepare(&both).unwrap();
    s.execute(&mut p, &[Value::Int4(0), Value::Int4(0)]).unwrap();
    assert!(p.plan().explain().contains("Index Scan using branches_pkey"), "{}", p.plan().explain());
}

/// `memory.lazy_scan_state`: only the index scans that find an entry
/// allocate scan state; the rows are the same.
#[test]
fn lazy_scan_state_allocates_only_for_scans_that_find_entries() {
    let mut per_query = Vec::new();
    for lazy in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.memory.lazy_scan_state = lazy;
        let engine = Engine::open(dir.path(), config).unwrap();
        let mut s = engine.session().unwrap();
        load(&mut s, 10, true);
        let mut slot = None;
        let before = s.memory_stats().allocations;
        let mut rows = Vec::new();
        for i in 0..5 {
            rows.push(s.run(QueryMode::Prepared, &w1_query(), &mut slot, &[Value::Int4(i)]).unwrap());
        }
        per_query.push(((s.memory_stats().allocations - before) / 5, rows));
    }
    let (eager, lazy) = (&per_query[0], &per_query[1]);
    assert_eq!(eager.1, lazy.1, "the lazy scan state changed the rows");
    assert!(eager.1.iter().all(|r| r.len() == 1), "{:?}", eager.1);
    // Ten partitions probed; one holds the row: the lazy scan state saves
    // the nine scans that find nothing (the context's other allocations —
    // hash table, copied rows — are the same in both).
    assert_eq!(eager.0 - lazy.0, 9, "eager: {} allocations per query, lazy: {}", eager.0, lazy.0);
}

#[test]
fn views_report_the_work_done() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    // Every index scan allocates its scan state, found rows or not.
    config.memory.lazy_scan_state = false;
    let engine = Engine::open(dir.path(), config).unwrap();
    {
        let mut s = engine.session().unwrap();
        load(&mut s, 10, true);
        let mut slot = None;
        for i in 0..5 {
            s.run(QueryMode::Prepared, &w1_query(), &mut slot, &[Value::Int4(i)]).unwrap();
        }
        let m = s.memory_stats();
        // One scan-state chunk per index scan (10 partitions; `branches`,
        // one page, is read sequentially for the hash join).
        assert!(m.contexts >= 5 && m.allocations >= 5 * 10, "{m:?}");
        assert!(m.blocks_from_cache > 0, "the block cache served nothing: {m:?}");
    }
    let ext = engine.extension_stats();
    assert!(ext.extensions > 0 && ext.blocks_added > 0, "{ext:?}");
    assert!(engine.memory_stats().contexts >= 5, "a finished session's memory counters were lost");
    let b = engine.buffer_stats();
    assert!(b.hits > 0, "{b:?}");
    let fd = engine.fd_stats();
    assert!(fd.opens > 0 && fd.hit_ratio() > 0.5, "{fd:?}");
    let l = engine.lock_stats();
    assert!(l.fast_path_acquires > 0 && l.strong_acquires > 0, "{l:?}");
    assert!(engine.locks_view().is_empty());
    assert!(engine.activity().is_empty(), "ended sessions left activity rows");
    engine.check_invariants();
}

#[test]
fn a_unique_violation_takes_the_row_back_and_keeps_the_indexes_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    load(&mut s, 0, true);
    let err = s.insert("accounts", &account(7)).unwrap_err();
    let EngineError::UniqueViolation(u) = &err else { panic!("not a unique violation: {err}") };
    assert_eq!((u.table.as_str(), u.index.as_str()), ("accounts", "accounts_pkey"), "{err}");
    assert_eq!(u.columns.len(), u.values.len(), "one value per key column: {u:?}");
    assert!(err.to_string().contains("accounts_pkey"), "{err}");
    assert_eq!(s.scan_all("accounts").unwrap().len(), N as usize, "the failed row is visible to scans");
    let by_parent = Query::from("accounts").filter("aid_parent", aid_parent(7)).select(["aid"]);
    assert_eq!(s.query(&by_parent, &[]).unwrap(), vec![vec![Value::Int4(7)]], "a dead tuple came back by index");
    engine.check_invariants();
}

#[test]
fn a_generic_plan_locks_every_partition_and_prunes_at_executor_start() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    load(&mut s, 10, false);
    let q = Query::from("accounts").filter("aid", Operand::Param(1)).select(["aid_parent"]);
    let mut p = s.prepare(&q).unwrap();
    // Parent, 10 partitions, 10 primary keys: PostgreSQL's AcquireExecutorLocks
    // locks every partition of a generic plan before run-time pruning.
    assert_eq!(p.plan().executor_locks.len(), 21);
    for aid in [0, 1234, N - 1] {
        assert_eq!(s.execute(&mut p, &[Value::Int4(aid)]).unwrap(), vec![vec![Value::Int4(aid_parent(aid))]]);
    }
    assert!(s.execute(&mut p, &[Value::Int4(N + 1)]).unwrap().is_empty());
    let custom = s.explain(&Query::from("accounts").filter("aid", 5)).unwrap();
    assert!(custom.contains("(1 relations)"), "a constant on the partition key did not prune: {custom}");
    engine.check_invariants();
}

#[test]
fn hash_joins_and_text_keys_match_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    load(&mut s, 0, true);
    // No index on the inner join column: a hash join.
    s.create_table("tellers", &[("tid", Int4), ("bid", Int4), ("name", Text)], None).unwrap();
    let tellers: Vec<Vec<Value>> =
        (0..60).map(|t| vec![Value::Int4(t), Value::Int4(t % BRANCHES), Value::Text(format!("teller-{t}"))]).collect();
    s.insert_many("tellers", tellers.clone()).unwrap();
    let q = Query::from("accounts")
        .join("tellers", Col::of("accounts", "bid"), "bid")
        .filter(Col::of("accounts", "aid_parent"), Operand::Param(1))
        .select([Col::of("accounts", "aid"), Col::of("tellers", "tid")]);
    assert!(s.explain(&q).unwrap().contains("HashJoin"), "{}", s.explain(&q).unwrap());
    for parent in [3, 999] {
        let mut got = s.query(&q, &[Value::Int4(parent)]).unwrap();
        got.sort_by(|a, b| a[1].sql_cmp(&b[1]));
        let aid = (0..N).find(|&a| aid_parent(a) == parent).unwrap();
        let want: Vec<Vec<Value>> = tellers
            .iter()
            .filter(|t| t[1] == Value::Int4(aid % BRANCHES))
            .map(|t| vec![Value::Int4(aid), t[0].clone()])
            .collect();
        assert_eq!(got, want, "parent {parent}");
    }
    // A text key, through a sequential scan and then through an index.
    let by_name = Query::from("tellers").filter("name", "teller-42").select(["tid"]);
    assert_eq!(s.query(&by_name, &[]).unwrap(), vec![vec![Value::Int4(42)]]);
    s.create_index("tellers", "tellers_name", &["name"], true).unwrap();
    assert!(s.explain(&by_name).unwrap().contains("Index Scan using tellers_name"));
    assert_eq!(s.query(&by_name, &[]).unwrap(), vec![vec![Value::Int4(42)]]);
    assert!(s.query(&Query::from("tellers").filter("name", "nobody"), &[]).unwrap().is_empty());
    engine.check_invariants();
}

/// Hash joins on both of their paths — a handful of outer rows compared
/// during the build scan, and many outer rows probing a hash table in the
/// execution's memory context — give the nested-loop oracle's rows in its
/// order (each outer row in scan order, its matches in scan order), with
/// duplicate keys, NULL keys (which match nothing) and text keys.
#[test]
fn hash_joins_of_few_and_many_outer_rows_match_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), Config::default()).unwrap();
    let mut s = engine.session().unwrap();
    s.create_table("outers", &[("id", Int4), ("k", Int4), ("name", Text)], None).unwrap();
    s.create_table("inners", &[("k", Int8), ("tag", Text), ("name", Text)], None).unwrap();
    let key = |i: i32| if i % 7 == 3 { Value::Null } else { Value::Int4(i % 5) };
    let outers: Vec<Vec<Value>> =
        (0..40).map(|i| vec![Value::Int4(i), key(i), Value::Text(format!("n{}", i % 12))]).collect();
    let inners: Vec<Vec<Value>> = (0..30)
        .map(|j| {
            let k = if j % 11 == 10 { Value::Null } else { Value::Int8(i64::from(j % 4)) };
            vec![k, Value::Text(format!("tag-{j}")), Value::Text(format!("n{}", j % 9))]
        })
        .collect();
    s.insert_many("outers", outers.clone()).unwrap();
    s.insert_many("inners", inners.clone()).unwrap();
    let oracle = |outer: &[Vec<Value>], oc: usize, ic: usize| -> Vec<Vec<Value>> {
        let mut want = Vec::new();
        for o in outer {
            for i in &inners {
                let eq =
                    !matches!(o[oc], Value::Null) && !matches!(i[ic], Value::Null) && o[oc].sql_cmp(&i[ic]).is_eq();
                if eq {
                    want.push(vec![o[0].clone(), i[1].clone()]);
                }
            }
        }
        want
    };
    let int_join = |q: Query| q.join("inners", Col::of("outers", "k"), "k");
    let text_join = |q: Query| q.join("inners", Col::of("outers", "name"), "name");
    let select = [Col::of("outers", "id"), Col::of("inners", "tag")];
    // Many outer rows: every row of `outers`.
    for (join, oc, ic) in [(int_join as fn(Query) -> Query, 1, 0), (text_join, 2, 2)] {
        let q = join(Query::from("outers")).select(select.clone());
        assert!(s.explain(&q).unwrap().contains("HashJoin"), "{}", s.explain(&q).unwrap());
        assert_eq!(s.query(&q, &[]).unwrap(), oracle(&outers, oc, ic), "every outer row, column {oc}");
        // A few outer rows: one id, then the rows of one name.
        for id in [0, 3, 8, 24] {
            let q =
                join(Query::from("outers")).filter(Col::of("outers", "id"), Operand::Param(1)).select(select.clone());
            let got = s.query(&q, &[Value::Int4(id)]).unwrap();
            assert_eq!(got, oracle(&outers[id as usize..=id as usize], oc, ic), "id {id}, column {oc}");
        }
        let few: Vec<Vec<Value>> = outers.iter().filter(|o| o[2] == Value::Text("n2".into())).cloned().collect();
        let q = join(Query::from("outers")).filter(Col::of("outers", "name"), "n2").select(select.clone());
        assert_eq!(few.len(), 4, "a few outer rows");
        assert_eq!(s.query(&q, &[]).unwrap(), oracle(&few, oc, ic), "name n2, column {oc}");
    }
    engine.check_invariants();
}
