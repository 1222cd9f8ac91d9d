//! Processes that must not outlive a run: a marker unique to one test call, put on a server's
//! command line, and a check over `/proc` that no process carrying it is left (the MCP cache and
//! jail tests).

use std::time::{Duration, Instant};

use super::send_signal;

/// A marker unique to this test process and call.
pub(super) fn marker(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("golem-{what}-{}-{nanos}", std::process::id())
}

/// The pids of processes whose command line holds `marker`.
pub(super) fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

/// Fails (after killing them) if processes with `marker` are still there 3 s from now.
pub(super) fn assert_none_left(marker: &str) {
    let start = Instant::now();
    loop {
        let left = processes_with(marker);
        if left.is_empty() {
            return;
        }
        if start.elapsed() > Duration::from_secs(3) {
            for pid in &left {
                send_signal(*pid, "-KILL");
            }
            panic!("server processes outlived the session: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
