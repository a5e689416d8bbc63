//! `turnstile stress locks --json` and `turnstile stress storage --json`
//! end to end: one result object per profile with the keys of the
//! output contract, and a clean run.

use serde_json::Value;
use std::process::Command;

fn stress(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_turnstile")).args(args).output().expect("spawn turnstile");
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}"); // the seed, to replay a failure
    assert!(out.status.success(), "turnstile {args:?} failed: {}\n{stderr}", out.status);
    assert!(stderr.contains("seed"), "the seed is printed: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn stress_locks_json_follows_the_contract() {
    let doc = stress(&["stress", "locks", "--seconds", "1", "--threads", "8", "--json"]);
    let results = doc["results"].as_array().expect("results is an array");
    let profiles: Vec<&str> = results.iter().map(|r| r["profile"].as_str().unwrap()).collect();
    assert_eq!(profiles, ["classic", "scalable"]);
    for r in results {
        assert_eq!(r["stress"], "locks");
        assert_eq!(r["threads"], 8);
        assert!(r["seed"].is_u64() && r["seconds"].as_f64().unwrap() >= 1.0);
        for key in ["ops", "deadlocks", "timeouts", "violations", "hangs", "leaked_locks"] {
            assert!(r[key].is_u64(), "{key} in {r}");
        }
        assert!(r["ops"].as_u64().unwrap() > 0);
        for key in ["violations", "hangs", "leaked_locks"] {
            assert_eq!(r[key], 0, "{key} in {r}");
        }
    }
}

#[test]
fn stress_storage_json_follows_the_contract() {
    let doc = stress(&["stress", "storage", "--seconds", "1", "--profile", "scalable", "--json"]);
    let results = doc["results"].as_array().expect("results is an array");
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!((r["stress"].as_str(), r["profile"].as_str()), (Some("storage"), Some("scalable")));
    for key in ["missing_rows", "bad_pages", "violations"] {
        assert_eq!(r[key], 0, "{key} in {r}");
    }
    assert!(r["durable_rows"].as_u64().unwrap() > 0 && r["pages_verified"].as_u64().unwrap() > 0, "{r}");
}
