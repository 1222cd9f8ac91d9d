//! `golem-forge batch … --queue URL`: a batch on a Redis queue instead of this machine. `batch
//! WORKER --input F --queue URL --name NAME` puts its items there for `batch-worker`
//! processes (enqueueing the same items again under the name adds nothing; with tracing on,
//! the batch's span and each item's trace context go with it: `golem_queue::trace`); `batch
//! status NAME --queue URL` and `batch results NAME --queue URL` read it from any machine.

use std::path::{Component, Path};
use std::process::ExitCode;

use golem_batch::{BatchMeta, BatchSpan};
use golem_core::approval::ApprovalMode;
use golem_protocol::to_jsonl_line;
use golem_queue::{Enqueued, QueueMeta, QueueStatus, enqueue_traced, state};
use golem_session::now_rfc3339;

use super::super::queue::{open_queue, password_note, queue_error, queue_words};
use super::super::run::block_on;
use super::super::write_stdout;
use crate::cli_error::CommandError;
use crate::frontend::clean::clean_text;

/// The `batch` options a queued batch takes.
pub(super) struct QueuedOptions<'a> {
    /// `--name`: the batch's name on the queue.
    pub(super) name: Option<&'a str>,
    /// `--model` for every item.
    pub(super) model: Option<&'a str>,
    /// `--approval` for every item.
    pub(super) approval: Option<ApprovalMode>,
    /// `--max-iterations` of every item's run.
    pub(super) max_iterations: Option<u32>,
    /// `--max-deliveries`.
    pub(super) max_deliveries: u32,
    /// `--json`.
    pub(super) json: bool,
}

/// What to do with a queued batch.
pub(super) enum QueuedCommand<'a> {
    /// Put a batch of this worker on the queue.
    Enqueue {
        /// The worker file (absolute).
        worker: &'a Path,
        /// Its items.
        items: &'a [golem_batch::BatchItem],
        /// The program root consumers find the worker under.
        root: &'a Path,
    },
    /// `batch status NAME`.
    Status(&'a str),
    /// `batch results NAME`.
    Results(&'a str),
}

/// Runs `command` on the queue `url`.
pub(super) fn run_queued(
    args: &QueuedOptions<'_>,
    url: &str,
    command: QueuedCommand<'_>,
) -> Result<ExitCode, CommandError> {
    block_on(async {
        let queue = open_queue(url).await?;
        match command {
            QueuedCommand::Enqueue {
                worker,
                items,
                root,
            } => {
                let Some(name) = args.name else {
                    return Err(CommandError::usage(
                        "`batch WORKER --queue URL` needs --name NAME",
                    )
                    .with_hint(
                        "add --name and a name of your choosing (letters, digits, `.`, `_`, \
                             `-`): consumers find the batch by it",
                    ));
                };
                let meta = QueueMeta {
                    worker: worker_in_root(worker, root)?,
                    input_hash: BatchMeta::new(worker.to_owned(), items).input_hash,
                    items: items.len(),
                    queued: now_rfc3339(),
                    model: args.model.map(str::to_owned),
                    approval: args.approval,
                    max_iterations: args.max_iterations,
                    max_deliveries: args.max_deliveries,
                };
                // Traced (when tracing is on, as the worker's sessions would start it): the
                // batch's span, and each item's own trace, which travels with it.
                let span = BatchSpan::for_worker(worker, name);
                let done = enqueue_traced(&queue, name, &meta, items, span)
                    .await
                    .map_err(queue_error)?;
                let line = match done {
                    Enqueued::Added => format!(
                        "batch {name}: {} item{} queued on {}; run consumers with: golem-forge \
                         batch-worker {} --name {name}{}",
                        items.len(),
                        if items.len() == 1 { "" } else { "s" },
                        queue.shown(),
                        queue_words(&queue),
                        password_note(&queue)
                    ),
                    Enqueued::AlreadyThere(_) => format!(
                        "batch {name} is on {} already with these items; nothing was added",
                        queue.shown()
                    ),
                };
                eprintln!("{}", clean_text(&line));
                Ok(ExitCode::SUCCESS)
            }
            QueuedCommand::Status(name) => {
                let status = state::status(&queue, name).await.map_err(queue_error)?;
                if args.json {
                    let json = serde_json::to_string(&status).map_err(|e| {
                        CommandError::usage(format!("cannot print the status: {e}"))
                    })?;
                    return print(&format!("{json}\n"));
                }
                print(&clean_text(&render_status(&status, queue.shown())))
            }
            QueuedCommand::Results(name) => {
                let results = state::results(&queue, name).await.map_err(queue_error)?;
                let mut out = String::new();
                for result in &results {
                    let line = to_jsonl_line(result)
                        .map_err(|e| CommandError::usage(format!("cannot print a result: {e}")))?;
                    out.push_str(&line);
                    out.push('\n');
                }
                print(&out)
            }
        }
    })?
}

fn print(text: &str) -> Result<ExitCode, CommandError> {
    write_stdout(text).map_err(|e| CommandError::usage(format!("cannot write to stdout: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

/// `worker` as a `/`-separated path under `root`, which every consumer has.
fn worker_in_root(worker: &Path, root: &Path) -> Result<String, CommandError> {
    let outside = || {
        CommandError::usage(format!(
            "the worker {} is outside the program root {}; consumers find it under their --root",
            worker.display(),
            root.display()
        ))
    };
    let relative = worker.strip_prefix(root).map_err(|_| outside())?;
    let parts = relative
        .components()
        .map(|c| match c {
            Component::Normal(part) => part.to_str().map(str::to_owned),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(outside)?;
    Ok(parts.join("/"))
}

/// What `batch status NAME --queue URL` prints: a row per state, each item counted in one (the
/// dead letters are failed results, listed under them).
fn render_status(status: &QueueStatus, shown: &str) -> String {
    let meta = &status.meta;
    let mut text = format!(
        "batch {} on {shown}\n  worker            {}\n  queued            {}\n  items             {}\n",
        status.name, meta.worker, meta.queued, meta.items
    );
    for (name, count) in &status.results {
        text.push_str(&format!("  {name:<17} {count}\n"));
    }
    let rows = [
        ("waitingApproval", status.waiting_approval),
        ("running", status.in_flight),
        ("waiting", status.queued),
    ];
    for (name, count) in rows {
        text.push_str(&format!("  {name:<17} {count}\n"));
    }
    if !status.dead_letters.is_empty() {
        text.push_str("  dead letters (failed, given up):\n");
    }
    for dead in &status.dead_letters {
        text.push_str(&format!(
            "    {}  after {} deliveries: {}\n",
            dead.id, dead.deliveries, dead.error
        ));
    }
    text.push_str(&format!("  consumers         {}\n", status.consumers.len()));
    for consumer in &status.consumers {
        text.push_str(&format!(
            "    {}  holding {}, last seen {:.1} s ago\n",
            consumer.name,
            consumer.holding,
            consumer.idle_ms as f64 / 1000.0
        ));
    }
    text
}
