//! Tests of context management in the agent loop: eliding old tool results, compacting the
//! history (past the threshold, after an overflow, when asked), and failing clearly when
//! nothing helps.

use super::*;

/// A tool that returns `bytes` bytes of text for any path.
fn read_tool(bytes: usize) -> FnTool {
    FnTool::new(
        "read",
        "reads a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        move |_, _| async move { Ok(ToolResultValue::text("x".repeat(bytes))) },
    )
    .with_static_approval(ApprovalRequirement::PreApproved)
}

/// A model with a `window` that reads `/notes/N.md` for `reads` turns, then answers; its usage
/// is each request's estimated size, as a provider would count it. Asked for a summary of the
/// history, it writes one; a request above `limit` tokens gets an overflow error.
fn reader_with_limit(window: u64, reads: usize, limit: Option<u64>) -> Arc<ScriptedModel> {
    reader_summarising(window, reads, limit, |_| {
        "SUMMARY: the notes so far say x.".to_owned()
    })
}

/// [`reader_with_limit`] whose `n`-th summary (from 1) is `summary(n)`.
fn reader_summarising(
    window: u64,
    reads: usize,
    limit: Option<u64>,
    summary: fn(usize) -> String,
) -> Arc<ScriptedModel> {
    let done = AtomicUsize::new(0);
    let summaries = AtomicUsize::new(0);
    let mut model = Arc::into_inner(ScriptedModel::new(move |request, _| {
        let size = golem_llm::context::estimate_request(request);
        if let Some(limit) = limit
            && size > limit
        {
            return Err(ModelError::ContextOverflow {
                provider: "test".into(),
                message: format!("{size} tokens > {limit} maximum"),
            });
        }
        let mut events = if is_summary_request(request) {
            text(&summary(summaries.fetch_add(1, Ordering::SeqCst) + 1))
        } else {
            match done.fetch_add(1, Ordering::SeqCst) {
                turn if turn < reads => {
                    calls(&[("read", &format!(r#"{{"path": "/notes/{turn}.md"}}"#))])
                }
                _ => text("done"),
            }
        };
        for event in &mut events {
            if let StreamEvent::Usage { usage } = event {
                usage.input_tokens = golem_llm::context::estimate_request(request);
            }
        }
        Ok(events)
    }))
    .unwrap();
    model.window = Some(window);
    Arc::new(model)
}

fn reader(window: u64, reads: usize) -> Arc<ScriptedModel> {
    reader_with_limit(window, reads, None)
}

/// Whether `request` asks for a summary of the history.
fn is_summary_request(request: &ModelRequest) -> bool {
    matches!(
        request.messages.last(),
        Some(Message::User { content }) if content.starts_with("[The conversation above is about to be replaced")
    )
}

/// Per request, whether each tool result was sent elided.
fn elided_per_request(model: &ScriptedModel) -> Vec<Vec<bool>> {
    model
        .requests()
        .iter()
        .map(|request| {
            request
                .messages
                .iter()
                .filter_map(|m| match m {
                    Message::Tool { results } => Some(
                        results[0]
                            .content
                            .ends_with("elided; call it again to see it]"),
                    ),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn old_tool_results_are_elided_oldest_first_and_stay_elided() {
    // 8000-byte results are about 2000 tokens; elision starts above 6000 of the 10000 tokens.
    let mut s = setup(reader(10_000, 8), vec![read_tool(8000)], true, 20);
    s.runtime.set_context_policy(ContextPolicy {
        elide_at: Threshold::Permille(600),
        compact_at: Threshold::Never,
        keep_turns: 2,
    });
    let mut events = s.bus.subscribe();
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let per_request = elided_per_request(&s.model);
    assert!(
        per_request.iter().any(|r| r.contains(&true)),
        "{per_request:?}"
    );
    for (n, request) in per_request.iter().enumerate() {
        // Oldest first: the elided results are the first ones.
        let elided = request.iter().filter(|e| **e).count();
        assert!(
            request[..elided].iter().all(|e| *e),
            "request {n}: {request:?}"
        );
        // The last two turns keep their results.
        assert!(
            !request.iter().rev().take(2).any(|e| *e),
            "request {n}: {request:?}"
        );
        // What was elided stays elided.
        if n > 0 {
            let before = &per_request[n - 1];
            assert!(
                before.iter().zip(request).all(|(b, now)| !b || *now),
                "{per_request:?}"
            );
        }
    }
    // Each request fits under the threshold, and the previous request's messages come again
    // unchanged up to the first newly elided result.
    let requests = s.model.requests();
    for request in &requests {
        let size = golem_llm::context::estimate_request(request);
        assert!(size <= 6100, "{size}");
    }
    let Message::Tool { results } = &requests[8].messages[2] else {
        panic!("{:?}", requests[8].messages[2])
    };
    assert_eq!(
        results[0].content,
        "[read /notes/0.md: 8 KB, elided; call it again to see it]"
    );
    // The history keeps everything.
    let kept = s
        .runtime
        .history()
        .iter()
        .filter(|m| matches!(m, Message::Tool { results } if results[0].content.len() == 8000))
        .count();
    assert_eq!(kept, 8);
    // Each elision is one `contextElided` with its numbers: how many results it replaced
    // (what each request newly sent elided), from above `elide_at` to below it, in the
    // root's window; and no status says it any more.
    let (elisions, statuses) = elisions(&mut events);
    let newly: Vec<u64> = per_request
        .windows(2)
        .map(|pair| pair[1].iter().filter(|e| **e).count() - pair[0].iter().filter(|e| **e).count())
        .filter(|n| *n > 0)
        .map(|n| n as u64)
        .collect();
    assert_eq!(
        elisions.iter().map(|e| e.results).collect::<Vec<_>>(),
        newly,
        "{elisions:?}"
    );
    for e in &elisions {
        assert_eq!(e.window, 10_000, "{e:?}");
        assert!(!e.harder, "{e:?}");
        assert!(e.tokens_before > 6_000 && e.tokens_after <= 6_000, "{e:?}");
        assert!(e.worker.is_none(), "{e:?}");
    }
    assert!(
        !statuses.iter().any(|(_, m)| m.contains("elided")),
        "{statuses:?}"
    );
}

/// A `contextElided` event's fields.
#[derive(Debug)]
struct Elided {
    tokens_before: u64,
    tokens_after: u64,
    window: u64,
    results: u64,
    harder: bool,
    worker: Option<golem_protocol::WorkerOrigin>,
}

/// The `contextElided` events seen so far, and the statuses among them.
fn elisions(
    events: &mut golem_core::bus::DisplaySubscription,
) -> (Vec<Elided>, Vec<(StatusLevel, String)>) {
    let (mut elided, mut statuses) = (Vec::new(), Vec::new());
    while let Some(event) = events.try_recv() {
        match event {
            DisplayEvent::ContextElided {
                tokens_before,
                tokens_after,
                window,
                results,
                harder,
                worker,
            } => elided.push(Elided {
                tokens_before,
                tokens_after,
                window,
                results,
                harder,
                worker,
            }),
            DisplayEvent::Status { level, message } => statuses.push((level, message)),
            _ => {}
        }
    }
    (elided, statuses)
}

#[tokio::test]
async fn without_elision_every_result_is_sent_whole() {
    let mut s = setup(reader(10_000, 8), vec![read_tool(8000)], true, 20);
    s.runtime.set_context_policy(ContextPolicy {
        elide_at: Threshold::Never,
        compact_at: Threshold::Never,
        keep_turns: 2,
    });
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let per_request = elided_per_request(&s.model);
    assert!(per_request.iter().flatten().all(|e| !e), "{per_request:?}");
}

#[tokio::test]
async fn a_context_overflow_fails_the_run_saying_what_to_do() {
    let model = ScriptedModel::new(|_, _| {
        Err(ModelError::ContextOverflow {
            provider: "anthropic".into(),
            message: "prompt is too long: 208310 tokens > 200000 maximum".into(),
        })
    });
    let mut s = setup(model, vec![], false, 5);
    let outcome = s.runtime.run("hi").await;
    let RunStatus::Failed(message) = &outcome.status else {
        panic!("{outcome:?}")
    };
    assert!(
        message.starts_with(
            "the request does not fit anthropic's context window: prompt is too long: 208310 \
             tokens > 200000 maximum. w's conversation (about "
        ),
        "{message}"
    );
    assert!(
        message
            .contains("the context window of test:scripted (32768 tokens as golem-forge knows it)"),
        "{message}"
    );
    assert!(message.contains("`context_windows:`"), "{message}");
    // Compacting was tried, but there was nothing before the last turns.
    assert!(
        message.contains(
            "(compacting did not help: there is nothing to compact before the last 4 turns)"
        ),
        "{message}"
    );
    assert_eq!(s.model.requests().len(), 1, "an overflow is not retried");
}

/// The `contextCompacted` events seen so far.
fn compactions(events: &mut golem_core::bus::DisplaySubscription) -> Vec<(CompactionReason, u64)> {
    let mut seen = Vec::new();
    while let Some(event) = events.try_recv() {
        if let DisplayEvent::ContextCompacted {
            reason,
            messages_replaced,
            ..
        } = event
        {
            seen.push((reason, messages_replaced));
        }
    }
    seen
}

fn policy(elide_at: Threshold, compact_at: Threshold) -> ContextPolicy {
    ContextPolicy {
        elide_at,
        compact_at,
        keep_turns: 2,
    }
}

#[tokio::test]
async fn past_compact_at_the_history_before_the_last_turns_becomes_a_summary() {
    // 8000-byte results are about 2000 tokens; compacting starts above 6000 of 10000.
    let mut s = setup(reader(10_000, 8), vec![read_tool(8000)], true, 20);
    s.runtime
        .set_context_policy(policy(Threshold::Never, Threshold::Permille(600)));
    let mut events = s.bus.subscribe();
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let requests = s.model.requests();
    let summaries: Vec<&ModelRequest> = requests.iter().filter(|r| is_summary_request(r)).collect();
    assert!(!summaries.is_empty(), "it compacted");
    // The summary call sends the same system prompt and tools, so the cache keeps matching.
    for summary in &summaries {
        assert_eq!(summary.system, requests[0].system);
        assert_eq!(summary.tools, requests[0].tools);
    }
    // No request of the conversation passed the threshold by more than one result.
    for request in requests.iter().filter(|r| !is_summary_request(r)) {
        let size = golem_llm::context::estimate_request(request);
        assert!(size < 8_500, "{size}");
    }
    // The last request starts with the summary, which keeps the user's input word for word,
    // and ends with the last turns as they were.
    let last = requests.last().unwrap();
    let Message::User { content } = &last.messages[0] else {
        panic!("{:?}", last.messages[0])
    };
    assert!(
        content.contains("SUMMARY: the notes so far say x."),
        "{content}"
    );
    assert!(
        content.ends_with("word for word:]\nread the notes"),
        "{content}"
    );
    assert!(matches!(last.messages[1], Message::Assistant { .. }));
    // The kept history is the compacted one.
    assert_eq!(s.runtime.history()[0], last.messages[0]);
    let seen = compactions(&mut events);
    assert_eq!(seen.len(), summaries.len());
    assert!(
        seen.iter()
            .all(|(reason, replaced)| *reason == CompactionReason::Threshold && *replaced >= 2),
        "{seen:?}"
    );
    // The summary call is counted like any call.
    assert!(outcome.usage.output_tokens >= 2 * summaries.len() as u64);
}

#[tokio::test]
async fn old_results_are_elided_before_anything_is_compacted() {
    // Three kept turns take 6000 tokens, under the elision target (6500), and the stubs of the
    // elided ones (about 40 tokens a turn) add up past 8000 after about 55 turns.
    let mut s = setup(reader(10_000, 70), vec![read_tool(8000)], true, 80);
    s.runtime.set_context_policy(ContextPolicy {
        keep_turns: 3,
        ..policy(Threshold::Permille(750), Threshold::Permille(800))
    });
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let requests = s.model.requests();
    let first_summary = requests.iter().position(is_summary_request);
    let first_elided = elided_per_request(&s.model)
        .iter()
        .position(|r| r.contains(&true));
    let (Some(summary), Some(elided)) = (first_summary, first_elided) else {
        panic!("both happen: {first_summary:?} {first_elided:?}")
    };
    assert!(elided < summary, "{elided} < {summary}");
}

#[tokio::test]
async fn an_overflow_compacts_once_and_sends_the_request_again() {
    // The window is said to be large, so no threshold is reached; the provider's limit is not.
    let model = reader_with_limit(100_000, 4, Some(7_000));
    let mut s = setup(model, vec![read_tool(8000)], true, 20);
    s.runtime
        .set_context_policy(policy(Threshold::Never, Threshold::Permille(800)));
    let mut events = s.bus.subscribe();
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = s.model.requests();
    let sizes: Vec<u64> = requests
        .iter()
        .map(golem_llm::context::estimate_request)
        .collect();
    let overflowed: Vec<usize> = (0..requests.len()).filter(|n| sizes[*n] > 7_000).collect();
    assert_eq!(overflowed.len(), 1, "{sizes:?}");
    let at = overflowed[0];
    // The overflowing request, the summary, then the same turn again with the summary.
    assert!(is_summary_request(&requests[at + 1]), "{sizes:?}");
    assert!(!is_summary_request(&requests[at + 2]));
    assert_eq!(
        requests[at + 2].messages.last(),
        requests[at].messages.last(),
        "the same turn is sent again"
    );
    assert_eq!(
        compactions(&mut events),
        [(CompactionReason::Overflow, 5)],
        "the input and the first two reads are summarised"
    );
}

#[tokio::test]
async fn with_compact_at_never_an_overflow_is_an_error_that_names_the_window() {
    let model = reader_with_limit(100_000, 4, Some(7_000));
    let mut s = setup(model, vec![read_tool(8000)], true, 20);
    s.runtime
        .set_context_policy(policy(Threshold::Never, Threshold::Never));
    let outcome = s.runtime.run("read the notes").await;
    let RunStatus::Failed(message) = &outcome.status else {
        panic!("{outcome:?}")
    };
    assert!(
        message.contains(
            "the context window of test:scripted (100000 tokens as golem-forge knows it) \
             (compacting is off: `context.compact_at: never`)"
        ),
        "{message}"
    );
    assert!(!s.model.requests().iter().any(is_summary_request));
}

#[tokio::test]
async fn compacting_when_asked_keeps_the_focus_in_the_summary() {
    let mut s = setup(reader(100_000, 4), vec![read_tool(8000)], true, 20);
    let mut events = s.bus.subscribe();
    assert_eq!(
        s.runtime.run("read the notes").await.status,
        RunStatus::Completed
    );
    let before = s.runtime.history().len();
    let said = s
        .runtime
        .compact_history(Some("the failing tests"))
        .await
        .unwrap();
    assert!(said.starts_with("compacted: "), "{said}");
    let requests = s.model.requests();
    let summary = requests.last().unwrap();
    assert!(is_summary_request(summary));
    let Some(Message::User { content }) = summary.messages.last() else {
        unreachable!()
    };
    assert!(
        content.ends_with("[Keep in focus: the failing tests]"),
        "{content}"
    );
    let history = s.runtime.history();
    assert!(history.len() < before, "{} < {before}", history.len());
    assert!(
        matches!(&history[0], Message::User { content } if content.contains("SUMMARY")),
        "{history:?}"
    );
    let seen = compactions(&mut events);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, CompactionReason::Requested);
    // Too little left to compact again: the last turns are always kept.
    let again = s.runtime.compact_history(None).await.unwrap_err();
    assert_eq!(
        again.to_string(),
        "the conversation was not compacted: there is nothing to compact before the last 4 turns"
    );
}

#[tokio::test]
async fn a_sub_worker_compacts_within_its_own_run() {
    let mut s = setup(reader(10_000, 8), vec![read_tool(8000)], false, 20);
    s.runtime.parts.depth = 1;
    s.runtime
        .set_context_policy(policy(Threshold::Never, Threshold::Permille(600)));
    let mut events = s.bus.subscribe();
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let mut origins = Vec::new();
    while let Some(event) = events.try_recv() {
        if let DisplayEvent::ContextCompacted { worker, .. } = event {
            origins.push(worker.map(|w| w.depth));
        }
    }
    assert!(!origins.is_empty(), "it compacted");
    assert!(origins.iter().all(|depth| *depth == Some(1)), "{origins:?}");
    // A sub-worker's run starts afresh: nothing is kept for the next one.
    assert!(s.runtime.history().is_empty());
}

/// The first line of a summary message.
const SUMMARY_HEADER: &str = "[The conversation before this point was compacted";

/// The text of `request`'s user messages, joined.
fn user_text(request: &ModelRequest) -> String {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::User { content } => Some(content.as_str()),
            Message::Assistant { .. } | Message::Tool { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn the_kept_turns_are_elided_inside_when_they_alone_pass_the_window() {
    // Five kept turns of 8000-byte results are about 10 000 tokens, the whole window, which is
    // also the provider's limit; compacting is off, so only elision can keep the turn going.
    let model = reader_with_limit(10_000, 10, Some(10_000));
    let mut s = setup(model, vec![read_tool(8000)], true, 20);
    s.runtime.set_context_policy(ContextPolicy {
        elide_at: Threshold::Permille(600),
        compact_at: Threshold::Never,
        keep_turns: 5,
    });
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let per_request = elided_per_request(&s.model);
    for (n, request) in per_request.iter().enumerate() {
        // The newest result is always whole, and the elided ones are the oldest.
        assert!(
            request.last().is_none_or(|e| !e),
            "request {n}: {request:?}"
        );
        let elided = request.iter().filter(|e| **e).count();
        assert!(
            request[..elided].iter().all(|e| *e),
            "request {n}: {request:?}"
        );
    }
    // The last request elides inside its five kept turns: only the newest two stay whole.
    let last = per_request.last().unwrap();
    assert_eq!(last.len(), 10);
    assert_eq!(
        last,
        &[true, true, true, true, true, true, true, true, false, false]
    );
    for request in s.model.requests() {
        let size = golem_llm::context::estimate_request(&request);
        assert!(size <= 6_100, "{size}");
    }
}

#[tokio::test]
async fn a_second_compaction_folds_the_previous_summary_in() {
    let model = reader_summarising(10_000, 8, None, |n| {
        format!("SUMMARY {n}: the notes so far say x.")
    });
    let mut s = setup(model, vec![read_tool(8000)], true, 20);
    s.runtime
        .set_context_policy(policy(Threshold::Never, Threshold::Permille(600)));
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = s.model.requests();
    let summaries: Vec<&ModelRequest> = requests.iter().filter(|r| is_summary_request(r)).collect();
    assert!(summaries.len() >= 2, "{} compactions", summaries.len());
    // The second summary request holds the first summary, and asks for it to be folded in.
    let Message::User { content } = &summaries[1].messages[0] else {
        panic!("{:?}", summaries[1].messages[0])
    };
    assert!(content.starts_with(SUMMARY_HEADER), "{content}");
    assert!(content.contains("SUMMARY 1: "), "{content}");
    let Some(Message::User { content: asked }) = summaries[1].messages.last() else {
        unreachable!()
    };
    assert!(
        asked.contains("fold in what still matters of it"),
        "{asked}"
    );
    // After every compaction the conversation holds exactly one summary, the newest, which
    // still ends with the user's input word for word.
    let conversation: Vec<&ModelRequest> =
        requests.iter().filter(|r| !is_summary_request(r)).collect();
    for request in &conversation {
        let text = user_text(request);
        assert!(text.matches(SUMMARY_HEADER).count() <= 1, "{text}");
    }
    let last = conversation.last().unwrap();
    let Message::User { content } = &last.messages[0] else {
        panic!("{:?}", last.messages[0])
    };
    let newest = format!("SUMMARY {}: ", summaries.len());
    assert!(content.contains(&newest), "{content}");
    assert!(!content.contains("SUMMARY 1: "), "{content}");
    assert!(
        content.ends_with("word for word:]\nread the notes"),
        "{content}"
    );
    assert_eq!(user_text(last).matches(SUMMARY_HEADER).count(), 1);
}

#[tokio::test]
async fn a_threshold_compaction_that_frees_too_little_is_skipped_and_elides_harder() {
    // The model writes summaries of about 2500 tokens, a quarter of the window: once one is
    // in the history, compacting a turn or two more would free less than 10 % of the window.
    let model = reader_summarising(10_000, 14, None, |n| {
        format!("SUMMARY {n}: {}", "the notes say x. ".repeat(590))
    });
    let mut s = setup(model, vec![read_tool(3600)], true, 30);
    s.runtime
        .set_context_policy(policy(Threshold::Permille(600), Threshold::Permille(400)));
    let mut events = s.bus.subscribe();
    let outcome = s.runtime.run("read the notes").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let requests = s.model.requests();
    let summaries: Vec<&ModelRequest> = requests.iter().filter(|r| is_summary_request(r)).collect();
    assert!(!summaries.is_empty(), "it compacted");
    // Every compaction freed at least 10 % of the window: what it summarised, as sent, less
    // the summary it replaced.
    for summary in &summaries {
        let summarised = &summary.messages[..summary.messages.len() - 1];
        let previous = match &summarised[0] {
            first @ Message::User { content } if content.starts_with(SUMMARY_HEADER) => {
                golem_llm::context::estimate_message(first)
            }
            _ => 0,
        };
        let frees = golem_llm::context::estimate_messages(summarised).saturating_sub(previous);
        assert!(frees >= 1_000, "{frees} of {} compactions", summaries.len());
    }
    // A skipped compaction elided harder instead: the last turns' results too.
    let (elisions, _) = elisions(&mut events);
    assert!(
        elisions
            .iter()
            .any(|e| e.harder && e.results > 0 && e.tokens_after < e.tokens_before),
        "{elisions:?}"
    );
    assert!(summaries.len() < 5, "{} compactions", summaries.len());
}
