//! Zone benchmarks, compared in the same run with the tools a user would reach for: a
//! recursive walk of 100,000 files against `find <dir> | wc -l`, and atomic write / read
//! throughput for 1 MB and 100 MB files; and the protected-files judgement with git's own
//! rules (issue 45): the first check of a zone (which walks it for repositories), one check
//! after that, and the removal check of a 1,000-file directory. Run with `cargo bench -p golem-sandbox`; set
//! `GOLEM_BENCH_FILES` to change the tree size.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark: a failure is a failed run"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};

/// The best of `runs` timings of `f`.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let value = f();
        best = best.min(start.elapsed());
        last = Some(value);
    }
    (best, last.unwrap())
}

/// `files` files spread over directories of 100 files, 10 subdirectories per directory.
fn build_tree(root: &Path, files: usize) -> usize {
    let mut made = 0;
    let mut dirs = 0;
    while made < files {
        let dir = root
            .join(format!("d{:03}", dirs / 10))
            .join(format!("s{}", dirs % 10));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..100.min(files - made) {
            std::fs::write(dir.join(format!("file{i:03}.txt")), b"x").unwrap();
            made += 1;
        }
        dirs += 1;
    }
    made
}

fn main() {
    let files: usize = std::env::var("GOLEM_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let tmp = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(tmp.path(), &[ZoneConfig::new("big", ZoneMode::Rw)]).unwrap();
    build_tree(&tmp.path().join("big"), files);
    let root = sandbox.resolve("/big").unwrap();
    judge_protection(tmp.path(), files);

    let dir = tmp.path().join("big");
    let (find_time, find_count) = best(5, || {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("find '{}' | wc -l", dir.display()))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<usize>()
            .unwrap()
    });
    let (walk_time, (entries, truncated)) =
        best(5, || sandbox.walk(&root, true, usize::MAX).unwrap());
    assert!(!truncated);
    // `find` also prints the start directory itself.
    assert_eq!(entries.len() + 1, find_count);
    println!(
        "walk {} entries: {:.1} ms; find | wc -l: {:.1} ms; ratio {:.2}",
        entries.len(),
        walk_time.as_secs_f64() * 1e3,
        find_time.as_secs_f64() * 1e3,
        walk_time.as_secs_f64() / find_time.as_secs_f64()
    );

    for (label, size) in [("1 MB", 1usize << 20), ("100 MB", 100 << 20)] {
        let data = vec![7u8; size];
        let p = sandbox.resolve("/big/blob.bin").unwrap();
        let runs = if size > 10 << 20 { 3 } else { 20 };
        let (write_time, ()) = best(runs, || sandbox.write_atomic(&p, &data, false).unwrap());
        let (read_time, bytes) = best(runs, || sandbox.read(&p).unwrap());
        assert_eq!(bytes.len(), size);
        let mb = size as f64 / (1 << 20) as f64;
        println!(
            "{label}: write_atomic (with fsync) {:.2} ms ({:.0} MB/s); read {:.2} ms ({:.0} MB/s)",
            write_time.as_secs_f64() * 1e3,
            mb / write_time.as_secs_f64(),
            read_time.as_secs_f64() * 1e3,
            mb / read_time.as_secs_f64()
        );
    }
}

/// The protected-files judgement in a repository of `files` files with `core.hooksPath` set:
/// the first check (the zone is walked for repositories), a steady one, and the removal check
/// of a 1,000-file directory.
fn judge_protection(base: &Path, files: usize) {
    let repo = base.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    build_tree(&repo, files);
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "core.hooksPath", ".githooks"]);
    let start = Instant::now();
    let sandbox = Sandbox::open(base, &[ZoneConfig::new("repo", ZoneMode::Rw)]).unwrap();
    let hook = sandbox.resolve("/repo/.githooks/pre-commit").unwrap();
    assert!(sandbox.protection(&hook).is_protected());
    let first = start.elapsed();
    let file = sandbox.resolve("/repo/d005/s3/file042.txt").unwrap();
    let (steady, verdict) = best(200, || sandbox.protection(&file));
    assert!(!verdict.is_protected());
    let dir = sandbox.resolve("/repo/d001").unwrap();
    let (removal, verdict) = best(5, || sandbox.removal_protection(&dir));
    assert!(!verdict.is_protected());
    println!(
        "protection with git's rules, {files} files: first check (walks the zone) {:.1} ms; \
         one path {:.1} µs; removing a 1,000-file directory {:.1} ms",
        first.as_secs_f64() * 1e3,
        steady.as_secs_f64() * 1e6,
        removal.as_secs_f64() * 1e3
    );
}
