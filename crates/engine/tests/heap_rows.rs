//! Rows through the engine: insert and COPY into plain and partitioned
//! tables, sequential scans, persistence across reopen, extension locks.

use turnstile_engine::catalog::{PartitionBound, PartitionStrategy};
use turnstile_engine::types::ColumnType::{Int4, Int8, Text};
use turnstile_engine::types::Value;
use turnstile_engine::{Engine, EngineError};
use turnstile_sync::{Config, Profile};

fn account(aid: i32) -> Vec<Value> {
    vec![Value::Int4(aid), Value::Int4(aid % 10), Value::Int8(0), Value::Text(format!("{:84}", "")), Value::Int4(aid)]
}

const COLUMNS: [(&str, turnstile_engine::types::ColumnType); 5] =
    [("aid", Int4), ("bid", Int4), ("abalance", Int8), ("filler", Text), ("aid_parent", Int4)];

#[test]
fn copy_and_insert_into_partitions_survive_reopen_under_both_profiles() {
    for profile in Profile::ALL {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::preset(profile);
        config.buffer.shared_buffers = 64; // evictions and ring reuse
        config.buffer.mapping_partitions = 16;
        {
            let engine = Engine::open(dir.path(), config.clone()).unwrap();
            let mut s = engine.session().unwrap();
            s.create_table("accounts", &COLUMNS, Some((PartitionStrategy::Range, "aid"))).unwrap();
            for p in 0..4 {
                let bound = PartitionBound::Range { from: p * 1000, to: (p + 1) * 1000 };
                s.create_partition("accounts", &format!("accounts_{p}"), bound).unwrap();
            }
            s.create_table("plain", &COLUMNS, None).unwrap();
            assert_eq!(s.insert_many("accounts", (0..3000).map(account)).unwrap(), 3000);
            assert_eq!(s.insert_many("plain", (0..3000).map(account)).unwrap(), 3000);
            let (rel, _) = s.insert("accounts", &account(3500)).unwrap();
            let last = engine.catalog().relation(s.database(), "accounts_3").unwrap();
            assert_eq!(rel, last.id, "the row was routed to the wrong partition");
            let err = s.insert("accounts", &account(99_999)).unwrap_err();
            assert!(matches!(err, EngineError::NoPartition { .. }), "{err}");
            assert!(matches!(s.insert("plain", &[Value::Int4(1)]), Err(EngineError::Codec(_))));
            assert!(engine.locks().locks().is_empty(), "{profile}: statement locks were kept");
            let ext = s.extension_stats();
            assert!(ext.extensions > 0 && ext.blocks_added > 0, "{profile}: {ext:?}");
            engine.flush().unwrap();
        }
        let engine = Engine::open(dir.path(), config).unwrap();
        let mut s = engine.session().unwrap();
        let mut got: Vec<i32> = s
            .scan_all("accounts")
            .unwrap()
            .into_iter()
            .map(|r| match r[0] {
                Value::Int4(v) => v,
                ref v => panic!("{v:?}"),
            })
            .collect();
        got.sort_unstable();
        let mut want: Vec<i32> = (0..3000).collect();
        want.push(3500);
        assert_eq!(got, want, "{profile}: rows lost across reopen");
        let plain = s.scan_all("plain").unwrap();
        assert_eq!(plain.len(), 3000);
        assert_eq!(plain[1234], account(1234), "{profile}: COPY reordered or changed rows");
        engine.check_invariants();
    }
}
