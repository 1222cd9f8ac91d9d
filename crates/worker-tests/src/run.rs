//! Running one case: a fresh session of the worker, with its real tools, approval policies,
//! jail and protected files, in scratch zones — a temporary directory per case in which each
//! zone is a new empty folder with the case's `files:` applied — and its state (transcript,
//! undo journal, inbox) kept there too, so the user's zone folders and `.golem-forge/` are
//! never touched. The model is the case's scripted replies, or the one `--model` names
//! (resolved as the worker's, and recorded when `--update` wants its replies); calls that ask
//! are answered from `approve:`. The display events give what the expectations need; the scratch zones, read
//! through the sandbox, give the files.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use golem_core::approval::ApprovalMode;
use golem_llm::providers::script::{ScriptedCall, ScriptedModel, ScriptedReply};
use golem_protocol::{ActionEvent, ApprovalResponse, DisplayEvent, TokenUsage};
use golem_runtime::budget::BudgetLimits;
use golem_runtime::host::{HostOptions, HostWorker, ReadyModel, Scratch, SessionHost};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};

use crate::discover::Suite;
use crate::error::TestError;
use crate::expect::{
    Failure, Observed, ObservedCall, ObservedFile, UnnamedChange, check_file, check_run,
    check_unnamed_changes,
};
use crate::file::{Case, Reply};

/// How cases are run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The binary that runs the process jail's helper mode.
    pub jail_helper: Option<std::path::PathBuf>,
    /// `--model provider:model`: the replies come from this model, resolved as the worker's
    /// model is (the program config's providers and prices), instead of the case's `model:`.
    pub model: Option<String>,
    /// A cost limit each run's turn runs under (the whole `--budget-cost`), so that a model
    /// without a known price is refused rather than counted as free.
    pub cost_limit: Option<f64>,
    /// Keep what the model replied (`--update`): the run records its exchanges, read back as
    /// [`CaseReport::replies`].
    pub record: bool,
}

/// The outcome of one run of one case.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// The case's name.
    pub case: String,
    /// The worker's name.
    pub worker: String,
    /// The test file.
    pub file: std::path::PathBuf,
    /// Which run (1 for the first).
    pub run: u32,
    /// The expectations that did not hold, or why the case could not run.
    pub failures: Vec<Failure>,
    /// How many calls the run made.
    pub calls: usize,
    /// Tokens used.
    pub usage: TokenUsage,
    /// What it cost.
    pub cost: Option<f64>,
    /// How long it took.
    pub duration: Duration,
    /// The model's replies, in the test file's form, when [`RunOptions::record`] asked for
    /// them and the run got as far as a model.
    pub replies: Option<Result<Vec<Reply>, Arc<crate::update::RecordingError>>>,
}

impl CaseReport {
    /// Whether every expectation held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Runs `case` of `suite` once, as run number `run`. A session that cannot be opened is a
/// failure of the case; a scratch place that cannot be made is an error.
pub async fn run_case(
    suite: &Suite,
    case: &Case,
    run: u32,
    options: &RunOptions,
) -> Result<CaseReport, TestError> {
    let started = Instant::now();
    let scratch_error = |message: String| TestError::Scratch {
        case: case.name.clone(),
        message,
    };
    let dir = tempfile::Builder::new()
        .prefix("golem-forge-test-")
        .tempdir()
        .map_err(|e| scratch_error(e.to_string()))?;
    let zones_dir = dir.path().join("zones");
    let state_root = dir.path().join("state");
    let mut configs = Vec::new();
    for zone in &suite.zones {
        let path = zones_dir.join(zone);
        std::fs::create_dir_all(&path).map_err(|e| scratch_error(e.to_string()))?;
        let mut config = ZoneConfig::new(zone.clone(), ZoneMode::Rw);
        config.path = Some(path);
        configs.push(config);
    }
    std::fs::create_dir_all(&state_root).map_err(|e| scratch_error(e.to_string()))?;
    let zones = Sandbox::open(dir.path(), &configs).map_err(|e| scratch_error(e.to_string()))?;
    for (path, content) in &case.files {
        let at = zones
            .resolve(path.as_str())
            .map_err(|e| scratch_error(format!("{path}: {}", e.message)))?;
        zones
            .write_atomic(&at, content.as_bytes(), true)
            .map_err(|e| scratch_error(format!("{path}: {}", e.message)))?;
    }

    let replies = case
        .model
        .iter()
        .map(|reply| ScriptedReply {
            text: reply.text.clone().unwrap_or_default(),
            tool_calls: reply
                .tool_calls
                .iter()
                .map(|call| ScriptedCall {
                    name: call.name.clone(),
                    args: call.args.clone(),
                })
                .collect(),
        })
        .collect();
    let recording = dir.path().join("model.jsonl");
    let host_options = HostOptions {
        approval: Some(ApprovalMode::Interactive),
        jail_helper: options.jail_helper.clone(),
        model: options.model.clone(),
        ready_model: match options.model {
            Some(_) => None,
            None => Some(ReadyModel(Arc::new(ScriptedModel::new("case", replies)))),
        },
        record: options.record.then(|| recording.clone()),
        budget: BudgetLimits {
            cost_usd: options.cost_limit,
            ..BudgetLimits::default()
        },
        scratch: Some(Scratch {
            state_root,
            zones_dir: zones_dir.clone(),
        }),
        ..HostOptions::new(HostWorker::File(suite.worker.clone()))
    };
    let (observed, mut failures) = match SessionHost::open(host_options) {
        Ok(host) => (drive(host, case).await, Vec::new()),
        Err(err) => (
            Observed::default(),
            vec![Failure {
                expectation: "session".to_owned(),
                message: format!("the worker could not start: {err}"),
            }],
        ),
    };
    if failures.is_empty() {
        failures.extend(check_run(&case.expect, &observed));
        for (path, expect) in &case.expect.files {
            let actual = read_zone_file(&zones, path.as_str());
            failures.extend(check_file(path.as_str(), expect, &actual));
        }
        if !case.expect.files.is_empty() {
            let changes = unnamed_changes(case, &zones_dir, &suite.zones);
            failures.extend(check_unnamed_changes(&changes));
        }
    }
    let replies = (options.record && recording.exists())
        .then(|| crate::update::recorded_replies(&recording).map_err(Arc::new));
    drop(dir);
    Ok(CaseReport {
        case: case.name.clone(),
        worker: suite.worker_name.clone(),
        file: suite.file.clone(),
        run,
        replies,
        failures,
        calls: observed.calls.len(),
        usage: observed.usage,
        cost: observed.cost,
        duration: started.elapsed(),
    })
}

/// The zone files `expect.files` does not name that differ from the case's fixtures: every
/// regular file under the scratch zones (links are not followed; they are the run's own),
/// against `files:`.
fn unnamed_changes(
    case: &Case,
    zones_dir: &std::path::Path,
    zones: &[String],
) -> Vec<(String, UnnamedChange)> {
    let mut now = std::collections::BTreeMap::new();
    for zone in zones {
        collect_files(&zones_dir.join(zone), &format!("/{zone}"), &mut now);
    }
    let named = |path: &str| case.expect.files.keys().any(|p| p.as_str() == path);
    let mut changes = Vec::new();
    for (path, bytes) in &now {
        if named(path) {
            continue;
        }
        match case.files.iter().find(|(p, _)| p.as_str() == path) {
            None => changes.push((path.clone(), UnnamedChange::Created)),
            Some((_, before)) if before.as_bytes() != bytes.as_slice() => {
                changes.push((path.clone(), UnnamedChange::Changed));
            }
            Some(_) => {}
        }
    }
    for path in case.files.keys() {
        if !named(path.as_str()) && !now.contains_key(path.as_str()) {
            changes.push((path.as_str().to_owned(), UnnamedChange::Deleted));
        }
    }
    changes
}

/// Every regular file below `dir`, by the virtual path under `prefix`, with its bytes.
fn collect_files(
    dir: &std::path::Path,
    prefix: &str,
    out: &mut std::collections::BTreeMap<String, Vec<u8>>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{prefix}/{name}");
        if kind.is_dir() {
            collect_files(&entry.path(), &path, out);
        } else if kind.is_file()
            && let Ok(bytes) = std::fs::read(entry.path())
        {
            out.insert(path, bytes);
        }
    }
}

/// A zone file as the run left it, read through the sandbox of the scratch zones: what cannot
/// be read as a file there (nothing, a directory, a link out of the zone) is absent.
fn read_zone_file(zones: &Sandbox, path: &str) -> ObservedFile {
    let Ok(at) = zones.resolve(path) else {
        return ObservedFile::Absent;
    };
    match zones.read(&at) {
        Ok(bytes) => ObservedFile::Bytes(bytes),
        Err(_) => ObservedFile::Absent,
    }
}

/// Sends the case's input, answers approvals from `approve:`, and gathers what happened until
/// the session ends.
async fn drive(host: SessionHost, case: &Case) -> Observed {
    let mut attachment = host.attach(true);
    let running = host.start();
    attachment.send(ActionEvent::UserInput {
        request_id: None,
        content: case.input.clone(),
    });
    let mut observed = Observed::default();
    let mut started_args: HashMap<String, serde_json::Value> = HashMap::new();
    while let Some(event) = attachment.recv().await {
        match event {
            DisplayEvent::ToolStarted {
                tool_call_id, args, ..
            } => {
                started_args.insert(tool_call_id, args);
            }
            DisplayEvent::ToolResult {
                tool_call_id,
                tool_name,
                status,
                args,
                ..
            } => {
                let args = started_args
                    .remove(&tool_call_id)
                    .or(args)
                    .unwrap_or(serde_json::Value::Null);
                observed.calls.push(ObservedCall {
                    tool: tool_name,
                    args,
                    status,
                });
            }
            DisplayEvent::ApprovalRequired(request) => {
                observed.asked.push(request.tool_name.clone());
                let yes = case
                    .approve
                    .get(&request.tool_name)
                    .is_some_and(|answer| answer.0);
                let response = if yes {
                    ApprovalResponse::approve(request.request_id)
                } else {
                    ApprovalResponse::deny(
                        request.request_id,
                        Some("the test case's `approve:` says no".to_owned()),
                    )
                };
                attachment.send(ActionEvent::ApprovalResponse(response));
            }
            DisplayEvent::TurnEnded {
                status,
                response,
                error,
                output,
                usage,
                cost,
            } => {
                observed.status = Some(status);
                observed.answer = response;
                observed.error = error;
                observed.output = output;
                observed.usage = usage;
                observed.cost = cost;
                attachment.send(ActionEvent::EndSession { reason: None });
            }
            DisplayEvent::SessionEnded { .. } => break,
            DisplayEvent::SessionStarted { .. }
            | DisplayEvent::Message { .. }
            | DisplayEvent::Streaming { .. }
            | DisplayEvent::ApprovalResolved(_)
            | DisplayEvent::ApprovalDeferred { .. }
            | DisplayEvent::InputRequired { .. }
            | DisplayEvent::InputResolved { .. }
            | DisplayEvent::Status { .. }
            | DisplayEvent::ManualToolsAvailable { .. }
            | DisplayEvent::WorkerStarted { .. }
            | DisplayEvent::WorkerProgress(_)
            | DisplayEvent::WorkerFinished { .. }
            | DisplayEvent::Usage { .. }
            | DisplayEvent::ContextCompacted { .. }
            | DisplayEvent::ContextElided { .. }
            | DisplayEvent::ActionResult(_)
            | DisplayEvent::SessionStatus(_)
            | DisplayEvent::ApprovalsRemembered { .. } => {}
        }
    }
    drop(attachment);
    running.closed().await;
    observed
}
