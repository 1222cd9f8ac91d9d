//! The tree of workers on its own: spending rolls up to every caller, a budget that runs out
//! stops its worker and what it delegated to (never its caller), `max_workers` counts every
//! sub-worker below a worker, time budgets run out on their own, and the events say so.

use std::sync::Arc;
use std::time::Duration;

use golem_core::bus::UiEventBus;
use golem_core::ui::RuntimeUI;
use golem_protocol::{DisplayEvent, TokenUsage};
use tokio_util::sync::CancellationToken;

use super::*;

fn tree() -> (Arc<WorkerTree>, golem_core::bus::DisplaySubscription) {
    let bus = UiEventBus::new();
    let events = bus.subscribe();
    (WorkerTree::new(RuntimeUI::new(bus)), events)
}

fn slot(tree: &Arc<WorkerTree>, parent: Option<&WorkerNode>, budget: BudgetLimits) -> TreeSlot {
    TreeSlot {
        id: tree.next_id(),
        tree: tree.clone(),
        parent_id: parent.map(|p| p.id().to_owned()),
        budget,
    }
}

fn start(tree: &Arc<WorkerTree>, slot: &TreeSlot, name: &str, depth: u32) -> RunningWorker {
    tree.start(NodeStart {
        slot,
        name,
        depth,
        model: "test:default".into(),
        parent_call: None,
        base: CancellationToken::new(),
    })
}

fn usage(input: u64, output: u64) -> TokenUsage {
    TokenUsage {
        input_tokens: input,
        output_tokens: output,
        ..TokenUsage::default()
    }
}

fn tokens(limit: u64) -> BudgetLimits {
    BudgetLimits {
        tokens: Some(limit),
        ..BudgetLimits::default()
    }
}

fn drain(events: &mut golem_core::bus::DisplaySubscription) -> Vec<DisplayEvent> {
    let mut out = Vec::new();
    while let Some(event) = events.try_recv() {
        out.push(event);
    }
    out
}

#[tokio::test]
async fn spending_rolls_up_to_every_caller_and_is_reported() {
    let (tree, mut events) = tree();
    let root_slot = slot(&tree, None, BudgetLimits::default());
    let root = start(&tree, &root_slot, "planner", 0);
    let child_slot = slot(&tree, Some(&*root), BudgetLimits::default());
    let child = start(&tree, &child_slot, "writer", 1);
    child.charge(&usage(30, 5), Some(0.25));
    child.report_spending();
    root.charge(&usage(10, 2), None);
    root.report_spending();

    let snapshot = tree.snapshot();
    let names: Vec<_> = snapshot.iter().map(|p| p.worker_name.as_str()).collect();
    assert_eq!(names, ["planner", "writer"]);
    assert_eq!(
        snapshot[0].usage,
        usage(40, 7),
        "the root counts its child's spending"
    );
    assert_eq!(snapshot[0].cost, Some(0.25));
    assert_eq!(snapshot[1].usage, usage(30, 5));
    assert_eq!(snapshot[1].parent_id.as_deref(), Some(root.id()));
    assert!(snapshot[0].budget.is_none(), "no budget, no remaining");

    let child_id = child.id().to_owned();
    child.finish(true, None);
    let events = drain(&mut events);
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::WorkerStarted {
                worker_id,
                parent_id,
                ..
            } => Some((worker_id.clone(), parent_id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        [
            (root.id().to_owned(), None),
            (child_id.clone(), Some(root.id().to_owned()))
        ]
    );
    let progress = events
        .iter()
        .filter(|e| matches!(e, DisplayEvent::WorkerProgress(_)))
        .count();
    assert_eq!(
        progress, 3,
        "the child and the root on its call, the root on its own"
    );
    let finished = events.iter().find_map(|e| match e {
        DisplayEvent::WorkerFinished {
            worker_id,
            usage,
            cost,
            ..
        } => Some((worker_id.clone(), *usage, *cost)),
        _ => None,
    });
    assert_eq!(finished, Some((child_id, Some(usage(30, 5)), Some(0.25))));
    assert_eq!(
        tree.snapshot().len(),
        1,
        "a finished worker leaves the tree"
    );
}

#[tokio::test]
async fn a_child_over_its_own_budget_stops_alone() {
    let (tree, _events) = tree();
    let root_slot = slot(&tree, None, tokens(1000));
    let root = start(&tree, &root_slot, "planner", 0);
    let child_slot = slot(&tree, Some(&*root), tokens(100));
    let child = start(&tree, &child_slot, "writer", 1);
    child.charge(&usage(90, 5), None);
    assert!(child.exceeded().is_none(), "95 of 100 tokens");
    child.charge(&usage(10, 0), None);

    let exceeded = child.exceeded().expect("the child's budget ran out");
    assert_eq!(exceeded.worker, "writer");
    assert_eq!((exceeded.limit, exceeded.used), (100.0, 105.0));
    assert!(child.stop_token().is_cancelled());
    assert!(!root.stop_token().is_cancelled(), "the caller goes on");
    assert!(root.exceeded().is_none());
    assert_eq!(root.remaining().and_then(|r| r.tokens), Some(895));
}

#[tokio::test]
async fn a_childs_spending_stops_the_caller_whose_budget_it_spends() {
    let (tree, _events) = tree();
    let root_slot = slot(&tree, None, tokens(100));
    let root = start(&tree, &root_slot, "planner", 0);
    root.charge(&usage(40, 0), None);
    let child_slot = slot(&tree, Some(&*root), BudgetLimits::default());
    let child = start(&tree, &child_slot, "writer", 1);
    assert_eq!(
        child.remaining().and_then(|r| r.tokens),
        Some(60),
        "a child never gets more than its caller has left"
    );
    child.charge(&usage(70, 0), None);

    assert!(root.stop_token().is_cancelled());
    assert!(
        child.stop_token().is_cancelled(),
        "the caller's stop reaches the child"
    );
    let seen_by_child = child.exceeded().expect("the caller's budget ran out");
    assert_eq!(seen_by_child.worker, "planner");
    assert_eq!(root.exceeded(), Some(seen_by_child));
    assert_eq!(root.remaining().and_then(|r| r.tokens), Some(0));
}

#[tokio::test]
async fn the_cost_budget_counts_priced_calls() {
    let (tree, _events) = tree();
    let budget = BudgetLimits {
        cost_usd: Some(0.10),
        ..BudgetLimits::default()
    };
    let root_slot = slot(&tree, None, budget);
    let root = start(&tree, &root_slot, "planner", 0);
    assert!(root.limits_cost());
    root.charge(&usage(1000, 100), Some(0.06));
    assert!(root.exceeded().is_none());
    let left = root.remaining().and_then(|r| r.cost_usd).unwrap();
    assert!((left - 0.04).abs() < 1e-9, "{left}");
    root.charge(&usage(1000, 100), Some(0.06));
    let exceeded = root.exceeded().expect("over $0.10");
    assert_eq!(exceeded.kind, BudgetKind::Cost);
    assert!(
        exceeded.to_string().contains("$0.12 used of $0.10"),
        "{exceeded}"
    );
}

#[tokio::test]
async fn max_workers_counts_every_sub_worker_below_and_refuses_beyond() {
    let (tree, _events) = tree();
    let budget = BudgetLimits {
        max_workers: Some(2),
        ..BudgetLimits::default()
    };
    let root_slot = slot(&tree, None, budget);
    let root = start(&tree, &root_slot, "planner", 0);
    root.start_child("writer").unwrap();
    let child_slot = slot(&tree, Some(&*root), BudgetLimits::default());
    let child = start(&tree, &child_slot, "writer", 1);
    // A grandchild counts against the root too.
    child.start_child("checker").unwrap();
    assert_eq!(root.remaining().and_then(|r| r.workers), Some(0));
    let refused = child.start_child("checker").unwrap_err();
    assert_eq!(
        refused.to_string(),
        "cannot start worker checker: worker planner may start at most 2 sub-workers \
         (budget.max_workers) and has started 2; do the rest without delegating"
    );
    let refused = root.start_child("writer").unwrap_err();
    assert_eq!(
        (refused.child.as_str(), refused.worker.as_str(), refused.max),
        ("writer", "planner", 2)
    );
    let one = TooManyWorkers {
        child: "writer".into(),
        worker: "planner".into(),
        max: 1,
    };
    assert!(
        one.to_string().contains("at most 1 sub-worker (budget"),
        "{one}"
    );
    assert!(root.exceeded().is_none(), "a refused start ends nothing");
}

#[tokio::test]
async fn a_refused_start_counts_nothing() {
    let (tree, _events) = tree();
    let root_slot = slot(
        &tree,
        None,
        BudgetLimits {
            max_workers: Some(5),
            ..BudgetLimits::default()
        },
    );
    let root = start(&tree, &root_slot, "planner", 0);
    let child_slot = slot(
        &tree,
        Some(&*root),
        BudgetLimits {
            max_workers: Some(0),
            ..BudgetLimits::default()
        },
    );
    let child = start(&tree, &child_slot, "writer", 1);
    assert!(child.start_child("checker").is_err());
    assert_eq!(root.remaining().and_then(|r| r.workers), Some(5));
}

#[tokio::test(start_paused = true)]
async fn a_time_budget_runs_out_on_its_own() {
    let (tree, mut events) = tree();
    let budget = BudgetLimits {
        wall_seconds: Some(30),
        ..BudgetLimits::default()
    };
    let root_slot = slot(&tree, None, budget);
    let root = start(&tree, &root_slot, "planner", 0);
    let child_slot = slot(&tree, Some(&*root), BudgetLimits::default());
    let child = start(&tree, &child_slot, "writer", 1);
    let stop = child.stop_token();
    tokio::time::timeout(Duration::from_secs(60), stop.cancelled())
        .await
        .expect("the root's time budget stops its child");
    let exceeded = child.exceeded().expect("the root's time ran out");
    assert_eq!(
        (exceeded.worker.as_str(), exceeded.kind),
        ("planner", BudgetKind::Time)
    );
    child.finish(false, Some(exceeded.to_string()));
    root.finish(false, Some(exceeded.to_string()));
    let finished = drain(&mut events)
        .into_iter()
        .filter(|e| matches!(e, DisplayEvent::WorkerFinished { success: false, .. }))
        .count();
    assert_eq!(finished, 2);
}

#[tokio::test]
async fn approvals_and_tools_show_in_the_progress_of_their_worker() {
    let (tree, mut events) = tree();
    let root_slot = slot(&tree, None, BudgetLimits::default());
    let root = start(&tree, &root_slot, "planner", 0);
    let child_slot = slot(&tree, Some(&*root), BudgetLimits::default());
    let child = start(&tree, &child_slot, "writer", 1);
    child.set_tool(Some("write_file"));
    tree.set_awaiting(Some(child.id()), true);
    let snapshot = tree.snapshot();
    assert_eq!(snapshot[1].current_tool.as_deref(), Some("write_file"));
    assert!(snapshot[1].awaiting_approval);
    assert!(!snapshot[0].awaiting_approval);
    // The root's own calls carry no origin: `None` is the root.
    tree.set_awaiting(None, true);
    assert!(tree.snapshot()[0].awaiting_approval);
    child.set_tool(None);
    let snapshot = tree.snapshot();
    assert_eq!(snapshot[1].current_tool, None);
    assert!(
        !snapshot[1].awaiting_approval,
        "a call that ended waits for nothing"
    );
    let last = drain(&mut events)
        .into_iter()
        .rev()
        .find_map(|e| match e {
            DisplayEvent::WorkerProgress(progress) => Some(progress),
            _ => None,
        })
        .unwrap();
    assert_eq!(last.worker_id, child.id());
    assert_eq!(last.current_tool, None);
}

#[tokio::test]
async fn the_root_remaining_budget_outlives_its_run_until_a_new_session() {
    let (tree, _events) = tree();
    let root_slot = slot(&tree, None, tokens(1000));
    assert_eq!(tree.root_remaining(), None);
    let root = start(&tree, &root_slot, "planner", 0);
    root.charge(&usage(100, 20), None);
    assert_eq!(tree.root_remaining().and_then(|r| r.tokens), Some(880));
    root.finish(true, None);
    assert_eq!(tree.root_remaining().and_then(|r| r.tokens), Some(880));
    tree.reset();
    assert_eq!(tree.root_remaining(), None);
}

#[tokio::test]
async fn a_run_dropped_unfinished_leaves_the_tree_as_interrupted() {
    let (tree, mut events) = tree();
    let root_slot = slot(&tree, None, BudgetLimits::default());
    let root = start(&tree, &root_slot, "planner", 0);
    let child_slot = slot(&tree, Some(&*root), BudgetLimits::default());
    let child = start(&tree, &child_slot, "writer", 1);
    let child_id = child.id().to_owned();
    // A caller that stops waiting drops its child's run.
    drop(child);
    assert_eq!(tree.snapshot().len(), 1);
    assert!(tree.running(&child_id).is_none());
    let finished = drain(&mut events).into_iter().find_map(|e| match e {
        DisplayEvent::WorkerFinished {
            worker_id,
            success,
            error,
            ..
        } => Some((worker_id, success, error)),
        _ => None,
    });
    assert_eq!(
        finished,
        Some((child_id, false, Some("interrupted".to_owned())))
    );
    root.finish(true, None);
    assert!(tree.snapshot().is_empty());
}

/// The `traceContext` and `traceParent` of each root run's `workerStarted`, parsed.
fn root_traces(
    events: &mut golem_core::bus::DisplaySubscription,
) -> Vec<(TraceParent, Option<TraceParent>)> {
    drain(events)
        .into_iter()
        .filter_map(|event| match event {
            DisplayEvent::WorkerStarted {
                depth: 0,
                trace_context,
                trace_parent,
                ..
            } => Some((
                TraceParent::parse(trace_context.as_deref()?)?,
                trace_parent.as_deref().and_then(TraceParent::parse),
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn each_root_run_names_its_span_and_a_continuation_hangs_under_the_last() {
    let (tree, mut events) = tree();
    let root = slot(&tree, None, BudgetLimits::default());
    start(&tree, &root, "lead", 0).finish(true, None);
    start(&tree, &root, "lead", 0).finish(true, None);
    tree.continue_trace();
    start(&tree, &root, "lead", 0).finish(true, None);
    let lead = start(&tree, &root, "lead", 0);
    let sub = slot(&tree, Some(&lead.node), BudgetLimits::default());
    start(&tree, &sub, "helper", 1).finish(true, None);
    lead.finish(true, None);
    let runs = root_traces(&mut events);
    assert_eq!(runs.len(), 4, "sub-workers carry no trace context");
    let [first, second, continued, fourth] = [runs[0], runs[1], runs[2], runs[3]];
    assert_eq!((first.1, second.1), (None, None));
    assert_ne!(first.0.trace_id, second.0.trace_id, "each turn is a trace");
    assert_eq!(
        continued.1,
        Some(second.0),
        "the continuation's parent is the last run"
    );
    assert_eq!(continued.0.trace_id, second.0.trace_id);
    assert_eq!(fourth.1, None, "continuing is for the next run only");

    let origin = TraceParent::new_trace();
    tree.set_trace_origin(Some(origin));
    start(&tree, &root, "lead", 0).finish(true, None);
    let queued = root_traces(&mut events);
    assert_eq!(queued[0].1, Some(origin));
    assert_eq!(queued[0].0.trace_id, origin.trace_id);
}
