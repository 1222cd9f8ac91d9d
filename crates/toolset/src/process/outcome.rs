//! What a jailed run becomes for the model and the UI: a `code_result` when the process ended
//! by itself (any exit code, or a signal such as the CPU limit's), a `TIMEOUT` error carrying
//! the partial output when the wall-clock limit killed it, `INTERRUPTED` when the user did,
//! `EXECUTION_ERROR` with the limit's name and the partial output when a limit of the whole run
//! (what it wrote into the zones) stopped it, and `EXECUTION_ERROR` with the jail's own words
//! when it could not run at all. A `code_result` records the limits the run was held to
//! ([`held_to`]).

use std::time::Duration;

use golem_protocol::result::{CodeResultData, RunLimits};
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::jail::{JailError, JailExit, JailOutput, JailPolicy};
use serde_json::json;

use super::timeout::seconds;

/// What a run under `policy` with the wall-clock limit `timeout` is held to, for the result.
/// `network` is `none` when the network is off, `internet` when it is on, `internet_private`
/// when it is on with private networks allowed as well.
pub fn held_to(policy: &JailPolicy, timeout: Duration) -> RunLimits {
    let limits = &policy.limits;
    let network = match (policy.network, policy.allow_private.is_empty()) {
        (false, _) => "none",
        (true, true) => "internet",
        (true, false) => "internet_private",
    };
    RunLimits {
        wall_ms: millis(timeout),
        cpu_secs: limits.cpu_secs,
        memory_bytes: limits.memory_bytes,
        run_memory_bytes: limits.run_memory_bytes,
        processes: limits.processes,
        file_size_bytes: limits.file_size_bytes,
        output_bytes: u64::try_from(limits.output_bytes).unwrap_or(u64::MAX),
        network: network.to_owned(),
    }
}

/// The result data of `output`, or the error it stands for. `command` is what ran, as shown to
/// the model; `limit` the wall-clock limit it ran under and `policy` the jail's, both recorded
/// in the data ([`held_to`]).
pub fn outcome(
    command: &str,
    limit: Duration,
    policy: &JailPolicy,
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
        limits: Some(held_to(policy, limit)),
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
    use golem_sandbox::jail::{CapturedOutput, Ipv4Network, JailLimits};

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
        match outcome("python3 main.py", LIMIT, &JailPolicy::default(), out) {
            Ok(data) => data,
            Err(err) => panic!("{err}"),
        }
    }

    fn err(out: JailOutput) -> ToolError {
        match outcome("python3 main.py", LIMIT, &JailPolicy::default(), out) {
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
                limits: Some(RunLimits {
                    wall_ms: 5_000,
                    cpu_secs: 120,
                    memory_bytes: 2 << 30,
                    run_memory_bytes: 2 << 30,
                    processes: 256,
                    file_size_bytes: 256 << 20,
                    output_bytes: 1 << 20,
                    network: "none".into(),
                }),
            }
        );
        let data = ok(output(JailExit::Code(3), "", "boom\n"));
        assert_eq!((data.exit_code, data.stderr.as_str()), (Some(3), "boom\n"));
    }

    #[test]
    fn the_result_records_the_jails_limits_and_the_commands_timeout() {
        let policy = JailPolicy {
            network: true,
            limits: JailLimits {
                cpu_secs: 7,
                memory_bytes: 3 << 20,
                run_memory_bytes: 5 << 20,
                processes: 11,
                file_size_bytes: 13 << 10,
                output_bytes: 17 << 10,
                ..JailLimits::default()
            },
            ..JailPolicy::default()
        };
        let out = output(JailExit::Signal(24), "", "");
        let data = match outcome("sh x.sh", Duration::from_millis(1_250), &policy, out) {
            Ok(data) => data,
            Err(err) => panic!("{err}"),
        };
        assert_eq!(
            data.limits,
            Some(RunLimits {
                wall_ms: 1_250,
                cpu_secs: 7,
                memory_bytes: 3 << 20,
                run_memory_bytes: 5 << 20,
                processes: 11,
                file_size_bytes: 13 << 10,
                output_bytes: 17 << 10,
                network: "internet".into(),
            })
        );
    }

    #[test]
    fn the_network_is_named_by_what_the_policy_lets_through() {
        let network = |on: bool, private: &[&str]| {
            let policy = JailPolicy {
                network: on,
                allow_private: private
                    .iter()
                    .map(|net| Ipv4Network::parse(net).unwrap_or_else(|e| panic!("{e}")))
                    .collect(),
                ..JailPolicy::default()
            };
            held_to(&policy, LIMIT).network
        };
        assert_eq!(network(false, &[]), "none");
        assert_eq!(network(false, &["10.1.0.0/16"]), "none");
        assert_eq!(network(true, &[]), "internet");
        assert_eq!(network(true, &["10.1.0.0/16"]), "internet_private");
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
