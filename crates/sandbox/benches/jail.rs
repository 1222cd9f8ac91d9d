//! Jail overhead: the same command spawned bare and run through the full jail (standby helper,
//! namespaces, new root, read-only mounts, Landlock, seccomp, rlimits, pids and memory cgroups,
//! the zone watch, output capture), side by side, with median and 95th percentile of each and
//! of the difference. Runs are spaced a little apart, as an agent's are (a model turn lies
//! between two `run_code` calls); `--back-to-back` runs them without a pause.
//! `cargo bench -p golem-sandbox --bench jail [-- --samples N] [-- --back-to-back]`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use golem_sandbox::jail::{Jail, JailCommand, JailExit, JailPolicy};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use tokio_util::sync::CancellationToken;

const CASES: &[(&str, &[&str])] = &[("bash", &["-c", "true"]), ("python3", &["-c", "pass"])];

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
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(dir.path(), &[ZoneConfig::new("work", ZoneMode::Rw)]).unwrap();
    let helper = PathBuf::from(env!("CARGO_BIN_EXE_golem-jail"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let jail = runtime.block_on(async {
        let jail = Jail::new(helper, sandbox, JailPolicy::default());
        jail.preflight().unwrap();
        jail
    });
    println!(
        "jail overhead, {samples} samples per case, {} ms between runs",
        pause.as_millis()
    );
    println!(
        "{:<16} {:>12} {:>12} {:>12} {:>12} {:>14} {:>14}",
        "case", "bare p50", "bare p95", "jailed p50", "jailed p95", "overhead p50", "overhead p95"
    );
    for (program, args) in CASES {
        let mut bare = Vec::with_capacity(samples);
        let mut jailed = Vec::with_capacity(samples);
        // Warm up the page cache and the standby.
        for _ in 0..5 {
            spawn_bare(program, args);
            runtime.block_on(run_jailed(&jail, program, args));
        }
        for _ in 0..samples {
            std::thread::sleep(pause);
            bare.push(spawn_bare(program, args));
            std::thread::sleep(pause);
            jailed.push(runtime.block_on(run_jailed(&jail, program, args)));
        }
        let (b50, b95) = (percentile(&mut bare, 50), percentile(&mut bare, 95));
        let (j50, j95) = (percentile(&mut jailed, 50), percentile(&mut jailed, 95));
        println!(
            "{:<16} {:>12} {:>12} {:>12} {:>12} {:>14} {:>14}",
            format!("{program} {}", args.join(" ")),
            ms(b50),
            ms(b95),
            ms(j50),
            ms(j95),
            ms(j50.saturating_sub(b50)),
            ms(j95.saturating_sub(b95)),
        );
    }
}

/// The same binary the jail finds on its PATH (not, say, a pyenv shim earlier on ours).
fn spawn_bare(program: &str, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new(format!("/usr/bin/{program}"))
        .args(args)
        .status()
        .unwrap();
    assert!(status.success());
    started.elapsed()
}

async fn run_jailed(jail: &Jail, program: &str, args: &[&str]) -> Duration {
    let command = JailCommand {
        program: program.to_owned(),
        script: None,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: BTreeMap::new(),
        cwd_zone: Some("work".into()),
        timeout: Duration::from_secs(30),
    };
    let started = Instant::now();
    let out = jail.run(&command, &CancellationToken::new()).await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(out.exit, JailExit::Code(0), "{out:?}");
    elapsed
}

fn percentile(samples: &mut [Duration], p: usize) -> Duration {
    samples.sort();
    let index = (samples.len() * p).div_ceil(100).saturating_sub(1);
    samples[index.min(samples.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
