//! The SQL conformance suite: every entry of `conformance/queries.sql` runs
//! against `turnstile serve` under both profiles and must give what
//! PostgreSQL 15 gave (`conformance/expected.txt`, recorded by
//! `scripts/record-conformance`): the same column names and rows, the same
//! command tag, or the same SQLSTATE. An entry marked unsupported (`!id`)
//! must answer `0A000` instead, with the connection going on.
//!
//! Both sides are driven through the same client path: one `psql -A`
//! session (headers on, NULL shown as `<NULL>`) fed the setup and the
//! entries in file order, each followed by `\echo @@END id :SQLSTATE …`.
//! If turnstile drops the connection, that entry fails and a new session
//! continues with the next one.
//!
//! `conformance/known_failures.txt` lists the entries that fail today; the
//! test reports them without failing, and fails when a listed entry passes
//! under both profiles (so the list only shrinks). The per-entry diffs and
//! the failure count per family are printed on stderr (`-- --nocapture`
//! shows them when the test passes). The README's "Supported
//! SQL" section is generated from the suite and checked here;
//! `CONFORMANCE_BLESS=1` rewrites it.

mod common;

use common::{have_tools, TestServer};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use turnstile_sync::config::Profile;

/// Wall-clock limit for one psql session over the whole suite: a hung
/// statement fails the run instead of hanging it.
const SESSION_TIMEOUT_S: u64 = 120;
/// NULL as psql prints it on both sides (`-P null=…`).
const NULL_DISPLAY: &str = "<NULL>";
const README_BEGIN: &str = "<!-- conformance:begin";
const README_END: &str = "<!-- conformance:end -->";

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// One `@family` line of queries.sql.
struct Family {
    prefix: String,
    title: String,
    what: String,
}

/// One entry of queries.sql.
struct Entry {
    id: String,
    family: String,
    sql: String,
    /// `Some(construct)` for an entry turnstile must answer with `0A000`.
    unsupported: Option<String>,
}

struct Suite {
    setup: Vec<String>,
    families: Vec<Family>,
    entries: Vec<Entry>,
}

/// Parses queries.sql (the same rules as `parse_suite` in scripts/record-conformance).
fn parse_suite(text: &str) -> Suite {
    let mut suite = Suite { setup: Vec::new(), families: Vec::new(), entries: Vec::new() };
    let mut ids = HashSet::new();
    for (n, line) in text.split('\n').enumerate() {
        let n = n + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(sql) = line.strip_prefix("@setup ") {
            suite.setup.push(sql.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("@family ") {
            let (prefix, rest) = rest.split_once(' ').unwrap_or_else(|| panic!("queries.sql:{n}: bad @family"));
            let (title, what) =
                rest.split_once(": ").unwrap_or_else(|| panic!("queries.sql:{n}: @family needs `Title: what`"));
            suite.families.push(Family { prefix: prefix.into(), title: title.into(), what: what.into() });
            continue;
        }
        let (marked, body) = match line.strip_prefix('!') {
            Some(b) => (true, b),
            None => (false, line),
        };
        let (id, rest) = body.split_once(' ').unwrap_or_else(|| panic!("queries.sql:{n}: not an entry: {line:?}"));
        let (prefix, num) = id.rsplit_once('-').unwrap_or_else(|| panic!("queries.sql:{n}: bad id {id:?}"));
        assert!(
            num.parse::<u32>().is_ok() && suite.families.last().is_some_and(|f| f.prefix == prefix),
            "queries.sql:{n}: id {id:?} does not belong to the family above it"
        );
        let (unsupported, sql) = match rest.strip_prefix('[') {
            Some(r) => {
                let (label, sql) =
                    r.split_once("] ").unwrap_or_else(|| panic!("queries.sql:{n}: unclosed [construct]"));
                (Some(label.to_string()), sql)
            }
            None => (None, rest),
        };
        assert_eq!(marked, unsupported.is_some(), "queries.sql:{n}: `!` and `[construct]` go together");
        assert!(ids.insert(id.to_string()), "queries.sql:{n}: duplicate id {id}");
        suite.entries.push(Entry { id: id.into(), family: prefix.into(), sql: sql.into(), unsupported });
    }
    suite
}

/// expected.txt: id -> (statement, answer lines).
fn parse_expected(text: &str) -> HashMap<String, (String, Vec<String>)> {
    let mut out = HashMap::new();
    let mut cur: Option<(String, String, Vec<String>)> = None;
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("=== ") {
            if let Some((id, sql, lines)) = cur.take() {
                out.insert(id, (sql, lines));
            }
            let (id, sql) = head.split_once(": ").expect("expected.txt: `=== id: statement`");
            cur = Some((id.into(), sql.into(), Vec::new()));
        } else if let Some((_, _, lines)) = cur.as_mut() {
            lines.push(line.to_string());
        }
    }
    if let Some((id, sql, lines)) = cur {
        out.insert(id, (sql, lines));
    }
    out
}

/// How one statement ended, as psql showed it.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    /// Column names and rows, or the command tag.
    Lines(Vec<String>),
    /// An ErrorResponse: SQLSTATE and message.
    Error(String, String),
    /// The connection ended before the statement did.
    Closed(String),
}

impl Answer {
    fn from_expected(lines: &[String]) -> Answer {
        match lines.first().and_then(|l| l.strip_prefix("ERROR ")) {
            Some(rest) => {
                let (state, msg) = rest.split_once(": ").unwrap_or((rest, ""));
                Answer::Error(state.into(), msg.into())
            }
            None => Answer::Lines(lines.to_vec()),
        }
    }

    fn show(&self) -> String {
        match self {
            Answer::Lines(l) if l.is_empty() => "(no output)".into(),
            Answer::Lines(l) => l.join("\n          "),
            Answer::Error(state, msg) => format!("ERROR {state}: {msg}"),
            Answer::Closed(why) => format!("CONNECTION LOST: {why}"),
        }
    }
}

/// Rows compare in order under ORDER BY, as a multiset otherwise (the first
/// line, the header or command tag, stays first).
fn normalized(lines: &[String], ordered: bool) -> Vec<String> {
    let mut v = lines.to_vec();
    if !ordered && v.len() > 2 {
        v[1..].sort();
    }
    v
}

/// Whether turnstile's answer `got` to `e` is right, given PostgreSQL's `want`.
fn conforms(e: &Entry, want: &Answer, got: &Answer) -> bool {
    if e.unsupported.is_some() {
        return matches!(got, Answer::Error(state, _) if state == "0A000");
    }
    match (want, got) {
        (Answer::Error(a, _), Answer::Error(b, _)) => a == b,
        (Answer::Lines(a), Answer::Lines(b)) => {
            let ordered = e.sql.to_ascii_uppercase().contains("ORDER BY");
            normalized(a, ordered) == normalized(b, ordered)
        }
        _ => false,
    }
}

/// The psql script for `items` (the same as `psql_input` in scripts/record-conformance).
fn psql_input(items: &[(String, String)]) -> String {
    items.iter().map(|(name, sql)| format!("{sql};\n\\echo @@END {name} :SQLSTATE :LAST_ERROR_MESSAGE\n")).collect()
}

/// Runs `items` in psql sessions against `srv`, in order; a new session
/// takes over after a lost connection. Every item gets an answer.
fn run_items(srv: &TestServer, items: &[(String, String)]) -> HashMap<String, Answer> {
    let mut answers = HashMap::new();
    let mut next = 0;
    let deadline = Instant::now() + Duration::from_secs(SESSION_TIMEOUT_S);
    while next < items.len() {
        let (stdout, stderr) = psql_session(srv, &items[next..], deadline);
        let mut buf = Vec::new();
        for line in stdout.split('\n') {
            if let Some(rest) = line.strip_prefix("@@END ") {
                let mut parts = rest.splitn(3, ' ');
                let name = parts.next().unwrap_or_default().to_string();
                let state = parts.next().unwrap_or_default().to_string();
                let msg = parts.next().unwrap_or_default().to_string();
                assert_eq!(name, items[next].0, "psql answered out of order");
                let answer =
                    if state == "00000" { Answer::Lines(std::mem::take(&mut buf)) } else { Answer::Error(state, msg) };
                buf.clear();
                answers.insert(name, answer);
                next += 1;
            } else if !line.is_empty() {
                buf.push(line.to_string());
            }
        }
        if next < items.len() {
            // The session ended inside items[next]: the connection was lost (or the deadline passed).
            let why = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("psql exited").to_string();
            answers.insert(items[next].0.clone(), Answer::Closed(why));
            next += 1;
            assert!(Instant::now() < deadline, "the suite ran past {SESSION_TIMEOUT_S} s");
        }
    }
    answers
}

/// One psql over `items`; its stdout and stderr. Killed at `deadline`.
fn psql_session(srv: &TestServer, items: &[(String, String)], deadline: Instant) -> (String, String) {
    let mut child = Command::new("psql")
        .args(["-X", "-A", "-P", "footer=off", "-P", &format!("null={NULL_DISPLAY}"), "-v", "ON_ERROR_STOP=0"])
        .arg("-h")
        .arg(&srv.socket_dir)
        .args(["-p", &srv.port.to_string(), "-U", "postgres", "-d", "postgres"])
        .env("PGCLIENTENCODING", "UTF8")
        .env("PGCONNECT_TIMEOUT", "10")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run psql");
    let input = psql_input(items);
    let mut stdin = child.stdin.take().expect("stdin");
    // A writer thread, so that psql never blocks on a full stdout pipe while we write.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let (tx, rx) = mpsc::channel();
    for (k, mut pipe) in [
        Box::new(child.stdout.take().expect("stdout")) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().expect("stderr")),
    ]
    .into_iter()
    .enumerate()
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = pipe.read_to_end(&mut s);
            let _ = tx.send((k, String::from_utf8_lossy(&s).into_owned()));
        });
    }
    let mut out = [String::new(), String::new()];
    for _ in 0..2 {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((k, s)) => out[k] = s,
            Err(_) => {
                let _ = child.kill();
                panic!("psql did not finish the suite within {SESSION_TIMEOUT_S} s (a statement hangs?)");
            }
        }
    }
    let _ = child.wait();
    let _ = writer.join();
    let [stdout, stderr] = out;
    (stdout, stderr)
}

/// The failing entries of one profile: id -> (want, got).
fn run_profile(
    profile: Profile,
    suite: &Suite,
    expected: &HashMap<String, (String, Vec<String>)>,
) -> BTreeMap<String, (Answer, Answer)> {
    let srv = TestServer::start(profile, &[]);
    let setup: Vec<(String, String)> =
        suite.setup.iter().enumerate().map(|(k, s)| (format!("setup-{}", k + 1), s.clone())).collect();
    let setup_answers = run_items(&srv, &setup);
    for (name, sql) in &setup {
        let a = &setup_answers[name];
        assert!(matches!(a, Answer::Lines(_)), "{profile:?}: setup `{sql}` failed: {}", a.show());
    }
    let items: Vec<(String, String)> = suite.entries.iter().map(|e| (e.id.clone(), e.sql.clone())).collect();
    let answers = run_items(&srv, &items);
    let mut failing = BTreeMap::new();
    for e in &suite.entries {
        let want = Answer::from_expected(&expected[&e.id].1);
        let got = &answers[&e.id];
        if !conforms(e, &want, got) {
            failing.insert(e.id.clone(), (want, got.clone()));
        }
    }
    failing
}

fn known_failures() -> Vec<String> {
    read(&suite_dir().join("known_failures.txt"))
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn conformance() {
    if !have_tools(&["psql"]) {
        return;
    }
    let dir = suite_dir();
    let suite = parse_suite(&read(&dir.join("queries.sql")));
    let expected = parse_expected(&read(&dir.join("expected.txt")));
    for e in &suite.entries {
        let (sql, _) = expected
            .get(&e.id)
            .unwrap_or_else(|| panic!("{} has no expected answer: run scripts/record-conformance", e.id));
        assert_eq!(
            sql, &e.sql,
            "{}: expected.txt was recorded for another statement: run scripts/record-conformance",
            e.id
        );
    }
    let known = known_failures();
    let known_set: HashSet<&str> = known.iter().map(String::as_str).collect();
    for k in &known {
        assert!(suite.entries.iter().any(|e| &e.id == k), "known_failures.txt lists {k}, which is not in the suite");
    }

    let started = Instant::now();
    let mut failing: BTreeMap<String, Vec<(Profile, Answer, Answer)>> = BTreeMap::new();
    for profile in [Profile::Scalable, Profile::Classic] {
        for (id, (want, got)) in run_profile(profile, &suite, &expected) {
            failing.entry(id).or_default().push((profile, want, got));
        }
    }

    let mut report = String::new();
    let mut new_failures = Vec::new();
    for e in &suite.entries {
        let Some(fails) = failing.get(&e.id) else { continue };
        let listed = known_set.contains(e.id.as_str());
        if !listed {
            new_failures.push(e.id.clone());
        }
        let _ = writeln!(report, "--- {} {}: {}", e.id, if listed { "(known failure)" } else { "FAILS" }, e.sql);
        let want = match &e.unsupported {
            Some(construct) => format!("ERROR 0A000 (unsupported: {construct}); PostgreSQL: {}", fails[0].1.show()),
            None => fails[0].1.show(),
        };
        let _ = writeln!(report, "    want: {want}");
        // One `got` per distinct answer, naming the profiles that gave it.
        let mut shown: Vec<&Answer> = Vec::new();
        for (_, _, got) in fails {
            if !shown.contains(&got) {
                shown.push(got);
                let profiles: Vec<String> =
                    fails.iter().filter(|f| &f.2 == got).map(|f| format!("{:?}", f.0).to_lowercase()).collect();
                let _ = writeln!(report, "    got ({}): {}", profiles.join(", "), got.show());
            }
        }
    }
    let now_passing: Vec<&String> = known.iter().filter(|k| !failing.contains_key(*k)).collect();

    let mut summary = String::new();
    for f in &suite.families {
        let ids: Vec<&Entry> = suite.entries.iter().filter(|e| e.family == f.prefix).collect();
        let bad = ids.iter().filter(|e| failing.contains_key(&e.id)).count();
        let _ = writeln!(summary, "  {:<8} {:>3} / {:>3} fail  {}", f.prefix, bad, ids.len(), f.title);
    }
    eprintln!("{report}");
    eprintln!(
        "conformance: {} entries, {} fail under at least one profile ({} known, {} new), {:.1} s\n{summary}",
        suite.entries.len(),
        failing.len(),
        failing.len() - new_failures.len(),
        new_failures.len(),
        started.elapsed().as_secs_f64()
    );
    let mut problems = Vec::new();
    if !new_failures.is_empty() {
        problems.push(format!(
            "{} entries differ from PostgreSQL 15 and are not in known_failures.txt (diffs above): {}",
            new_failures.len(),
            new_failures.join(" ")
        ));
    }
    if !now_passing.is_empty() {
        problems.push(format!(
            "known_failures.txt lists entries that now pass under both profiles; delete their lines: {}",
            now_passing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The README's "Supported SQL" section, from the suite.
fn readme_section(suite: &Suite) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{README_BEGIN}: generated from crates/server/tests/conformance/queries.sql; \
         CONFORMANCE_BLESS=1 cargo test -p turnstile-server --test conformance rewrites it -->"
    );
    let supported = suite.entries.iter().filter(|e| e.unsupported.is_none()).count();
    let _ = writeln!(
        s,
        "The conformance suite (`crates/server/tests/conformance/`) runs {} statements through psql against \
         `turnstile serve` under both profiles and compares each answer (column names, rows, command tag or \
         SQLSTATE) with PostgreSQL 15's, recorded by `scripts/record-conformance`. It covers:\n",
        suite.entries.len()
    );
    for f in
        suite.families.iter().filter(|f| suite.entries.iter().any(|e| e.family == f.prefix && e.unsupported.is_none()))
    {
        let n = suite.entries.iter().filter(|e| e.family == f.prefix && e.unsupported.is_none()).count();
        let _ = writeln!(s, "- **{}** ({n}): {}", f.title, f.what);
    }
    let mut labels: Vec<&str> = Vec::new();
    for e in &suite.entries {
        if let Some(l) = e.unsupported.as_deref() {
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
    }
    let _ = writeln!(
        s,
        "\n{supported} of them are supported SQL and must give PostgreSQL's answer. The other {} are constructs \
         turnstile does not support, which must answer `0A000` (feature_not_supported) with the connection going \
         on: {}. Entries still listed in `crates/server/tests/conformance/known_failures.txt` differ today; the \
         test fails as soon as one of them passes, so that list only shrinks.",
        suite.entries.len() - supported,
        labels.join("; ")
    );
    s.push_str(README_END);
    s
}

#[test]
fn readme_lists_the_suite() {
    let suite = parse_suite(&read(&suite_dir().join("queries.sql")));
    let want = readme_section(&suite);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = read(&path);
    let (Some(b), Some(e)) = (readme.find(README_BEGIN), readme.find(README_END)) else {
        panic!("README.md has no {README_BEGIN} … {README_END} section; it should hold:\n{want}");
    };
    let have = &readme[b..e + README_END.len()];
    if have != want {
        if std::env::var_os("CONFORMANCE_BLESS").is_some() {
            std::fs::write(&path, format!("{}{want}{}", &readme[..b], &readme[e + README_END.len()..]))
                .expect("write README");
        } else {
            panic!("README.md's Supported SQL section is out of date (CONFORMANCE_BLESS=1 rewrites it); it should be:\n{want}");
        }
    }
}
