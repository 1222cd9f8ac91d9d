//! The live tree of workers: one [`WorkerNode`] per running worker (the root's turn, each
//! delegation), with its id, its caller, what it has spent, the tool call it is in and whether
//! it waits on an approval, reported as `workerStarted`, `workerProgress` and
//! `workerFinished` events. The tree also enforces budgets (`budget.rs`): a model call is
//! charged to its worker and every caller above it; a node whose budget runs out (tokens or
//! cost when charged, time on a timer) cancels its stop token, which stops it and everything it
//! delegated to, and its run ends as [`BudgetExceeded`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use golem_core::ui::RuntimeUI;
use golem_protocol::{BudgetAmounts, DisplayEvent, TokenUsage, WorkerProgress};
use golem_telemetry::TraceParent;
use tokio_util::sync::CancellationToken;

use crate::budget::{BudgetExceeded, BudgetKind, BudgetLimits, total_tokens};

/// A delegation refused because a worker on its way up the tree has started its
/// `budget.max_workers` sub-workers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot start worker {child}: worker {worker} may start at most {max} sub-worker{} \
     (budget.max_workers) and has started {max}; do the rest without delegating",
    if *max == 1 { "" } else { "s" }
)]
pub struct TooManyWorkers {
    /// The worker that was to start.
    pub child: String,
    /// The worker (the caller or one above it) whose `max_workers` is reached.
    pub worker: String,
    /// Its `max_workers`.
    pub max: u32,
}

/// Where a worker sits in its session's tree of workers, and the budget each of its runs has.
#[derive(Clone)]
pub struct TreeSlot {
    /// The session's tree.
    pub tree: Arc<WorkerTree>,
    /// The worker's id in it (kept across the runs of one built worker: the root's turns).
    pub id: String,
    /// The id of the worker that delegates to it; `None` for the root.
    pub parent_id: Option<String>,
    /// Its own limits (its callers' remaining budgets bound it too).
    pub budget: BudgetLimits,
}

impl TreeSlot {
    /// A slot with a fresh id in `tree`, no caller and no budget.
    pub fn new(tree: Arc<WorkerTree>) -> TreeSlot {
        TreeSlot {
            id: tree.next_id(),
            tree,
            parent_id: None,
            budget: BudgetLimits::default(),
        }
    }
}

/// The running workers of a session.
pub struct WorkerTree {
    ui: RuntimeUI,
    next_id: AtomicU64,
    running: Mutex<HashMap<String, Arc<WorkerNode>>>,
    /// What the root's last run left of its budget.
    last_root: Mutex<Option<BudgetAmounts>>,
    /// Where the root's runs hang in traces.
    traces: Mutex<RootTraces>,
}

/// Where the root's runs hang in traces (`workerStarted.traceContext` and `traceParent`): each
/// run is a new trace, or a child of the session's origin (a queued item's span); a run that
/// continues a turn left waiting for an approval is a child of that turn's run.
#[derive(Debug, Default)]
struct RootTraces {
    origin: Option<TraceParent>,
    last: Option<TraceParent>,
    continuing: bool,
}

impl RootTraces {
    /// The next root run's span and its parent.
    fn next(&mut self) -> (TraceParent, Option<TraceParent>) {
        let parent = match (std::mem::take(&mut self.continuing), self.last) {
            (true, Some(last)) => Some(last),
            (true, None) | (false, _) => self.origin,
        };
        let ids = match parent {
            Some(parent) => parent.child(),
            None => TraceParent::new_trace(),
        };
        self.last = Some(ids);
        (ids, parent)
    }
}

/// What a worker is when one of its runs starts.
pub struct NodeStart<'a> {
    /// Where it sits and its own limits.
    pub slot: &'a TreeSlot,
    /// Its name.
    pub name: &'a str,
    /// Its depth.
    pub depth: u32,
    /// Its model, as `provider:model`.
    pub model: String,
    /// The delegating call, for sub-workers.
    pub parent_call: Option<String>,
    /// The token its run stops on when it has no running caller (the interrupt's).
    pub base: CancellationToken,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl WorkerTree {
    /// An empty tree reporting on `ui`.
    pub fn new(ui: RuntimeUI) -> Arc<WorkerTree> {
        Arc::new(WorkerTree {
            ui,
            next_id: AtomicU64::new(1),
            running: Mutex::default(),
            last_root: Mutex::default(),
            traces: Mutex::default(),
        })
    }

    /// Makes each later root run a child of `origin` (a queued batch item's span).
    pub fn set_trace_origin(&self, origin: Option<TraceParent>) {
        lock(&self.traces).origin = origin;
    }

    /// The span of the root's last run (read back from a resumed session's transcript).
    pub fn set_last_root_trace(&self, last: TraceParent) {
        lock(&self.traces).last = Some(last);
    }

    /// Makes the next root run a child of the last one: it continues that run's turn.
    pub fn continue_trace(&self) {
        lock(&self.traces).continuing = true;
    }

    /// A new worker id (`w1`, `w2`, …).
    pub fn next_id(&self) -> String {
        format!("w{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// The running worker `id`.
    pub fn running(&self, id: &str) -> Option<Arc<WorkerNode>> {
        lock(&self.running).get(id).cloned()
    }

    /// The running workers, callers before the workers they delegated to.
    pub fn snapshot(&self) -> Vec<WorkerProgress> {
        let mut nodes: Vec<_> = lock(&self.running).values().cloned().collect();
        nodes.sort_by_key(|node| (node.depth, node.started));
        nodes.iter().map(|node| node.progress()).collect()
    }

    /// What the root's budget has left: of its run now, else of its last run.
    pub fn root_remaining(&self) -> Option<BudgetAmounts> {
        let root = lock(&self.running)
            .values()
            .find(|node| node.depth == 0)
            .cloned();
        match root {
            Some(root) => root.remaining(),
            None => *lock(&self.last_root),
        }
    }

    /// Forgets what the root's last run left (a new session).
    pub fn reset(&self) {
        *lock(&self.last_root) = None;
    }

    /// Starts a run of a worker: a node under its running caller (whose stop token its own
    /// descends from), a timer for its time budget, and `workerStarted`. The run leaves the
    /// tree with [`RunningWorker::finish`], or as interrupted when the guard is dropped
    /// unfinished (a caller that stopped waiting for it).
    pub fn start(self: &Arc<Self>, start: NodeStart<'_>) -> RunningWorker {
        let slot = start.slot;
        let parent = slot.parent_id.as_deref().and_then(|id| self.running(id));
        let stop = match &parent {
            Some(parent) => parent.stop.child_token(),
            None => start.base,
        };
        let started = Instant::now();
        let node = Arc::new(WorkerNode {
            id: slot.id.clone(),
            name: start.name.to_owned(),
            depth: start.depth,
            model: start.model,
            parent,
            limits: slot.budget,
            started,
            deadline: slot
                .budget
                .wall_seconds
                .map(|secs| started + Duration::from_secs(secs)),
            stop,
            timer: Mutex::default(),
            state: Mutex::default(),
            ui: self.ui.clone(),
        });
        if let Some(deadline) = node.deadline {
            let watched = Arc::downgrade(&node);
            let timer = tokio::spawn(time_out_at(deadline, watched));
            *lock(&node.timer) = Some(timer);
        }
        lock(&self.running).insert(node.id.clone(), node.clone());
        let (trace_context, trace_parent) = match start.depth {
            0 => {
                let (ids, parent) = lock(&self.traces).next();
                (Some(ids.to_string()), parent.map(|p| p.to_string()))
            }
            _ => (None, None),
        };
        self.ui.emit(DisplayEvent::WorkerStarted {
            worker_id: node.id.clone(),
            parent_id: node.parent.as_ref().map(|p| p.id.clone()),
            worker_name: node.name.clone(),
            depth: node.depth,
            model: Some(node.model.clone()),
            parent_tool_call_id: start.parent_call,
            budget: node.remaining(),
            trace_context,
            trace_parent,
        });
        RunningWorker {
            tree: self.clone(),
            node,
            finished: false,
        }
    }

    /// Ends a run: `workerFinished` with what it spent, and the node leaves the tree.
    fn finish(&self, node: &WorkerNode, success: bool, error: Option<String>) {
        if let Some(timer) = lock(&node.timer).take() {
            timer.abort();
        }
        lock(&self.running).remove(&node.id);
        if node.depth == 0 {
            *lock(&self.last_root) = node.remaining();
        }
        let state = lock(&node.state);
        let (usage, cost) = (state.usage, state.cost);
        drop(state);
        self.ui.emit(DisplayEvent::WorkerFinished {
            worker_id: node.id.clone(),
            worker_name: node.name.clone(),
            depth: node.depth,
            success,
            duration_ms: u64::try_from(node.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            error,
            usage: Some(usage),
            cost,
        });
    }

    /// Marks the running worker `id` (the running root when `None`: its calls carry no
    /// origin) as waiting, or no longer waiting, on an approval.
    pub fn set_awaiting(&self, id: Option<&str>, awaiting: bool) {
        let node = {
            let running = lock(&self.running);
            match id {
                Some(id) => running.get(id).cloned(),
                None => running.values().find(|node| node.depth == 0).cloned(),
            }
        };
        if let Some(node) = node {
            node.update(|state| state.awaiting = awaiting);
        }
    }
}

/// A run of a worker in the tree, until it finishes: dropped unfinished (its caller stopped
/// waiting for it), it leaves the tree as interrupted, so no node outlives its run.
pub struct RunningWorker {
    tree: Arc<WorkerTree>,
    node: Arc<WorkerNode>,
    finished: bool,
}

impl RunningWorker {
    /// Ends the run: `workerFinished` with what it spent, and the node leaves the tree.
    pub fn finish(mut self, success: bool, error: Option<String>) {
        self.finished = true;
        self.tree.finish(&self.node, success, error);
    }
}

impl std::ops::Deref for RunningWorker {
    type Target = WorkerNode;

    fn deref(&self) -> &WorkerNode {
        &self.node
    }
}

impl Drop for RunningWorker {
    fn drop(&mut self) {
        if !self.finished {
            self.tree
                .finish(&self.node, false, Some("interrupted".to_owned()));
        }
    }
}

/// Marks the node's time budget as run out at `deadline` and stops it.
async fn time_out_at(deadline: Instant, node: Weak<WorkerNode>) {
    tokio::time::sleep_until(deadline.into()).await;
    if let Some(node) = node.upgrade() {
        node.time_out();
    }
}

/// One run of a worker in the tree.
pub struct WorkerNode {
    id: String,
    name: String,
    depth: u32,
    model: String,
    parent: Option<Arc<WorkerNode>>,
    limits: BudgetLimits,
    started: Instant,
    deadline: Option<Instant>,
    stop: CancellationToken,
    timer: Mutex<Option<tokio::task::JoinHandle<()>>>,
    state: Mutex<NodeState>,
    ui: RuntimeUI,
}

/// What changes while a worker runs.
#[derive(Debug, Default)]
struct NodeState {
    usage: TokenUsage,
    cost: Option<f64>,
    workers_started: u32,
    current_tool: Option<String>,
    awaiting: bool,
    exceeded: Option<BudgetExceeded>,
}

impl WorkerNode {
    /// Its id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The token its run stops on: an interrupt, or a budget of it or of a caller running out.
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// This node, then its callers up to the root.
    fn chain(&self) -> impl Iterator<Item = &WorkerNode> {
        std::iter::successors(Some(self), |node| node.parent.as_deref())
    }

    /// Whether it or a caller has a cost limit (its models need a price).
    pub fn limits_cost(&self) -> bool {
        self.chain().any(|node| node.limits.cost_usd.is_some())
    }

    /// Charges a model call to this worker and each caller, and stops every one whose budget
    /// that spends (with what it delegated to). [`WorkerNode::report_spending`] tells the front
    /// ends.
    pub fn charge(&self, usage: &TokenUsage, cost: Option<f64>) {
        for node in self.chain() {
            let mut state = lock(&node.state);
            state.usage.add(usage);
            state.cost = match (state.cost, cost) {
                (Some(total), Some(cost)) => Some(total + cost),
                (total, None) => total,
                (None, cost) => cost,
            };
            let spent = state.exceeded.is_none() && {
                state.exceeded = node.overspent(&state);
                state.exceeded.is_some()
            };
            drop(state);
            if spent {
                node.stop.cancel();
            }
        }
    }

    /// `workerProgress` for this worker and each caller: what they spent changed.
    pub fn report_spending(&self) {
        for node in self.chain() {
            node.emit_progress();
        }
    }

    /// The limit of this node's tokens or cost that `state` goes past, if any.
    fn overspent(&self, state: &NodeState) -> Option<BudgetExceeded> {
        let exceeded = |kind, limit: f64, used: f64| BudgetExceeded {
            worker_id: self.id.clone(),
            worker: self.name.clone(),
            kind,
            limit,
            used,
        };
        let tokens = total_tokens(&state.usage);
        if let Some(limit) = self.limits.tokens
            && tokens > limit
        {
            return Some(exceeded(BudgetKind::Tokens, limit as f64, tokens as f64));
        }
        match (self.limits.cost_usd, state.cost) {
            (Some(limit), Some(cost)) if cost > limit => {
                Some(exceeded(BudgetKind::Cost, limit, cost))
            }
            _ => None,
        }
    }

    /// Records that its time budget ran out and stops it.
    fn time_out(&self) {
        let mut state = lock(&self.state);
        if state.exceeded.is_none() {
            state.exceeded = Some(BudgetExceeded {
                worker_id: self.id.clone(),
                worker: self.name.clone(),
                kind: BudgetKind::Time,
                limit: self.limits.wall_seconds.unwrap_or_default() as f64,
                used: self.started.elapsed().as_secs_f64(),
            });
        }
        drop(state);
        self.stop.cancel();
    }

    /// The budget that ran out, of this worker or the nearest caller, if any.
    pub fn exceeded(&self) -> Option<BudgetExceeded> {
        for node in self.chain() {
            if node
                .deadline
                .is_some_and(|deadline| Instant::now() >= deadline)
            {
                node.time_out();
            }
            if let Some(exceeded) = &lock(&node.state).exceeded {
                return Some(exceeded.clone());
            }
        }
        None
    }

    /// Counts a sub-worker about to start below this worker, against the `max_workers` of it
    /// and each caller; refused (counting nothing) when one of them has started its most.
    pub fn start_child(&self, child: &str) -> Result<(), TooManyWorkers> {
        let mut counted: Vec<&WorkerNode> = Vec::new();
        for node in self.chain() {
            let mut state = lock(&node.state);
            if let Some(max) = node.limits.max_workers
                && state.workers_started >= max
            {
                drop(state);
                for node in counted {
                    lock(&node.state).workers_started -= 1;
                }
                return Err(TooManyWorkers {
                    child: child.to_owned(),
                    worker: node.name.clone(),
                    max,
                });
            }
            state.workers_started += 1;
            drop(state);
            counted.push(node);
        }
        Ok(())
    }

    /// What is left of its budget: for each limit, the least of what it and its callers have
    /// left; `None` when none of them has a budget.
    pub fn remaining(&self) -> Option<BudgetAmounts> {
        fn least<T: PartialOrd>(current: Option<T>, candidate: T) -> Option<T> {
            match current {
                Some(current) if current <= candidate => Some(current),
                Some(_) | None => Some(candidate),
            }
        }
        let mut left = BudgetAmounts::default();
        for node in self.chain() {
            let limits = node.limits;
            let state = lock(&node.state);
            if let Some(limit) = limits.tokens {
                let used = total_tokens(&state.usage);
                left.tokens = least(left.tokens, limit.saturating_sub(used));
            }
            if let Some(limit) = limits.cost_usd {
                let used = state.cost.unwrap_or_default();
                left.cost_usd = least(left.cost_usd, (limit - used).max(0.0));
            }
            if let Some(max) = limits.max_workers {
                left.workers = least(left.workers, max.saturating_sub(state.workers_started));
            }
            drop(state);
            if let Some(deadline) = node.deadline {
                let secs = deadline
                    .saturating_duration_since(Instant::now())
                    .as_secs_f64();
                left.wall_seconds = least(left.wall_seconds, secs);
            }
        }
        (!left.is_unlimited()).then_some(left)
    }

    /// Sets the tool call in progress (`None` when it ended, which also ends any wait on an
    /// approval).
    pub fn set_tool(&self, tool: Option<&str>) {
        self.update(|state| {
            state.current_tool = tool.map(str::to_owned);
            if tool.is_none() {
                state.awaiting = false;
            }
        });
    }

    fn update(&self, change: impl FnOnce(&mut NodeState)) {
        change(&mut lock(&self.state));
        self.emit_progress();
    }

    /// Where it stands, as `workerProgress` says.
    fn progress(&self) -> WorkerProgress {
        let state = lock(&self.state);
        let (usage, cost, current_tool, awaiting_approval) = (
            state.usage,
            state.cost,
            state.current_tool.clone(),
            state.awaiting,
        );
        drop(state);
        WorkerProgress {
            worker_id: self.id.clone(),
            parent_id: self.parent.as_ref().map(|p| p.id.clone()),
            worker_name: self.name.clone(),
            depth: self.depth,
            model: Some(self.model.clone()),
            usage,
            cost,
            current_tool,
            awaiting_approval,
            budget: self.remaining(),
        }
    }

    fn emit_progress(&self) {
        self.ui.emit(DisplayEvent::WorkerProgress(self.progress()));
    }
}

#[cfg(test)]
mod tests;
