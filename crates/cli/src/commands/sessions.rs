//! `golem-forge sessions`: list, show, export, fork, resume and undo recorded sessions. Reading
//! transcripts is `golem_session`'s job; this file finds the program, prints and maps
//! errors.

mod export;
mod fork;
mod otlp;
mod resume;
mod show;
mod undo;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use comfy_table::{Table, presets};
use golem_runtime::config::{find_program_root, holds_program};
use golem_session::{SessionError, SessionScan, SessionStore, SessionSummary};

use crate::cli_error::{CommandError, ErrorKind};
use crate::frontend::clean::{clean_line, clean_text};

/// List, show, export, fork, resume or undo recorded sessions
///
/// Sessions are recorded under `.golem-forge/sessions/` in the program's root: the nearest
/// directory upwards holding `golem-forge.config.yaml`, else the nearest holding
/// `.golem-forge/`.
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
    /// Print one session as a report (Markdown) or as one JSON document
    Export {
        /// The session id, or enough of its start to name one session
        id: String,
        /// `markdown`: a report to read; `json`: the meta and entries, as stored;
        /// `otlp-json`: the session's spans, as OTLP/JSON
        #[arg(long, value_enum, default_value = "markdown")]
        format: export::ExportFormat,
    },
    /// Start a new session from a user turn of a recorded one (and run INPUT in it)
    Fork(fork::ForkArgs),
    /// Continue a chat session with its history
    Resume(resume::ResumeArgs),
    /// Put back the files a session's last turn (or turns from --to TURN on) changed
    Undo(undo::UndoArgs),
}

/// Runs `golem-forge sessions`.
pub fn cmd_sessions(args: SessionsArgs) -> Result<ExitCode, CommandError> {
    tracing::debug!(action = ?args.action, "sessions requested");
    let cwd = std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
    let action = args.action.unwrap_or(SessionsAction::List);
    let store = match find_program_root(&cwd) {
        Some(root) => SessionStore::new(&root),
        None => match programs_below(&cwd).as_slice() {
            [] => SessionStore::new(&cwd),
            [one] => {
                let note = format!(
                    "No program in this folder; sessions of the program in {}:",
                    relative(one, &cwd)
                );
                eprintln!("{}", clean_text(&note));
                SessionStore::new(one)
            }
            many => match several_programs(many, &cwd, &action)? {
                Some(store) => store,
                None => return Ok(ExitCode::SUCCESS),
            },
        },
    };
    match action {
        SessionsAction::List => list(&store),
        SessionsAction::Show { id, json: false } => {
            let transcript = load(&store, &id)?;
            print(&clean_text(&show::render(&transcript)))
        }
        SessionsAction::Export { id, format } => {
            let transcript = load(&store, &id)?;
            match format {
                export::ExportFormat::Markdown => {
                    print(&clean_text(&export::markdown(&transcript)))
                }
                // JSON, not a rendering: control characters are escaped by the encoder.
                export::ExportFormat::Json => {
                    print(&export::json(&transcript).map_err(|e| {
                        failed(format!("cannot encode session `{id}` as JSON: {e}"))
                    })?)
                }
                // JSON too: escaped by the encoder.
                export::ExportFormat::OtlpJson => print(
                    &otlp::otlp(&transcript)
                        .map_err(|e| failed(format!("cannot export session `{id}`: {e}")))?,
                ),
            }
        }
        SessionsAction::Show { id, json: true } => show_json(&store, &id),
        SessionsAction::Fork(args) => fork::cmd_fork(&store, args),
        SessionsAction::Undo(args) => undo::cmd_undo(&store, args),
        SessionsAction::Resume(args) => {
            let id = store.resolve(&args.id).map_err(session_error)?;
            resume::cmd_resume(args, &id)
        }
    }
}

/// Loads session `id`; a damaged transcript's error points at `sessions show ID --json`.
/// Lines of kinds this version does not know are skipped with one warning on stderr.
fn load(store: &SessionStore, id: &str) -> Result<golem_session::Transcript, CommandError> {
    let transcript = store.load(id).map_err(|err| match err {
        SessionError::Corrupt { .. } | SessionError::NotATranscript { .. } => session_error(err)
            .with_hint(format!(
                "Run `golem-forge sessions show {id} --json` to print the stored lines"
            )),
        other => session_error(other),
    })?;
    if let Some(warning) = transcript.unknown_lines_warning() {
        eprintln!("{}", clean_text(&format!("Warning: {warning}")));
    }
    Ok(transcript)
}

/// Prints the warnings of a scan: files skipped, then lines of listed sessions passed over.
fn warn_scan(scan: &SessionScan) {
    for skipped in &scan.skipped {
        let warning = format!("Warning: skipped {}: {}", skipped.name, skipped.reason);
        eprintln!("{}", clean_text(&warning));
    }
    for warning in scan.warnings() {
        eprintln!("{}", clean_text(&format!("Warning: {warning}")));
    }
}

/// How deep below the current folder `sessions` looks for programs that recorded sessions.
const SEARCH_DEPTH: usize = 3;

/// Folders never searched for programs (build output, dependencies).
const NOT_SEARCHED: &[&str] = &["target", "node_modules"];

/// Program roots with recorded sessions below `start` (at most [`SEARCH_DEPTH`] levels, hidden
/// folders and build output skipped), sorted.
fn programs_below(start: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut level = vec![start.to_path_buf()];
    for _ in 0..SEARCH_DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                if !is_dir || name.starts_with('.') || NOT_SEARCHED.contains(&name.as_ref()) {
                    continue;
                }
                let path = entry.path();
                if holds_program(&path) {
                    if SessionStore::new(&path).dir().is_dir() {
                        found.push(path);
                    }
                } else {
                    next.push(path);
                }
            }
        }
        level = next;
    }
    found.sort();
    found
}

/// `path` relative to `base`, for messages.
fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// No program here but several below: `list` lists each one's sessions under its folder (and
/// gives `None`); `show` and `export` take the store of the one program holding the id;
/// `resume` says where to run it (a resumed session runs its worker from the program's folder).
fn several_programs(
    roots: &[PathBuf],
    cwd: &Path,
    action: &SessionsAction,
) -> Result<Option<SessionStore>, CommandError> {
    let id = match action {
        SessionsAction::List => {
            let mut text = String::new();
            for root in roots {
                let scan = SessionStore::new(root).scan().map_err(session_error)?;
                warn_scan(&scan);
                text.push_str(&clean_text(&format!("{}:\n", relative(root, cwd))));
                if scan.sessions.is_empty() {
                    text.push_str("No sessions yet\n");
                } else {
                    text.push_str(&format!("{}\n", table(&scan.sessions)));
                }
                text.push('\n');
            }
            print(&text)?;
            return Ok(None);
        }
        SessionsAction::Show { id, .. } | SessionsAction::Export { id, .. } => id,
        SessionsAction::Fork(args) => &args.resume.id,
        SessionsAction::Resume(args) => &args.id,
        SessionsAction::Undo(args) => &args.id,
    };
    let holding: Vec<&PathBuf> = roots
        .iter()
        .filter(|root| SessionStore::new(root).resolve(id).is_ok())
        .collect();
    match (holding.as_slice(), action) {
        ([root], SessionsAction::Show { .. } | SessionsAction::Export { .. }) => {
            Ok(Some(SessionStore::new(root)))
        }
        ([root], _) => Err(CommandError::usage(format!(
            "session `{id}` belongs to the program in {}",
            relative(root, cwd)
        ))
        .with_hint(format!(
            "Resume it from there: cd {} && golem-forge sessions resume {id}",
            relative(root, cwd)
        ))),
        _ => {
            let names = roots
                .iter()
                .map(|root| relative(root, cwd))
                .collect::<Vec<_>>()
                .join(", ");
            Err(CommandError::usage(format!(
                "no program in this folder, and no single program below it holds session \
                 `{id}` (programs with sessions: {names})"
            ))
            .with_hint("Run `golem-forge sessions` in the program's folder"))
        }
    }
}

fn list(store: &SessionStore) -> Result<ExitCode, CommandError> {
    let scan = store.scan().map_err(session_error)?;
    warn_scan(&scan);
    if scan.sessions.is_empty() {
        let text = format!(
            "No sessions yet in {}\nSessions are recorded in the program's folder (the one with \
             golem-forge.config.yaml or .golem-forge/): run this there.\n",
            store.dir().display()
        );
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
    super::write_stdout(text)
        .map(|()| ExitCode::SUCCESS)
        .map_err(|e| failed(format!("cannot write to stdout: {e}")))
}

fn session_error(err: SessionError) -> CommandError {
    let message = err.to_string();
    match err {
        SessionError::NotFound { .. }
        | SessionError::Ambiguous { .. }
        | SessionError::InvalidId { .. } => CommandError::usage(message)
            .with_hint("Run `golem-forge sessions` to list the sessions"),
        SessionError::Locked { .. } => CommandError::usage(message),
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
