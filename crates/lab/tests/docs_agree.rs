//! The documentation agrees with the code on what can be checked
//! mechanically:
//!
//! * every relative link in `README.md` and `docs/*.md` names a file of the
//!   repository that exists, and a `#fragment` into a Markdown file names
//!   one of its headings (GitHub's anchors);
//! * no document names the folder beside the checkout that holds the
//!   write-ups and the acceptance checks: the docs cite by author and title;
//! * `docs/lab.md` names every `turnstile micro` subcommand, every loom
//!   model (`crates/*/tests/loom_*.rs`) and every knob `turnstile config`
//!   prints.
//!
//! The README's "Supported SQL" block is checked by the conformance test
//! (`crates/server/tests/conformance.rs`, `readme_lists_the_suite`), which
//! generates it.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// `README.md` and every `docs/*.md`.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// The text with fenced code blocks and code spans removed: links inside
/// them are examples, not links.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_span = false;
        for c in line.chars() {
            if c == '`' {
                in_span = !in_span;
            } else if !in_span {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of `[text](target)` links in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let end = after.find([')', ' ', '\n']).unwrap_or(after.len());
        out.push(after[..end].trim_matches(['<', '>']).to_owned());
        rest = &after[end..];
    }
    out
}

/// GitHub's anchors for the headings of a Markdown file.
fn anchors(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let mut slug = String::new();
        for c in title.to_lowercase().chars() {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                slug.push(c);
            } else if c == ' ' {
                slug.push('-');
            }
        }
        let mut candidate = slug.clone();
        let mut n = 0;
        while out.contains(&candidate) {
            n += 1;
            candidate = format!("{slug}-{n}");
        }
        out.insert(candidate);
    }
    out
}

#[test]
fn relative_links_resolve_inside_the_repository() {
    let root = root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = read(&doc);
        for target in link_targets(&prose(&text)) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() { doc.clone() } else { doc.parent().expect("parent").join(path) };
            let Ok(real) = file.canonicalize() else {
                broken.push(format!("{}: ({target}) does not exist", doc.display()));
                continue;
            };
            if !real.starts_with(&root) {
                broken.push(format!("{}: ({target}) points outside the repository", doc.display()));
            } else if !fragment.is_empty()
                && real.extension().is_some_and(|x| x == "md")
                && !anchors(&read(&real)).contains(fragment)
            {
                broken.push(format!("{}: ({target}) names no heading of {}", doc.display(), real.display()));
            }
        }
    }
    assert!(checked > 10, "only {checked} relative links found: is the link reader broken?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn no_document_points_outside_the_repository() {
    // Spelled in two parts so that this file does not name it either.
    let beside = format!("../{}", "shared");
    let mut hits = Vec::new();
    for doc in documents() {
        for (i, line) in read(&doc).lines().enumerate() {
            if line.contains(&beside) {
                hits.push(format!("{}:{}: {line}", doc.display(), i + 1));
            }
        }
    }
    assert!(hits.is_empty(), "the docs cite paths outside the repository:\n{}", hits.join("\n"));
}

fn turnstile(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_turnstile")).args(args).output().expect("run turnstile");
    assert!(out.status.success(), "turnstile {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The subcommands a `--help` text lists under `Commands:` (not `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn lab_md_names_every_micro_benchmark() {
    let lab = read(&root().join("docs/lab.md"));
    let micro_lines: Vec<&str> = lab.lines().filter(|l| l.contains("micro")).collect();
    let subs = subcommands(&turnstile(&["micro", "--help"]));
    assert!(subs.len() >= 5, "too few micro-benchmarks read from `turnstile micro --help`: {subs:?}");
    let missing: Vec<&String> =
        subs.iter().filter(|s| !micro_lines.iter().any(|l| words(l).any(|w| w == s.as_str()))).collect();
    assert!(missing.is_empty(), "docs/lab.md names no `turnstile micro` line with {missing:?}");
}

fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
}

#[test]
fn lab_md_names_every_loom_model() {
    let root = root();
    let lab = read(&root.join("docs/lab.md"));
    let mut missing = Vec::new();
    let mut models = 0;
    for krate in fs::read_dir(root.join("crates")).expect("crates/") {
        let Ok(tests) = fs::read_dir(krate.expect("crate").path().join("tests")) else { continue };
        for t in tests {
            let name = t.expect("test file").file_name().to_string_lossy().into_owned();
            if let Some(model) = name.strip_prefix("loom_").and_then(|n| n.strip_suffix(".rs")) {
                models += 1;
                if !lab.contains(&format!("loom_{model}")) {
                    missing.push(name);
                }
            }
        }
    }
    assert!(models >= 5, "only {models} loom models found");
    assert!(missing.is_empty(), "docs/lab.md does not name the loom models {missing:?}");
}

#[test]
fn lab_md_lists_every_knob() {
    let lab = read(&root().join("docs/lab.md"));
    let mut section = "";
    let mut missing = Vec::new();
    for line in turnstile(&["config"]).lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.trim_matches(['[', ']']);
        } else if let Some((key, _)) = line.split_once('=') {
            let knob = if section.is_empty() { key.trim().to_owned() } else { format!("{section}.{}", key.trim()) };
            if knob != "profile" && !lab.contains(&format!("`{knob}`")) {
                missing.push(knob);
            }
        }
    }
    assert!(missing.is_empty(), "docs/lab.md's knob table lacks {missing:?}");
}
