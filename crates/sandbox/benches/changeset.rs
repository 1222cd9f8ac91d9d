//! Changeset overhead (issue 26: at most 3 ms median): the same jailed script on a zone of
//! 10,000 files (one changing nothing, one changing 10 files), run directly ([`Jail::run`],
//! the zone is written) and as a changeset run ([`Jail::run_changeset`]: the zone seen through an overlay, and the upper
//! directory scanned into a changeset once the run is over), side by side, with median and
//! 95th percentile of each and of the difference. Both jails prepare their helper ahead of the
//! run, as in use (for a changeset run that includes making the layer and mounting the
//! overlay, which therefore mostly happen off the run's path). Discarding the changeset, which
//! the caller does after the gate, is timed apart. Runs are spaced a little apart, as an
//! agent's are; `--back-to-back` runs them without a pause.
//! `cargo bench -p golem-sandbox --bench changeset [-- --samples N] [-- --back-to-back]`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use golem_sandbox::jail::{Jail, JailCommand, JailExit, JailPolicy, ZoneWrites};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use tokio_util::sync::CancellationToken;

/// Directories × files per directory in the zone.
const DIRS: usize = 100;
const FILES: usize = 100;

/// The cases: a name, the script, and how many changes its changeset has. The second changes
/// 10 files: 8 rewritten, 1 created, 1 deleted and made again (so that every direct run finds
/// its zone as the one before left it, and does the same work).
const CASES: &[(&str, &str, usize)] = &[
    ("no change", "true", 0),
    (
        "10 files changed",
        "for i in 0 1 2 3 4 5 6 7; do echo changed > d42/f$i; done; \
         echo new > d7/new.txt; rm d9/f9; echo f9 > d9/f9",
        10,
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let samples = args
        .iter()
        .position(|a| a == "--samples")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(100usize);
    let pause = if args.iter().any(|a| a == "--back-to-back") {
        Duration::ZERO
    } else {
        Duration::from_millis(30)
    };
    // One zone for each kind of run: the direct runs change theirs.
    let dir = tempfile::tempdir().unwrap();
    let zones: Vec<Sandbox> = ["direct", "changeset"]
        .iter()
        .map(|name| {
            let base = dir.path().join(name);
            for d in 0..DIRS {
                let sub = base.join("work").join(format!("d{d}"));
                std::fs::create_dir_all(&sub).unwrap();
                for f in 0..FILES {
                    std::fs::write(sub.join(format!("f{f}")), format!("file {d}/{f}\n")).unwrap();
                }
            }
            Sandbox::open(&base, &[ZoneConfig::new("work", ZoneMode::Rw)]).unwrap()
        })
        .collect();
    let helper = PathBuf::from(env!("CARGO_BIN_EXE_golem-jail"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (direct, layered) = runtime.block_on(async {
        let direct = Jail::new(helper.clone(), zones[0].clone(), JailPolicy::default());
        direct.preflight().unwrap();
        let layered = Jail::new(helper, zones[1].clone(), JailPolicy::default())
            .with_zone_writes(ZoneWrites::Changeset);
        layered.preflight().unwrap();
        (direct, layered)
    });
    let cancel = CancellationToken::new();
    println!(
        "changeset overhead, zone of {} files, {samples} samples per case, {} ms between runs",
        DIRS * FILES,
        pause.as_millis()
    );
    println!(
        "{:<22} {:>11} {:>11} {:>11} {:>11} {:>13} {:>13} {:>12}",
        "case",
        "direct p50",
        "direct p95",
        "cs p50",
        "cs p95",
        "overhead p50",
        "overhead p95",
        "discard p50"
    );
    for (case, script, changes) in CASES {
        let command = JailCommand {
            program: "bash".to_owned(),
            script: None,
            args: vec!["-c".to_owned(), (*script).to_owned()],
            env: BTreeMap::new(),
            cwd_zone: Some("work".into()),
            timeout: Duration::from_secs(30),
        };
        let run_direct = || {
            runtime.block_on(async {
                let started = Instant::now();
                let out = direct.run(&command, &cancel).await.unwrap();
                let elapsed = started.elapsed();
                assert_eq!(out.exit, JailExit::Code(0), "{out:?}");
                elapsed
            })
        };
        let run_layered = || {
            runtime.block_on(async {
                let started = Instant::now();
                let run = layered.run_changeset(&command, &cancel).await.unwrap();
                let elapsed = started.elapsed();
                assert_eq!(run.output.exit, JailExit::Code(0), "{:?}", run.output);
                let changeset = run.changeset.unwrap();
                assert_eq!(
                    changeset.changes().len(),
                    *changes,
                    "{:?}",
                    changeset.changes()
                );
                let started = Instant::now();
                changeset.discard().unwrap();
                (elapsed, started.elapsed())
            })
        };
        // Warm up the page cache and the standbys.
        for _ in 0..5 {
            run_direct();
            run_layered();
        }
        let mut direct_times = Vec::with_capacity(samples);
        let mut layered_times = Vec::with_capacity(samples);
        let mut discard_times = Vec::with_capacity(samples);
        for _ in 0..samples {
            std::thread::sleep(pause);
            direct_times.push(run_direct());
            std::thread::sleep(pause);
            let (run, discard) = run_layered();
            layered_times.push(run);
            discard_times.push(discard);
        }
        let (d50, d95) = (
            percentile(&mut direct_times, 50),
            percentile(&mut direct_times, 95),
        );
        let (c50, c95) = (
            percentile(&mut layered_times, 50),
            percentile(&mut layered_times, 95),
        );
        println!(
            "{:<22} {:>11} {:>11} {:>11} {:>11} {:>13} {:>13} {:>12}",
            case,
            ms(d50),
            ms(d95),
            ms(c50),
            ms(c95),
            signed_ms(c50, d50),
            signed_ms(c95, d95),
            ms(percentile(&mut discard_times, 50)),
        );
    }
}

fn percentile(samples: &mut [Duration], p: usize) -> Duration {
    samples.sort();
    let index = (samples.len() * p).div_ceil(100).saturating_sub(1);
    samples[index.min(samples.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn signed_ms(a: Duration, b: Duration) -> String {
    format!("{:+.2} ms", (a.as_secs_f64() - b.as_secs_f64()) * 1000.0)
}
