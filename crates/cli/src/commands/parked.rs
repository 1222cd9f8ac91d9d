//! Continuing a parked session once its inbox entry is answered, the one way both
//! `golem-forge inbox approve|deny --resume` and the inbox page (`serve --inbox`) do it: a plain
//! session is resumed with no input (`continueTurn`), a batch item goes on through its batch
//! (under the batch's lock and with the options it was started with, as `batch resume` would)
//! so that its result is recorded there, and in its `--output` file.

use std::path::Path;

use golem_batch::store::ResultWriter;
use golem_batch::{BatchSettings, BatchStore, Report, run_items};
use golem_core::approval::ApprovalMode;
use golem_protocol::{InboxEntry, ItemResult};
use tokio_util::sync::CancellationToken;

use super::common::{ApprovalArg, TraceLevel, WorkerOptions};
use super::run::{TurnEnd, TurnHow, drive_turn};
use crate::cli_error::CommandError;
use crate::session::{SessionChoice, open_host};

/// How an answered entry's session goes on.
pub(super) struct Resume {
    /// How further calls that need consent are decided (`defer`: they wait in the inbox too).
    pub(super) approval: ApprovalArg,
    /// How much progress the stderr trace shows.
    pub(super) trace: TraceLevel,
    /// Whether approvals and tools' questions are asked at this terminal (never under
    /// `serve`).
    pub(super) answers: bool,
    /// Whether Ctrl+C interrupts the turn (off under `serve`, which owns Ctrl+C).
    pub(super) ctrl_c: bool,
}

/// What continuing gave.
pub(super) enum Continued {
    /// A plain session's turn ended (`None`: the session ended before it, by Ctrl+C).
    Turn {
        /// The session's id.
        session: String,
        /// How its turn ended.
        end: Option<TurnEnd>,
    },
    /// A batch item ran again; its result is recorded in its batch.
    Item(Box<ItemResult>),
}

/// Continues the session of the answered `entry` of the inbox of the program at `root`.
pub(super) async fn continue_entry(
    root: &Path,
    entry: &InboxEntry,
    resume: &Resume,
) -> Result<Continued, CommandError> {
    match &entry.batch {
        Some(item) => continue_item(
            root,
            &item.batch,
            &item.item,
            &entry.session,
            ApprovalMode::from(resume.approval),
        )
        .await
        .map(|result| Continued::Item(Box::new(result))),
        None => {
            let options = WorkerOptions {
                model: None,
                approval: Some(resume.approval),
                trace: resume.trace,
                record: None,
                budget_tokens: None,
                budget_cost: None,
                budget_time: None,
            };
            let host = open_host(SessionChoice::Resume(&entry.session), &options, None, true)?;
            let session = host.session_id();
            let how = TurnHow {
                json: false,
                answers: resume.answers,
                trace: resume.trace,
                ctrl_c: resume.ctrl_c,
                print_answer: false,
            };
            let end = drive_turn(host, None, &how).await;
            Ok(Continued::Turn { session, end })
        }
    }
}

/// Continues the parked item `item` of batch `batch_id` (session `session`) as `batch resume`
/// would, with the batch's options (`approval` where the batch recorded none), and records its
/// result in the batch.
async fn continue_item(
    root: &Path,
    batch_id: &str,
    item: &str,
    session: &str,
    approval: ApprovalMode,
) -> Result<ItemResult, CommandError> {
    let batch_error = |e: golem_batch::BatchError| CommandError::usage(e.to_string());
    let batch = BatchStore::new(root).open(batch_id).map_err(batch_error)?;
    let _lock = batch.lock().map_err(|e| {
        CommandError::usage(e.to_string()).with_hint(format!(
            "the batch is running; its item continues there, or later with `golem-forge batch \
             resume {batch_id}`"
        ))
    })?;
    let Some(found) = batch
        .items()
        .map_err(batch_error)?
        .into_iter()
        .find(|i| i.id == item)
    else {
        return Err(CommandError::usage(format!(
            "batch {batch_id} has no item {item}"
        )));
    };
    let attempt = batch
        .latest()
        .map_err(batch_error)?
        .get(item)
        .map_or(1, |last| last.attempt + 1);
    // A batch of an older golem-forge recorded no options: it goes on as it always did.
    let options = batch.meta.options.clone().unwrap_or_else(|| {
        golem_batch::GivenOptions {
            approval: Some(approval),
            ..Default::default()
        }
        .to_options()
    });
    let mut settings = BatchSettings {
        parked: [(item.to_owned(), session.to_owned())].into(),
        concurrency: 1,
        retry: 0,
        ..super::batch::settings(&batch, &options, root)?
    };
    settings.session.approval = Some(options.approval.unwrap_or(approval));
    let mut writer = batch.results_writer().map_err(batch_error)?;
    let mut output = match &options.output {
        Some(path) => Some(ResultWriter::open(path).map_err(batch_error)?),
        None => None,
    };
    let mut written = Ok(());
    let mut last = None;
    let outcome = run_items(
        vec![(found, attempt)],
        &settings,
        &CancellationToken::new(),
        |report| {
            if let Report::Finished { result, .. } = report {
                written = writer.append(result).and_then(|()| match &mut output {
                    Some(output) => output.append(result),
                    None => Ok(()),
                });
                last = Some(result.clone());
            }
        },
    )
    .await;
    written.map_err(batch_error)?;
    last.ok_or_else(|| {
        CommandError::usage(if outcome.budget_spent {
            format!("batch {batch_id}'s budget is spent, so its item {item} does not run")
        } else {
            "the item did not run".to_owned()
        })
    })
}
