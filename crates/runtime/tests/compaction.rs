//! Compacting long sessions against the mock provider, on each wire: past `compact_at` the
//! history before the last turns becomes a summary written by the model (the mock answers the
//! summary request by rule), a provider's overflow error makes the runtime compact once and
//! send the request again, the `compact` action compacts when asked, and a resumed session
//! sends the compacted history, never what was compacted away. One long turn against a small
//! window completes: what is kept whole is bounded by the window, and each compaction replaces
//! the previous summary.

use std::time::Duration;

use golem_protocol::{ActionEvent, CompactionReason, DisplayEvent, SessionAction, TurnStatus};
use golem_runtime::host::{HostOptions, HostWorker};
use golem_testkit::mock::{Chunk, Recorded};

use crate::long_sessions::{WINDOW, Wire, program, program_sized, run};

/// A text only the summary request holds (the start of the runtime's summary prompt).
const SUMMARY_ASKED: &str = "[The conversation above is about to be replaced";

/// What the model summarises.
const SUMMARY: &str = "SUMMARY: big.txt is 500 lines of x; the user wants it read again.";

/// How long the stream of a summary pauses, where a test measures compacting.
const SUMMARY_PAUSE: Duration = Duration::from_millis(40);

fn is_summary_request(request: &Recorded) -> bool {
    request.body.to_string().contains(SUMMARY_ASKED)
}

/// The `contextCompacted` events among `events`.
fn compactions(events: &[DisplayEvent]) -> Vec<CompactionReason> {
    events
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::ContextCompacted { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

fn completed(ended: &DisplayEvent) -> bool {
    matches!(
        ended,
        DisplayEvent::TurnEnded {
            status: TurnStatus::Completed,
            ..
        }
    )
}

/// 300 turns of 30 KB results on `wire`, managed by compaction alone (no elision).
async fn three_hundred_turns_compacted_on(wire: Wire) {
    let program = program(wire, 300, "context: {elide_at: never}\n").await;
    program
        .server
        .answer_when(SUMMARY_ASKED, wire.text(SUMMARY));
    let (ended, seen) = run(&program, 300).await;
    assert!(completed(&ended), "{ended:?}");
    let requests = program.server.requests();
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    assert!(summaries >= 10, "{summaries} compactions");
    assert_eq!(requests.len(), 301 + summaries, "every request fitted");
    let reasons = compactions(&seen);
    assert_eq!(reasons.len(), summaries);
    assert!(
        reasons.contains(&CompactionReason::Threshold),
        "{reasons:?}"
    );
    // The last request holds the summary and only the turns since the last compaction.
    let last = requests.last().unwrap();
    assert!(
        last.body.to_string().contains("SUMMARY: big.txt"),
        "{}",
        last.body
    );
    let results = wire.tool_results(&last.body);
    assert!(results.len() < 30, "{}", results.len());
    assert!(results.iter().all(|r| r.content.len() > 29_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_turns_complete_by_compacting_on_openai_chat() {
    three_hundred_turns_compacted_on(Wire::Chat).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_turns_complete_by_compacting_on_openai_responses() {
    three_hundred_turns_compacted_on(Wire::Responses).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_turns_complete_by_compacting_on_anthropic() {
    three_hundred_turns_compacted_on(Wire::Anthropic).await;
}

/// 20 reads on `wire` whose provider takes half the window golem-forge believes (about 13
/// results): the overflow error comes before any threshold, once. Returns the program after
/// the run.
async fn overflowed_once_on(wire: Wire) -> crate::scenario::Program {
    let program = program(wire, 20, "context: {elide_at: never}\n").await;
    program.server.set_context_limit(WINDOW / 2);
    program
        .server
        .answer_when(SUMMARY_ASKED, wire.text(SUMMARY));
    let (ended, seen) = run(&program, 20).await;
    assert!(completed(&ended), "{ended:?}");
    assert_eq!(compactions(&seen), [CompactionReason::Overflow]);
    let requests = program.server.requests();
    let summary = requests.iter().position(is_summary_request).unwrap();
    // The request that overflowed, the summary, then the same turn again, compacted.
    let (failed, retried) = (&requests[summary - 1], &requests[summary + 1]);
    assert!(failed.body.to_string().len() as u64 / 4 > WINDOW / 2);
    assert!(!is_summary_request(retried));
    assert!(retried.body.to_string().contains("SUMMARY: big.txt"));
    assert_eq!(
        wire.tool_results(&retried.body)
            .last()
            .map(|r| r.tool_call_id.clone()),
        wire.tool_results(&failed.body)
            .last()
            .map(|r| r.tool_call_id.clone()),
        "the same turn is sent again"
    );
    // 20 reads and the answer, the overflowed request, the summary.
    assert_eq!(requests.len(), 23);
    program
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_compacts_once_and_retries_on_openai_chat() {
    overflowed_once_on(Wire::Chat).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_compacts_once_and_retries_on_openai_responses() {
    overflowed_once_on(Wire::Responses).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_compacts_once_and_retries_on_anthropic() {
    overflowed_once_on(Wire::Anthropic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_sends_the_compacted_history() {
    let program = overflowed_once_on(Wire::Chat).await;
    program.server.set_fallback(Wire::Chat.text("Resumed."));
    let before = program.server.requests().len();
    let id = program
        .path(".golem-forge/sessions")
        .read_dir()
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let id = id.file_stem().unwrap().to_str().unwrap().to_owned();
    let transcript =
        std::fs::read_to_string(program.path(&format!(".golem-forge/sessions/{id}.jsonl")))
            .unwrap();
    assert!(
        transcript.contains(r#""kind":"compacted""#),
        "the transcript records it"
    );
    let options = HostOptions {
        worker: HostWorker::Resume {
            program_root: program.dir.path().to_owned(),
            id,
        },
        ..program.options()
    };
    let mut s = program.start_with(options, true);
    s.input("and now?");
    let (ended, _) = s.turn_ended().await;
    assert!(completed(&ended), "{ended:?}");
    s.end().await;
    let requests = program.server.requests();
    assert_eq!(requests.len(), before + 1);
    let sent = &requests[before].body;
    let messages = sent["messages"].as_array().unwrap();
    let first_user = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap();
    assert!(first_user.contains(SUMMARY), "{first_user}");
    // Only the turns after the compaction: far fewer than the 20 results of the session.
    let results = Wire::Chat.tool_results(sent);
    assert!(results.len() < 12, "{}", results.len());
    assert!(
        messages.last().unwrap()["content"] == "and now?",
        "{:?}",
        messages.last()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compact_action_summarises_with_the_focus_and_status_shows_the_fill() {
    let program = program(Wire::Chat, 8, "").await;
    // The summary's stream pauses, so that its duration has a floor that cannot be missed.
    program.server.answer_when(
        SUMMARY_ASKED,
        golem_testkit::Wire::OpenAi.text_stalled(SUMMARY, Chunk::Delay(SUMMARY_PAUSE)),
    );
    let mut options = program.options();
    options.max_iterations = Some(20);
    let mut s = program.start_with(options, true);
    s.input("read big.txt a few times");
    let (ended, _) = s.turn_ended().await;
    assert!(completed(&ended), "{ended:?}");
    let before = s.status().await;
    let fill = before.context.expect("the fill after a call");
    assert_eq!(fill.window, WINDOW);
    assert!(fill.used > 8 * 7_000, "{fill:?}");
    s.send(ActionEvent::Compact {
        request_id: Some("k1".into()),
        focus: Some("the line count".into()),
    });
    let (result, seen) = s
        .until(|e| matches!(e, DisplayEvent::ActionResult(_)))
        .await;
    let DisplayEvent::ActionResult(result) = result else {
        unreachable!()
    };
    assert_eq!(result.action, SessionAction::Compact);
    assert_eq!(result.request_id.as_deref(), Some("k1"));
    assert!(result.ok, "{result:?}");
    assert!(
        result.message.starts_with("compacted: "),
        "{}",
        result.message
    );
    // The same numbers as the `contextCompacted` line beside it, grouped the same way.
    let Some(DisplayEvent::ContextCompacted {
        tokens_before,
        tokens_after,
        duration_ms,
        ..
    }) = seen
        .iter()
        .find(|e| matches!(e, DisplayEvent::ContextCompacted { .. }))
    else {
        panic!("no contextCompacted in {seen:?}")
    };
    assert!(*tokens_before >= 1_000, "{tokens_before}");
    // How long compacting took counts the summary request, its pause included.
    assert!(
        *duration_ms >= SUMMARY_PAUSE.as_millis() as u64,
        "{duration_ms} ms"
    );
    assert!(
        result.message.ends_with(&format!(
            "about {} tokens instead of {}",
            golem_core::text::thousands(*tokens_after),
            golem_core::text::thousands(*tokens_before)
        )),
        "{}",
        result.message
    );
    assert_eq!(compactions(&seen), [CompactionReason::Requested]);
    let requests = program.server.requests();
    let summary = requests.last().unwrap().body.to_string();
    assert!(summary.contains(SUMMARY_ASKED));
    assert!(
        summary.contains("[Keep in focus: the line count]"),
        "{summary}"
    );
    let after = s.status().await;
    assert!(after.messages < before.messages, "{after:?}");
    assert!(
        after.context.unwrap().used < fill.used / 2,
        "{:?} after {fill:?}",
        after.context
    );
    s.end().await;
}

/// The first line of a summary message.
const SUMMARY_HEADER: &str = "[The conversation before this point was compacted";

/// One input, then 60 reads of a 4 KB file on `wire`, against a model (and a mock) whose
/// window is 8000 tokens, a local model's usual size, with the default context settings.
async fn sixty_reads_in_a_small_window_on(wire: Wire) {
    const SMALL: u64 = 8_000;
    let program = program_sized(wire, 60, SMALL, 68, "").await;
    program
        .server
        .answer_when(SUMMARY_ASKED, wire.text(SUMMARY));
    let (ended, seen) = run(&program, 60).await;
    assert!(completed(&ended), "{ended:?}");
    let requests = program.server.requests();
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    // Every request fitted (the mock refused none), and a summary call is rare.
    assert_eq!(requests.len(), 61 + summaries, "every request fitted");
    assert!(
        summaries <= 3,
        "{summaries} summary calls for 60 tool turns"
    );
    assert!(
        compactions(&seen)
            .iter()
            .all(|reason| *reason == CompactionReason::Threshold),
        "{:?}",
        compactions(&seen)
    );
    for request in requests.iter().filter(|r| !is_summary_request(r)) {
        let body = request.body.to_string();
        assert!((body.len() as u64).div_ceil(4) <= SMALL);
        // One summary at most, never one inside another.
        assert!(body.matches(SUMMARY_HEADER).count() <= 1, "{body}");
        // The newest result is whole.
        let results = wire.tool_results(&request.body);
        if let Some(newest) = results.last() {
            assert!(newest.content.len() > 4_000, "{}", newest.content);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_reads_complete_in_an_8k_window_on_openai_chat() {
    sixty_reads_in_a_small_window_on(Wire::Chat).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_reads_complete_in_an_8k_window_on_openai_responses() {
    sixty_reads_in_a_small_window_on(Wire::Responses).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_reads_complete_in_an_8k_window_on_anthropic() {
    sixty_reads_in_a_small_window_on(Wire::Anthropic).await;
}
