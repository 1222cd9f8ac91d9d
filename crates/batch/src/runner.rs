//! Running a batch's items: each a fresh session of the worker (its own transcript, the
//! worker's `budget:` per item), at most `concurrency` at a time, headless (a call that would
//! ask is denied, as in a headless `run`). A failed item is tried again up to `retry` times.
//! The caller hears of each run of an item as it starts, and gets each result as its item
//! finishes, to append it. The batch's own budget
//! (tokens, cost, counting what earlier runs of the batch spent) stops new items once it is
//! spent; running ones finish. Cancelling stops new
//! items and interrupts the running ones. The process's rate gate (`golem_llm::rate`) is
//! installed for the pool: a rate-limit answer to any item pauses every item's requests and
//! narrows how many items run at once, which climbs back as requests get through. With
//! tracing on, each run of a batch is a span its items' traces link to (`crate::trace`).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

use golem_protocol::{
    ActionEvent, BatchItemRef, DisplayEvent, ItemResult, ItemStatus, SessionEndReason, TokenUsage,
    TurnStatus,
};
use golem_runtime::budget::total_tokens;
use golem_runtime::host::{HostOptions, HostWorker, SessionHost};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::input::BatchItem;
use crate::store::Spent;
use crate::trace::BatchSpan;

/// Limits of the whole batch; absent ones have none.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BatchBudget {
    /// Tokens of every kind, all items together.
    pub tokens: Option<u64>,
    /// US dollars, all items together (items whose model has no price count nothing).
    pub cost_usd: Option<f64>,
}

/// How to run the items.
#[derive(Debug, Clone)]
pub struct BatchSettings {
    /// Each item's session: the worker, the model, the approval mode, … (`worker` and
    /// `instructions` are set per item).
    pub session: HostOptions,
    /// The worker file.
    pub worker: PathBuf,
    /// The program's root (where parked items' sessions are).
    pub program_root: PathBuf,
    /// Items running at once (at least 1).
    pub concurrency: usize,
    /// How many more times a failed item is run.
    pub retry: u32,
    /// The batch's own limits.
    pub budget: BatchBudget,
    /// What earlier runs of the batch spent, counted against `budget`.
    pub spent_before: Spent,
    /// The batch's id, named by the calls its items park in the approval inbox.
    pub batch_id: String,
    /// Items parked waiting for an approval, by id, with their session: these continue that
    /// session (the answered call runs, then the model goes on) instead of starting afresh.
    pub parked: HashMap<String, String>,
}

/// Where a batch stands, after each item.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Items of this run.
    pub total: usize,
    /// Items that completed.
    pub completed: usize,
    /// Items that failed (after their retries).
    pub failed: usize,
    /// Items that ended otherwise: their budget, an interrupt.
    pub other: usize,
    /// Items that wait for an approval.
    pub waiting_approval: usize,
    /// Items running now.
    pub running: usize,
    /// Tokens used so far.
    pub usage: TokenUsage,
    /// US dollars spent so far, when a price is known.
    pub cost: Option<f64>,
}

impl Progress {
    /// Items that ended, however they ended.
    pub fn finished(&self) -> usize {
        self.completed + self.failed + self.other + self.waiting_approval
    }
}

/// How a run of a batch ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchOutcome {
    /// Where it stands at the end.
    pub progress: Progress,
    /// Whether the batch's budget stopped it before every item ran.
    pub budget_spent: bool,
    /// Whether it was cancelled.
    pub cancelled: bool,
    /// Rate-limit answers the pool got (each paused it and narrowed it).
    pub rate_limited: u64,
}

/// What [`run_items`] tells its caller as the batch runs.
#[derive(Debug, Clone, Copy)]
pub enum Report<'a> {
    /// A run of an item starts (a retry of a failed item is another run, `attempt` one more).
    Started {
        /// The item.
        item: &'a BatchItem,
        /// Which run of the item this is (1 for the first).
        attempt: u32,
    },
    /// An item ended (its last run, after any retries).
    Finished {
        /// Its result, to be appended.
        result: &'a ItemResult,
        /// Where the batch stands after it.
        progress: &'a Progress,
    },
}

/// Runs `items` (each with its attempt number) by `settings`, telling `report` as each run of
/// an item starts and as each item ends. When tracing is on (`crate::trace`), the run is the
/// span `batch <id>`, sent as it ends, and every item's session links to it (besides the
/// links `settings.session.trace` names).
pub async fn run_items(
    items: Vec<(BatchItem, u32)>,
    settings: &BatchSettings,
    cancel: &CancellationToken,
    mut report: impl FnMut(Report<'_>),
) -> BatchOutcome {
    let mut queue: VecDeque<(BatchItem, u32)> = items.into();
    let mut progress = Progress {
        total: queue.len(),
        ..Progress::default()
    };
    let mut outcome = BatchOutcome {
        budget_spent: spent(&settings.budget, &settings.spent_before, &progress),
        ..BatchOutcome::default()
    };
    // When tracing is on, this run of the batch is a span, and each item's session a trace
    // of its own linked to it.
    let span = BatchSpan::for_worker(&settings.worker, &settings.batch_id);
    let mut session = settings.session.clone();
    if let Some(span) = &span {
        session.trace.links.push(span.ids());
    }
    let mut running: JoinSet<(BatchItem, u32, ItemResult)> = JoinSet::new();
    let concurrency = settings.concurrency.max(1);
    let gate = golem_llm::rate::install(concurrency);
    loop {
        while running.len() < concurrency.min(gate.width())
            && !cancel.is_cancelled()
            && !outcome.budget_spent
            && let Some((item, attempt)) = queue.pop_front()
        {
            let parked = settings.parked.get(&item.id).cloned();
            let options = HostOptions {
                worker: match &parked {
                    Some(session) => HostWorker::Resume {
                        program_root: settings.program_root.clone(),
                        id: session.clone(),
                    },
                    None => HostWorker::File(settings.worker.clone()),
                },
                instructions: item.instructions.clone(),
                batch_item: Some(BatchItemRef {
                    batch: settings.batch_id.clone(),
                    item: item.id.clone(),
                }),
                keeps_history: parked.is_some(),
                ..session.clone()
            };
            report(Report::Started {
                item: &item,
                attempt,
            });
            let cancel = cancel.clone();
            running.spawn(async move {
                let result = run_item(options, parked.is_some(), &item, attempt, &cancel).await;
                (item, attempt, result)
            });
        }
        progress.running = running.len();
        let Some(joined) = running.join_next().await else {
            break;
        };
        let (item, attempt, result) = match joined {
            Ok(done) => done,
            Err(e) => {
                tracing::error!(error = %e, "a batch item's task stopped unexpectedly");
                continue;
            }
        };
        if result.status == ItemStatus::Failed
            && attempt <= settings.retry
            && !cancel.is_cancelled()
        {
            tracing::info!(id = %item.id, attempt, "the item failed; trying it again");
            queue.push_back((item, attempt + 1));
            continue;
        }
        progress.usage.add(&result.usage);
        if let Some(cost) = result.cost {
            progress.cost = Some(progress.cost.unwrap_or(0.0) + cost);
        }
        match result.status {
            ItemStatus::Completed => progress.completed += 1,
            ItemStatus::Failed => progress.failed += 1,
            ItemStatus::BudgetExceeded | ItemStatus::Interrupted => progress.other += 1,
            ItemStatus::WaitingApproval => progress.waiting_approval += 1,
        }
        progress.running = running.len();
        outcome.budget_spent |= spent(&settings.budget, &settings.spent_before, &progress);
        report(Report::Finished {
            result: &result,
            progress: &progress,
        });
    }
    outcome.cancelled = cancel.is_cancelled();
    outcome.rate_limited = gate.limited_count();
    outcome.progress = progress;
    if let Some(span) = span {
        span.end_run(&outcome.progress);
    }
    outcome
}

/// Whether `before` and `progress` together have used up `budget`.
fn spent(budget: &BatchBudget, before: &Spent, progress: &Progress) -> bool {
    let tokens = budget
        .tokens
        .is_some_and(|limit| total_tokens(&before.usage) + total_tokens(&progress.usage) >= limit);
    let cost = budget
        .cost_usd
        .is_some_and(|limit| before.cost.unwrap_or(0.0) + progress.cost.unwrap_or(0.0) >= limit);
    tokens || cost
}

/// Runs one item as a session of its own (`continues`: the session in `options` was parked
/// and goes on with no new input); whatever happens, a result. The caller installs the
/// process's rate gate when items run side by side.
pub async fn run_item(
    options: HostOptions,
    continues: bool,
    item: &BatchItem,
    attempt: u32,
    cancel: &CancellationToken,
) -> ItemResult {
    let mut result = ItemResult::failed(&item.id, attempt);
    let host = match SessionHost::open(options) {
        Ok(host) => host,
        Err(e) => {
            result.error = Some(format!("the worker cannot start: {e}"));
            return result;
        }
    };
    result.session = Some(host.session_id());
    let mut attachment = host.attach(false);
    let running = host.start();
    attachment.send(if continues {
        ActionEvent::ContinueTurn {}
    } else {
        ActionEvent::UserInput {
            request_id: None,
            content: item.input.clone(),
        }
    });
    let mut interrupted = false;
    loop {
        let event = tokio::select! {
            event = attachment.recv() => event,
            () = cancel.cancelled(), if !interrupted => {
                interrupted = true;
                attachment.send(ActionEvent::EndSession {
                    reason: Some(SessionEndReason::Interrupted),
                });
                continue;
            }
        };
        match event {
            Some(DisplayEvent::TurnEnded {
                status,
                response,
                output,
                error,
                usage,
                cost,
            }) => {
                result.status = match status {
                    TurnStatus::Completed => ItemStatus::Completed,
                    TurnStatus::Failed => ItemStatus::Failed,
                    TurnStatus::Interrupted => ItemStatus::Interrupted,
                    TurnStatus::BudgetExceeded => ItemStatus::BudgetExceeded,
                    TurnStatus::WaitingApproval => ItemStatus::WaitingApproval,
                };
                result.answer = match status {
                    TurnStatus::Completed => response.unwrap_or_default(),
                    TurnStatus::Failed
                    | TurnStatus::Interrupted
                    | TurnStatus::BudgetExceeded
                    | TurnStatus::WaitingApproval => String::new(),
                };
                result.output = output;
                result.error = error;
                result.usage = usage;
                result.cost = cost;
                attachment.send(ActionEvent::EndSession { reason: None });
            }
            Some(DisplayEvent::SessionEnded { usage, cost, .. }) => {
                if interrupted && result.status != ItemStatus::Completed {
                    result.status = ItemStatus::Interrupted;
                    result.error = Some("the batch was interrupted".to_owned());
                    if let Some(usage) = usage {
                        result.usage = usage;
                    }
                    result.cost = cost.or(result.cost);
                }
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    running.closed().await;
    result
}
