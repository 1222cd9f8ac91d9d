//! The long-lived process of a Python or JavaScript module: its adapter in `serve` mode,
//! started in the jail on the first `call` or `policy` request of the session and kept for the
//! next ones. A request is one JSON line, `{"id":N,"nonce":"..","op":"call"|"policy",
//! "tool":..,"args":{..}}`, and its answer one JSON line, `{"id":N,"nonce":"..","ok":..}` or
//! `{"id":N,"nonce":"..","error":".."}`, over the jail's private channel
//! ([`Jail::spawn_with_channel`]): nothing the module's code starts can reach it, so a process
//! a tool left behind cannot answer for the adapter (and say a later call needs no approval).
//! Each request carries a fresh random nonce besides its id; an answer to the id without the
//! nonce is taken for a forgery: the process is killed and the request fails (a policy
//! question then asks the user, see `tool.rs`). A line that is no answer is skipped. Requests
//! take turns (one process, a mutex). A request that runs out of time or is interrupted kills the
//! process (and everything it started); one during which the process ended is an
//! `EXECUTION_ERROR` carrying the end of its stderr; either way the next request starts a new
//! process. So does a request on another tokio runtime than the process's (its pipes belong to
//! that one).
//!
//! The process sees the `rw` zones through copy-on-write layers (its jail is prepared for
//! changesets): after each request, if it wrote anything there, it is ended (a layer cannot be
//! emptied under a live mount) and its changes go to the caller with the answer, to pass the
//! zones' approval before they land; the next request starts a new process. A request that
//! failed has its changes discarded.

use std::time::Duration;

use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::jail::{Jail, JailCommand, JailExit, JailKiller, JailProcess};
use golem_toolset::process::changes::{Pending, discarded};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// How long the end of a process that stopped answering is waited for (its exit and the rest
/// of its stderr).
const END_GRACE: Duration = Duration::from_secs(5);

/// The module's process, if one is running.
#[derive(Debug)]
struct Live {
    process: JailProcess,
    runtime: Option<tokio::runtime::Id>,
    next_id: u64,
    /// A request was sent and its answer not read (its caller gave up on it): what the
    /// process says next is not known, so it is not used again.
    in_flight: bool,
}

/// Kills the process when a request is dropped half-way (its caller stopped waiting, as on an
/// interrupt that drops the call), unless disarmed.
struct HalfWay(Option<JailKiller>);

impl Drop for HalfWay {
    fn drop(&mut self) {
        if let Some(killer) = self.0.take() {
            killer.kill_as(JailExit::Interrupted);
        }
    }
}

/// One module's long-lived process in one session.
#[derive(Debug)]
pub struct Session {
    jail: Jail,
    /// The adapter in `serve` mode, with the module in its script.
    command: JailCommand,
    live: Mutex<Option<Live>>,
}

/// What became of one request.
enum Exchange {
    /// The process answered (the reply's `ok` or `error`).
    Answered(Result<Value, ModuleRefused>),
    /// Its stdout ended, or could not be written or read (`Some`: what went wrong).
    Ended(Option<std::io::Error>),
    /// An answer to the request's id came without its nonce.
    Forged,
    TimedOut,
    Interrupted,
}

impl Session {
    /// A session running `command` (the adapter in `serve` mode) in `jail`.
    pub fn new(jail: Jail, command: JailCommand) -> Session {
        Session {
            jail,
            command,
            live: Mutex::new(None),
        }
    }

    /// Asks the process `op` (`call` or `policy`) for `tool` with `args`, as `what` (naming the
    /// tool and the module, for messages), within `timeout`; gives back the reply's `ok` and
    /// what the request changed in the zones (not applied; see the module's header).
    pub async fn request(
        &self,
        what: &str,
        op: &str,
        tool: &str,
        args: &Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<(Value, Option<Pending>), ToolError> {
        let interrupted = || {
            ToolError::new(
                ToolErrorCode::Interrupted,
                format!("{what} was interrupted"),
            )
        };
        let mut live = tokio::select! {
            live = self.live.lock() => live,
            () = cancel.cancelled() => return Err(interrupted()),
        };
        let current = tokio::runtime::Handle::try_current()
            .ok()
            .map(|handle| handle.id());
        if live
            .as_ref()
            .is_some_and(|l| l.in_flight || l.process.has_exited() || l.runtime != current)
        {
            *live = None;
        }
        if live.is_none() {
            let process = self
                .jail
                .spawn_with_channel(&self.command)
                .await
                .map_err(|err| {
                    ToolError::new(
                        ToolErrorCode::ExecutionError,
                        format!("{what} could not start: {err}"),
                    )
                })?;
            *live = Some(Live {
                process,
                runtime: current,
                next_id: 1,
                in_flight: false,
            });
        }
        let Some(running) = live.as_mut() else {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("{what}: the module's process is gone"),
            ));
        };
        let id = running.next_id;
        running.next_id += 1;
        let nonce = format!("{:032x}", rand::random::<u128>());
        let line =
            json!({"id": id, "nonce": nonce, "op": op, "tool": tool, "args": args}).to_string();
        let mark = running.process.stderr_mark();
        running.in_flight = true;
        let mut half_way = HalfWay(Some(running.process.killer()));
        let exchange = tokio::select! {
            exchange = exchange(&mut running.process, &line, id, &nonce) => exchange,
            () = tokio::time::sleep(timeout) => Exchange::TimedOut,
            () = cancel.cancelled() => Exchange::Interrupted,
        };
        half_way.0 = None;
        running.in_flight = false;
        match exchange {
            Exchange::Answered(answer) => {
                let answer = answer.map_err(|error| {
                    let mut message = format!("{what} failed:\n");
                    let printed = running.process.stderr_since(mark);
                    if !printed.trim().is_empty() {
                        message.push_str(printed.trim_end());
                        message.push('\n');
                    }
                    message.push_str(&error.to_string());
                    ToolError::new(ToolErrorCode::ExecutionError, message)
                });
                let changes = match live.take() {
                    Some(ended) if ended.process.has_changes() => {
                        Some(ended.process.end_with_changes().await)
                    }
                    kept => {
                        *live = kept;
                        None
                    }
                };
                match (answer, changes) {
                    (Ok(value), changes) => Ok((value, changes)),
                    (Err(error), Some(changes)) => Err(discarded(changes, error).await),
                    (Err(error), None) => Err(error),
                }
            }
            Exchange::TimedOut => {
                running.process.kill_as(JailExit::TimedOut);
                *live = None;
                Err(ToolError::new(
                    ToolErrorCode::Timeout,
                    format!(
                        "{what} ran past its time limit of {} s and was killed, with everything \
                         it started (the module's process starts again on the next call)",
                        timeout.as_secs()
                    ),
                ))
            }
            Exchange::Interrupted => {
                running.process.kill();
                *live = None;
                Err(interrupted())
            }
            Exchange::Forged => {
                running.process.kill();
                *live = None;
                tracing::warn!("{what}: an answer without the request's nonce; process killed");
                Err(ToolError::new(
                    ToolErrorCode::ExecutionError,
                    format!(
                        "{what} was answered by something other than its module's process (an \
                         answer to the request without the request's secret): the answer was \
                         not used and the process was killed, with everything it started"
                    ),
                ))
            }
            Exchange::Ended(problem) => {
                let Some(mut ended) = live.take() else {
                    return Err(interrupted());
                };
                if problem.is_some() {
                    ended.process.kill();
                }
                let exit = tokio::time::timeout(END_GRACE, ended.process.wait()).await;
                let stderr = ended.process.stderr_since(mark);
                Err(ended_error(what, exit, problem, stderr.trim_end()))
            }
        }
    }
}

/// Sends `line` and reads lines until the reply to `id` (with `nonce`).
async fn exchange(process: &mut JailProcess, line: &str, id: u64, nonce: &str) -> Exchange {
    if let Err(err) = process.write_line(line).await {
        // A process that ended: its stdout says so below (a broken pipe is no news).
        if err.kind() != std::io::ErrorKind::BrokenPipe {
            return Exchange::Ended(Some(err));
        }
    }
    loop {
        match process.read_line().await {
            Ok(Some(line)) => match reply(&line, id, nonce) {
                Some(Reply::Answer(answer)) => return Exchange::Answered(answer),
                Some(Reply::Forged) => return Exchange::Forged,
                None => {}
            },
            Ok(None) => return Exchange::Ended(None),
            Err(err) => return Exchange::Ended(Some(err)),
        }
    }
}

/// A reply's `error`: why the module (or its adapter) did not answer with `ok`.
#[derive(Debug, PartialEq, thiserror::Error)]
enum ModuleRefused {
    /// The module's own words (`"error": "…"`), shown as they are.
    #[error("{0}")]
    Said(String),
    /// An `error` that is not a string, shown as JSON.
    #[error("{0}")]
    Value(Value),
    /// Neither `ok` nor `error`.
    #[error("the adapter's reply held neither `ok` nor `error`")]
    Neither,
}

/// What a line that answers a request's id says.
#[derive(Debug, PartialEq)]
enum Reply {
    /// The reply's `ok` or `error`.
    Answer(Result<Value, ModuleRefused>),
    /// It lacks the request's nonce.
    Forged,
}

/// The reply to `id` in `line`, if it is one: the line itself, or its end from `{"id":` (for
/// output without a newline that ran into it).
fn reply(line: &str, id: u64, nonce: &str) -> Option<Reply> {
    let parse = |text: &str| -> Option<Reply> {
        let mut value: Value = serde_json::from_str(text).ok()?;
        let object = value.as_object_mut()?;
        if object.get("id")?.as_u64()? != id {
            return None;
        }
        if object.get("nonce").and_then(Value::as_str) != Some(nonce) {
            return Some(Reply::Forged);
        }
        if let Some(ok) = object.remove("ok") {
            return Some(Reply::Answer(Ok(ok)));
        }
        Some(Reply::Answer(Err(match object.remove("error") {
            Some(Value::String(error)) => ModuleRefused::Said(error),
            Some(other) => ModuleRefused::Value(other),
            None => ModuleRefused::Neither,
        })))
    };
    parse(line).or_else(|| parse(&line[line.rfind("{\"id\":")?..]))
}

/// The error of a request during which the process ended (or stopped making sense).
fn ended_error(
    what: &str,
    exit: Result<Result<JailExit, golem_sandbox::jail::JailError>, tokio::time::error::Elapsed>,
    problem: Option<std::io::Error>,
    stderr: &str,
) -> ToolError {
    let how = match (&problem, exit) {
        (Some(problem), _) => format!("answered in a way that cannot be read ({problem})"),
        (None, Ok(Ok(JailExit::Code(127)))) if stderr.is_empty() => {
            "could not start: its interpreter was not found in the jail".to_owned()
        }
        (None, Ok(Ok(JailExit::Code(code)))) => format!("failed (exit {code})"),
        (None, Ok(Ok(JailExit::Signal(signal)))) => {
            format!("crashed (killed by signal {signal})")
        }
        (None, Ok(Ok(JailExit::LimitExceeded(why)))) => {
            format!("was stopped, with everything it started: {why}")
        }
        (None, Ok(Ok(other @ (JailExit::TimedOut | JailExit::Interrupted)))) => {
            format!("ended ({other:?})")
        }
        (None, Ok(Err(err))) => format!("could not run: {err}"),
        (None, Err(_)) => "stopped answering and was killed".to_owned(),
    };
    let mut message = format!("{what} {how}");
    if !stderr.is_empty() {
        message.push_str(":\n");
        message.push_str(stderr);
    }
    ToolError::new(ToolErrorCode::ExecutionError, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_found_by_id_and_nonce_and_other_lines_skipped() {
        let ok = |value| Some(Reply::Answer(Ok(value)));
        assert_eq!(
            reply(r#"{"id":3,"nonce":"n1","ok":true}"#, 3, "n1"),
            ok(json!(true))
        );
        assert_eq!(
            reply(r#"{"id":3,"nonce":"n1","error":"no tool"}"#, 3, "n1"),
            Some(Reply::Answer(Err(ModuleRefused::Said(
                "no tool".to_owned()
            ))))
        );
        assert_eq!(reply(r#"{"id":2,"nonce":"n1","ok":true}"#, 3, "n1"), None);
        assert_eq!(reply("hello from a subprocess", 3, "n1"), None);
        assert_eq!(
            reply(
                r#"partial{"id":3,"nonce":"n1","ok":{"kind":"text"}}"#,
                3,
                "n1"
            ),
            ok(json!({"kind": "text"}))
        );
    }

    #[test]
    fn an_answer_to_the_id_without_its_nonce_is_a_forgery() {
        for forged in [
            r#"{"id":3,"ok":false}"#,
            r#"{"id":3,"nonce":"guess","ok":false}"#,
            r#"{"id":3,"nonce":7,"ok":false}"#,
            r#"noise{"id":3,"ok":false}"#,
        ] {
            assert_eq!(reply(forged, 3, "n1"), Some(Reply::Forged), "{forged}");
        }
    }
}
