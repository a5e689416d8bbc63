//! Which commits wait for an `fdatasync` (`durability/xact_wal.rs`), under
//! both profiles, counted by the log's own `wal_sync` (`pg_stat_wal`):
//! a transaction that changed a logged table waits for its commit record
//! to be durable; one that changed only an unlogged table does not, as in
//! PostgreSQL; one that changed both waits.

use turnstile_engine::types::ColumnType::Int8;
use turnstile_engine::types::Value;
use turnstile_engine::Engine;
use turnstile_sync::config::Profile;
use turnstile_sync::Config;

const COMMITS: i64 = 40;

fn syncs(engine: &Engine) -> u64 {
    engine.log().wal().stats().wal_sync
}

#[test]
fn only_commits_that_logged_something_wait_for_fdatasync() {
    for profile in [Profile::Classic, Profile::Scalable] {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::preset(profile);
        // The WAL writer flushes what is pending only this often: the
        // counts below are the commits' own.
        config.wal.writer_delay_ms = 10_000;
        let engine = Engine::open(dir.path(), config).unwrap();
        let mut s = engine.session().unwrap();
        s.create_table("logged", &[("k", Int8)], None).unwrap();
        s.create_index("logged", "logged_pkey", &["k"], true).unwrap();
        s.create_table("scratch", &[("k", Int8)], None).unwrap();
        s.set_unlogged("scratch").unwrap();
        s.create_index("scratch", "scratch_pkey", &["k"], true).unwrap();

        let before = syncs(&engine);
        for k in 0..COMMITS {
            s.insert("scratch", &[Value::Int8(k)]).unwrap();
        }
        let unlogged = syncs(&engine) - before;
        assert!(unlogged <= 2, "{profile:?}: {COMMITS} commits into an unlogged table cost {unlogged} fdatasyncs");

        let before = syncs(&engine);
        for k in 0..COMMITS {
            s.insert("logged", &[Value::Int8(k)]).unwrap();
        }
        let logged = syncs(&engine) - before;
        assert!(
            logged >= COMMITS as u64,
            "{profile:?}: {COMMITS} logged commits, one after another, got {logged} fdatasyncs"
        );

        let before = syncs(&engine);
        for k in COMMITS..2 * COMMITS {
            s.begin().unwrap();
            s.insert("scratch", &[Value::Int8(k)]).unwrap();
            s.insert("logged", &[Value::Int8(k)]).unwrap();
            s.commit().unwrap();
        }
        let mixed = syncs(&engine) - before;
        assert!(mixed >= COMMITS as u64, "{profile:?}: {COMMITS} commits into both tables got {mixed} fdatasyncs");
        assert_eq!(s.scan_all("scratch").unwrap().len(), 2 * COMMITS as usize);
        assert_eq!(s.scan_all("logged").unwrap().len(), 2 * COMMITS as usize);
    }
}
