//! `golem-forge run`: run a worker once on some input and print its answer.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use golem_protocol::{DisplayEvent, PROTOCOL_VERSION, SessionEndReason};
use golem_runtime::runner::RunStatus;

use super::common::{TraceLevel, WorkerOptions};
use crate::cli_error::{CommandError, ErrorKind};
use crate::frontend;
use crate::frontend::clean::clean_text;
use crate::session::{Prompter, WorkerSession};

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
    fn read(&self) -> Result<String, CommandError> {
        crate::input::read_input(
            self.input_text.as_deref(),
            self.file.as_deref(),
            &self.input,
        )
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

/// Continue a recorded session with more input
///
/// The session's worker runs again with the conversation so far; input comes from --input,
/// then --file, then the words after ID, then stdin.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The session id, or enough of its start to name one session
    pub id: String,

    #[command(flatten)]
    pub run: RunInput,

    #[command(flatten)]
    pub options: WorkerOptions,
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, CommandError> {
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
        let prompt = Prompter::terminal_if(args.run.prompt_at_terminal());
        let session =
            WorkerSession::start(&args.worker, &args.options, args.run.max_iterations, prompt)?;
        run(session, &input, args.run.json, args.options.trace).await
    })?
}

/// Runs `golem-forge sessions resume` for the session `id`.
pub fn cmd_resume(args: ResumeArgs, id: &str) -> Result<ExitCode, CommandError> {
    let input = args.run.read()?;
    block_on(async {
        let prompt = Prompter::terminal_if(args.run.prompt_at_terminal());
        let session = WorkerSession::resume(id, &args.options, args.run.max_iterations, prompt)?;
        run(session, &input, args.run.json, args.options.trace).await
    })?
}

/// Runs the session's root worker once on `input`, with the chosen front end.
async fn run(
    mut session: WorkerSession,
    input: &str,
    json: bool,
    trace: TraceLevel,
) -> Result<ExitCode, CommandError> {
    // Front ends subscribe before anything is emitted.
    let printer = if json {
        tokio::spawn(frontend::json::print_events(session.bus().subscribe()))
    } else {
        tokio::spawn(frontend::trace::print_trace(
            session.bus().subscribe(),
            trace,
        ))
    };
    session.ui().emit(DisplayEvent::SessionStarted {
        protocol_version: PROTOCOL_VERSION.to_owned(),
        session_id: session.id().to_owned(),
        worker: session.worker_name().to_owned(),
        model: session.model_name().to_owned(),
    });
    let _ctrl_c = session.interrupt_on_ctrl_c();
    // The session's usage: every worker's model calls, delegated ones included.
    let mut usage_events = session.bus().subscribe();
    let usage_meter = tokio::spawn(async move {
        let mut total = golem_protocol::TokenUsage::default();
        while let Some(event) = usage_events.recv().await {
            if let DisplayEvent::Usage { usage, .. } = &event {
                total.add(usage);
            } else if matches!(event, DisplayEvent::WorkerFinished { depth: 0, .. }) {
                return total;
            }
        }
        total
    });
    let mut runtime = session.take_runtime();
    let outcome = runtime.run(input).await;
    let session_usage = usage_meter.await.unwrap_or(outcome.usage);
    let (reason, message, kind) = match &outcome.status {
        RunStatus::Completed => (
            SessionEndReason::Completed,
            Some(outcome.response.clone()),
            None,
        ),
        RunStatus::Failed(error) => (
            SessionEndReason::Failed,
            Some(error.clone()),
            Some(ErrorKind::Failed),
        ),
        RunStatus::Interrupted => (
            SessionEndReason::Interrupted,
            Some(outcome.response.clone()),
            Some(ErrorKind::Interrupted),
        ),
    };
    session.ui().emit(DisplayEvent::SessionEnded {
        reason,
        message: message.clone(),
        usage: Some(session_usage),
    });
    session.finish(reason, message.clone()).await;
    let _ = printer.await;
    if !json {
        match &outcome.status {
            RunStatus::Completed | RunStatus::Interrupted => {
                println!("{}", clean_text(outcome.response.trim_end()))
            }
            RunStatus::Failed(_) => {}
        }
    }
    match kind {
        None => Ok(ExitCode::SUCCESS),
        Some(kind) => Err(CommandError {
            kind,
            message: match outcome.status {
                RunStatus::Failed(error) => error,
                RunStatus::Completed | RunStatus::Interrupted => "interrupted".to_owned(),
            },
            hints: Vec::new(),
            quiet: json,
        }),
    }
}
