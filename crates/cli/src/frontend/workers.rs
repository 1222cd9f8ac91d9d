//! The live tree of workers as the terminal shows it: built from `workerStarted`,
//! `workerProgress` and `workerFinished` events alone (like any front end), drawn as a tree for
//! `/workers`, and summed up in one line (the spinner's) while sub-workers run.

use golem_protocol::{BudgetAmounts, DisplayEvent, TokenUsage, WorkerProgress};
use indexmap::IndexMap;

use super::render::human_cost;
use super::screen::{Screen, Tone};

/// The running workers, in the order they started.
#[derive(Debug, Default)]
pub struct WorkerTreeView {
    running: IndexMap<String, WorkerProgress>,
}

impl WorkerTreeView {
    /// Takes in `event` if it is about the tree; returns whether the tree changed.
    pub fn update(&mut self, event: &DisplayEvent) -> bool {
        match event {
            DisplayEvent::WorkerStarted {
                worker_id,
                parent_id,
                worker_name,
                depth,
                model,
                budget,
                ..
            } => {
                // Events from before worker ids (old transcripts) cannot be placed.
                if worker_id.is_empty() {
                    return false;
                }
                self.running.insert(
                    worker_id.clone(),
                    WorkerProgress {
                        worker_id: worker_id.clone(),
                        parent_id: parent_id.clone(),
                        worker_name: worker_name.clone(),
                        depth: *depth,
                        model: model.clone(),
                        usage: TokenUsage::default(),
                        cost: None,
                        current_tool: None,
                        awaiting_approval: false,
                        budget: *budget,
                    },
                );
                true
            }
            DisplayEvent::WorkerProgress(progress) => {
                match self.running.get_mut(&progress.worker_id) {
                    Some(known) => *known = progress.clone(),
                    None => {
                        self.running
                            .insert(progress.worker_id.clone(), progress.clone());
                    }
                }
                true
            }
            DisplayEvent::WorkerFinished { worker_id, .. } => {
                self.running.shift_remove(worker_id).is_some()
            }
            _ => false,
        }
    }

    /// Whether no worker runs.
    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// The children of `parent` (the top of the tree for `None`), in the order they started.
    fn children<'a>(&'a self, parent: Option<&'a str>) -> impl Iterator<Item = &'a WorkerProgress> {
        self.running.values().filter(move |worker| {
            let known_parent = worker
                .parent_id
                .as_deref()
                .filter(|id| self.running.contains_key(*id));
            known_parent == parent
        })
    }

    /// The tree, one line per worker: name, model, what it spent, what it does, what its
    /// budget has left; children indented under their caller.
    pub fn lines(&self, screen: &Screen) -> Vec<String> {
        let mut lines = Vec::new();
        for root in self.children(None) {
            self.draw(root, "", "", screen, &mut lines);
        }
        lines
    }

    fn draw(
        &self,
        worker: &WorkerProgress,
        lead: &str,
        rest: &str,
        screen: &Screen,
        lines: &mut Vec<String>,
    ) {
        let name = screen.paint(Tone::Bold, &worker.worker_name);
        let mut facts = Vec::new();
        if let Some(model) = &worker.model {
            facts.push(model.clone());
        }
        facts.push(tokens(&worker.usage));
        if let Some(cost) = worker.cost {
            facts.push(human_cost(cost));
        }
        if let Some(left) = worker.budget.as_ref().and_then(budget_left) {
            facts.push(left);
        }
        let doing = activity(worker);
        let doing = if worker.awaiting_approval {
            screen.paint(Tone::Yellow, &doing)
        } else {
            doing
        };
        let facts = screen.dim(&format!(" · {}", facts.join(" · ")));
        lines.push(format!("{}{name}{facts} · {doing}", screen.dim(lead)));
        let children: Vec<_> = self.children(Some(&worker.worker_id)).collect();
        for (i, child) in children.iter().enumerate() {
            let last = i + 1 == children.len();
            let (branch, next) = if last {
                ("└─ ", "   ")
            } else {
                ("├─ ", "│  ")
            };
            self.draw(
                child,
                &format!("{rest}{branch}"),
                &format!("{rest}{next}"),
                screen,
                lines,
            );
        }
    }

    /// One line while sub-workers run: the chain of running sub-workers down to the newest
    /// one, what that one does, and the tokens of the whole tree
    /// (`reviewer › checker: running read_file · 1,234 tokens`); `None` while only the root
    /// runs.
    pub fn summary(&self) -> Option<String> {
        // The deepest, and of those the newest (`max_by_key` keeps the last of equals).
        let deepest = self
            .running
            .values()
            .filter(|worker| worker.depth > 0)
            .max_by_key(|worker| worker.depth)?;
        let mut chain = vec![deepest];
        while let Some(parent) = chain
            .last()
            .and_then(|w| w.parent_id.as_deref())
            .and_then(|id| self.running.get(id))
            .filter(|parent| parent.depth > 0)
        {
            chain.push(parent);
        }
        let names: Vec<&str> = chain.iter().rev().map(|w| w.worker_name.as_str()).collect();
        let total = self
            .running
            .values()
            .filter(|worker| worker.depth == 0)
            .map(|root| root.usage)
            .next()
            .unwrap_or(deepest.usage);
        Some(format!(
            "{}: {} · {}",
            names.join(" › "),
            activity(deepest),
            tokens(&total)
        ))
    }
}

/// What a worker does now, in words.
fn activity(worker: &WorkerProgress) -> String {
    match (&worker.current_tool, worker.awaiting_approval) {
        (Some(tool), true) => format!("waits for approval of {tool}"),
        (None, true) => "waits for approval".to_owned(),
        (Some(tool), false) => format!("running {tool}"),
        (None, false) => "thinking".to_owned(),
    }
}

/// Every token of a usage, as `1,234 tokens`.
fn tokens(usage: &TokenUsage) -> String {
    let all = golem_runtime::budget::total_tokens(usage);
    format!(
        "{} token{}",
        golem_runtime::budget::thousands(all),
        if all == 1 { "" } else { "s" }
    )
}

/// What a budget has left, as `8,766 tokens left`.
pub fn budget_left(left: &BudgetAmounts) -> Option<String> {
    budget_amounts(left).map(|amounts| format!("{amounts} left"))
}

/// The amounts of a budget in words (`1,200 tokens, $0.50, 42 s, 1 sub-worker`).
pub fn budget_amounts(amounts: &BudgetAmounts) -> Option<String> {
    let left = amounts;
    let mut parts = Vec::new();
    if let Some(tokens) = left.tokens {
        parts.push(format!(
            "{} tokens",
            golem_runtime::budget::thousands(tokens)
        ));
    }
    if let Some(cost) = left.cost_usd {
        parts.push(human_cost(cost));
    }
    if let Some(secs) = left.wall_seconds {
        parts.push(format!("{} s", secs.ceil() as u64));
    }
    if let Some(workers) = left.workers {
        parts.push(format!(
            "{workers} sub-worker{}",
            if workers == 1 { "" } else { "s" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    fn started(id: &str, parent: Option<&str>, name: &str, depth: u32) -> DisplayEvent {
        DisplayEvent::WorkerStarted {
            worker_id: id.into(),
            parent_id: parent.map(Into::into),
            worker_name: name.into(),
            depth,
            model: Some("test:default".into()),
            parent_tool_call_id: None,
            budget: None,
            trace_context: None,
            trace_parent: None,
        }
    }

    fn progress(
        id: &str,
        parent: Option<&str>,
        name: &str,
        depth: u32,
        input: u64,
    ) -> WorkerProgress {
        WorkerProgress {
            worker_id: id.into(),
            parent_id: parent.map(Into::into),
            worker_name: name.into(),
            depth,
            model: Some("test:default".into()),
            usage: TokenUsage {
                input_tokens: input,
                output_tokens: 0,
                ..TokenUsage::default()
            },
            cost: None,
            current_tool: None,
            awaiting_approval: false,
            budget: None,
        }
    }

    fn screen() -> Screen {
        Screen::memory(Arc::new(Mutex::new(Vec::new())), 100)
    }

    #[test]
    fn a_tree_of_three_levels_is_drawn_and_summed_up() {
        let mut view = WorkerTreeView::default();
        assert!(view.summary().is_none());
        for event in [
            started("w1", None, "planner", 0),
            started("w2", Some("w1"), "reviewer", 1),
            started("w3", Some("w2"), "checker", 2),
        ] {
            assert!(view.update(&event));
        }
        let mut root = progress("w1", None, "planner", 0, 1234);
        root.current_tool = Some("reviewer".into());
        root.budget = Some(BudgetAmounts {
            tokens: Some(8766),
            ..BudgetAmounts::default()
        });
        let mut reviewer = progress("w2", Some("w1"), "reviewer", 1, 500);
        reviewer.current_tool = Some("checker".into());
        let mut checker = progress("w3", Some("w2"), "checker", 2, 12);
        checker.current_tool = Some("write_file".into());
        checker.awaiting_approval = true;
        for p in [root, reviewer, checker] {
            view.update(&DisplayEvent::WorkerProgress(p));
        }
        let lines = view.lines(&screen());
        assert_eq!(
            lines,
            [
                "planner · test:default · 1,234 tokens · 8,766 tokens left · running reviewer",
                "└─ reviewer · test:default · 500 tokens · running checker",
                "   └─ checker · test:default · 12 tokens · waits for approval of write_file",
            ]
        );
        assert_eq!(
            view.summary().as_deref(),
            Some("reviewer › checker: waits for approval of write_file · 1,234 tokens")
        );
        view.update(&DisplayEvent::WorkerFinished {
            worker_id: "w3".into(),
            worker_name: "checker".into(),
            depth: 2,
            success: true,
            duration_ms: 5,
            error: None,
            usage: None,
            cost: None,
        });
        assert_eq!(
            view.summary().as_deref(),
            Some("reviewer: running checker · 1,234 tokens")
        );
    }

    #[test]
    fn siblings_branch_and_old_events_without_ids_are_left_out() {
        let mut view = WorkerTreeView::default();
        view.update(&started("w1", None, "planner", 0));
        view.update(&started("w2", Some("w1"), "a", 1));
        view.update(&started("w3", Some("w1"), "b", 1));
        assert!(!view.update(&started("", None, "old", 1)));
        let lines = view.lines(&screen());
        assert!(lines[1].starts_with("├─ a"), "{lines:?}");
        assert!(lines[2].starts_with("└─ b"), "{lines:?}");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn what_a_budget_has_left_reads_in_words() {
        assert_eq!(budget_left(&BudgetAmounts::default()), None);
        let left = BudgetAmounts {
            tokens: Some(1200),
            cost_usd: Some(0.5),
            wall_seconds: Some(41.2),
            workers: Some(1),
        };
        assert_eq!(
            budget_left(&left).as_deref(),
            Some("1,200 tokens, $0.50, 42 s, 1 sub-worker left")
        );
    }
}
