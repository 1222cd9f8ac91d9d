//! `golem-forge inbox`: the approvals that wait. A call that would ask is parked there by the
//! `defer` approval mode (`run`, `batch`, `mcp`, or `approval.mode: defer`); this command lists
//! the project's parked calls, shows one with its preview, and answers it. The session takes
//! the answer when it continues: at once with `--resume`, or later with `sessions resume ID`
//! (no input) or `batch resume ID` for a batch item. Storage is `golem_runtime::inbox`'s.
//! With `--queue` it is the queue's inbox (`golem_queue::inbox`), where an approval is bound to
//! the call it approves: `show` prints the call's digest, `approve N --call DIGEST` answers
//! only while the parked session would still run that call, and the consumer that continues
//! the item checks it again.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use golem_protocol::{InboxAnswer, InboxEntry, RememberScope, Risk, to_jsonl_line};
use golem_runtime::inbox::InboxStore;
use golem_session::{now_rfc3339, seconds_since};

use super::common::ApprovalArg;
use super::parked::{Continued, Resume, continue_entry};
use super::queue::{open_queue, password_note, queue_error, queue_words};
use super::run::{block_on, print_response, turn_exit};
use super::write_stdout;
use crate::cli_error::CommandError;
use crate::frontend::approval::render_request_body;
use crate::frontend::clean::clean_text;
use crate::frontend::screen::Screen;

/// List and answer the approvals that wait (calls parked by --approval defer)
///
/// With `--approval defer` (or `approval.mode: defer` in the program config) a call that needs
/// consent parks its session instead of being asked or denied; it waits here. `inbox` lists
/// them, `inbox show N` shows one with its preview, `inbox approve N` and `inbox deny N` answer
/// it. The session takes the answer when it continues: with `--resume` at once, else with
/// `golem-forge sessions resume ID` (no input) or, for a batch item, `golem-forge batch resume
/// BATCH`. The answered call runs once.
#[derive(Debug, Args)]
pub struct InboxArgs {
    #[command(subcommand)]
    action: Option<InboxAction>,

    /// Print the entries as JSON lines
    #[arg(long)]
    json: bool,

    /// The inbox of the batches on this Redis queue (redis://… or rediss://…) instead of this
    /// program's: parked items of `batch-worker`s on any machine; an answered item is
    /// continued by the next free consumer
    #[arg(long, global = true, value_name = "URL")]
    queue: Option<String>,
}

/// What to do with the inbox.
#[derive(Debug, Subcommand)]
enum InboxAction {
    /// List what waits (the default)
    List {
        /// Print the entries as JSON lines
        #[arg(long)]
        json: bool,
    },
    /// Show entry N: the call, its arguments and what it would change
    Show {
        /// The entry's number
        n: u64,
        /// Print the entry as JSON
        #[arg(long)]
        json: bool,
    },
    /// Approve entry N
    Approve {
        /// The entry's number
        n: u64,
        /// Also approve identical calls for the rest of the session, or matching calls in the
        /// project from now on (a rule in .golem-forge/approvals.yaml)
        #[arg(long, value_enum, value_name = "SCOPE")]
        remember: Option<RememberArg>,
        /// With --queue: approve only if the parked session would still run the call `inbox
        /// --queue show N` showed, named by the digest it printed
        #[arg(long, value_name = "DIGEST")]
        call: Option<String>,
        #[command(flatten)]
        resume: ResumeArgs,
    },
    /// Deny entry N; the model is told, with the note if given
    Deny {
        /// The entry's number
        n: u64,
        /// What the model is told (why, what to do instead)
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
        #[command(flatten)]
        resume: ResumeArgs,
    },
}

/// How far an approval given in the inbox reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RememberArg {
    /// Identical calls, for the rest of the session
    Session,
    /// Matching calls in this project, from now on
    Project,
}

/// Continuing the session at once.
#[derive(Debug, Args)]
struct ResumeArgs {
    /// Continue the parked session now (a batch item's result goes to its batch)
    #[arg(long)]
    resume: bool,

    /// With --resume: how further calls that need consent are decided [default: defer, so a
    /// second one waits in the inbox too]
    #[arg(long, value_enum, requires = "resume")]
    approval: Option<ApprovalArg>,

    /// With --resume: how much progress to show on stderr
    #[arg(long, value_enum, requires = "resume", default_value = "summary")]
    trace: super::common::TraceLevel,
}

/// Runs `golem-forge inbox`.
pub fn cmd_inbox(args: InboxArgs) -> Result<ExitCode, CommandError> {
    let cwd = std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
    let root = golem_runtime::config::program_root(&cwd);
    if let Some(url) = args.queue.as_deref() {
        let action = args.action.unwrap_or(InboxAction::List { json: args.json });
        return block_on(queued(url, action, args.json))?;
    }
    let store = InboxStore::new(&root);
    let inbox_error = |e: golem_runtime::inbox::InboxError| CommandError::usage(e.to_string());
    match args.action.unwrap_or(InboxAction::List { json: args.json }) {
        InboxAction::List { json } => {
            let entries = store.list().map_err(inbox_error)?;
            let text = if json || args.json {
                json_lines(&entries)?
            } else {
                render_list(&entries, "", "")
            };
            print(&text)
        }
        InboxAction::Show { n, json } => {
            let entry = store.get(n).map_err(inbox_error)?;
            let text = if json || args.json {
                json_lines(std::slice::from_ref(&entry))?
            } else {
                render_entry(&entry, &Screen::stdout(), "", None)
            };
            print(&text)
        }
        InboxAction::Approve {
            n,
            remember,
            call,
            resume,
        } => {
            if call.is_some() {
                return Err(CommandError::usage(
                    "--call binds an approval on a queue: it goes with --queue URL",
                ));
            }
            let remember = match remember {
                None => RememberScope::None,
                Some(RememberArg::Session) => RememberScope::Session,
                Some(RememberArg::Project) => RememberScope::Project,
            };
            let entry = store.answer(n, true, remember, None).map_err(inbox_error)?;
            answered(&entry, &resume, &root)
        }
        InboxAction::Deny { n, note, resume } => {
            let entry = store
                .answer(n, false, RememberScope::None, note)
                .map_err(inbox_error)?;
            answered(&entry, &resume, &root)
        }
    }
}

/// `inbox --queue URL …`: the queue's inbox.
async fn queued(url: &str, action: InboxAction, json_all: bool) -> Result<ExitCode, CommandError> {
    let queue = open_queue(url).await?;
    // Every command a hint prints names this queue, so that it is pasted as it stands.
    let words = format!(" {}", queue_words(&queue));
    let note = password_note(&queue);
    let queue_error = |e: golem_queue::QueueError| {
        let missing = matches!(e, golem_queue::QueueError::NoEntry(_));
        let error = queue_error(e);
        if missing {
            error.with_hint(format!("list what waits: golem-forge inbox{words}{note}"))
        } else {
            error
        }
    };
    let answer = |approved: bool, remember: RememberScope, note: Option<String>| InboxAnswer {
        approved,
        remember,
        note,
        answered: now_rfc3339(),
    };
    let (n, given, shown) = match action {
        InboxAction::List { json } => {
            let entries = golem_queue::inbox::list(&queue)
                .await
                .map_err(queue_error)?;
            return print(&if json || json_all {
                json_lines(&entries)?
            } else {
                render_list(&entries, &words, &note)
            });
        }
        InboxAction::Show { n, json } => {
            let entry = golem_queue::inbox::get(&queue, n)
                .await
                .map_err(queue_error)?;
            let binding = golem_queue::inbox::binding_of(&queue, &entry)
                .await
                .map_err(queue_error)?;
            return print(&if json || json_all {
                bound_json(&entry, &binding)?
            } else {
                render_entry(&entry, &Screen::stdout(), &words, Some(&binding))
            });
        }
        InboxAction::Approve {
            n,
            remember,
            call,
            resume,
        } => {
            queued_resume_refused(&resume)?;
            let remember = match remember {
                None => RememberScope::None,
                Some(RememberArg::Session) => RememberScope::Session,
                Some(RememberArg::Project) => {
                    return Err(CommandError::usage(
                        "--remember project writes a rule on one machine; with --queue, add the \
                         rule to the program's .golem-forge/approvals.yaml that every consumer has",
                    ));
                }
            };
            (n, answer(true, remember, None), call)
        }
        InboxAction::Deny { n, note, resume } => {
            queued_resume_refused(&resume)?;
            (n, answer(false, RememberScope::None, note), None)
        }
    };
    let shown_again = |e: golem_queue::QueueError| {
        let unbound = matches!(
            e,
            golem_queue::QueueError::NotBound { .. }
                | golem_queue::QueueError::ChangedSinceShown { .. }
        );
        let error = queue_error(e);
        if unbound {
            error.with_hint(format!(
                "see what it would run now: golem-forge inbox{words} show {n}{note}; deny it: \
                 golem-forge inbox{words} deny {n}"
            ))
        } else {
            error
        }
    };
    let (entry, done, call) = golem_queue::inbox::answer(&queue, n, &given, shown.as_deref())
        .await
        .map_err(shown_again)?;
    eprintln!(
        "{} {n}: {}; {}",
        if given.approved { "approved" } else { "denied" },
        clean_text(&match &call {
            Some(call) => format!("{} (call {call})", the_call(&entry)),
            None => entry.request.tool_name.clone(),
        }),
        match done {
            golem_queue::inbox::Answered::Resumed => match &entry.batch {
                Some(item) => format!(
                    "{} goes back on the queue; the next free consumer continues it (start \
                     one: golem-forge batch-worker{words} --name {}{note})",
                    waits_in(&entry),
                    item.batch
                ),
                None => format!(
                    "{} goes back on the queue; the next free consumer continues it",
                    waits_in(&entry)
                ),
            },
            golem_queue::inbox::Answered::Waiting =>
                "other calls of its session wait for an answer too".to_owned(),
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// The call an entry shows, in one line: its tool and its arguments as JSON, cut short.
fn the_call(entry: &InboxEntry) -> String {
    let args = serde_json::to_string(&entry.request.args).unwrap_or_default();
    format!(
        "{}({})",
        entry.request.tool_name,
        golem_core::text::fold(&args, 160)
    )
}

/// `inbox --queue show N --json`: the entry, and `call` (its digest, what an approval binds)
/// or `unbound` (why it cannot be approved).
fn bound_json(
    entry: &InboxEntry,
    binding: &Result<String, golem_queue::consent::Unbound>,
) -> Result<String, CommandError> {
    let failed = |e: serde_json::Error| CommandError::usage(format!("cannot print an entry: {e}"));
    let mut value = serde_json::to_value(entry).map_err(failed)?;
    if let serde_json::Value::Object(map) = &mut value {
        match binding {
            Ok(call) => map.insert("call".into(), call.clone().into()),
            Err(unbound) => map.insert("unbound".into(), unbound.to_string().into()),
        };
    }
    let mut line = serde_json::to_string(&value).map_err(failed)?;
    line.push('\n');
    Ok(line)
}

/// `--resume` is this machine's; a queued item is continued by a consumer.
fn queued_resume_refused(resume: &ResumeArgs) -> Result<(), CommandError> {
    if resume.resume {
        return Err(CommandError::usage(
            "--resume continues a session on this machine; with --queue, a consumer continues it",
        ));
    }
    Ok(())
}

fn print(text: &str) -> Result<ExitCode, CommandError> {
    write_stdout(text).map_err(|e| CommandError::usage(format!("cannot write the output: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

fn json_lines(entries: &[InboxEntry]) -> Result<String, CommandError> {
    let mut out = String::new();
    for entry in entries {
        let line = to_jsonl_line(entry)
            .map_err(|e| CommandError::usage(format!("cannot print an entry: {e}")))?;
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// Where the parked call waits: its batch item, else its session.
pub(super) fn waits_in(entry: &InboxEntry) -> String {
    match &entry.batch {
        Some(batch) => format!("batch {} item {}", batch.batch, batch.item),
        None => format!("session {}", entry.session),
    }
}

/// `42s`, `5m`, `3h`, `2d`: how long ago `rfc3339` was.
fn age(rfc3339: &str) -> String {
    match seconds_since(rfc3339) {
        None => "?".to_owned(),
        Some(s) if s < 60 => format!("{s}s"),
        Some(s) if s < 3600 => format!("{}m", s / 60),
        Some(s) if s < 86_400 => format!("{}h", s / 3600),
        Some(s) => format!("{}d", s / 86_400),
    }
}

fn risk_name(risk: Risk) -> &'static str {
    match risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
    }
}

/// The list `inbox` prints: one line per entry, then the commands that see and answer the
/// first unanswered one (`queue`: the ` --queue URL` each names, `note` what it needs).
fn render_list(entries: &[InboxEntry], queue: &str, note: &str) -> String {
    if entries.is_empty() {
        return "nothing waits for an approval\n".to_owned();
    }
    let mut text = String::new();
    for entry in entries {
        let state = match &entry.answer {
            None => String::new(),
            Some(answer) if answer.approved => " [approved; continues when resumed]".to_owned(),
            Some(_) => " [denied; continues when resumed]".to_owned(),
        };
        let description = golem_core::text::fold(&entry.request.description, 80);
        text.push_str(&format!(
            "{:>4}  {}  risk {}  {}  {}  {} ago{state}\n      {}\n",
            entry.id,
            clean_text(&entry.request.tool_name),
            risk_name(entry.request.risk),
            clean_text(&entry.worker),
            clean_text(&waits_in(entry)),
            age(&entry.created),
            clean_text(&description),
        ));
    }
    if let Some(first) = entries.iter().find(|entry| entry.answer.is_none()) {
        let n = first.id;
        text.push_str(&format!(
            "see one:  golem-forge inbox{queue} show {n}{note}\napprove:  golem-forge \
             inbox{queue} approve {n}\ndeny:     golem-forge inbox{queue} deny {n}   (--note \
             TEXT tells the model why)\n"
        ));
    }
    text
}

/// What `inbox show N` prints: the approval box, where the call waits, and the commands that
/// answer it (`queue`: the ` --queue URL` they name). On a queue, `binding` says whether the
/// parked session would run exactly this call: its digest, which the approve command names,
/// or why it cannot be approved (then only denying is offered).
fn render_entry(
    entry: &InboxEntry,
    screen: &Screen,
    queue: &str,
    binding: Option<&Result<String, golem_queue::consent::Unbound>>,
) -> String {
    let mut text = render_request_body(&entry.request, screen);
    let bar = screen.dim("│");
    text.push_str(&format!(
        "{bar} {} of worker {}, parked {} ago\n",
        clean_text(&waits_in(entry)),
        clean_text(&entry.worker),
        age(&entry.created)
    ));
    let deny = format!(
        "deny:    golem-forge inbox{queue} deny {n}   (--note TEXT tells the model why)",
        n = entry.id
    );
    let bound = match binding {
        None => String::new(),
        Some(Ok(call)) => {
            text.push_str(&format!(
                "{bar} call {call} (an approval is bound to exactly this call)\n"
            ));
            format!(" --call {call}")
        }
        Some(Err(unbound)) => {
            text.push_str(&format!(
                "{bar} {}\n",
                screen.paint(
                    crate::frontend::screen::Tone::Bold,
                    &clean_text(&format!("this call cannot be approved: {unbound}"))
                )
            ));
            if entry.answer.is_none() {
                text.push_str(&format!("└ {}\n", screen.dim(&deny)));
                return text;
            }
            String::new()
        }
    };
    let last = match &entry.answer {
        None => format!(
            "approve: golem-forge inbox{queue} approve {n}{bound}   (--remember {scopes} \
             approves alike calls too)\n  {deny}",
            n = entry.id,
            scopes = if queue.is_empty() {
                "session|project"
            } else {
                "session"
            },
        ),
        Some(answer) => format!(
            "{} {}; the session takes it when it continues",
            if answer.approved {
                "approved"
            } else {
                "denied"
            },
            answer.answered
        ),
    };
    text.push_str(&format!("└ {}\n", screen.dim(&last)));
    text
}

/// After an answer: says so, and with `--resume` continues the session (a batch item through
/// its batch, so that its result is recorded there).
fn answered(
    entry: &InboxEntry,
    resume: &ResumeArgs,
    root: &Path,
) -> Result<ExitCode, CommandError> {
    let verdict = match &entry.answer {
        Some(answer) if answer.approved => "approved",
        Some(_) | None => "denied",
    };
    let how = match &entry.batch {
        Some(batch) => format!("golem-forge batch resume {}", batch.batch),
        None => format!("golem-forge sessions resume {}", entry.session),
    };
    if !resume.resume {
        eprintln!(
            "{verdict} {}: {}; it runs when the session continues ({how})",
            entry.id,
            clean_text(&entry.request.tool_name)
        );
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{verdict} {}: {}; continuing {}",
        entry.id,
        clean_text(&entry.request.tool_name),
        waits_in(entry)
    );
    let how = Resume {
        approval: resume.approval.unwrap_or(ApprovalArg::Defer),
        trace: resume.trace,
        answers: std::io::stdin().is_terminal(),
        ctrl_c: true,
    };
    match block_on(continue_entry(root, entry, &how))?? {
        Continued::Turn { session, end } => {
            if let Some(end) = &end {
                print_response(end);
            }
            turn_exit(end, &session, false)
        }
        Continued::Item(result) => {
            let line = to_jsonl_line(&result)
                .map_err(|e| CommandError::usage(format!("cannot print the result: {e}")))?;
            print(&format!("{line}\n"))?;
            Ok(ExitCode::from(match result.status {
                golem_protocol::ItemStatus::Completed => 0,
                golem_protocol::ItemStatus::WaitingApproval => 4,
                golem_protocol::ItemStatus::BudgetExceeded => 3,
                golem_protocol::ItemStatus::Interrupted => 130,
                golem_protocol::ItemStatus::Failed => 1,
            }))
        }
    }
}
