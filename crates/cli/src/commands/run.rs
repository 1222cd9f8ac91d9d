//! `golem-forge run`: run a worker once on some input and print its answer. The input options
//! and the one turn are shared with `sessions resume` (`sessions/resume.rs`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::{Arc, Mutex, OnceLock};

use clap::Args;
use golem_protocol::{ActionEvent, DisplayEvent, SessionEndReason, TurnStatus};
use golem_runtime::host::{ActionSender, SessionHost};

use super::common::{TraceLevel, WorkerOptions};
use crate::cli_error::{CommandError, ErrorKind};
use crate::frontend;
use crate::frontend::approval::{self, PromptContext};
use crate::frontend::clean::clean_text;
use crate::frontend::input;
use crate::frontend::screen::Screen;
use crate::session::{SessionChoice, open_host};

/// Input and output options of the commands that run a worker once.
#[derive(Debug, Args)]
pub struct RunInput {
    /// Input words, joined by spaces
    pub input: Vec<String>,

    /// Input text
    #[arg(short = 'i', long = "input", value_name = "TEXT")]
    pub input_text: Option<String>,

    /// Read the input from a file
    #[arg(short, long, value_name = "PATH")]
    pub file: Option<PathBuf>,

    /// Print the protocol events as JSON lines on stdout, and nothing else
    #[arg(long)]
    pub json: bool,

    /// Stop after this many model turns
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iterations: Option<u32>,
}

impl RunInput {
    /// The input, by the precedence of docs/cli.md (Input).
    pub(super) fn read(&self) -> Result<String, CommandError> {
        crate::run_input::read_input(
            self.input_text.as_deref(),
            self.file.as_deref(),
            &self.input,
        )
    }

    /// Whether input was given on the command line (stdin aside).
    pub(super) fn given(&self) -> bool {
        self.input_text.is_some() || self.file.is_some() || !self.input.is_empty()
    }

    /// Whether approvals may be asked at this terminal.
    fn prompt_at_terminal(&self) -> bool {
        std::io::stdin().is_terminal() && !self.json
    }
}

/// Run a worker once and print its answer
///
/// Input comes from --input, then --file, then the words after WORKER, then stdin.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,

    #[command(flatten)]
    pub run: RunInput,

    #[command(flatten)]
    pub options: WorkerOptions,
}

/// Runs `future` to completion on a runtime of the current thread.
pub(super) fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, CommandError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::usage(format!("cannot start the async runtime: {e}")))?;
    Ok(runtime.block_on(future))
}

/// Runs `golem-forge run`.
pub fn cmd_run(args: RunArgs) -> Result<ExitCode, CommandError> {
    let input = args.run.read()?;
    block_on(async {
        let choice = SessionChoice::Worker(&args.worker);
        let host = open_host(choice, &args.options, args.run.max_iterations, false)?;
        let root = crate::chat::session_root(&args.worker);
        let trace = args.options.trace;
        run_turn_in(host, Some(&input), &args.run, trace, root.as_deref()).await
    })?
}

/// How the one turn of a run ended.
pub(super) struct TurnEnd {
    pub(super) status: TurnStatus,
    pub(super) response: String,
    pub(super) error: Option<String>,
    /// The approval inbox's numbers of the calls the turn left waiting there.
    pub(super) parked: Vec<u64>,
}

/// Runs one turn of the session on `input` (or, with `None`, continues the turn it left
/// waiting for an approval) as a client of its host: a printer attachment (`--json` events or
/// the stderr trace) and a control attachment that sends the input, answers approvals at the
/// terminal (when there is one) and ends the session. `run` and `sessions resume` (and
/// `sessions fork` with input) end this way.
pub(super) async fn run_turn(
    host: SessionHost,
    input: Option<&str>,
    options: &RunInput,
    trace: TraceLevel,
) -> Result<ExitCode, CommandError> {
    run_turn_in(host, input, options, trace, None).await
}

/// [`run_turn`] of a session kept in the program at `root` (`None`: the current directory's),
/// which an interrupted turn's resume hint goes to.
async fn run_turn_in(
    host: SessionHost,
    input: Option<&str>,
    options: &RunInput,
    trace: TraceLevel,
    root: Option<&std::path::Path>,
) -> Result<ExitCode, CommandError> {
    let json = options.json;
    let session = host.session_id();
    let how = TurnHow {
        json,
        answers: options.prompt_at_terminal(),
        trace,
        ctrl_c: true,
        print_answer: !json,
    };
    let end = drive_turn(host, input, &how).await;
    turn_exit_in(end, &session, json, root)
}

/// How [`drive_turn`] runs a turn.
pub(super) struct TurnHow {
    /// `--json`: the events on stdout instead of the stderr trace.
    pub(super) json: bool,
    /// Whether approvals and tools' questions are asked at this terminal.
    pub(super) answers: bool,
    /// How much of the turn the stderr trace shows.
    pub(super) trace: TraceLevel,
    /// Whether Ctrl+C interrupts the turn (off where the caller owns Ctrl+C, as `serve`).
    pub(super) ctrl_c: bool,
    /// Print the answer on stdout as soon as the turn ends, before the session ends and its
    /// transcript is synced to disk (every entry is written by then; only the sync waits).
    pub(super) print_answer: bool,
}

/// Runs the turn of [`run_turn`] and ends the session; `None` when the session ended before
/// the turn did (a second Ctrl+C).
pub(super) async fn drive_turn(
    host: SessionHost,
    input: Option<&str>,
    how: &TurnHow,
) -> Option<TurnEnd> {
    let answers = how.answers;
    // Front ends attach before anything is emitted. The trace and the prompt share stderr.
    let screen = Arc::new(Mutex::new(Screen::stderr()));
    let (events, ..) = host.attach(false).into_parts();
    let printer = if how.json {
        tokio::spawn(frontend::json::print_events(events))
    } else {
        tokio::spawn(frontend::display::print_trace(
            events,
            screen.clone(),
            how.trace,
        ))
    };
    // A terminal answers approvals and tools' questions; without one, tools decline them.
    let mut control = if answers {
        host.attach_interactive()
    } else {
        host.attach(false)
    };
    let prompts = PromptContext {
        screen,
        keys: None,
        registry: Arc::new(OnceLock::from(host.registry())),
    };
    let running = host.start();
    let _ctrl_c = how.ctrl_c.then(|| interrupt_on_ctrl_c(control.sender()));
    control.send(match input {
        Some(input) => ActionEvent::UserInput {
            request_id: None,
            content: input.to_owned(),
        },
        None => ActionEvent::ContinueTurn {},
    });
    let mut end = None;
    let mut parked = Vec::new();
    while let Some(event) = control.recv().await {
        match event {
            DisplayEvent::ApprovalDeferred {
                inbox_id: Some(id), ..
            } => parked.push(id),
            DisplayEvent::ApprovalRequired(request) if answers => {
                control.send(approval::answer(request, prompts.clone()).await);
            }
            DisplayEvent::InputRequired {
                request_id,
                prompt,
                source,
                fields,
            } if answers => {
                let question = input::Question {
                    request_id,
                    prompt,
                    source,
                    fields,
                };
                control.send(input::answer(question, prompts.clone()).await);
            }
            DisplayEvent::TurnEnded {
                status,
                response,
                error,
                ..
            } => {
                let ended = TurnEnd {
                    status,
                    response: response.unwrap_or_default(),
                    error,
                    parked: std::mem::take(&mut parked),
                };
                if how.print_answer {
                    print_response(&ended);
                }
                end = Some(ended);
                control.send(ActionEvent::EndSession { reason: None });
            }
            DisplayEvent::SessionEnded { .. } => break,
            _ => {}
        }
    }
    running.closed().await;
    let _ = printer.await;
    end
}

/// Prints the answer of a turn that completed (or was interrupted) on stdout.
pub(super) fn print_response(end: &TurnEnd) {
    match end.status {
        TurnStatus::Completed | TurnStatus::Interrupted => {
            println!("{}", clean_text(end.response.trim_end()))
        }
        TurnStatus::Failed | TurnStatus::BudgetExceeded | TurnStatus::WaitingApproval => {}
    }
}

/// The exit of a command whose one turn of session `session` ended as `end` (`None`: the
/// session ended first, by a second Ctrl+C); an interrupted turn's error says how to resume
/// the session.
pub(super) fn turn_exit(
    end: Option<TurnEnd>,
    session: &str,
    json: bool,
) -> Result<ExitCode, CommandError> {
    turn_exit_in(end, session, json, None)
}

/// [`turn_exit`] of a session kept in the program at `root` (`None`: the current directory's).
fn turn_exit_in(
    end: Option<TurnEnd>,
    session: &str,
    json: bool,
    root: Option<&std::path::Path>,
) -> Result<ExitCode, CommandError> {
    // Ended before the turn did: a second Ctrl+C.
    let end = end.unwrap_or(TurnEnd {
        status: TurnStatus::Interrupted,
        response: String::new(),
        error: None,
        parked: Vec::new(),
    });
    let (kind, message) = match end.status {
        TurnStatus::Completed => return Ok(ExitCode::SUCCESS),
        TurnStatus::Failed => (ErrorKind::Failed, end.error.unwrap_or_default()),
        TurnStatus::Interrupted => (ErrorKind::Interrupted, "interrupted".to_owned()),
        TurnStatus::BudgetExceeded => (ErrorKind::BudgetExceeded, end.error.unwrap_or_default()),
        TurnStatus::WaitingApproval => (
            ErrorKind::WaitingApproval,
            format!(
                "session {session} is parked until {} answered",
                match end.parked.as_slice() {
                    [] => "what waits for approval in the inbox is".to_owned(),
                    [one] => format!("approval {one} in the inbox is"),
                    many => format!("approvals {} in the inbox are", numbers(many)),
                }
            ),
        ),
    };
    let hints = match end.status {
        TurnStatus::BudgetExceeded => vec![
            "raise the limit under `budget:` in the worker file (the --budget-* options can \
             only lower it)"
                .to_owned(),
        ],
        TurnStatus::WaitingApproval => {
            let answer = match end.parked.first() {
                Some(first) => format!(
                    "`golem-forge inbox show {first}` shows what it would do; `golem-forge inbox \
                     approve {first} --resume` approves it and continues at once (or `deny {first}`)"
                ),
                None => "`golem-forge inbox` lists what waits".to_owned(),
            };
            vec![
                answer,
                format!(
                    "`golem-forge sessions resume {session}` continues it once {} answered",
                    if end.parked.len() > 1 {
                        "all are"
                    } else {
                        "it is"
                    }
                ),
            ]
        }
        TurnStatus::Interrupted => vec![crate::chat::saved_session(session, root)],
        TurnStatus::Completed | TurnStatus::Failed => Vec::new(),
    };
    Err(CommandError {
        kind,
        message,
        hints,
        quiet: json,
    })
}

/// Inbox numbers as people list them: `3, 4 and 7`.
fn numbers(ids: &[u64]) -> String {
    match ids {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => {
            let rest: Vec<String> = rest.iter().map(u64::to_string).collect();
            format!("{} and {last}", rest.join(", "))
        }
    }
}

/// Ctrl+C interrupts the turn; a second one (even while the model summarises) ends the session
/// at once, and the process exits with 130 if the host has not closed it within a moment.
fn interrupt_on_ctrl_c(actions: ActionSender) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut presses = 0u32;
        while tokio::signal::ctrl_c().await.is_ok() {
            presses += 1;
            if presses > 1 {
                eprintln!("\nInterrupted twice: exiting");
                actions.send(ActionEvent::EndSession {
                    reason: Some(SessionEndReason::Interrupted),
                });
                tokio::time::sleep(std::time::Duration::from_secs(3)).await;
                std::process::exit(130);
            }
            eprintln!("\nInterrupting… (Ctrl+C again to exit at once)");
            actions.send(ActionEvent::Interrupt {
                reason: Some("SIGINT".to_owned()),
            });
        }
    })
}
