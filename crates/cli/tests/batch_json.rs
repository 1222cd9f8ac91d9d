//! `golem-forge batch --json`: the batch's events (`golem_protocol::BatchEvent`) as JSON lines
//! on stdout, `batchStarted` first with the batch's id and `batchEnded` last with the exit
//! code, one `itemStarted` and one `itemFinished` (then `batchProgress`) per item, nothing for
//! people on stderr; a failed item is counted in `batchEnded`, and a resumed batch says so.
//! `batch status` and `batch results` of the same batch read as JSON.

use std::collections::BTreeMap;
use std::process::Output;

use golem_protocol::{BatchEvent, ItemResult, ItemStatus};
use golem_testkit::mock::{MockServer, Reply};

use crate::batch::{WIRE, batch, batch_dir, program};
use golem_testkit::cli::{TestEnv, render};

/// Every stdout line of `output`, each of which must be a batch event.
fn events_of(output: &Output) -> Vec<BatchEvent> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a batch event ({e}): {line}\n{}", render(output)))
        })
        .collect()
}

/// Checks the shape of a run's events: `batchStarted` first, `batchEnded` last with the
/// process's exit code, per item one `itemStarted` before one `itemFinished`, each
/// `itemFinished` followed by `batchProgress`. Returns each item's result.
fn check_order(events: &[BatchEvent], output: &Output) -> BTreeMap<String, ItemResult> {
    assert!(
        matches!(events.first(), Some(BatchEvent::BatchStarted { .. })),
        "{events:?}"
    );
    let Some(BatchEvent::BatchEnded { exit_code, .. }) = events.last() else {
        panic!("batchEnded is not last: {events:?}");
    };
    assert_eq!(Some(i32::from(*exit_code)), output.status.code());
    let mut started: BTreeMap<String, usize> = BTreeMap::new();
    let mut finished = BTreeMap::new();
    for (n, event) in events.iter().enumerate() {
        match event {
            BatchEvent::BatchStarted { .. } => assert_eq!(n, 0, "{events:?}"),
            BatchEvent::BatchEnded { .. } => assert_eq!(n, events.len() - 1, "{events:?}"),
            BatchEvent::ItemStarted { id, .. } => *started.entry(id.clone()).or_default() += 1,
            BatchEvent::ItemFinished { result } => {
                assert_eq!(started.get(&result.id), Some(&1), "{events:?}");
                assert!(
                    matches!(events.get(n + 1), Some(BatchEvent::BatchProgress { .. })),
                    "{events:?}"
                );
                let before = finished.insert(result.id.clone(), result.clone());
                assert!(before.is_none(), "{} finished twice", result.id);
            }
            BatchEvent::BatchProgress { .. } => assert!(
                matches!(events[n - 1], BatchEvent::ItemFinished { .. }),
                "{events:?}"
            ),
        }
    }
    assert_eq!(
        started.keys().collect::<Vec<_>>(),
        finished.keys().collect::<Vec<_>>()
    );
    finished
}

#[test]
fn json_prints_the_events_in_order_and_nothing_for_people() {
    let env = TestEnv::new();
    program(&env, 4);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    let output = batch(
        &env,
        &server,
        &[
            "w",
            "--input",
            "items.jsonl",
            "--concurrency",
            "2",
            "--json",
        ],
    );
    assert!(output.status.success(), "{}", render(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.trim().is_empty(), "{stderr}");
    let events = events_of(&output);
    let results = check_order(&events, &output);
    assert_eq!(results.len(), 4);
    assert!(
        results
            .values()
            .all(|r| r.status == ItemStatus::Completed && r.answer == "Done.")
    );
    let dir = batch_dir(&env);
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();
    let BatchEvent::BatchStarted {
        batch_id,
        worker,
        total,
        concurrency,
        resumed,
    } = &events[0]
    else {
        unreachable!("checked above");
    };
    assert_eq!(batch_id, &id);
    assert!(worker.ends_with("w.worker"), "{worker}");
    assert_eq!((*total, *concurrency, *resumed), (4, 2, false));
    assert!(matches!(
        events.last(),
        Some(BatchEvent::BatchEnded {
            completed: 4,
            failed: 0,
            other: 0,
            waiting_approval: 0,
            not_run: 0,
            exit_code: 0,
            usage,
            ..
        }) if usage.input_tokens == 40 && usage.output_tokens == 20
    ));
    let last_progress = events.iter().rev().find_map(|e| match e {
        BatchEvent::BatchProgress {
            total,
            completed,
            running,
            tokens,
            ..
        } => Some((*total, *completed, *running, *tokens)),
        _ => None,
    });
    assert_eq!(last_progress, Some((4, 4, 0, 60)));

    // `status --json` and `results --json` of the same batch.
    let status = batch(&env, &server, &["status", &id, "--json"]);
    assert!(status.status.success(), "{}", render(&status));
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["id"], id.as_str());
    assert_eq!(status["counts"]["completed"], 4);
    let printed = batch(&env, &server, &["results", &id, "--json"]);
    assert!(printed.status.success(), "{}", render(&printed));
    let lines: Vec<ItemResult> = String::from_utf8_lossy(&printed.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], results["item-1"]);
}

#[test]
fn json_counts_a_failed_item_in_batch_ended_and_a_resume_says_it_resumed() {
    let env = TestEnv::new();
    program(&env, 3);
    let server = MockServer::start_blocking(vec![
        WIRE.text("One."),
        Reply::json(
            400,
            r#"{"error": {"message": "bad request", "type": "invalid_request_error"}}"#,
        ),
        WIRE.text("Three."),
    ]);
    let args = [
        "w",
        "--input",
        "items.jsonl",
        "--concurrency",
        "1",
        "--json",
    ];
    let output = batch(&env, &server, &args);
    assert_eq!(output.status.code(), Some(1), "{}", render(&output));
    let events = events_of(&output);
    let results = check_order(&events, &output);
    assert_eq!(results["item-2"].status, ItemStatus::Failed);
    assert!(results["item-2"].error.is_some(), "{:?}", results["item-2"]);
    assert!(
        matches!(
            events.last(),
            Some(BatchEvent::BatchEnded {
                completed: 2,
                failed: 1,
                exit_code: 1,
                ..
            })
        ),
        "{events:?}"
    );
    // Again with --retry-failed: only the failed item runs, as its second attempt.
    server.set_fallback(WIRE.text("Two, at last."));
    let mut again = args.to_vec();
    again.push("--retry-failed");
    let output = batch(&env, &server, &again);
    assert!(output.status.success(), "{}", render(&output));
    let events = events_of(&output);
    check_order(&events, &output);
    assert!(
        matches!(
            &events[..],
            [
                BatchEvent::BatchStarted {
                    total: 1,
                    resumed: true,
                    ..
                },
                BatchEvent::ItemStarted { id, attempt: 2 },
                BatchEvent::ItemFinished { .. },
                BatchEvent::BatchProgress { .. },
                BatchEvent::BatchEnded {
                    completed: 1,
                    failed: 0,
                    exit_code: 0,
                    ..
                },
            ] if id == "item-2"
        ),
        "{events:?}"
    );
}
