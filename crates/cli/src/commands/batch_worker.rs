//! `golem-forge batch-worker`: one consumer of a batch on a Redis queue (`golem_queue`). Any
//! number run at once, on any machines that have the program (its worker files and config)
//! under `--root`; each takes items, runs them as sessions with its own API keys, and records
//! their results on the queue. Exit codes: 0 when `--until-done` found the batch drained, 4
//! when it did but some items wait for an approval in the queue's inbox, 130 when stopped by
//! Ctrl+C or SIGTERM (its running items are handed back), 2 when the queue or the batch cannot
//! be used at start (a batch asking for more consent than this consumer's own approval mode
//! included: nothing is taken then), 1 when the queue failed later.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use golem_queue::enqueue::load_meta;
use golem_queue::{Ceiling, ConsumerReport, ConsumerSettings, consume, state};
use golem_runtime::host::{HostOptions, HostWorker};
use tokio_util::sync::CancellationToken;

use super::common::ApprovalArg;
use super::queue::{open_queue, password_note, queue_error, queue_words};
use super::run::block_on;
use crate::cli_error::{CommandError, ErrorKind};
use crate::frontend::clean::clean_text;

/// Run the items of a batch on a Redis queue, beside any number of other consumers
///
/// Takes items of batch NAME (put there by `golem-forge batch WORKER --queue URL --name NAME`)
/// and runs each as a session of the batch's worker, found under --root, with this machine's
/// API keys and config. An item whose consumer dies is taken by another once its lease runs
/// out; a failed item is tried again until the batch's max deliveries, then dead-lettered.
///
/// This consumer's approval mode (--approval, else the program config's approval.mode, else
/// interactive) is the most consent anything on the queue may ask for: a batch whose
/// --approval lets more through without a person (approve_all over auto_deny, interactive or
/// defer; anything over auto_deny) is refused and nothing is taken.
#[derive(Debug, Args)]
pub struct BatchWorkerArgs {
    /// The queue: redis://[user:password@]host:port/db, or rediss://… for TLS (the password
    /// may be in GOLEM_FORGE_REDIS_PASSWORD instead)
    #[arg(long, value_name = "URL")]
    queue: String,

    /// The batch's name on the queue
    #[arg(long, value_name = "NAME")]
    name: String,

    /// The program root the batch's worker is found in [default: the current directory's]
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,

    /// Items running at once here
    #[arg(long, default_value_t = 4, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=256))]
    concurrency: u16,

    /// How long an item may go without this consumer renewing it before another consumer
    /// takes it (e.g. 30s, 2m); give every consumer of a batch the same
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_lease)]
    lease: Duration,

    /// Exit once no item waits to run or runs anywhere (for a Kubernetes Job), instead of
    /// waiting for new items; exit 4 if some then wait for an approval (`inbox --queue URL`)
    #[arg(long)]
    until_done: bool,

    /// This consumer's name in the queue [default: host name, process id and a random part]
    #[arg(long, value_name = "NAME")]
    consumer: Option<String>,

    /// This consumer's approval mode, the most a batch may ask for: a batch's own --approval
    /// may narrow it, never widen it [default: the program config's approval.mode, else
    /// interactive]
    #[arg(long, value_enum, value_name = "MODE")]
    approval: Option<ApprovalArg>,
}

/// `30s`, `2m`, `500ms`, `1h`: at least a second, at most a day.
fn parse_lease(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 30s or 2m"))?;
    let lease = match unit {
        "ms" => Duration::from_millis(n),
        "s" | "" => Duration::from_secs(n),
        "m" => Duration::from_secs(n * 60),
        "h" => Duration::from_secs(n * 3600),
        _ => return Err(format!("`{text}`: the unit is ms, s, m or h")),
    };
    if lease < Duration::from_secs(1) || lease > Duration::from_secs(86_400) {
        return Err("a lease is between 1s and 24h".into());
    }
    Ok(lease)
}

/// A consumer name unique among the batch's consumers.
fn default_consumer() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "consumer".into());
    let salt = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{host}-{}-{:04x}", std::process::id(), salt & 0xffff)
}

/// Runs `golem-forge batch-worker`.
pub fn cmd_batch_worker(args: BatchWorkerArgs) -> Result<ExitCode, CommandError> {
    let cwd = std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
    let root = match &args.root {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
        None => golem_runtime::config::program_root(&cwd),
    };
    block_on(async {
        let queue = open_queue(&args.queue).await?;
        let meta = load_meta(&queue, &args.name).await.map_err(queue_error)?;
        let worker = meta.worker_file(&root).map_err(|e| {
            CommandError::usage(format!(
                "batch {}'s worker `{}` is not in the program at {}: {e}",
                args.name,
                meta.worker,
                root.display()
            ))
        })?;
        golem_runtime::worker::load_worker(&worker)
            .map_err(|e| CommandError::usage(e.to_string()))?;
        let ceiling = ceiling(args.approval, &worker)?;
        // Refused here, before anything is taken: the items stay queued.
        let approval = golem_queue::consent::session_mode(&args.name, meta.approval, &ceiling)
            .map_err(queue_error)?;
        // The root the worker's sessions and inbox are in (its own program, found from its
        // directory, as every session of it finds it).
        let program_root =
            golem_runtime::config::program_root(worker.parent().unwrap_or(root.as_path()));
        let settings = ConsumerSettings {
            name: args.name.clone(),
            consumer: args.consumer.clone().unwrap_or_else(default_consumer),
            program_root,
            worker: worker.clone(),
            session: HostOptions {
                model: meta.model.clone(),
                env_model: crate::session::env_model(),
                approval: Some(approval),
                max_iterations: meta.max_iterations,
                jail_helper: std::env::current_exe().ok(),
                ..HostOptions::new(HostWorker::File(worker))
            },
            ceiling,
            concurrency: usize::from(args.concurrency),
            lease: args.lease,
            until_done: args.until_done,
            max_deliveries: meta.max_deliveries,
        };
        eprintln!(
            "batch-worker {} on {}: consumer {}, {} at a time, approval {}",
            args.name,
            queue.shown(),
            settings.consumer,
            settings.concurrency,
            approval
        );
        let cancel = CancellationToken::new();
        let watcher = tokio::spawn(stop_on_signal(cancel.clone()));
        let words = queue_words(&queue);
        let tally = consume(&queue, &settings, &cancel, |report| {
            eprintln!("{}", clean_text(&describe(report, &words)));
        })
        .await;
        watcher.abort();
        let tally = tally.map_err(|e| CommandError {
            kind: ErrorKind::Failed,
            ..queue_error(e)
        })?;
        // Drained: what is left waits for a person, which a Job should not mistake for done.
        let waiting = if cancel.is_cancelled() {
            0
        } else {
            state::waiting_for_approval(&queue, &args.name)
                .await
                .map_err(|e| CommandError {
                    kind: ErrorKind::Failed,
                    ..queue_error(e)
                })?
        };
        let end = if cancel.is_cancelled() {
            format!("; stopped, {} handed back", tally.released)
        } else if waiting > 0 {
            format!(
                "; nothing runs or waits to run anywhere, but {waiting} item{} wait{} for an \
                 approval: golem-forge inbox {words}{}",
                if waiting == 1 { "" } else { "s" },
                if waiting == 1 { "s" } else { "" },
                password_note(&queue)
            )
        } else {
            "; nothing waits or runs anywhere".to_owned()
        };
        eprintln!(
            "{}",
            clean_text(&format!(
                "batch-worker {}: {} completed, {} other results, {} parked for approval, {} \
                 tried again, {} dropped here{}{end}",
                args.name,
                tally.completed,
                tally.not_completed,
                tally.parked,
                tally.retried,
                tally.dropped,
                if tally.refused > 0 {
                    format!(", {} not continued (approvals refused)", tally.refused)
                } else {
                    String::new()
                },
            ))
        );
        Ok(ExitCode::from(if cancel.is_cancelled() {
            130
        } else if waiting > 0 {
            4
        } else {
            0
        }))
    })?
}

/// This consumer's own approval mode and where it was set: `--approval`, else the program
/// config's `approval.mode` (the one the worker's sessions read), else `interactive`.
fn ceiling(
    approval: Option<ApprovalArg>,
    worker: &std::path::Path,
) -> Result<Ceiling, CommandError> {
    if let Some(approval) = approval {
        return Ok(Ceiling {
            mode: approval.into(),
            source: "its --approval".into(),
        });
    }
    let config = golem_runtime::config::ProgramConfig::for_worker(worker)
        .map_err(|e| CommandError::usage(e.to_string()))?;
    Ok(match (config.approval.mode, &config.file) {
        (Some(mode), Some(file)) => Ceiling {
            mode,
            source: format!("approval.mode in {}", file.display()),
        },
        (Some(mode), None) => Ceiling {
            mode,
            source: "approval.mode in its program config".into(),
        },
        (None, _) => Ceiling {
            mode: golem_core::approval::ApprovalMode::Interactive,
            source: "the default: neither --approval nor approval.mode sets one".into(),
        },
    })
}

/// Cancels `cancel` on Ctrl+C or SIGTERM (how Kubernetes stops a pod).
async fn stop_on_signal(cancel: CancellationToken) {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
    eprintln!("stopping: no new items; running ones are handed back");
    cancel.cancel();
}

/// One line for `report`; `queue` is the ` --queue URL` of the commands it names.
fn describe(report: &ConsumerReport, queue: &str) -> String {
    match report {
        ConsumerReport::Started {
            item,
            delivery,
            continues,
        } => format!(
            "item {item}: {}{}",
            if *continues {
                "continuing after its approval"
            } else {
                "running"
            },
            if *delivery > 1 {
                format!(" (delivery {delivery})")
            } else {
                String::new()
            }
        ),
        ConsumerReport::Recorded(result) => format!(
            "item {}: {}{}",
            result.id,
            result.status.as_str(),
            result
                .error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        ConsumerReport::Parked { item, entries } => format!(
            "item {item}: waits for approval (inbox {}); see it: golem-forge inbox {queue} show {}",
            entries
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            entries.first().copied().unwrap_or_default()
        ),
        ConsumerReport::Retrying {
            item,
            delivery,
            error,
        } => format!("item {item}: delivery {delivery} failed, to be tried again: {error}"),
        ConsumerReport::DeadLettered(dead) => format!(
            "item {}: given up after {} deliveries (dead letter): {}",
            dead.id, dead.deliveries, dead.error
        ),
        ConsumerReport::Dropped { item, why } => format!("item {item}: result dropped: {why}"),
        ConsumerReport::Released { item } => format!("item {item}: handed back unfinished"),
        ConsumerReport::Refused { item, entries, why } => format!(
            "item {item}: not continued, nothing ran: {why}; its approval waits in the inbox \
             again (inbox {}): golem-forge inbox {queue} show {}",
            entries
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            entries.first().copied().unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_are_durations_between_a_second_and_a_day() {
        assert_eq!(parse_lease("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_lease("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_lease("1500ms"), Ok(Duration::from_millis(1500)));
        assert!(parse_lease("10ms").is_err());
        assert!(parse_lease("2d").is_err());
        assert!(parse_lease("soon").is_err());
    }
}
