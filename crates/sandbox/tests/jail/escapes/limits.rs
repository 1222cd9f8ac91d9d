//! Limits for a run as a whole (review finding 5): one run filled 831 MB of disk in 0.6 s, made
//! 100,000 files and held 6 GiB under a 2 GiB per-process limit. The private `/tmp` and
//! `/dev/shm` are size- and inode-limited, all processes of a run share one memory limit (a
//! memory cgroup), and what a run writes into the zones is capped: the run is stopped when its
//! zones' file systems grow past the cap.

use golem_sandbox::jail::{JailLimits, JailPolicy};

use super::super::*;

fn policy(limits: JailLimits) -> JailPolicy {
    JailPolicy {
        limits,
        ..JailPolicy::default()
    }
}

#[tokio::test]
async fn tmp_and_shm_are_size_and_inode_limited() {
    let env = JailEnv::new();
    let limits = JailLimits {
        tmp_bytes: 8 << 20,
        tmp_files: 500,
        ..JailLimits::default()
    };
    let out = env
        .bash_with(
            policy(limits),
            "for d in /tmp /dev/shm; do\n\
             \x20 head -c 32000000 /dev/zero > $d/big 2>/dev/null && echo \"FILLED $d\" || echo full\n\
             \x20 rm -f $d/big\n\
             \x20 n=0; while [ $n -lt 2000 ] && : > $d/f$n 2>/dev/null; do n=$((n+1)); done; echo $n\n\
             done\n",
            Duration::from_secs(60),
        )
        .await;
    assert_exit(&out, 0);
    let lines: Vec<&str> = out.stdout.text.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout.text);
    for pair in lines.chunks(2) {
        assert_eq!(pair[0], "full", "{}", out.stdout.text);
        let files: u32 = pair[1].parse().unwrap();
        assert!(files < 500, "made {files} files: {}", out.stdout.text);
    }
}

#[tokio::test]
async fn all_processes_of_a_run_share_one_memory_limit() {
    let env = JailEnv::new();
    let limits = JailLimits {
        run_memory_bytes: 256 << 20,
        ..JailLimits::default()
    };
    // Four processes of 128 MiB each: every one is under the per-process limit, together they
    // are twice the run's.
    let code = "import os, sys\n\
                pids = []\n\
                for i in range(4):\n\
                \x20   pid = os.fork()\n\
                \x20   if pid == 0:\n\
                \x20       b = bytearray(128 << 20)\n\
                \x20       for j in range(0, len(b), 4096): b[j] = 1\n\
                \x20       r, w = os.pipe(); os.read(r, 1)\n\
                \x20   pids.append(pid)\n\
                import time; time.sleep(3)\n\
                alive = 0\n\
                for pid in pids:\n\
                \x20   done, status = os.waitpid(pid, os.WNOHANG)\n\
                \x20   alive += done == 0\n\
                print('alive', alive)\n\
                for pid in pids:\n\
                \x20   try: os.kill(pid, 9)\n\
                \x20   except OSError: pass\n";
    let command = script_command("python3", "main.py", code, Duration::from_secs(60));
    let out = env
        .jail(policy(limits))
        .run(&command, &CancellationToken::new())
        .await
        .unwrap();
    if let Some(note) = out
        .weakened
        .iter()
        .find(|note| note.starts_with("no memory limit for the run as a whole"))
    {
        // No cgroup could be made (an ordinary user without a delegated cgroup): the result
        // says so, which is the documented behaviour.
        assert!(!rustix::process::getuid().is_root(), "{note}");
        return;
    }
    assert!(
        !out.stdout.text.contains("alive 4"),
        "{}\n{}",
        out.stdout.text,
        out.stderr.text
    );
    assert!(
        out.stderr
            .text
            .contains("memory limit of the run (256.0 MiB) was reached"),
        "{}",
        out.stderr.text
    );
}

#[tokio::test]
async fn writing_past_the_zone_cap_stops_the_run() {
    let env = JailEnv::new();
    let limits = JailLimits {
        zone_write_bytes: 16 << 20,
        ..JailLimits::default()
    };
    let out = env
        .bash_with(
            policy(limits),
            "for i in $(seq 1 40); do head -c 10000000 /dev/urandom > /output/f$i; sync; done; echo FINISHED",
            Duration::from_secs(60),
        )
        .await;
    let JailExit::LimitExceeded(why) = &out.exit else {
        panic!("{:?}\n{}", out.exit, out.stdout.text);
    };
    assert!(why.contains("16.0 MiB"), "{why}");
    assert!(!out.stdout.text.contains("FINISHED"));
    let written: u64 = std::fs::read_dir(env.output(""))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(written < 120_000_000, "wrote {written} bytes");
}

#[tokio::test]
async fn making_files_past_the_zone_cap_stops_the_run() {
    let env = JailEnv::new();
    let limits = JailLimits {
        zone_files: 300,
        ..JailLimits::default()
    };
    let out = env
        .bash_with(
            policy(limits),
            "mkdir -p /output/many && cd /output/many && for i in $(seq 1 100000); do : > f$i; done; echo FINISHED",
            Duration::from_secs(60),
        )
        .await;
    let JailExit::LimitExceeded(why) = &out.exit else {
        panic!("{:?}\n{}", out.exit, out.stdout.text);
    };
    assert!(why.contains("300 files"), "{why}");
    let made = std::fs::read_dir(env.output("many")).unwrap().count();
    assert!(made < 50_000, "made {made} files");
}
