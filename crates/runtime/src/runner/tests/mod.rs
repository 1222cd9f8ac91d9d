//! Tests of the agent loop with a scripted model and closure tools.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use golem_core::approval::{ApprovalController, ApprovalMode, ApprovalRequirement};
use golem_core::bus::UiEventBus;
use golem_core::fn_tool::FnTool;
use golem_core::registry::ToolRegistry;
use golem_llm::{EventStream, FinishReason, ModelRequest, ModelSpec, StreamEvent};
use golem_protocol::{ToolError, ToolErrorCode, ToolResultValue};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::context_settings::Threshold;
use crate::tree::{TreeSlot, WorkerTree};

type Script =
    Box<dyn Fn(&ModelRequest, usize) -> Result<Vec<StreamEvent>, ModelError> + Send + Sync>;

/// A model that answers each turn from a script and records the requests it got. The turns in
/// `hang_after` stream their scripted events and then never end (a slow model).
struct ScriptedModel {
    spec: ModelSpec,
    script: Script,
    requests: Mutex<Vec<ModelRequest>>,
    hang_after: Vec<usize>,
    window: Option<u64>,
}

impl ScriptedModel {
    fn new(
        script: impl Fn(&ModelRequest, usize) -> Result<Vec<StreamEvent>, ModelError>
        + Send
        + Sync
        + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            spec: ModelSpec {
                provider: "test".into(),
                model: "scripted".into(),
            },
            script: Box::new(script),
            requests: Mutex::new(Vec::new()),
            hang_after: Vec::new(),
            window: None,
        })
    }

    /// Like [`ScriptedModel::new`], but the turns in `hang_after` never end.
    fn hanging(
        hang_after: &[usize],
        script: impl Fn(&ModelRequest, usize) -> Result<Vec<StreamEvent>, ModelError>
        + Send
        + Sync
        + 'static,
    ) -> Arc<Self> {
        let mut model = Arc::into_inner(Self::new(script)).unwrap();
        model.hang_after = hang_after.to_vec();
        Arc::new(model)
    }

    fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl Model for ScriptedModel {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }
    fn context_window(&self) -> Option<u64> {
        self.window
    }
    async fn stream(
        &self,
        request: &ModelRequest,
        _cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        let turn = {
            let mut requests = self.requests.lock().unwrap();
            requests.push(request.clone());
            requests.len() - 1
        };
        let events = futures::stream::iter((self.script)(request, turn)?.into_iter().map(Ok));
        if self.hang_after.contains(&turn) {
            Ok(Box::pin(events.chain(futures::stream::pending())))
        } else {
            Ok(Box::pin(events))
        }
    }
}

fn text(answer: &str) -> Vec<StreamEvent> {
    vec![
        StreamEvent::TextDelta {
            text: answer.into(),
        },
        StreamEvent::Usage {
            usage: TokenUsage {
                input_tokens: 10,
                output_tokens: 2,
                ..TokenUsage::default()
            },
        },
        StreamEvent::Finish {
            reason: FinishReason::EndTurn,
        },
    ]
}

fn calls(calls: &[(&str, &str)]) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    for (index, (name, args)) in calls.iter().enumerate() {
        events.push(StreamEvent::ToolCallStart {
            index,
            id: format!("call_{index}"),
            name: (*name).into(),
        });
        events.push(StreamEvent::ToolCallDelta {
            index,
            arguments: (*args).into(),
        });
    }
    events.push(StreamEvent::Usage {
        usage: TokenUsage {
            input_tokens: 5,
            output_tokens: 1,
            ..TokenUsage::default()
        },
    });
    events.push(StreamEvent::Finish {
        reason: FinishReason::ToolUse,
    });
    events
}

fn echo_tool(runs: Arc<AtomicUsize>) -> FnTool {
    FnTool::new(
        "echo",
        "echoes",
        json!({"type": "object", "properties": {"say": {"type": "string"}}, "required": ["say"]}),
        move |args, _| {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok(ToolResultValue::text(
                    args["say"].as_str().unwrap_or_default().to_owned(),
                ))
            }
        },
    )
    .with_static_approval(ApprovalRequirement::PreApproved)
}

struct Setup {
    runtime: WorkerRuntime,
    model: Arc<ScriptedModel>,
    bus: UiEventBus,
    interrupt: InterruptSignal,
}

fn setup(
    model: Arc<ScriptedModel>,
    tools: Vec<FnTool>,
    keeps_history: bool,
    max_iterations: u32,
) -> Setup {
    let controller = ApprovalController::new(ApprovalMode::AutoDeny);
    setup_with(model, tools, keeps_history, max_iterations, controller)
}

/// [`setup`] with the approval controller `controller`.
fn setup_with(
    model: Arc<ScriptedModel>,
    tools: Vec<FnTool>,
    keeps_history: bool,
    max_iterations: u32,
    controller: ApprovalController,
) -> Setup {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(Arc::new(tool)).unwrap();
    }
    let bus = UiEventBus::new();
    let ui = RuntimeUI::new(bus.clone());
    let interrupt = InterruptSignal::new();
    let orchestrator = ToolCallOrchestrator::new(Arc::new(registry), controller, ui.clone());
    let runtime = WorkerRuntime::new(RuntimeParts {
        worker_name: "w".into(),
        instructions: "Be helpful.".into(),
        keeps_history,
        depth: 0,
        max_iterations,
        context: ContextPolicy::default(),
        model: model.clone(),
        orchestrator,
        tree: TreeSlot::new(WorkerTree::new(ui.clone())),
        ui,
        interrupt: interrupt.clone(),
        observer: None,
    });
    Setup {
        runtime,
        model,
        bus,
        interrupt,
    }
}

#[tokio::test]
async fn answers_without_tools_and_streams_text() {
    let model = ScriptedModel::new(|_, _| Ok(text("Hello!")));
    let mut s = setup(model, vec![], false, 5);
    let mut events = s.bus.subscribe();
    let outcome = s.runtime.run("hi").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.response, "Hello!");
    assert_eq!(outcome.turns, 1);
    let mut streamed = String::new();
    let mut done = false;
    while let Some(event) = events.try_recv() {
        if let DisplayEvent::Streaming { delta, done: d, .. } = event {
            streamed.push_str(&delta);
            done |= d;
        }
    }
    assert_eq!(streamed, "Hello!");
    assert!(done);
    let request = &s.model.requests()[0];
    assert_eq!(request.system, "Be helpful.");
    assert_eq!(request.messages, vec![Message::user("hi")]);
}

#[tokio::test]
async fn tool_results_go_back_to_the_model_in_order_and_usage_adds_up() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new(|_, turn| {
        Ok(match turn {
            0 => calls(&[
                ("echo", r#"{"say": "one"}"#),
                ("nope", "{}"),
                ("echo", r#"{"say": 5}"#),
                ("echo", r#"{"say": "#),
            ]),
            _ => text("done"),
        })
    });
    let mut s = setup(model, vec![echo_tool(runs.clone())], false, 5);
    let outcome = s.runtime.run("go").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the valid call ran");
    assert_eq!(
        outcome.usage,
        TokenUsage {
            input_tokens: 15,
            output_tokens: 3,
            ..TokenUsage::default()
        }
    );
    let second = &s.model.requests()[1];
    let Message::Tool { results } = &second.messages[2] else {
        panic!("{:?}", second.messages)
    };
    let summary: Vec<(bool, String)> = results
        .iter()
        .map(|r| (r.is_error, r.content.clone()))
        .collect();
    assert_eq!(summary[0], (false, "one".to_owned()));
    assert!(
        summary[1].0
            && summary[1]
                .1
                .starts_with("Error [NOT_FOUND]: Tool not found: nope"),
        "{summary:?}"
    );
    assert!(
        summary[2].0 && summary[2].1.starts_with("Error [INVALID_ARGUMENTS]"),
        "{summary:?}"
    );
    assert!(
        summary[3].0 && summary[3].1.contains("not valid JSON"),
        "{summary:?}"
    );
    assert_eq!(
        results
            .iter()
            .map(|r| r.tool_call_id.as_str())
            .collect::<Vec<_>>(),
        ["call_0", "call_1", "call_2", "call_3"]
    );
}

#[tokio::test]
async fn denied_calls_are_marked_for_the_model() {
    let model = ScriptedModel::new(|_, turn| {
        Ok(if turn == 0 {
            calls(&[("ask", "{}")])
        } else {
            text("ok")
        })
    });
    let ask = FnTool::new("ask", "", json!({"type": "object"}), |_, _| async {
        Ok(ToolResultValue::text("ran"))
    });
    let mut s = setup(model, vec![ask], false, 5);
    s.runtime.run("go").await;
    let Message::Tool { results } = &s.model.requests()[1].messages[2] else {
        panic!()
    };
    assert!(
        results[0]
            .content
            .starts_with("[DENIED] ask was denied: approval mode is auto_deny"),
        "{}",
        results[0].content
    );
}

#[tokio::test]
async fn max_iterations_fails_the_run_with_a_message() {
    let model = ScriptedModel::new(|_, _| Ok(calls(&[("echo", r#"{"say": "again"}"#)])));
    let mut s = setup(
        model,
        vec![echo_tool(Arc::new(AtomicUsize::new(0)))],
        false,
        3,
    );
    let outcome = s.runtime.run("loop").await;
    let RunStatus::Failed(message) = outcome.status else {
        panic!("{:?}", outcome.status)
    };
    assert!(message.contains("reached max_iterations (3)"), "{message}");
    assert_eq!(outcome.turns, 3);
}

#[tokio::test]
async fn model_errors_fail_the_run() {
    let model = ScriptedModel::new(|_, _| {
        Err(ModelError::Auth {
            provider: "anthropic".into(),
            env: "ANTHROPIC_API_KEY".into(),
            message: "bad".into(),
        })
    });
    let mut s = setup(model, vec![], false, 3);
    let outcome = s.runtime.run("x").await;
    assert_eq!(
        outcome.status,
        RunStatus::Failed("invalid API key for anthropic (ANTHROPIC_API_KEY): bad".into())
    );
}

#[tokio::test]
async fn a_broken_stream_is_retried_as_a_whole_turn() {
    let model = ScriptedModel::new(|_, turn| {
        if turn == 0 {
            Err(ModelError::StreamCut {
                provider: "p".into(),
                message: "eof".into(),
            })
        } else {
            Ok(text("recovered"))
        }
    });
    let mut s = setup(model, vec![], false, 3);
    let outcome = s.runtime.run("x").await;
    assert_eq!(outcome.response, "recovered");
    assert_eq!(s.model.requests().len(), 2);
}

#[tokio::test]
async fn chat_mode_keeps_history_and_single_mode_does_not() {
    for keeps in [true, false] {
        let model = ScriptedModel::new(|_, turn| Ok(text(&format!("answer {turn}"))));
        let mut s = setup(model, vec![], keeps, 3);
        s.runtime.run("first").await;
        s.runtime.run("second").await;
        let second = &s.model.requests()[1];
        if keeps {
            assert_eq!(
                second.messages,
                vec![
                    Message::user("first"),
                    Message::assistant("answer 0"),
                    Message::user("second")
                ]
            );
        } else {
            assert_eq!(second.messages, vec![Message::user("second")]);
        }
    }
}

#[tokio::test]
async fn interrupt_during_a_slow_tool_stops_the_turn_and_asks_for_a_summary() {
    let runs = Arc::new(AtomicUsize::new(0));
    let slow_runs = runs.clone();
    let slow = FnTool::new(
        "slow",
        "",
        json!({"type": "object"}),
        move |_, ctx: golem_core::tool::ToolContext| {
            let runs = slow_runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                ctx.cancel.cancelled().await;
                Err(ToolError::new(ToolErrorCode::Interrupted, "stopped"))
            }
        },
    )
    .with_static_approval(ApprovalRequirement::PreApproved);
    let model = ScriptedModel::new(|request, turn| {
        Ok(match turn {
            0 => calls(&[("slow", "{}"), ("echo", r#"{"say": "never"}"#)]),
            1 => {
                assert!(request.tools.is_empty(), "no tools when summarising");
                text("I started a slow task; nothing else was done.")
            }
            _ => text("back"),
        })
    });
    let mut s = setup(model, vec![slow, echo_tool(runs.clone())], true, 5);
    let interrupt = s.interrupt.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        interrupt.interrupt();
    });
    let outcome = s.runtime.run("work").await;
    assert_eq!(outcome.status, RunStatus::Interrupted);
    assert_eq!(
        outcome.response,
        "I started a slow task; nothing else was done."
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the second call never ran");
    let summary_request = &s.model.requests()[1];
    let Message::Tool { results } = &summary_request.messages[2] else {
        panic!()
    };
    assert!(results.iter().all(|r| r.is_error));
    assert!(
        matches!(summary_request.messages.last(), Some(Message::User { content }) if content.contains("interrupted"))
    );
    // The session stays usable.
    assert!(!s.interrupt.is_interrupted());
    let model_after = s.runtime.run("again").await;
    assert_eq!(model_after.status, RunStatus::Completed);
}

#[tokio::test]
async fn an_interrupt_with_no_summary_possible_still_ends_cleanly() {
    let model = ScriptedModel::new(|_, _| Err(ModelError::Cancelled));
    let mut s = setup(model, vec![], false, 3);
    let outcome = s.runtime.run("x").await;
    assert_eq!(outcome.status, RunStatus::Interrupted);
    assert_eq!(outcome.response, "[Interrupted]");
}

#[tokio::test]
async fn worker_events_frame_the_run() {
    let model = ScriptedModel::new(|_, _| Ok(text("ok")));
    let mut s = setup(model, vec![], false, 3);
    let mut events = s.bus.subscribe();
    s.runtime.run("x").await;
    let mut kinds = Vec::new();
    while let Some(event) = events.try_recv() {
        kinds.push(
            serde_json::to_value(&event).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(kinds.first().map(String::as_str), Some("workerStarted"));
    assert_eq!(kinds.last().map(String::as_str), Some("workerFinished"));
    assert!(kinds.contains(&"usage".to_owned()));
}

/// Longer than any of the interrupt tests below takes when it works; shorter than the summary
/// bound they do not set, so a run that waits for a summary it should not fails them.
const HUNG: Duration = Duration::from_secs(5);

/// Waits until `model` has been asked `count` times.
async fn asked(model: &ScriptedModel, count: usize) {
    while model.requests().len() < count {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The `status` events among `events` so far.
fn statuses(events: &mut golem_core::bus::DisplaySubscription) -> Vec<(StatusLevel, String)> {
    let mut statuses = Vec::new();
    while let Some(event) = events.try_recv() {
        if let DisplayEvent::Status { level, message } = event {
            statuses.push((level, message));
        }
    }
    statuses
}

/// A model that calls `echo` once, then hangs on every later turn.
fn echo_then_hang(hanging: &[usize]) -> Arc<ScriptedModel> {
    ScriptedModel::hanging(hanging, |_, turn| {
        Ok(match turn {
            0 => calls(&[("echo", r#"{"say": "hi"}"#)]),
            _ => Vec::new(),
        })
    })
}

#[tokio::test]
async fn interrupt_during_the_model_turn_with_no_tool_run_ends_at_once_without_a_summary() {
    let model = ScriptedModel::hanging(&[0], |_, _| {
        Ok(vec![StreamEvent::TextDelta {
            text: "Once upon".into(),
        }])
    });
    let mut s = setup(model, vec![], true, 5);
    let mut events = s.bus.subscribe();
    let (interrupt, model) = (s.interrupt.clone(), s.model.clone());
    tokio::spawn(async move {
        asked(&model, 1).await;
        interrupt.interrupt();
    });
    let outcome = tokio::time::timeout(HUNG, s.runtime.run("tell me a story"))
        .await
        .expect("the run ends at once");
    assert_eq!(outcome.status, RunStatus::Interrupted);
    assert_eq!(outcome.response, "[Interrupted]");
    assert_eq!(
        s.model.requests().len(),
        1,
        "no second request to the model"
    );
    assert_eq!(statuses(&mut events), []);
    // The session stays usable, and the conversation holds the answer as far as it came and
    // says that the user interrupted it there; the next request sends exactly that.
    assert!(!s.interrupt.is_interrupted());
    let interrupted = [
        Message::user("tell me a story"),
        Message::assistant("Once upon"),
        Message::user(crate::runner::INTERRUPTED_ANSWER_NOTE),
    ];
    assert_eq!(s.runtime.history(), interrupted);
    s.runtime.run("go on").await;
    let next = &s.model.requests()[1].messages;
    assert_eq!(next[..3], interrupted);
    assert_eq!(next[3], Message::user("go on"));
}

#[tokio::test]
async fn interrupt_after_a_tool_ran_asks_for_one_summary_and_says_so() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::hanging(&[1], |request, turn| {
        Ok(match turn {
            0 => calls(&[("echo", r#"{"say": "hi"}"#)]),
            1 => Vec::new(),
            _ => {
                assert!(request.tools.is_empty(), "no tools when summarising");
                text("I echoed hi.")
            }
        })
    });
    let mut s = setup(model, vec![echo_tool(runs.clone())], false, 5);
    let mut events = s.bus.subscribe();
    let (interrupt, model) = (s.interrupt.clone(), s.model.clone());
    tokio::spawn(async move {
        asked(&model, 2).await;
        interrupt.interrupt();
    });
    let outcome = tokio::time::timeout(HUNG, s.runtime.run("echo hi"))
        .await
        .expect("the run ends");
    assert_eq!(outcome.status, RunStatus::Interrupted);
    assert_eq!(outcome.response, "I echoed hi.");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(s.model.requests().len(), 3, "one summary request");
    assert_eq!(
        statuses(&mut events),
        [(
            StatusLevel::Info,
            "summarising… (Ctrl+C again to stop)".to_owned()
        )]
    );
}

#[tokio::test]
async fn a_summary_that_never_comes_ends_after_the_bound() {
    let model = echo_then_hang(&[1, 2]);
    let s = setup(
        model,
        vec![echo_tool(Arc::new(AtomicUsize::new(0)))],
        false,
        5,
    );
    let mut runtime = s.runtime.with_summary_timeout(Duration::from_millis(200));
    let (interrupt, model) = (s.interrupt.clone(), s.model.clone());
    tokio::spawn(async move {
        asked(&model, 2).await;
        interrupt.interrupt();
    });
    let outcome = tokio::time::timeout(HUNG, runtime.run("echo hi"))
        .await
        .expect("the summary is bounded");
    assert_eq!(outcome.status, RunStatus::Interrupted);
    assert_eq!(outcome.response, "[Interrupted]");
    assert_eq!(s.model.requests().len(), 3);
    assert!(!s.interrupt.is_interrupted());
}

#[tokio::test]
async fn a_second_interrupt_while_summarising_stops_at_once() {
    let model = echo_then_hang(&[1, 2]);
    let mut s = setup(
        model,
        vec![echo_tool(Arc::new(AtomicUsize::new(0)))],
        false,
        5,
    );
    let mut events = s.bus.subscribe();
    let (interrupt, model) = (s.interrupt.clone(), s.model.clone());
    tokio::spawn(async move {
        asked(&model, 2).await;
        interrupt.interrupt();
        // The second Ctrl+C, once the front end shows that a summary is being asked for.
        while let Some(event) = events.recv().await {
            if matches!(&event, DisplayEvent::Status { message, .. } if message.starts_with("summarising"))
            {
                interrupt.interrupt();
            }
        }
    });
    let outcome = tokio::time::timeout(HUNG, s.runtime.run("echo hi"))
        .await
        .expect("the second interrupt stops the summary");
    assert_eq!(outcome.status, RunStatus::Interrupted);
    assert_eq!(outcome.response, "[Interrupted]");
    assert_eq!(s.model.requests().len(), 3);
    assert!(!s.interrupt.is_interrupted());
}

mod context_state;
mod structured;

/// An inbox that parks every call as number 1 and answers with what `answer` holds.
#[derive(Default)]
struct OneAnswerInbox {
    answer: Mutex<Option<golem_protocol::ApprovalResponse>>,
}

impl golem_core::approval::ApprovalInbox for OneAnswerInbox {
    fn park(
        &self,
        _request: &golem_protocol::ApprovalRequest,
    ) -> Result<u64, golem_core::approval::ParkError> {
        Ok(1)
    }
    fn answer(&self, _tool_call_id: &str) -> Option<golem_protocol::ApprovalResponse> {
        self.answer.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn a_parked_turn_continues_even_in_a_runtime_that_keeps_no_history() {
    let runs = Arc::new(AtomicUsize::new(0));
    let asking = echo_tool(runs.clone()).with_static_approval(ApprovalRequirement::Ask);
    let model = ScriptedModel::new(|_, turn| {
        Ok(match turn {
            0 => calls(&[("echo", r#"{"say": "parked"}"#)]),
            _ => text("done"),
        })
    });
    let inbox = Arc::new(OneAnswerInbox::default());
    let controller = ApprovalController::new(ApprovalMode::Defer).with_inbox(inbox.clone());
    let mut s = setup_with(model, vec![asking], false, 5, controller);
    let outcome = s.runtime.run("go").await;
    assert_eq!(outcome.status, RunStatus::WaitingApproval(vec![1]));
    assert!(s.runtime.is_waiting());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // Continued before an answer: parked again, no model call.
    let again = s.runtime.continue_turn().await;
    assert_eq!(again.status, RunStatus::WaitingApproval(vec![1]));
    assert_eq!(s.model.requests().len(), 1);
    *inbox.answer.lock().unwrap() = Some(golem_protocol::ApprovalResponse::approve("x"));
    let done = s.runtime.continue_turn().await;
    assert_eq!(done.status, RunStatus::Completed, "{done:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the answered call ran once");
    // The model got its own call back with the result, after the user's input.
    let second = &s.model.requests()[1];
    assert_eq!(second.messages.len(), 3, "{:?}", second.messages);
    assert_eq!(second.messages[0], Message::user("go"));
    assert!(
        matches!(&second.messages[1], Message::Assistant { tool_calls, .. } if tool_calls.len() == 1)
    );
    assert!(
        matches!(&second.messages[2], Message::Tool { results } if results.len() == 1 && !results[0].is_error)
    );
    assert!(!s.runtime.is_waiting());
    assert!(matches!(
        s.runtime.continue_turn().await.status,
        RunStatus::Failed(message) if message.contains("nothing to continue")
    ));
}
