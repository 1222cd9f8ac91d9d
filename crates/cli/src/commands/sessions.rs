//! `golem-forge sessions`: list, show and resume recorded sessions. Reading transcripts is
//! `golem_runtime::session`'s job; this file finds the program, prints and maps errors.

mod show;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use comfy_table::{Table, presets};
use golem_runtime::session::{SessionError, SessionStore, SessionSummary};

use crate::cli_error::{CommandError, ErrorKind};
use crate::frontend::clean::{clean_line, clean_text};

/// List, show or resume recorded sessions
///
/// Sessions are recorded under `.golem-forge/sessions/` in the program's root: the nearest
/// directory upwards holding `golem-forge.config.yaml` or `.golem-forge/`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub action: Option<SessionsAction>,
}

/// What to do with sessions.
#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// List recorded sessions, newest first (the default)
    List,
    /// Print one session's transcript
    Show {
        /// The session id, or enough of its start to name one session
        id: String,
        /// Print the transcript's raw JSON lines instead
        #[arg(long)]
        json: bool,
    },
    /// Continue a chat session with its history
    Resume(super::run::ResumeArgs),
}

/// Runs `golem-forge sessions`.
pub fn cmd_sessions(args: SessionsArgs) -> Result<ExitCode, CommandError> {
    tracing::debug!(action = ?args.action, "sessions requested");
    let cwd = std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
    let store = SessionStore::new(&program_root(&cwd));
    match args.action.unwrap_or(SessionsAction::List) {
        SessionsAction::List => list(&store),
        SessionsAction::Show { id, json: false } => {
            let transcript = store.load(&id).map_err(|err| match err {
                SessionError::Corrupt { .. } | SessionError::NotATranscript { .. } => {
                    session_error(err).with_hint(format!(
                        "Run `golem-forge sessions show {id} --json` to print the stored lines"
                    ))
                }
                other => session_error(other),
            })?;
            print(&clean_text(&show::render(&transcript)))
        }
        SessionsAction::Show { id, json: true } => show_json(&store, &id),
        SessionsAction::Resume(args) => {
            let id = store.resolve(&args.id).map_err(session_error)?;
            super::run::cmd_resume(args, &id)
        }
    }
}

/// The program root: the nearest directory from `start` upwards that holds
/// `golem-forge.config.yaml` or `.golem-forge/`, else `start`.
pub fn program_root(start: &Path) -> PathBuf {
    start
        .ancestors()
        .find(|dir| {
            dir.join(golem_runtime::config::CONFIG_FILE_NAME).is_file()
                || dir.join(".golem-forge").is_dir()
        })
        .unwrap_or(start)
        .to_owned()
}

fn list(store: &SessionStore) -> Result<ExitCode, CommandError> {
    let scan = store.scan().map_err(session_error)?;
    for skipped in &scan.skipped {
        let warning = format!("Warning: skipped {}: {}", skipped.name, skipped.reason);
        eprintln!("{}", clean_text(&warning));
    }
    if scan.sessions.is_empty() {
        let text = format!("No sessions yet in {}\n", store.dir().display());
        return print(&clean_text(&text));
    }
    print(&format!("{}\n", table(&scan.sessions)))
}

fn table(sessions: &[SessionSummary]) -> String {
    let mut table = Table::new();
    table.load_style(presets::NOTHING).set_header([
        "ID",
        "STARTED (UTC)",
        "WORKER",
        "MODEL",
        "STATUS",
        "INPUTS",
        "FIRST INPUT",
    ]);
    for s in sessions {
        // Cells are cleaned before the table measures them, so columns stay aligned.
        table.add_row(
            [
                s.id.clone(),
                show::display_time(&s.started),
                s.worker.clone(),
                s.model.clone(),
                s.status.to_string(),
                s.inputs.to_string(),
                s.first_input.clone().unwrap_or_default(),
            ]
            .map(|cell| clean_line(&cell).into_owned()),
        );
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    table.trim_fmt()
}

/// Prints the transcript's lines as stored, without lines a killed process cut off (so the
/// output is valid JSON lines). A damaged transcript is printed whole, with a warning. The
/// lines are JSON, not a rendering, and are not cleaned.
fn show_json(store: &SessionStore, id: &str) -> Result<ExitCode, CommandError> {
    let path = store.path(id).map_err(session_error)?;
    let skipped = match store.load(id) {
        Ok(transcript) => transcript.skipped_lines,
        Err(err @ (SessionError::Corrupt { .. } | SessionError::NotATranscript { .. })) => {
            eprintln!("{}", clean_text(&format!("Warning: {err}")));
            Vec::new()
        }
        Err(err) => return Err(session_error(err)),
    };
    let text = std::fs::read_to_string(&path).map_err(|source| {
        session_error(SessionError::Io {
            action: "read",
            path: path.clone(),
            source,
        })
    })?;
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.lines().enumerate() {
        if !line.trim().is_empty() && !skipped.contains(&(index + 1)) {
            // Transcripts written before line breaks were escaped may hold them raw.
            out.push_str(&golem_protocol::escape_line_breaks(line.to_owned()));
            out.push('\n');
        }
    }
    print(&out)
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn print(text: &str) -> Result<ExitCode, CommandError> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(failed(format!("cannot write to stdout: {e}"))),
    }
}

fn session_error(err: SessionError) -> CommandError {
    let message = err.to_string();
    match err {
        SessionError::NotFound { .. }
        | SessionError::Ambiguous { .. }
        | SessionError::InvalidId { .. } => CommandError::usage(message)
            .with_hint("Run `golem-forge sessions` to list the sessions"),
        SessionError::Corrupt { .. }
        | SessionError::NotATranscript { .. }
        | SessionError::Io { .. }
        | SessionError::Encode { .. }
        | SessionError::Exists { .. } => failed(message),
    }
}

/// An error that fails the command (exit 1).
fn failed(message: String) -> CommandError {
    let mut error = CommandError::usage(message);
    error.kind = ErrorKind::Failed;
    error
}
