//! `golem-forge batch`: a worker over many items (one JSON line each), each a fresh session, a
//! few at a time, with the results appended as items finish (`golem_batch`). The same command
//! again, or `batch resume ID`, runs only what is not completed, with the options the batch
//! was started with (`options`); `batch status`, `results` and `list` read a batch. `--json`
//! prints the batch's events on stdout instead of the progress on stderr
//! (`golem_protocol::BatchEvent`). Exit codes: 0 every item completed, 1 some failed, 3 the
//! batch's budget ran out, 4 some wait for an approval, 130 interrupted, 2 usage or input
//! errors (nothing ran).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use golem_batch::{
    Batch, BatchBudget, BatchError, BatchItem, BatchMeta, BatchOptions, BatchOutcome,
    BatchSettings, BatchStore, EachError, GivenOptions, Report, ZoneDir, items_for_each,
    parse_items, run_items,
};
use golem_core::approval::ApprovalMode;
use golem_protocol::{BatchEvent, ItemStatus, to_jsonl_line};
use golem_runtime::config::ProgramConfig;
use golem_runtime::host::{HostOptions, HostWorker};
use golem_runtime::registry::resolve_worker_arg;
use golem_runtime::worker::load_worker;
use tokio_util::sync::CancellationToken;

use self::display::BatchDisplay;
use self::queued::{QueuedCommand, QueuedOptions, run_queued};
use super::common::ApprovalArg;
use super::run::block_on;
use super::write_stdout;
use crate::cli_error::CommandError;
use crate::frontend::clean::clean_text;

mod display;
mod options;
mod queued;

/// The words that name a command on batches rather than a worker.
const COMMANDS: [&str; 4] = ["status", "resume", "results", "list"];

/// Run a worker over many items, each a fresh session, a few at a time
///
/// `golem-forge batch WORKER --input items.jsonl` runs each line of the file (a string, or
/// {"id": …, "input": …, "instructions": …}) as a session of WORKER and appends each result to
/// .golem-forge/batches/ID/results.jsonl. Running the same command again, or `batch resume ID`,
/// runs only the items not completed, with the options the batch was started with (only
/// --concurrency may change). `batch status ID`, `batch results ID` and `batch list`
/// read batches. (A worker called status, resume, results or list is given as a path.)
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The worker (a file, a directory with main.worker, or a name), or one of status, resume,
    /// results, list
    #[arg(value_name = "WORKER")]
    target: String,

    /// The batch (its id or the start of it), after status, resume or results
    #[arg(value_name = "ID")]
    id: Option<String>,

    /// The items, one JSON line each
    #[arg(long, value_name = "FILE", conflicts_with = "each")]
    input: Option<PathBuf>,

    /// One item per file matching GLOB (under the current directory; `*` within a segment,
    /// `**` for any depth), e.g. 'docs/**/*.md'
    #[arg(long, value_name = "GLOB")]
    each: Option<String>,

    /// With --each: each item's input, `{path}` replaced by the file's path in the worker's
    /// zones [default: the path alone]
    #[arg(long, value_name = "TEXT", requires = "each")]
    prompt: Option<String>,

    /// Also append each result, as a JSON line, to FILE
    #[arg(long, value_name = "FILE", conflicts_with = "queue")]
    output: Option<PathBuf>,

    /// Items running at once [default: 4, or what the batch was started with]; may change
    /// from run to run of a batch
    #[arg(long, value_name = "N", conflicts_with = "queue",
          value_parser = clap::value_parser!(u16).range(1..=256))]
    concurrency: Option<u16>,

    /// Run a failed item up to N more times [default: 0]
    #[arg(long, value_name = "N", conflicts_with = "queue")]
    retry: Option<u32>,

    /// When continuing a batch, run its failed items again too
    #[arg(long, conflicts_with = "queue")]
    retry_failed: bool,

    /// Model as provider:model for every item (overrides the worker's)
    #[arg(short, long, value_name = "PROVIDER:MODEL")]
    model: Option<String>,

    /// How calls that need consent are decided [default: the config's approval.mode; no one
    /// is asked in a batch, so a call that would ask is denied]
    #[arg(short, long, value_enum)]
    approval: Option<ApprovalArg>,

    /// Most tokens the whole batch may use: no new item starts once they are spent
    #[arg(long, value_name = "N", conflicts_with = "queue",
          value_parser = clap::value_parser!(u64).range(1..))]
    budget_tokens: Option<u64>,

    /// Most US dollars the whole batch may cost: no new item starts once they are spent
    #[arg(long, value_name = "USD", conflicts_with = "queue")]
    budget_cost: Option<f64>,

    /// Most model turns of each item's run
    #[arg(long, value_name = "N")]
    max_iterations: Option<u32>,

    /// Put the batch on a Redis queue for `golem-forge batch-worker` processes on any machine
    /// instead of running it here (redis://[user:password@]host:port/db, rediss://… for TLS;
    /// the password may be in GOLEM_FORGE_REDIS_PASSWORD); with status or results, read the
    /// batch NAME there
    #[arg(long, value_name = "URL")]
    queue: Option<String>,

    /// With --queue: the batch's name there, which consumers are given
    #[arg(long, value_name = "NAME", requires = "queue")]
    name: Option<String>,

    /// With --queue: deliveries after which an item is given up and dead-lettered
    #[arg(long, default_value_t = 3, value_name = "N", requires = "queue",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    max_deliveries: u32,

    /// Print JSON: while the batch runs, its events as JSON lines on stdout (batchStarted,
    /// itemStarted, itemFinished, batchProgress, batchEnded) and no progress on stderr; with
    /// status or list, the counts
    #[arg(long)]
    json: bool,
}

/// Runs `golem-forge batch`.
pub fn cmd_batch(args: BatchArgs) -> Result<ExitCode, CommandError> {
    let cwd = std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
    let root = golem_runtime::config::program_root(&cwd);
    let store = BatchStore::new(&root);
    if let Some(url) = args.queue.as_deref() {
        return queued(&args, url, &cwd, &root);
    }
    match args.target.as_str() {
        "list" => list(&store, args.json),
        command @ ("status" | "resume" | "results") => {
            let Some(id) = args.id.as_deref() else {
                return Err(
                    CommandError::usage(format!("`batch {command}` needs a batch id"))
                        .with_hint("List them: golem-forge batch list"),
                );
            };
            let batch = store.open(id).map_err(batch_error)?;
            match command {
                "status" => status(&batch, args.json),
                "results" => results(&batch),
                _ => {
                    let items = batch.items().map_err(batch_error)?;
                    run(&args, &given(&args, &cwd), batch, &items, &root, true)
                }
            }
        }
        worker => start(&args, worker, &cwd, &root, &store),
    }
}

/// `batch … --queue URL`: the batch on a queue.
fn queued(args: &BatchArgs, url: &str, cwd: &Path, root: &Path) -> Result<ExitCode, CommandError> {
    let options = QueuedOptions {
        name: args.name.as_deref(),
        model: args.model.as_deref(),
        approval: args.approval.map(ApprovalMode::from),
        max_iterations: args.max_iterations,
        max_deliveries: args.max_deliveries,
        json: args.json,
    };
    let named = || {
        args.id.as_deref().ok_or_else(|| {
            CommandError::usage(format!(
                "`batch {} --queue URL` needs the batch's name",
                args.target
            ))
        })
    };
    match args.target.as_str() {
        "status" => run_queued(&options, url, QueuedCommand::Status(named()?)),
        "results" => run_queued(&options, url, QueuedCommand::Results(named()?)),
        command @ ("resume" | "list") => {
            let refused = CommandError::usage(format!(
                "`batch {command}` is for batches on this machine; a queued batch goes on as \
                 long as consumers run, and `batch status NAME --queue URL` shows one"
            ));
            // A hint to paste: the batch named, the URL without its password.
            Err(match (args.id.as_deref(), super::queue::url_words(url)) {
                (Some(name), Some(words)) => refused.with_hint(format!(
                    "see it with: golem-forge batch status {name} {words}"
                )),
                _ => refused,
            })
        }
        worker => {
            let (worker, items) = worker_and_items(args, worker, cwd)?;
            run_queued(
                &options,
                url,
                QueuedCommand::Enqueue {
                    worker: &worker,
                    items: &items,
                    root,
                },
            )
        }
    }
}

fn batch_error(err: BatchError) -> CommandError {
    CommandError::usage(err.to_string())
}

/// A new batch of `worker`, or the unfinished one with the same worker and items.
fn start(
    args: &BatchArgs,
    worker: &str,
    cwd: &Path,
    root: &Path,
    store: &BatchStore,
) -> Result<ExitCode, CommandError> {
    if args.id.is_some() {
        return Err(CommandError::usage(format!(
            "`{worker}` is a worker, and a worker's batch takes no id"
        ))
        .with_hint(format!("Commands on batches are {}", COMMANDS.join(", "))));
    }
    let (worker, items) = worker_and_items(args, worker, cwd)?;
    let given = given(args, cwd);
    let meta = BatchMeta::new(worker, &items);
    let (batch, resumed) = match store.unfinished(&meta).map_err(batch_error)? {
        Some(batch) => {
            if !args.json {
                eprintln!("batch {}: continuing it (same worker and items)", batch.id);
            }
            (batch, true)
        }
        None => {
            let meta = BatchMeta {
                options: Some(given.to_options()),
                ..meta
            };
            (store.create(meta, &items).map_err(batch_error)?, false)
        }
    };
    run(args, &given, batch, &items, root, resumed)
}

/// The options `args` give a run of a local batch (`--output` made absolute from `cwd`).
fn given(args: &BatchArgs, cwd: &Path) -> GivenOptions {
    GivenOptions {
        model: args.model.clone(),
        approval: args.approval.map(ApprovalMode::from),
        max_iterations: args.max_iterations,
        output: args
            .output
            .as_deref()
            .map(|path| options::absolute_from(cwd, path)),
        retry: args.retry,
        budget_tokens: args.budget_tokens,
        budget_cost: args.budget_cost,
        concurrency: args.concurrency,
    }
}

/// The worker file (absolute, checked) and the items of `batch WORKER`.
fn worker_and_items(
    args: &BatchArgs,
    worker: &str,
    cwd: &Path,
) -> Result<(PathBuf, Vec<BatchItem>), CommandError> {
    let worker = resolve_worker_arg(worker, cwd).map_err(|e| CommandError::usage(e.to_string()))?;
    let worker = std::path::absolute(&worker).unwrap_or(worker);
    // A worker file with mistakes fails here once, not at every item.
    load_worker(&worker).map_err(|e| CommandError::usage(e.to_string()))?;
    let items = match (&args.input, &args.each) {
        (Some(input), _) => items_of_file(input)?,
        (None, Some(glob)) => items_of_glob(glob, args.prompt.as_deref(), &worker, cwd)?,
        (None, None) => {
            return Err(
                CommandError::usage("`batch WORKER` needs --input FILE or --each GLOB").with_hint(
                    "One JSON line per item: \"the input\" or {\"id\": \"a\", \"input\": \"…\"}",
                ),
            );
        }
    };
    Ok((worker, items))
}

/// The items of the JSONL file `input`; every bad line is reported.
fn items_of_file(input: &Path) -> Result<Vec<BatchItem>, CommandError> {
    let text = std::fs::read_to_string(input)
        .map_err(|e| CommandError::usage(format!("cannot read {}: {e}", input.display())))?;
    parse_items(&text).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        CommandError::usage(format!(
            "{} has {} bad line{}; nothing ran:\n  {}",
            input.display(),
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            lines.join("\n  ")
        ))
    })
}

/// One item per file matching `glob`, in the zones of `worker` (its own, or the program's
/// default ones).
fn items_of_glob(
    glob: &str,
    prompt: Option<&str>,
    worker: &Path,
    cwd: &Path,
) -> Result<Vec<BatchItem>, CommandError> {
    let usage = |e: &dyn std::fmt::Display| CommandError::usage(e.to_string());
    let mut definition = load_worker(worker).map_err(|e| usage(&e))?;
    let config = ProgramConfig::discover(definition.dir()).map_err(|e| usage(&e))?;
    config.apply_default_zones(&mut definition);
    let zones: Vec<ZoneDir> = definition
        .zones
        .iter()
        .map(|zone| ZoneDir {
            name: zone.name.clone(),
            dir: definition.zone_dir(zone),
        })
        .collect();
    items_for_each(glob, cwd, &zones, prompt).map_err(|e| {
        let error = usage(&e);
        match e {
            EachError::OutsideZones(_) => error.with_hint(format!(
                "the worker's zones: {}",
                if zones.is_empty() {
                    "none".to_owned()
                } else {
                    zones
                        .iter()
                        .map(|z| format!("/{} = {}", z.name, z.dir.display()))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )),
            EachError::BadGlob(_) | EachError::NoMatch(_) | EachError::Io { .. } => error,
        }
    })
}

/// Runs what `batch` has left: items without a result, interrupted ones, failed ones with
/// `--retry-failed`, and parked ones (waiting for an approval), which continue their session;
/// with the batch's options (`given` may change only what may change). `resumed`: the batch
/// ran before.
fn run(
    args: &BatchArgs,
    given: &GivenOptions,
    mut batch: Batch,
    items: &[BatchItem],
    root: &Path,
    resumed: bool,
) -> Result<ExitCode, CommandError> {
    let _lock = batch.lock().map_err(batch_error)?;
    let options = options::choose(&mut batch, given, args.json)?;
    let latest = batch.latest().map_err(batch_error)?;
    let todo: Vec<(BatchItem, u32)> = items
        .iter()
        .filter_map(|item| match latest.get(&item.id) {
            None => Some((item.clone(), 1)),
            Some(last) => match last.status {
                ItemStatus::Completed => None,
                ItemStatus::Failed | ItemStatus::BudgetExceeded if !args.retry_failed => None,
                ItemStatus::Failed
                | ItemStatus::BudgetExceeded
                | ItemStatus::Interrupted
                | ItemStatus::WaitingApproval => Some((item.clone(), last.attempt + 1)),
            },
        })
        .collect();
    let display = BatchDisplay::new(todo.len(), args.json);
    if display.is_json() {
        display::emit(&BatchEvent::BatchStarted {
            batch_id: batch.id.clone(),
            worker: batch.meta.worker.display().to_string(),
            total: todo.len() as u64,
            concurrency: u64::from(options.concurrency),
            resumed,
        });
    } else {
        eprintln!(
            "batch {}: {} item{}{}",
            batch.id,
            todo.len(),
            if todo.len() == 1 { "" } else { "s" },
            if todo.len() == items.len() {
                String::new()
            } else {
                format!(" of {} to run", items.len())
            }
        );
    }
    let mut writer = batch.results_writer().map_err(batch_error)?;
    let mut output = match &options.output {
        Some(path) => Some(golem_batch::store::ResultWriter::open(path).map_err(batch_error)?),
        None => None,
    };
    let parked = latest
        .values()
        .filter(|result| result.status == ItemStatus::WaitingApproval)
        .filter_map(|result| Some((result.id.clone(), result.session.clone()?)))
        .collect();
    let settings = BatchSettings {
        parked,
        ..settings(&batch, &options, root)?
    };
    let mut write_failed = None;
    let outcome = block_on(async {
        let cancel = CancellationToken::new();
        let on_ctrl_c = cancel.clone();
        let watcher = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\nInterrupting the batch: no new items; running ones stop");
                on_ctrl_c.cancel();
            }
        });
        let outcome = run_items(todo, &settings, &cancel, |report| match report {
            Report::Started { item, attempt } => display.started(&item.id, attempt),
            Report::Finished { result, progress } => {
                if let Err(e) = writer.append(result) {
                    write_failed.get_or_insert(e);
                }
                if let Some(output) = &mut output
                    && let Err(e) = output.append(result)
                {
                    write_failed.get_or_insert(e);
                }
                display.finished(result, progress);
            }
        })
        .await;
        watcher.abort();
        outcome
    })?;
    display.finish();
    if let Some(e) = write_failed {
        return Err(CommandError::usage(format!("results were lost: {e}")));
    }
    let latest = batch.latest().map_err(batch_error)?;
    let statuses: Vec<Option<ItemStatus>> = items
        .iter()
        .map(|item| latest.get(&item.id).map(|r| r.status))
        .collect();
    let code = exit_code(&outcome, &statuses);
    if display.is_json() {
        display::emit(&ended_event(&outcome, code));
    } else {
        let spent = batch.spent().map_err(batch_error)?;
        let text = summary(&batch, &outcome, &statuses, &options, &spent, resumed);
        eprintln!("{}", clean_text(&text));
    }
    Ok(ExitCode::from(code))
}

/// How `batch`'s items run by `options`, with what its earlier runs spent counted against its
/// budget; no item is parked yet (the caller says which are).
pub(super) fn settings(
    batch: &Batch,
    options: &BatchOptions,
    root: &Path,
) -> Result<BatchSettings, CommandError> {
    Ok(BatchSettings {
        session: HostOptions {
            model: options.model.clone(),
            env_model: crate::session::env_model(),
            approval: options.approval,
            max_iterations: options.max_iterations,
            jail_helper: std::env::current_exe().ok(),
            ..HostOptions::new(HostWorker::File(batch.meta.worker.clone()))
        },
        worker: batch.meta.worker.clone(),
        program_root: root.to_owned(),
        batch_id: batch.id.clone(),
        parked: Default::default(),
        concurrency: usize::from(options.concurrency),
        retry: options.retry,
        budget: BatchBudget {
            tokens: options.budget_tokens,
            cost_usd: options.budget_cost,
        },
        spent_before: batch.spent().map_err(batch_error)?,
    })
}

/// `batchEnded` for a run that ended as `outcome`, the process exiting with `code`.
fn ended_event(outcome: &BatchOutcome, code: u8) -> BatchEvent {
    let p = &outcome.progress;
    BatchEvent::BatchEnded {
        completed: p.completed as u64,
        failed: p.failed as u64,
        other: p.other as u64,
        waiting_approval: p.waiting_approval as u64,
        not_run: p.total.saturating_sub(p.finished()) as u64,
        exit_code: code,
        usage: p.usage,
        cost: p.cost,
    }
}

/// The line a run ends with: the whole batch's counts by each item's latest status
/// (`statuses`, `None`: never run), what this run completed when the batch ran before, and how
/// to go on.
fn summary(
    batch: &Batch,
    outcome: &BatchOutcome,
    statuses: &[Option<ItemStatus>],
    options: &BatchOptions,
    spent: &golem_batch::Spent,
    resumed: bool,
) -> String {
    let p = &outcome.progress;
    let count = |wanted: &[ItemStatus]| {
        statuses
            .iter()
            .flatten()
            .filter(|s| wanted.contains(s))
            .count()
    };
    let completed = count(&[ItemStatus::Completed]);
    let failed = count(&[ItemStatus::Failed]);
    let other = count(&[ItemStatus::BudgetExceeded, ItemStatus::Interrupted]);
    let waiting = count(&[ItemStatus::WaitingApproval]);
    let left = statuses.iter().filter(|s| s.is_none()).count();
    let mut line = format!(
        "batch {}: {completed}/{} completed{}, {failed} failed, {other} other",
        batch.id,
        statuses.len(),
        if resumed {
            format!(", {} in this run", p.completed)
        } else {
            String::new()
        }
    );
    if waiting > 0 {
        line.push_str(&format!(", {waiting} waiting for approval"));
    }
    if left > 0 {
        line.push_str(&format!(", {left} not run"));
    }
    if outcome.budget_spent {
        line.push_str(&format!(
            " (the batch's budget is spent: {})",
            budget_words(options, spent)
        ));
    }
    if outcome.rate_limited > 0 {
        line.push_str(&format!(
            "; rate limited {} time{} (the pool paused and narrowed)",
            outcome.rate_limited,
            if outcome.rate_limited == 1 { "" } else { "s" }
        ));
    }
    line.push_str(&format!("; results: {}", batch.results_path().display()));
    if outcome.budget_spent {
        // Its budget is one of its options: no later run of it starts an item either.
        return line;
    }
    if waiting > 0 {
        line.push_str(
            "\nanswer what waits: golem-forge inbox (then approve N or deny N); parked items \
             go on at batch resume",
        );
    }
    if left > 0 || failed > 0 || other > 0 || waiting > 0 {
        line.push_str(&format!(
            "\ncontinue it: golem-forge batch resume {}{}",
            batch.id,
            if failed > 0 { " --retry-failed" } else { "" }
        ));
    }
    line
}

/// `30 of 30 tokens`, `$0.51 of $0.50`: each budget of `options` and what `spent` used of it.
fn budget_words(options: &BatchOptions, spent: &golem_batch::Spent) -> String {
    let mut parts = Vec::new();
    if let Some(limit) = options.budget_tokens {
        parts.push(format!(
            "{} of {limit} tokens",
            golem_runtime::budget::total_tokens(&spent.usage)
        ));
    }
    if let Some(limit) = options.budget_cost {
        parts.push(format!("${:.2} of ${limit:.2}", spent.cost.unwrap_or(0.0)));
    }
    parts.join(", ")
}

/// The process's exit code for how a run of a batch ended, given each item's latest status
/// (`None`: never run): interrupted, the batch's budget spent, an item not completed, one
/// waiting for an approval, or all completed.
fn exit_code(outcome: &BatchOutcome, statuses: &[Option<ItemStatus>]) -> u8 {
    let any = |wanted: &[ItemStatus]| statuses.iter().flatten().any(|s| wanted.contains(s));
    if outcome.cancelled {
        130
    } else if outcome.budget_spent {
        3
    } else if any(&[
        ItemStatus::Failed,
        ItemStatus::BudgetExceeded,
        ItemStatus::Interrupted,
    ]) || statuses.iter().any(Option::is_none)
    {
        1
    } else if any(&[ItemStatus::WaitingApproval]) {
        4
    } else {
        0
    }
}

/// `batch results ID`: each item's latest result, in input order, as JSON lines.
fn results(batch: &Batch) -> Result<ExitCode, CommandError> {
    let latest = batch.latest().map_err(batch_error)?;
    let mut out = String::new();
    for item in batch.items().map_err(batch_error)? {
        if let Some(result) = latest.get(&item.id) {
            let line = to_jsonl_line(result)
                .map_err(|e| CommandError::usage(format!("cannot print a result: {e}")))?;
            out.push_str(&line);
            out.push('\n');
        }
    }
    print(&out)
}

/// Counts of a batch's items by their latest status.
fn counts(batch: &Batch) -> Result<serde_json::Value, CommandError> {
    let items = batch.items().map_err(batch_error)?;
    let latest = batch.latest().map_err(batch_error)?;
    let mut counts = serde_json::Map::new();
    let mut pending = 0;
    for item in &items {
        match latest.get(&item.id) {
            Some(result) => {
                let count = counts
                    .entry(result.status.as_str())
                    .or_insert(serde_json::Value::from(0));
                *count = serde_json::Value::from(count.as_u64().unwrap_or(0) + 1);
            }
            None => pending += 1,
        }
    }
    counts.insert("pending".into(), pending.into());
    let spent = batch.spent().map_err(batch_error)?;
    Ok(serde_json::json!({
        "id": batch.id,
        "worker": batch.meta.worker,
        "started": batch.meta.started,
        "items": items.len(),
        "options": batch.meta.options,
        "spent": {
            "tokens": golem_runtime::budget::total_tokens(&spent.usage),
            "cost": spent.cost,
        },
        "counts": counts,
    }))
}

/// `batch status ID`.
fn status(batch: &Batch, json: bool) -> Result<ExitCode, CommandError> {
    let status = counts(batch)?;
    if json {
        return print(&format!("{status}\n"));
    }
    let mut text = format!(
        "batch {}\n  worker   {}\n  started  {}\n  items    {}\n  options  {}\n",
        batch.id,
        batch.meta.worker.display(),
        batch.meta.started,
        batch.meta.items,
        match &batch.meta.options {
            Some(recorded) => options::words(recorded),
            None => "not recorded (the next run records its own)".to_owned(),
        }
    );
    if let Some(recorded) = &batch.meta.options
        && (recorded.budget_tokens.is_some() || recorded.budget_cost.is_some())
    {
        let spent = batch.spent().map_err(batch_error)?;
        text.push_str(&format!(
            "  budget   {} spent\n",
            budget_words(recorded, &spent)
        ));
    }
    if let Some(counts) = status["counts"].as_object() {
        for (name, count) in counts {
            text.push_str(&format!("  {name:<16} {count}\n"));
        }
    }
    print(&clean_text(&text))
}

/// `batch list`: every batch, newest last.
fn list(store: &BatchStore, json: bool) -> Result<ExitCode, CommandError> {
    let batches = store.list().map_err(batch_error)?;
    let mut out = String::new();
    for batch in &batches {
        let status = counts(batch)?;
        if json {
            out.push_str(&format!("{status}\n"));
        } else {
            let done = status["counts"]["completed"].as_u64().unwrap_or(0);
            out.push_str(&format!(
                "{}  {}/{} completed  {}\n",
                batch.id,
                done,
                batch.meta.items,
                batch.meta.worker.display()
            ));
        }
    }
    if batches.is_empty() && !json {
        eprintln!("no batches in this program");
    }
    print(&clean_text(&out))
}

fn print(text: &str) -> Result<ExitCode, CommandError> {
    write_stdout(text).map_err(|e| CommandError::usage(format!("cannot write to stdout: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
