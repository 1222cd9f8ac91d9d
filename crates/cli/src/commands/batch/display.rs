//! What `batch` shows while it runs: at a terminal, a progress bar on stderr (done / total,
//! running, failed, tokens, cost, time left) with a line above it for each item that did not
//! complete; elsewhere (a log, a pipe), one line per finished item on stderr; with `--json`,
//! the batch's events (`golem_protocol::BatchEvent`) as JSON lines on stdout and nothing on
//! stderr.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use golem_batch::Progress;
use golem_protocol::{BatchEvent, ItemResult, ItemStatus, to_jsonl_line};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::frontend::clean::clean_text;
use crate::frontend::render::{human_cost, human_count};

/// How a run of a batch is shown.
pub enum BatchDisplay {
    /// A bar at the terminal.
    Bar(ProgressBar),
    /// A line per item.
    Lines,
    /// JSON lines on stdout.
    Json,
}

impl BatchDisplay {
    /// JSON lines when `json`, else a bar for `total` items when stderr is a terminal, else
    /// lines.
    pub fn new(total: usize, json: bool) -> BatchDisplay {
        if json {
            return BatchDisplay::Json;
        }
        if !std::io::stderr().is_terminal() {
            return BatchDisplay::Lines;
        }
        let bar = ProgressBar::with_draw_target(
            Some(total as u64),
            ProgressDrawTarget::stderr_with_hz(4),
        );
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} {msg} · {eta} left")
        {
            bar.set_style(style.progress_chars("█▉ "));
        }
        bar.enable_steady_tick(Duration::from_millis(500));
        BatchDisplay::Bar(bar)
    }

    /// A run of the item `id` started.
    pub fn started(&self, id: &str, attempt: u32) {
        match self {
            BatchDisplay::Json => emit(&BatchEvent::ItemStarted {
                id: id.to_owned(),
                attempt,
            }),
            BatchDisplay::Bar(_) | BatchDisplay::Lines => {}
        }
    }

    /// An item finished: `result`, and where the batch stands after it.
    pub fn finished(&self, result: &ItemResult, progress: &Progress) {
        if let BatchDisplay::Json = self {
            emit(&BatchEvent::ItemFinished {
                result: result.clone(),
            });
            emit(&progress_event(progress));
            return;
        }
        let line = clean_text(&item_line(result, progress)).into_owned();
        match self {
            BatchDisplay::Bar(bar) => {
                if result.status != ItemStatus::Completed {
                    bar.println(line);
                }
                bar.set_position(progress.finished() as u64);
                bar.set_message(clean_text(&summary(progress)).into_owned());
            }
            BatchDisplay::Lines => eprintln!("{line}"),
            BatchDisplay::Json => {}
        }
    }

    /// The run is over: the bar goes away.
    pub fn finish(&self) {
        match self {
            BatchDisplay::Bar(bar) => bar.finish_and_clear(),
            BatchDisplay::Lines | BatchDisplay::Json => {}
        }
    }

    /// Whether events go to stdout (and nothing for people to stderr).
    pub fn is_json(&self) -> bool {
        matches!(self, BatchDisplay::Json)
    }
}

/// Prints `event` as one JSON line on stdout. A reader that went away does not stop the batch,
/// whose results are on disk.
pub fn emit(event: &BatchEvent) {
    match to_jsonl_line(event) {
        Ok(line) => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
                tracing::debug!(error = %e, "cannot print a batch event");
            }
        }
        Err(e) => tracing::error!(error = %e, "cannot serialize a batch event"),
    }
}

/// `batchProgress` for `progress`.
fn progress_event(progress: &Progress) -> BatchEvent {
    BatchEvent::BatchProgress {
        total: progress.total as u64,
        completed: progress.completed as u64,
        failed: progress.failed as u64,
        other: progress.other as u64,
        running: progress.running as u64,
        waiting_approval: progress.waiting_approval as u64,
        tokens: golem_runtime::budget::total_tokens(&progress.usage),
        cost: progress.cost,
    }
}

/// `[3/200] ✓ item-7`, or with the error of an item that did not complete.
pub fn item_line(result: &ItemResult, progress: &Progress) -> String {
    let mark = match result.status {
        ItemStatus::Completed => "✓",
        ItemStatus::Failed => "✗",
        ItemStatus::BudgetExceeded => "⊘ budget:",
        ItemStatus::WaitingApproval => "⏸ waiting for approval:",
        ItemStatus::Interrupted => "⏹ interrupted:",
    };
    let tail = match &result.error {
        Some(error) => format!(" — {}", golem_core::text::fold(error, 400)),
        None => String::new(),
    };
    format!(
        "[{}/{}] {mark} {}{tail}",
        progress.finished(),
        progress.total,
        result.id
    )
}

/// `4 running · 1 failed · 12,345 tokens · $0.12`, the bar's message.
pub fn summary(progress: &Progress) -> String {
    let tokens = golem_runtime::budget::total_tokens(&progress.usage);
    let mut parts = vec![format!("{} running", progress.running)];
    if progress.failed > 0 {
        parts.push(format!("{} failed", progress.failed));
    }
    if progress.other > 0 {
        parts.push(format!("{} other", progress.other));
    }
    if progress.waiting_approval > 0 {
        parts.push(format!(
            "{} waiting for approval",
            progress.waiting_approval
        ));
    }
    parts.push(format!("{} tokens", human_count(tokens)));
    if let Some(cost) = progress.cost {
        parts.push(human_cost(cost));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use golem_protocol::TokenUsage;

    use super::*;

    #[test]
    fn the_bar_says_what_runs_fails_and_costs() {
        let progress = Progress {
            total: 200,
            completed: 10,
            failed: 2,
            other: 0,
            waiting_approval: 0,
            running: 4,
            usage: TokenUsage {
                input_tokens: 12_000,
                output_tokens: 345,
                ..TokenUsage::default()
            },
            cost: Some(0.123),
        };
        assert_eq!(
            summary(&progress),
            "4 running · 2 failed · 12,345 tokens · $0.12"
        );
        let failed = ItemResult {
            error: Some("openai is unavailable".into()),
            ..ItemResult::failed("item-7", 1)
        };
        assert_eq!(
            item_line(&failed, &progress),
            "[12/200] ✗ item-7 — openai is unavailable"
        );
    }
}
