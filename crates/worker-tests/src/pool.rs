//! Running many runs of many cases: each case `runs` times, a few runs at once, in a small
//! pool. Against a live model (`--model`) the process's rate gate (`golem_llm::rate`) is
//! installed for the pool, as a batch does, so a rate-limit answer to any run pauses every
//! run's requests and narrows the pool. A cost budget over all runs stops new runs once the
//! runs so far have spent it; what is running finishes.

use std::sync::Arc;

use tokio::task::JoinSet;

use crate::discover::Suite;
use crate::error::TestError;
use crate::file::Case;
use crate::run::{CaseReport, RunOptions, run_case};

/// The most runs at once.
pub const MOST_AT_ONCE: usize = 4;

/// A case to run: the suite it is in and its index there.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The suite.
    pub suite: Arc<Suite>,
    /// The case's index in `suite.tests.cases`.
    pub case: usize,
}

/// How the pool runs.
#[derive(Debug, Clone, Copy)]
pub struct PoolSettings {
    /// Runs of each case (at least 1).
    pub runs: u32,
    /// Runs at once (at least 1).
    pub width: usize,
    /// US dollars all runs together may spend; no run starts once they have.
    pub budget_cost: Option<f64>,
}

/// What the pool tells its caller as it goes.
#[derive(Debug)]
pub enum PoolEvent<'a> {
    /// Run `run` of `case` starts.
    Started {
        /// The suite.
        suite: &'a Suite,
        /// The case.
        case: &'a Case,
        /// Which run (1 for the first).
        run: u32,
    },
    /// A run ended.
    Finished(&'a CaseReport),
}

/// What the pool did.
#[derive(Debug, Default)]
pub struct PoolOutcome {
    /// A report per run that ran, by case (in the order planned) and run.
    pub reports: Vec<CaseReport>,
    /// Runs that never started because the budget was spent.
    pub not_started: usize,
    /// What the runs cost together (runs of unknown cost count nothing).
    pub cost: f64,
}

/// Runs each of `planned` `settings.runs` times, telling `on` as runs start and end.
pub async fn run_pool(
    planned: &[Planned],
    settings: PoolSettings,
    options: &RunOptions,
    mut on: impl FnMut(PoolEvent<'_>),
) -> Result<PoolOutcome, TestError> {
    let runs = settings.runs.max(1);
    let mut queue: std::collections::VecDeque<(usize, &Planned, u32)> = planned
        .iter()
        .flat_map(|p| (1..=runs).map(move |run| (p, run)))
        .enumerate()
        .map(|(order, (p, run))| (order, p, run))
        .collect();
    let width = settings.width.max(1);
    let gate = options
        .model
        .as_ref()
        .map(|_| golem_llm::rate::install(width));
    let options = Arc::new(options.clone());
    let mut running: JoinSet<(usize, Result<CaseReport, TestError>)> = JoinSet::new();
    let mut done: Vec<(usize, CaseReport)> = Vec::new();
    let mut outcome = PoolOutcome::default();
    let spent = |cost: f64| settings.budget_cost.is_some_and(|limit| cost >= limit);
    loop {
        let now = gate.as_ref().map_or(width, |g| width.min(g.width().max(1)));
        while running.len() < now
            && !spent(outcome.cost)
            && let Some((order, planned, run)) = queue.pop_front()
        {
            let suite = planned.suite.clone();
            let index = planned.case;
            let Some(case) = suite.tests.cases.get(index) else {
                continue;
            };
            on(PoolEvent::Started {
                suite: &suite,
                case,
                run,
            });
            let options = options.clone();
            let case = case.clone();
            running.spawn(async move { (order, run_case(&suite, &case, run, &options).await) });
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        let (order, report) = match joined {
            Ok(done) => done,
            Err(e) => {
                return Err(TestError::Worker(format!(
                    "a test run stopped unexpectedly: {e}"
                )));
            }
        };
        let report = report?;
        outcome.cost += report.cost.unwrap_or(0.0);
        on(PoolEvent::Finished(&report));
        done.push((order, report));
    }
    outcome.not_started = queue.len();
    done.sort_by_key(|(order, _)| *order);
    outcome.reports = done.into_iter().map(|(_, report)| report).collect();
    Ok(outcome)
}
