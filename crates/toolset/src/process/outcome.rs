//! What a jailed run becomes for the model and the UI: a `code_result` when the process ended
//! by itself (any exit code, or a signal such as the CPU limit's), a `TIMEOUT` error carrying
//! the partial output when the wall-clock limit killed it, `INTERRUPTED` when the user did,
//! `EXECUTION_ERROR` with the limit's name and the partial output when a limit of the whole run
//! (what it wrote into the zones) stopped it, and `EXECUTION_ERROR` with the jail's own words
//! when it could not run at all.

use std::time::Duration;

use golem_protocol::result::CodeResultData;
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::jail::{JailError, JailExit, JailOutput};
use serde_json::json;

use super::timeout::seconds;

/// The result data of `output`, or the error it stands for. `command` is what ran, as shown to
/// the model; `limit` the wall-clock limit it ran under.
pub fn outcome(
    command: &str,
    limit: Duration,
    output: JailOutput,
) -> Result<CodeResultData, ToolError> {
    let (exit_code, signal) = ended(command, limit, &output)?;
    Ok(CodeResultData {
        command: command.to_owned(),
        stdout: output.stdout.text,
        stderr: output.stderr.text,
        exit_code,
        signal,
        duration_ms: millis(output.duration),
        timed_out: false,
        weakened: output.weakened,
        changes: None,
    })
}

/// The exit code or the signal of a process that ended by itself, else the error its end
/// stands for (`TIMEOUT`, `INTERRUPTED`, a limit of the run); see [`outcome`].
pub fn ended(
    command: &str,
    limit: Duration,
    output: &JailOutput,
) -> Result<(Option<i32>, Option<i32>), ToolError> {
    match &output.exit {
        JailExit::Code(code) => Ok((Some(*code), None)),
        JailExit::Signal(signal) => Ok((None, Some(*signal))),
        JailExit::TimedOut => Err(timed_out(command, limit, output)),
        JailExit::Interrupted => Err(interrupted(command, output)),
        JailExit::LimitExceeded(why) => Err(over_limit(command, why, output)),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// `TIMEOUT`: the limit, and the output so far both in the message and in `details`.
fn timed_out(command: &str, limit: Duration, output: &JailOutput) -> ToolError {
    let message = format!(
        "`{command}` ran past its time limit of {} and was killed, with everything it started. \
         {}",
        seconds(limit),
        output_so_far(output)
    );
    ToolError::new(ToolErrorCode::Timeout, message).with_details(details(command, output))
}

/// `EXECUTION_ERROR`: a limit of the whole run stopped it; the limit, and the output so far.
fn over_limit(command: &str, why: &str, output: &JailOutput) -> ToolError {
    let message = format!(
        "`{command}` was stopped, with everything it started: {why}. {}",
        output_so_far(output)
    );
    ToolError::new(ToolErrorCode::ExecutionError, message).with_details(details(command, output))
}

/// `INTERRUPTED`: the user stopped it; what it printed is kept in `details`.
fn interrupted(command: &str, output: &JailOutput) -> ToolError {
    ToolError::new(
        ToolErrorCode::Interrupted,
        format!("`{command}` was interrupted and killed, with everything it started"),
    )
    .with_details(details(command, output))
}

fn details(command: &str, output: &JailOutput) -> serde_json::Value {
    let mut details = json!({
        "command": command,
        "stdout": output.stdout.text,
        "stderr": output.stderr.text,
        "durationMs": millis(output.duration),
    });
    if !output.weakened.is_empty() {
        details["weakened"] = json!(output.weakened);
    }
    details
}

/// `Output so far:` and the non-empty streams, or `It printed nothing.`
fn output_so_far(output: &JailOutput) -> String {
    let streams = [
        ("stdout", &output.stdout.text),
        ("stderr", &output.stderr.text),
    ];
    if streams.iter().all(|(_, text)| text.is_empty()) {
        return "It printed nothing.".to_owned();
    }
    let mut text = "Output so far:".to_owned();
    for (name, body) in streams {
        if !body.is_empty() {
            text.push_str(&format!("\n--- {name} ---\n"));
            text.push_str(body.strip_suffix('\n').unwrap_or(body));
        }
    }
    text
}

/// `EXECUTION_ERROR` with the jail's message (it names what is missing or what failed).
pub fn jail_error(err: &JailError) -> ToolError {
    ToolError::new(ToolErrorCode::ExecutionError, err.to_string())
}

#[cfg(test)]
mod tests {
    use golem_sandbox::jail::CapturedOutput;

    use super::*;

    fn captured(text: &str) -> CapturedOutput {
        CapturedOutput {
            text: text.to_owned(),
            total_bytes: text.len() as u64,
            truncated: false,
        }
    }

    fn output(exit: JailExit, stdout: &str, stderr: &str) -> JailOutput {
        JailOutput {
            exit,
            stdout: captured(stdout),
            stderr: captured(stderr),
            duration: Duration::from_millis(41),
            weakened: vec![],
        }
    }

    const LIMIT: Duration = Duration::from_secs(5);

    fn ok(out: JailOutput) -> CodeResultData {
        match outcome("python3 main.py", LIMIT, out) {
            Ok(data) => data,
            Err(err) => panic!("{err}"),
        }
    }

    fn err(out: JailOutput) -> ToolError {
        match outcome("python3 main.py", LIMIT, out) {
            Ok(data) => panic!("expected an error, got {data:?}"),
            Err(err) => err,
        }
    }

    #[test]
    fn an_exit_is_a_result_whatever_its_code() {
        let data = ok(output(JailExit::Code(0), "hi\n", ""));
        assert_eq!(
            data,
            CodeResultData {
                command: "python3 main.py".into(),
                stdout: "hi\n".into(),
                stderr: String::new(),
                exit_code: Some(0),
                signal: None,
                duration_ms: 41,
                timed_out: false,
                weakened: vec![],
                changes: None,
            }
        );
        let data = ok(output(JailExit::Code(3), "", "boom\n"));
        assert_eq!((data.exit_code, data.stderr.as_str()), (Some(3), "boom\n"));
    }

    #[test]
    fn a_signal_is_a_result_without_an_exit_code() {
        let data = ok(JailOutput {
            weakened: vec!["landlock: not supported".into()],
            ..output(JailExit::Signal(24), "partial", "")
        });
        assert_eq!((data.exit_code, data.signal), (None, Some(24)));
        assert_eq!(data.weakened, ["landlock: not supported"]);
        assert_eq!(data.stdout, "partial");
    }

    #[test]
    fn a_run_over_its_zone_write_cap_is_an_error_naming_the_limit() {
        let why = "it wrote more than 16.0 MiB into the zones (the run's cap)";
        let e = err(output(JailExit::LimitExceeded(why.into()), "1\n", ""));
        assert_eq!(e.code, ToolErrorCode::ExecutionError);
        assert_eq!(
            e.message,
            format!(
                "`python3 main.py` was stopped, with everything it started: {why}. Output so \
                 far:\n--- stdout ---\n1"
            )
        );
    }

    #[test]
    fn a_timeout_is_an_error_with_the_limit_and_the_partial_output() {
        let e = err(output(JailExit::TimedOut, "1\n2\n", "warn\n"));
        assert_eq!(e.code, ToolErrorCode::Timeout);
        assert_eq!(
            e.message,
            "`python3 main.py` ran past its time limit of 5 s and was killed, with everything \
             it started. Output so far:\n--- stdout ---\n1\n2\n--- stderr ---\nwarn"
        );
        assert_eq!(
            e.details,
            Some(
                json!({"command": "python3 main.py", "stdout": "1\n2\n", "stderr": "warn\n",
                        "durationMs": 41})
            )
        );
        let quiet = err(output(JailExit::TimedOut, "", ""));
        assert!(
            quiet
                .message
                .ends_with("everything it started. It printed nothing.")
        );
        let only_err = err(output(JailExit::TimedOut, "", "e"));
        assert!(
            only_err
                .message
                .ends_with("Output so far:\n--- stderr ---\ne")
        );
    }

    #[test]
    fn an_interrupt_is_an_error_that_keeps_the_output() {
        let e = err(JailOutput {
            weakened: vec!["seccomp: missing".into()],
            ..output(JailExit::Interrupted, "x", "")
        });
        assert_eq!(e.code, ToolErrorCode::Interrupted);
        assert_eq!(
            e.message,
            "`python3 main.py` was interrupted and killed, with everything it started"
        );
        assert_eq!(
            e.details,
            Some(
                json!({"command": "python3 main.py", "stdout": "x", "stderr": "",
                        "durationMs": 41, "weakened": ["seccomp: missing"]})
            )
        );
    }

    #[test]
    fn jail_errors_keep_the_jails_words() {
        let e = jail_error(&JailError::Unsupported(
            "Landlock is not enabled in this kernel".into(),
        ));
        assert_eq!(e.code, ToolErrorCode::ExecutionError);
        assert_eq!(
            e.message,
            "the jail cannot be built: Landlock is not enabled in this kernel"
        );
        let e = jail_error(&JailError::Setup("mount /proc: EPERM".into()));
        assert_eq!(
            e.message,
            "the jail could not be set up: mount /proc: EPERM"
        );
    }
}
