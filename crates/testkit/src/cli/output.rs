//! What a finished run of the binary printed, and signals to one still running.

use std::process::Output;

use super::env::render;

/// The run's stdout, which must be UTF-8.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// The run's stderr, which must be UTF-8.
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Asserts that the run exited with `code`, showing everything it printed when not.
pub fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "unexpected exit:\n{}",
        render(output)
    );
}

/// Sends the signal `name` (`INT`, `TERM`, `KILL`, `9`, …) to the process `pid` with
/// kill(1); whether kill said it was sent.
pub fn signal(pid: u32, name: &str) -> bool {
    std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|status| status.success())
}
