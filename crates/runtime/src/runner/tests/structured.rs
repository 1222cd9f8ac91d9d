//! Structured answers in the agent loop: a valid answer becomes the run's `output`; an
//! invalid one is sent back once with its violations; a second invalid one fails the turn; on
//! the Anthropic wire the `final_result` call is the answer and is never run as a tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use super::{ScriptedModel, calls, echo_tool, setup, text};
use crate::output::OutputSchema;
use crate::runner::{Message, RunStatus};

fn verdict_schema() -> OutputSchema {
    OutputSchema::new(
        "judge",
        json!({"type": "object", "properties": {
            "verdict": {"enum": ["ok", "bad"]},
            "reasons": {"type": "array", "items": {"type": "string"}}},
            "required": ["verdict"]}),
    )
    .unwrap()
}

/// The last user message's text of a request (a repair request's).
fn last_user_text(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::User { content } => Some(content.clone()),
            Message::Assistant { .. } | Message::Tool { .. } => None,
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_valid_answer_is_the_runs_output() {
    let model = ScriptedModel::new(|_, _| Ok(text(r#"{"verdict": "ok", "reasons": ["fine"]}"#)));
    let s = setup(model, vec![], false, 5);
    let mut runtime = s.runtime.with_output(Some(verdict_schema()));
    let outcome = runtime.run("judge it").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(
        outcome.output,
        Some(json!({"verdict": "ok", "reasons": ["fine"]}))
    );
    assert_eq!(
        outcome.response,
        r#"{"verdict": "ok", "reasons": ["fine"]}"#
    );
    let requests = s.model.requests();
    assert_eq!(requests.len(), 1);
    let format = requests[0].output.as_ref().unwrap();
    assert_eq!(format.name, "judge");
    assert_eq!(format.schema["required"], json!(["verdict"]));
}

#[tokio::test]
async fn a_free_text_worker_has_no_output_and_asks_for_none() {
    let model = ScriptedModel::new(|_, _| Ok(text(r#"{"verdict": "ok"}"#)));
    let mut s = setup(model, vec![], false, 5);
    let outcome = s.runtime.run("judge it").await;
    assert_eq!(outcome.output, None);
    assert!(s.model.requests()[0].output.is_none());
}

#[tokio::test]
async fn an_invalid_answer_is_repaired_once() {
    let model = ScriptedModel::new(|_, turn| {
        Ok(match turn {
            0 => text(r#"{"verdict": "maybe"}"#),
            _ => text(r#"{"verdict": "bad"}"#),
        })
    });
    let s = setup(model, vec![], false, 5);
    let mut runtime = s.runtime.with_output(Some(verdict_schema()));
    let outcome = runtime.run("judge it").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.output, Some(json!({"verdict": "bad"})));
    let requests = s.model.requests();
    assert_eq!(requests.len(), 2, "exactly one repair request");
    let repair = last_user_text(&requests[1].messages);
    assert!(repair.contains("at `/verdict`"), "{repair}");
    assert!(repair.contains("\"maybe\""), "{repair}");
    assert!(matches!(
        requests[1].messages.as_slice(),
        [
            Message::User { .. },
            Message::Assistant { .. },
            Message::User { .. }
        ]
    ));
}

#[tokio::test]
async fn unparsable_json_is_repaired_too() {
    let model = ScriptedModel::new(|_, turn| {
        Ok(match turn {
            0 => text("The verdict is ok."),
            _ => text(r#"{"verdict": "ok"}"#),
        })
    });
    let s = setup(model, vec![], false, 5);
    let mut runtime = s.runtime.with_output(Some(verdict_schema()));
    let outcome = runtime.run("judge it").await;
    assert_eq!(outcome.output, Some(json!({"verdict": "ok"})));
    let repair = last_user_text(&s.model.requests()[1].messages);
    assert!(repair.contains("not valid JSON"), "{repair}");
}

#[tokio::test]
async fn a_second_invalid_answer_fails_the_turn_naming_the_violation() {
    let model = ScriptedModel::new(|_, turn| {
        Ok(match turn {
            0 => text(r#"{"verdict": "maybe"}"#),
            _ => text(r#"{"reasons": []}"#),
        })
    });
    let s = setup(model, vec![], false, 5);
    let mut runtime = s.runtime.with_output(Some(verdict_schema()));
    let outcome = runtime.run("judge it").await;
    let RunStatus::Failed(message) = &outcome.status else {
        panic!("{:?}", outcome.status);
    };
    assert!(
        message.contains("at `/`: \"verdict\" is a required property"),
        "{message}"
    );
    assert_eq!(outcome.output, None);
    assert_eq!(s.model.requests().len(), 2);
}

#[tokio::test]
async fn a_final_result_call_is_the_answer_and_never_runs_as_a_tool() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new(|_, turn| {
        Ok(match turn {
            0 => calls(&[("echo", r#"{"say": "look"}"#)]),
            1 => calls(&[("final_result", r#"{"verdict": "maybe"}"#)]),
            _ => calls(&[("final_result", r#"{"verdict": "ok"}"#)]),
        })
    });
    let s = setup(model, vec![echo_tool(runs.clone())], true, 5);
    let mut runtime = s.runtime.with_output(Some(verdict_schema()));
    let outcome = runtime.run("judge it").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.output, Some(json!({"verdict": "ok"})));
    assert_eq!(outcome.response, r#"{"verdict":"ok"}"#);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only echo ran");
    let requests = s.model.requests();
    assert_eq!(requests.len(), 3);
    // The invalid call was answered by a result naming the violation, not by running it.
    let Some(Message::Tool { results }) = requests[2].messages.last() else {
        panic!("{:?}", requests[2].messages);
    };
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].tool_name, "final_result");
    assert!(results[0].is_error);
    assert!(results[0].content.contains("at `/verdict`"), "{results:?}");
    // The accepted call has its result in the kept history, so that a next turn is valid.
    let Some(Message::Tool { results }) = runtime.history().last() else {
        panic!("{:?}", runtime.history());
    };
    assert_eq!(results[0].content, "Final answer accepted.");
    assert!(!results[0].is_error);
}
