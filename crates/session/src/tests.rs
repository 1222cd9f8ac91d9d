//! Tests of the session store: round trips of every entry kind, listing, lookup by prefix,
//! the damage a killed process leaves, reopening, and concurrent writers.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use golem_core::orchestrator::CallOutcome;
use golem_llm::{Message, ModelToolCall, ToolResultMessage};
use golem_protocol::{
    DecidedBy, DisplayEvent, InvokedBy, SessionEndReason, ToolError, ToolErrorCode,
    ToolResultValue, ToolStatus,
};
use serde_json::json;

use super::*;

fn meta(worker: &str, started: &str) -> SessionMeta {
    SessionMeta {
        worker: worker.into(),
        worker_path: format!("workers/{worker}.worker").into(),
        model: "test:default".into(),
        mode: "chat".into(),
        started: started.into(),
        forked_from: None,
    }
}

fn input(text: &str) -> TranscriptEntry {
    TranscriptEntry::Input {
        content: text.into(),
    }
}

fn ended(reason: SessionEndReason) -> TranscriptEntry {
    TranscriptEntry::Ended {
        reason,
        message: None,
    }
}

/// Writes a session with a fixed id and `entries`.
fn write(store: &SessionStore, id: &str, entries: &[TranscriptEntry]) {
    let mut writer = store
        .create_with_id(id, meta("greeter", "2026-11-22T02:45:12Z"))
        .unwrap();
    for entry in entries {
        writer.append(entry).unwrap();
    }
    writer.finish().unwrap();
}

fn append_raw(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

fn edited_call() -> CallOutcome {
    CallOutcome {
        tool_call_id: "call_1".into(),
        tool_name: "write_file".into(),
        invoked_by: InvokedBy::Model,
        status: ToolStatus::Success,
        value: ToolResultValue::text("ok"),
        error: None,
        proposed_args: json!({"path": "/out/a.txt", "content": "draft"}),
        approved_args: Some(json!({"path": "/out/a.txt", "content": "final"})),
        executed_args: Some(json!({"path": "/out/a.txt", "content": "final"})),
        decided_by: Some(DecidedBy::User),
        deferred: None,
        duration: Duration::from_millis(12),
    }
}

fn every_kind() -> Vec<TranscriptEntry> {
    let denied = CallOutcome {
        tool_call_id: "call_2".into(),
        tool_name: "delete_file".into(),
        status: ToolStatus::Denied,
        value: ToolResultValue::text("denied"),
        error: Some(ToolError::new(ToolErrorCode::Denied, "[DENIED] keep it")),
        proposed_args: json!({"path": "/out/a.txt"}),
        approved_args: None,
        executed_args: None,
        ..edited_call()
    };
    vec![
        input("hello"),
        Message::user("hello").into(),
        DisplayEvent::Streaming {
            request_id: "r1".into(),
            delta: "Hi".into(),
            done: false,
            worker: None,
        }
        .into(),
        Message::Assistant {
            text: "Writing.".into(),
            tool_calls: vec![ModelToolCall {
                id: "call_1".into(),
                name: "write_file".into(),
                arguments: r#"{"path":"/out/a.txt","content":"draft"}"#.into(),
            }],
        }
        .into(),
        (&edited_call()).into(),
        (&denied).into(),
        Message::Tool {
            results: vec![ToolResultMessage {
                tool_call_id: "call_1".into(),
                tool_name: "write_file".into(),
                content: "ok".into(),
                is_error: false,
            }],
        }
        .into(),
        TranscriptEntry::Compacted {
            reason: golem_protocol::CompactionReason::Threshold,
            summary: Message::user("[compacted] SUMMARY: a.txt was written."),
            kept: 1,
        },
        input("start again"),
        TranscriptEntry::Cleared,
        TranscriptEntry::Ended {
            reason: SessionEndReason::Completed,
            message: Some("Done.".into()),
        },
    ]
}

/// Every kind of entry is in [`every_kind`] (and the meta line the store writes).
#[test]
fn every_kind_holds_each_kind_of_entry() {
    let mut kinds: Vec<EntryKind> = every_kind().iter().map(|e| e.entry_kind()).collect();
    kinds.push(EntryKind::Meta);
    for entry in every_kind() {
        let line = serde_json::to_value(&entry).unwrap();
        assert_eq!(
            EntryKind::from_tag(line["kind"].as_str().unwrap()),
            Some(entry.entry_kind()),
            "the tag as written names the kind: {line}"
        );
        assert_eq!(entry.kind(), entry.entry_kind().as_str());
    }
    // A new variant of `TranscriptEntry` must be added here (and to `every_kind`).
    let all = |kind: EntryKind| match kind {
        EntryKind::Meta
        | EntryKind::Event
        | EntryKind::Message
        | EntryKind::ToolCall
        | EntryKind::Compacted
        | EntryKind::Cleared
        | EntryKind::Input
        | EntryKind::Ended => kind,
    };
    for kind in [
        EntryKind::Meta,
        EntryKind::Event,
        EntryKind::Message,
        EntryKind::ToolCall,
        EntryKind::Compacted,
        EntryKind::Cleared,
        EntryKind::Input,
        EntryKind::Ended,
    ] {
        assert!(kinds.contains(&all(kind)), "every_kind() lacks {kind:?}");
    }
    assert_eq!(EntryKind::from_tag("mystery"), None);
}

/// The listing reads what loading reads: a session holding every kind is listed, with its
/// inputs and status, and a line of a kind this version does not know is skipped by both,
/// with one warning naming it.
#[test]
fn every_kind_is_listed_as_it_loads_and_unknown_kinds_are_skipped() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    write(&store, "s1", &every_kind());
    append_raw(
        &store.dir().join("s1.jsonl"),
        b"{\"kind\":\"bookmark\",\"at\":3}\n{\"kind\":\"input\",\"content\":\"later\"}\n",
    );
    let loaded = store.load("s1").unwrap();
    let mut expected = every_kind();
    expected.push(input("later"));
    assert_eq!(loaded.entries, expected);
    // The skipped line takes no place in `times`; the line without a time has none.
    assert_eq!(loaded.times.len(), expected.len());
    assert!(
        loaded.times[..every_kind().len()]
            .iter()
            .all(Option::is_some)
    );
    assert_eq!(loaded.times.last(), Some(&None));
    let line = every_kind().len() + 2;
    assert_eq!(
        loaded.unknown_lines,
        [UnknownLine {
            line,
            kind: "bookmark".into(),
            event_type: None
        }]
    );
    let scan = store.scan().unwrap();
    assert!(scan.skipped.is_empty(), "{:?}", scan.skipped);
    let [summary] = scan.sessions.as_slice() else {
        panic!("{:?}", scan.sessions)
    };
    assert_eq!(summary.inputs, loaded.turns());
    assert_eq!(summary.status, loaded.status());
    assert_eq!(summary.unknown_lines, loaded.unknown_lines);
    assert_eq!(
        scan.warnings(),
        [format!(
            "skipped line {line} of s1.jsonl: an entry of kind `bookmark`, which this version \
             does not know (a newer golem-forge wrote it)"
        )]
    );
    assert_eq!(
        loaded.unknown_lines_warning(),
        Some(scan.warnings()[0].clone())
    );
}

#[test]
fn every_entry_kind_round_trips() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let mut writer = store
        .create(meta("greeter", "2026-11-22T02:45:12Z"))
        .unwrap();
    let id = writer.id().to_owned();
    for entry in every_kind() {
        writer.append(&entry).unwrap();
    }
    writer.finish().unwrap();

    let transcript = store.load(&id).unwrap();
    assert_eq!(transcript.id, id);
    assert_eq!(transcript.meta, meta("greeter", "2026-11-22T02:45:12Z"));
    assert_eq!(transcript.entries, every_kind());
    assert!(!transcript.partial_tail);
    assert_eq!(transcript.status(), SessionStatus::Completed);
    assert_eq!(
        transcript.inputs().collect::<Vec<_>>(),
        ["hello", "start again"]
    );
    assert!(transcript.unknown_lines.is_empty());
}

#[test]
fn the_file_format_is_tagged_camel_case_jsonl() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let before = now_unix_ms();
    write(&store, "s1", &[(&edited_call()).into()]);
    let after = now_unix_ms();
    let text = std::fs::read_to_string(store.dir().join("s1.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| {
            // `at` is the line's last field: the time it was written.
            let (_, at) = l.rsplit_once(r#","at":"#).unwrap();
            let at: u64 = at.strip_suffix('}').unwrap().parse().unwrap();
            assert!(before <= at && at <= after, "{before} <= {at} <= {after}");
            let mut line: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(line.as_object_mut().unwrap().remove("at"), Some(json!(at)));
            line
        })
        .collect();
    assert!(text.starts_with(r#"{"kind":"meta","#), "{text}");
    assert_eq!(
        lines,
        [
            json!({"kind": "meta", "worker": "greeter", "workerPath": "workers/greeter.worker",
                   "model": "test:default", "mode": "chat", "started": "2026-11-22T02:45:12Z"}),
            json!({"kind": "toolCall", "toolCallId": "call_1", "toolName": "write_file",
                   "invokedBy": "model", "status": "success",
                   "proposedArgs": {"path": "/out/a.txt", "content": "draft"},
                   "approvedArgs": {"path": "/out/a.txt", "content": "final"},
                   "executedArgs": {"path": "/out/a.txt", "content": "final"},
                   "decidedBy": "user", "durationMs": 12,
                   "value": {"kind": "text", "data": {"content": "ok"}}}),
        ]
    );
    assert!(text.ends_with("}\n"));
}

#[test]
fn list_is_newest_first_with_statuses_and_inputs() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let long = "please\n  summarise   every file in the input folder and write a report to the output folder";
    write(
        &store,
        "20261122-020000-aaaa",
        &[
            input(long),
            input("more"),
            ended(SessionEndReason::Completed),
        ],
    );
    write(
        &store,
        "20261122-030000-bbbb",
        &[input("x"), ended(SessionEndReason::Failed)],
    );
    write(
        &store,
        "20261122-010000-cccc",
        &[ended(SessionEndReason::Interrupted)],
    );
    write(&store, "20261122-040000-dddd", &[input("killed")]);
    write(
        &store,
        "20261122-050000-eeee",
        &[
            input("a"),
            ended(SessionEndReason::Completed),
            input("resumed, then killed"),
        ],
    );
    write(
        &store,
        "20261122-060000-ffff",
        &[
            input("a"),
            ended(SessionEndReason::Completed),
            input("b"),
            ended(SessionEndReason::Interrupted),
        ],
    );

    let list = store.list().unwrap();
    let rows: Vec<_> = list
        .iter()
        .map(|s| (s.id.as_str(), s.status.as_str(), s.inputs))
        .collect();
    assert_eq!(
        rows,
        [
            ("20261122-060000-ffff", "interrupted", 2),
            ("20261122-050000-eeee", "unfinished", 2),
            ("20261122-040000-dddd", "unfinished", 1),
            ("20261122-030000-bbbb", "failed", 1),
            ("20261122-020000-aaaa", "completed", 2),
            ("20261122-010000-cccc", "interrupted", 0),
        ]
    );
    let first = list[4].first_input.as_deref().unwrap();
    assert_eq!(
        first,
        "please summarise every file in the input folder and write a…"
    );
    assert_eq!(first.chars().count(), FIRST_INPUT_CHARS);
    assert_eq!(list[5].first_input, None);
    assert_eq!(list[0].worker, "greeter");
    assert_eq!(list[0].model, "test:default");
    assert_eq!(list[0].started, "2026-11-22T02:45:12Z");
}

#[test]
fn list_orders_by_start_time_then_id() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    for (id, started) in [
        ("a_late", "2026-11-22T09:00:00Z"),
        ("z_early", "2026-11-22T01:00:00Z"),
        ("m_same", "2026-11-22T05:00:00Z"),
        ("n_same", "2026-11-22T05:00:00Z"),
    ] {
        store.create_with_id(id, meta("w", started)).unwrap();
    }
    let ids: Vec<String> = store.list().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["a_late", "n_same", "m_same", "z_early"]);
}

#[test]
fn listing_a_missing_directory_is_empty() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(&root.path().join("nowhere"));
    assert!(store.list().unwrap().is_empty());
    assert!(!store.dir().exists(), "listing creates nothing");
}

#[test]
fn corrupt_and_foreign_files_are_skipped_not_fatal() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    write(&store, "good", &[input("hi")]);
    let dir = store.dir();
    std::fs::write(dir.join("notes.txt"), "hello").unwrap();
    std::fs::write(dir.join("garbage.jsonl"), "not json\n").unwrap();
    std::fs::write(dir.join("empty.jsonl"), "").unwrap();
    std::fs::write(
        dir.join("headless.jsonl"),
        "{\"kind\":\"input\",\"content\":\"x\"}\n",
    )
    .unwrap();
    std::fs::write(dir.join("bad middle.jsonl"), "x").unwrap();
    std::fs::write(dir.join("cut-meta.jsonl"), "{\"kind\":\"meta\",\"wor").unwrap();
    std::fs::create_dir(dir.join("sub.jsonl")).unwrap();
    let mut foreign = std::fs::read(dir.join("good.jsonl")).unwrap();
    foreign.extend_from_slice(b"{\"kind\":\"mystery\"}\n{\"kind\":\"input\",\"content\":\"y\"}\n");
    std::fs::write(dir.join("newer.jsonl"), foreign).unwrap();

    let scan = store.scan().unwrap();
    assert_eq!(
        scan.sessions
            .iter()
            .map(|s| (s.id.as_str(), s.inputs))
            .collect::<Vec<_>>(),
        [("newer", 2), ("good", 1)],
        "a line of a kind this version does not know is skipped, not the session"
    );
    assert_eq!(
        scan.warnings(),
        [
            "skipped line 3 of newer.jsonl: an entry of kind `mystery`, which this version does \
          not know (a newer golem-forge wrote it)"
        ]
    );
    let skipped: Vec<String> = scan
        .skipped
        .iter()
        .map(|s| {
            format!(
                "{}: {}",
                s.name,
                s.reason.replace(&dir.display().to_string(), "DIR")
            )
        })
        .collect();
    assert_eq!(
        skipped,
        [
            "bad middle.jsonl: not a session transcript (`<id>.jsonl`)",
            "cut-meta.jsonl: DIR/cut-meta.jsonl is not a session transcript: its first line was cut off (the process was killed while creating it)",
            "empty.jsonl: DIR/empty.jsonl is not a session transcript: it is empty",
            "garbage.jsonl: DIR/garbage.jsonl line 1: invalid JSON at column 2: expected ident",
            "headless.jsonl: DIR/headless.jsonl is not a session transcript: line 1 is an entry of kind `input`, not the session's meta",
            "notes.txt: not a session transcript (`<id>.jsonl`)",
            "sub.jsonl: not a session transcript (`<id>.jsonl`)",
        ]
    );
    assert_eq!(store.list().unwrap().len(), 2);
}

#[test]
fn sessions_are_found_by_id_or_unique_prefix() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    for id in [
        "20261122-024512-7f3a",
        "20261122-024512-7f3b",
        "20261123-101010-0001",
        "2026",
    ] {
        write(&store, id, &[]);
    }
    assert_eq!(store.resolve("20261123").unwrap(), "20261123-101010-0001");
    assert_eq!(
        store.resolve("2026").unwrap(),
        "2026",
        "an exact id wins over prefixes"
    );
    assert_eq!(
        store.load("20261122-024512-7f3b").unwrap().id,
        "20261122-024512-7f3b"
    );

    let err = store.load("20261122").unwrap_err().to_string();
    assert_eq!(
        err,
        "session id `20261122` is ambiguous: it matches 20261122-024512-7f3b, 20261122-024512-7f3a"
    );
    let err = store.load("2025").unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "no session `2025` in {} (newest: 20261123-101010-0001, 20261122-024512-7f3b, 20261122-024512-7f3a, 2026)",
            store.dir().display()
        )
    );
    assert!(matches!(
        store.load("../2026"),
        Err(SessionError::NotFound { .. })
    ));
    assert!(matches!(
        store.load(""),
        Err(SessionError::InvalidId { .. })
    ));
}

#[test]
fn not_found_in_an_empty_store_says_there_are_none() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let err = store.load("abc").unwrap_err().to_string();
    assert!(err.ends_with("(there are no sessions yet)"), "{err}");
    assert!(matches!(
        store.reopen("abc"),
        Err(SessionError::NotFound { .. })
    ));
}

#[test]
fn many_ids_name_a_few_and_count_the_rest() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    for n in 0..8 {
        write(&store, &format!("s{n}"), &[]);
    }
    let err = store.load("s").unwrap_err().to_string();
    assert_eq!(
        err,
        "session id `s` is ambiguous: it matches s7, s6, s5, s4, s3 and 3 more"
    );
}

#[test]
fn a_cut_last_line_is_ignored_and_flagged() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    write(&store, "s1", &[input("hi"), Message::user("hi").into()]);
    append_raw(
        &store.dir().join("s1.jsonl"),
        br#"{"kind":"message","message":{"role":"assis"#,
    );

    let transcript = store.load("s1").unwrap();
    assert!(transcript.partial_tail);
    assert_eq!(transcript.skipped_lines, [4]);
    assert_eq!(
        transcript.entries,
        [input("hi"), Message::user("hi").into()]
    );
    assert_eq!(transcript.status(), SessionStatus::Unfinished);
    let summary = &store.list().unwrap()[0];
    assert_eq!(
        (summary.status, summary.inputs),
        (SessionStatus::Unfinished, 1)
    );
}

#[test]
fn a_complete_last_line_without_newline_is_kept() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    write(&store, "s1", &[]);
    append_raw(
        &store.dir().join("s1.jsonl"),
        br#"{"kind":"input","content":"x"}"#,
    );
    let transcript = store.load("s1").unwrap();
    assert!(!transcript.partial_tail);
    assert_eq!(transcript.entries, [input("x")]);
}

#[test]
fn a_corrupt_middle_line_names_the_file_and_line() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    write(&store, "s1", &[input("hi")]);
    let path = store.dir().join("s1.jsonl");
    append_raw(
        &path,
        b"{\"kind\":\"input\",\"content\":42}\n{\"kind\":\"input\",\"content\":\"x\"}\n",
    );
    let err = store.load("s1").unwrap_err();
    assert!(
        matches!(err, SessionError::Corrupt { line: 3, .. }),
        "{err:?}"
    );
    let message = format!(
        "{} line 3: not a transcript entry: invalid type: integer `42`, expected a string",
        path.display()
    );
    assert_eq!(err.to_string(), message);
    // Listed all the same, as far as it can be read, with the same words.
    let scan = store.scan().unwrap();
    let [summary] = scan.sessions.as_slice() else {
        panic!("{:?}", scan.skipped)
    };
    assert_eq!(summary.inputs, 2);
    assert_eq!(summary.corrupt.as_deref(), Some(message.as_str()));
    assert_eq!(
        scan.warnings(),
        [format!(
            "{message} (session s1 is listed as far as it can be read; `sessions show s1 \
             --json` prints its lines)"
        )]
    );
}

#[test]
fn a_file_without_meta_is_not_a_transcript() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    std::fs::create_dir_all(store.dir()).unwrap();
    std::fs::write(
        store.dir().join("s1.jsonl"),
        "\n{\"kind\":\"ended\",\"reason\":\"failed\"}\n",
    )
    .unwrap();
    let err = store.load("s1").unwrap_err().to_string();
    assert!(
        err.ends_with("line 2 is an entry of kind `ended`, not the session's meta"),
        "{err}"
    );
}

#[test]
fn reopening_after_a_cut_line_keeps_later_entries_readable() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    write(&store, "s1", &[input("first")]);
    let path = store.dir().join("s1.jsonl");
    append_raw(&path, br#"{"kind":"event","event":{"type":"strea"#);

    let mut writer = store.reopen("s1").unwrap();
    assert_eq!(writer.id(), "s1");
    writer.append(&input("second")).unwrap();
    writer.append(&ended(SessionEndReason::Completed)).unwrap();
    writer.finish().unwrap();

    let transcript = store.load("s1").unwrap();
    assert_eq!(
        transcript.entries,
        [
            input("first"),
            input("second"),
            ended(SessionEndReason::Completed)
        ]
    );
    assert!(!transcript.partial_tail);
    assert_eq!(transcript.skipped_lines, [3]);
    assert_eq!(transcript.status(), SessionStatus::Completed);
    assert_eq!(store.list().unwrap()[0].inputs, 2);
}

#[test]
fn reopening_a_clean_file_adds_no_blank_line() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    write(&store, "s1", &[input("first")]);
    let mut writer = store.reopen("s1").unwrap();
    writer.append(&input("second")).unwrap();
    let text = std::fs::read_to_string(store.dir().join("s1.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(!text.contains("\n\n"));
}

#[test]
fn concurrent_writers_to_different_sessions() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                let mut writer = store
                    .create(meta(&format!("w{t}"), "2026-11-22T02:45:12Z"))
                    .unwrap();
                let id = writer.id().to_owned();
                for n in 0..50 {
                    writer.append(&input(&format!("{t}/{n}"))).unwrap();
                }
                writer.append(&ended(SessionEndReason::Completed)).unwrap();
                writer.finish().unwrap();
                id
            })
        })
        .collect();
    let mut ids: Vec<String> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 8, "every session got its own id");
    let list = store.list().unwrap();
    assert_eq!(list.len(), 8);
    for summary in &list {
        assert_eq!(
            (summary.inputs, summary.status),
            (50, SessionStatus::Completed)
        );
        let transcript = store.load(&summary.id).unwrap();
        let t = &transcript.meta.worker[1..];
        let expected: Vec<String> = (0..50).map(|n| format!("{t}/{n}")).collect();
        assert_eq!(transcript.inputs().collect::<Vec<_>>(), expected);
    }
}

#[test]
fn fresh_ids_are_unique_and_time_sortable() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let before = now_rfc3339();
    let mut ids: Vec<String> = (0..200)
        .map(|_| store.create(meta("w", "t")).unwrap().id().to_owned())
        .collect();
    let after = now_rfc3339();
    for id in &ids {
        let (time, suffix) = id.rsplit_once('-').unwrap();
        assert_eq!(time.len(), 15, "{id}");
        assert!(
            suffix.len() == 4 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
        // Ids are to the second; the times around them to the millisecond.
        let stamp = format!(
            "{}-{}-{}T{}:{}:{}",
            &time[0..4],
            &time[4..6],
            &time[6..8],
            &time[9..11],
            &time[11..13],
            &time[13..15]
        );
        assert!(
            before[..19] <= *stamp && *stamp <= after[..19],
            "{id} between {before} and {after}"
        );
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 200);
}

#[test]
fn chosen_ids_are_checked() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    for bad in ["", "../x", "a/b", "a.b", "-x", &"x".repeat(65)] {
        let err = store.create_with_id(bad, meta("w", "t")).unwrap_err();
        assert!(
            matches!(err, SessionError::InvalidId { .. }),
            "{bad}: {err}"
        );
    }
    write(&store, "ok_1", &[]);
    let err = store.create_with_id("ok_1", meta("w", "t")).unwrap_err();
    assert_eq!(err.to_string(), "a session `ok_1` exists already");
}

#[test]
fn messages_resume_the_conversation_and_answer_cut_tool_calls() {
    let call = |id: &str| ModelToolCall {
        id: id.into(),
        name: "list_files".into(),
        arguments: "{}".into(),
    };
    let result = |id: &str| ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "list_files".into(),
        content: "a.txt".into(),
        is_error: false,
    };
    let interrupted = |id: &str| ToolResultMessage {
        content: "Error [INTERRUPTED]: the session ended before this call finished".into(),
        is_error: true,
        ..result(id)
    };
    let assistant = |ids: &[&str]| Message::Assistant {
        text: String::new(),
        tool_calls: ids.iter().map(|id| call(id)).collect(),
    };
    let transcript = |messages: Vec<Message>| {
        let entries: Vec<TranscriptEntry> = std::iter::once(input("hi"))
            .chain(messages.into_iter().map(TranscriptEntry::from))
            .collect();
        Transcript {
            id: "s".into(),
            path: "s.jsonl".into(),
            meta: meta("w", "t"),
            meta_at: None,
            times: vec![None; entries.len()],
            entries,
            partial_tail: false,
            skipped_lines: Vec::new(),
            unknown_lines: Vec::new(),
        }
    };

    let whole = vec![
        Message::user("hi"),
        assistant(&["a"]),
        Message::Tool {
            results: vec![result("a")],
        },
        Message::assistant("done"),
    ];
    assert_eq!(transcript(whole.clone()).messages(), whole);

    let cut = transcript(vec![
        Message::user("hi"),
        assistant(&["a", "b"]),
        Message::Tool {
            results: vec![result("a")],
        },
        Message::user("again"),
        assistant(&["c"]),
    ]);
    assert_eq!(
        cut.messages(),
        [
            Message::user("hi"),
            assistant(&["a", "b"]),
            Message::Tool {
                results: vec![result("a"), interrupted("b")]
            },
            Message::user("again"),
            assistant(&["c"]),
            Message::Tool {
                results: vec![interrupted("c")]
            },
        ]
    );
    let no_results = transcript(vec![assistant(&["a"]), Message::user("next")]);
    assert_eq!(
        no_results.messages(),
        [
            assistant(&["a"]),
            Message::Tool {
                results: vec![interrupted("a")]
            },
            Message::user("next")
        ]
    );
}

#[test]
fn resume_continues_from_the_last_compaction_and_after_a_clear() {
    let entries = |lines: Vec<TranscriptEntry>| Transcript {
        id: "s".into(),
        path: "s.jsonl".into(),
        meta: meta("w", "t"),
        meta_at: None,
        times: vec![None; lines.len()],
        entries: lines,
        partial_tail: false,
        skipped_lines: Vec::new(),
        unknown_lines: Vec::new(),
    };
    let summary = Message::user("[summary] read a and b");
    let compacted = |kept| TranscriptEntry::Compacted {
        reason: golem_protocol::CompactionReason::Threshold,
        summary: summary.clone(),
        kept,
    };
    let said = |text: &str| TranscriptEntry::from(Message::assistant(text));
    let asked = |text: &str| TranscriptEntry::from(Message::user(text));
    let transcript = entries(vec![
        input("one"),
        asked("one"),
        said("1"),
        input("two"),
        asked("two"),
        said("2"),
        compacted(2),
        input("three"),
        asked("three"),
        said("3"),
    ]);
    // What was compacted away is never sent again.
    assert_eq!(
        transcript.messages(),
        [
            summary.clone(),
            Message::user("two"),
            Message::assistant("2"),
            Message::user("three"),
            Message::assistant("3"),
        ]
    );
    assert_eq!(transcript.resume_point().history, transcript.messages());
    // A second compaction summarises the first one's summary with the rest.
    let twice = entries(vec![
        asked("one"),
        said("1"),
        compacted(1),
        asked("two"),
        said("2"),
        compacted(0),
    ]);
    assert_eq!(twice.messages(), std::slice::from_ref(&summary));
    // After a clear, only what came after it.
    let cleared = entries(vec![
        asked("one"),
        said("1"),
        TranscriptEntry::Cleared,
        asked("two"),
        said("2"),
    ]);
    assert_eq!(
        cleared.messages(),
        [Message::user("two"), Message::assistant("2")]
    );
    // The lines read back as written.
    for entry in [compacted(3), TranscriptEntry::Cleared] {
        let line = serde_json::to_string(&entry).unwrap();
        assert_eq!(
            serde_json::from_str::<TranscriptEntry>(&line).unwrap(),
            entry
        );
    }
    let line = serde_json::to_value(compacted(3)).unwrap();
    assert_eq!(line["kind"], "compacted");
    assert_eq!(line["kept"], 3);
    assert_eq!(line["reason"], "threshold");
}

#[test]
fn one_writer_per_transcript_and_the_second_is_told_who_holds_it() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let first = store
        .create(meta("greeter", "2026-11-22T02:45:12Z"))
        .unwrap();
    let id = first.id().to_owned();
    let err = store.reopen(&id).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "session {id} is in use by process {} (",
            std::process::id()
        )),
        "{message}"
    );
    assert!(message.contains("wait until it ends"), "{message}");
    let note = root
        .path()
        .join(".golem-forge/locks")
        .join(format!("{id}.lock"));
    assert!(note.is_file(), "the holder is noted");
    // Reading is never blocked.
    store.load(&id).unwrap();
    first.finish().unwrap();
    assert!(!note.exists(), "the note goes with the writer");
    store.reopen(&id).unwrap().finish().unwrap();
    // Notes live beside the sessions, not among them: listing sees no foreign file.
    assert!(store.scan().unwrap().skipped.is_empty());
}

#[test]
fn entries_through_a_turn_end_before_the_next_input() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let turn = |n: usize| {
        [
            input(&format!("q{n}")),
            Message::user(format!("q{n}")).into(),
            Message::assistant(format!("a{n}")).into(),
        ]
    };
    let mut entries: Vec<TranscriptEntry> = (1..=3).flat_map(turn).collect();
    entries.push(ended(SessionEndReason::Completed));
    write(&store, "20261122-024512-f0f0", &entries);
    let transcript = store.load("20261122-024512-f0f0").unwrap();
    assert_eq!(transcript.turns(), 3);
    assert_eq!(transcript.entries_through_turn(0), None);
    assert_eq!(transcript.entries_through_turn(4), None);
    // A middle turn: its exchange, then an end so the copy reads as finished.
    let mut second: Vec<TranscriptEntry> = (1..=2).flat_map(turn).collect();
    second.push(ended(SessionEndReason::Completed));
    assert_eq!(transcript.entries_through_turn(2), Some(second));
    // The last turn: everything, as it is.
    assert_eq!(transcript.entries_through_turn(3), Some(entries));
}

#[test]
fn meta_reads_with_and_without_forked_from() {
    let old = r#"{"kind":"meta","worker":"w","workerPath":"w.worker","model":"test:default","mode":"chat","started":"2026-11-22T02:45:12Z"}"#;
    let TranscriptEntry::Meta(meta) = serde_json::from_str(old).unwrap() else {
        panic!("a meta line");
    };
    assert_eq!(meta.forked_from, None);
    let forked = SessionMeta {
        forked_from: Some(ForkedFrom {
            id: "20261122-024512-7f3a".into(),
            turn: 2,
        }),
        ..meta
    };
    let line = serde_json::to_string(&TranscriptEntry::Meta(forked.clone())).unwrap();
    assert!(
        line.contains(r#""forkedFrom":{"id":"20261122-024512-7f3a","turn":2}"#),
        "{line}"
    );
    assert_eq!(
        serde_json::from_str::<TranscriptEntry>(&line).unwrap(),
        TranscriptEntry::Meta(forked)
    );
}

mod resume_points {
    use super::*;
    use golem_protocol::{ApprovalRequest, ApprovalResolved, DecidedBy, Risk, ToolError};

    fn call(id: &str) -> ModelToolCall {
        ModelToolCall {
            id: id.into(),
            name: "write_file".into(),
            arguments: format!(r#"{{"path":"/out/{id}"}}"#),
        }
    }

    fn asked(id: &str) -> TranscriptEntry {
        TranscriptEntry::Event {
            event: golem_protocol::DisplayEvent::ApprovalRequired(ApprovalRequest {
                request_id: format!("approval-{id}"),
                tool_call_id: id.into(),
                tool_name: "write_file".into(),
                tool_kind: golem_protocol::ToolKind::Other,
                args: json!({"path": format!("/out/{id}")}),
                description: "d".into(),
                risk: Risk::Medium,
                preview: None,
                invoked_by: InvokedBy::Model,
                worker: None,
                fields: Vec::new(),
                editable: true,
            }),
        }
    }

    fn resolved(id: &str) -> TranscriptEntry {
        TranscriptEntry::Event {
            event: golem_protocol::DisplayEvent::ApprovalResolved(ApprovalResolved {
                request_id: None,
                tool_call_id: id.into(),
                tool_name: "write_file".into(),
                approved: true,
                decided_by: DecidedBy::Policy,
                note: None,
                modified_args: None,
                worker: None,
            }),
        }
    }

    fn denied_record(id: &str) -> TranscriptEntry {
        TranscriptEntry::ToolCall(ToolCallRecord {
            tool_call_id: id.into(),
            tool_name: "write_file".into(),
            invoked_by: InvokedBy::Model,
            status: ToolStatus::Denied,
            proposed_args: json!({}),
            approved_args: None,
            executed_args: None,
            decided_by: Some(DecidedBy::User),
            error: Some(ToolError::new(
                golem_protocol::ToolErrorCode::Denied,
                "The user denied write_file: not now",
            )),
            duration_ms: 1,
            value: None,
        })
    }

    fn turn(calls: &[&str]) -> Vec<TranscriptEntry> {
        vec![
            TranscriptEntry::Input {
                content: "save".into(),
            },
            TranscriptEntry::Message {
                message: Message::user("save"),
            },
            TranscriptEntry::Message {
                message: Message::Assistant {
                    text: String::new(),
                    tool_calls: calls.iter().map(|id| call(id)).collect(),
                },
            },
        ]
    }

    fn point(entries: &[TranscriptEntry]) -> ResumePoint {
        let root = tempfile::tempdir().unwrap();
        let store = SessionStore::new(root.path());
        write(&store, "s1", entries);
        store.load("s1").unwrap().resume_point()
    }

    #[test]
    fn a_call_waiting_for_approval_is_asked_again_after_the_settled_ones() {
        let mut entries = turn(&["c1", "c2", "c3"]);
        entries.extend([asked("c1"), denied_record("c1"), asked("c2")]);
        let point = point(&entries);
        assert_eq!(point.pending.calls, vec![call("c2"), call("c3")]);
        assert_eq!(point.pending.settled.len(), 1);
        assert_eq!(point.pending.settled[0].tool_call_id, "c1");
        assert_eq!(
            point.pending.settled[0].content,
            "[DENIED] The user denied write_file: not now"
        );
        assert!(point.pending.settled[0].is_error);
        // The history stops at the assistant message that made the calls: no made-up results.
        assert!(matches!(
            point.history.last(),
            Some(Message::Assistant { tool_calls, .. }) if tool_calls.len() == 3
        ));
    }

    #[test]
    fn a_call_that_got_past_the_gate_is_never_run_again() {
        let mut entries = turn(&["c1"]);
        entries.extend([asked("c1"), resolved("c1")]);
        let point = point(&entries);
        assert!(point.pending.is_empty());
        let Some(Message::Tool { results }) = point.history.last() else {
            panic!("{:?}", point.history)
        };
        assert!(results[0].content.contains("INTERRUPTED"), "{results:?}");
    }

    #[test]
    fn a_turn_that_ended_or_was_never_asked_resumes_as_recorded() {
        let unasked = turn(&["c1"]);
        assert!(point(&unasked).pending.is_empty());
        let mut answered = turn(&["c1"]);
        answered.extend([
            asked("c1"),
            denied_record("c1"),
            TranscriptEntry::Message {
                message: Message::Tool {
                    results: vec![ToolResultMessage {
                        tool_call_id: "c1".into(),
                        tool_name: "write_file".into(),
                        content: "[DENIED] no".into(),
                        is_error: true,
                    }],
                },
            },
        ]);
        let point = point(&answered);
        assert!(point.pending.is_empty());
        assert_eq!(point.history.len(), 3);
    }
}

#[test]
fn an_imported_transcript_names_the_local_worker_and_bad_ids_are_refused() {
    let here = tempfile::tempdir().unwrap();
    let there = tempfile::tempdir().unwrap();
    let store = SessionStore::new(here.path());
    let meta = SessionMeta::new("w", "/elsewhere/w.worker", "test:default", "single");
    let mut writer = store.create(meta).unwrap();
    let id = writer.id().to_owned();
    writer
        .append(&TranscriptEntry::Input {
            content: "hello".into(),
        })
        .unwrap();
    drop(writer);
    let bytes = store.export(&id).unwrap();
    let local = there.path().join("w.worker");
    let other = SessionStore::new(there.path());
    other.import(&id, &bytes, &local).unwrap();
    let transcript = other.load(&id).unwrap();
    assert_eq!(transcript.meta.worker_path, local);
    let original = store.load(&id).unwrap();
    let text = std::fs::read_to_string(other.path(&id).unwrap()).unwrap();
    let exported = String::from_utf8(bytes.clone()).unwrap();
    let (_, input_line) = exported.split_once('\n').unwrap();
    assert!(
        input_line.starts_with("{\"kind\":\"input\",\"content\":\"hello\",\"at\":"),
        "{input_line}"
    );
    assert!(text.ends_with(input_line), "{text}");
    // Every line keeps the time it was first written at, the rewritten meta line included.
    assert!(original.meta_at.is_some() && original.times[0].is_some());
    assert_eq!(transcript.meta_at, original.meta_at);
    assert_eq!(transcript.times, original.times);
    for bad in ["../escape", "a/b", "", "x.jsonl"] {
        assert!(other.import(bad, &bytes, &local).is_err(), "{bad}");
    }
    assert!(
        other
            .import(
                "fine-id",
                b"{\"kind\":\"input\",\"content\":\"x\"}\n",
                &local
            )
            .is_err()
    );
}

/// Every line the writer writes ends with `at`, the Unix milliseconds it was written at, after
/// the entry's own fields (`kind` stays first): the unit, newtype and struct variants alike.
/// Loading gives the times back, one per entry.
#[test]
fn every_line_carries_the_time_it_was_written_at() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let before = now_unix_ms();
    write(&store, "s1", &every_kind());
    let after = now_unix_ms();
    let text = std::fs::read_to_string(store.dir().join("s1.jsonl")).unwrap();
    let mut kinds = Vec::new();
    for line in text.lines() {
        assert!(line.starts_with(r#"{"kind":""#), "{line}");
        let (_, at) = line.rsplit_once(r#","at":"#).unwrap();
        let at: u64 = at.strip_suffix('}').unwrap().parse().unwrap();
        assert!(
            before <= at && at <= after,
            "{before} <= {at} <= {after}: {line}"
        );
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["at"], json!(at), "{line}");
        kinds.push(EntryKind::from_tag(value["kind"].as_str().unwrap()).unwrap());
    }
    let mut expected: Vec<EntryKind> = vec![EntryKind::Meta];
    expected.extend(every_kind().iter().map(TranscriptEntry::entry_kind));
    assert_eq!(kinds, expected);
    assert!(kinds.contains(&EntryKind::Cleared) && kinds.contains(&EntryKind::ToolCall));

    let loaded = store.load("s1").unwrap();
    assert_eq!(loaded.entries, every_kind());
    assert_eq!(loaded.times.len(), loaded.entries.len());
    let in_window = |at: Option<u64>| at.is_some_and(|at| before <= at && at <= after);
    assert!(in_window(loaded.meta_at), "{:?}", loaded.meta_at);
    assert!(
        loaded.times.iter().all(|&at| in_window(at)),
        "{:?}",
        loaded.times
    );
}

/// `append_at` writes the time it is given; `None` is now.
#[test]
fn append_at_writes_the_time_it_is_given() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let mut writer = store
        .create_with_id("s1", meta("greeter", "2026-11-22T02:45:12Z"))
        .unwrap();
    writer
        .append_at(&input("then"), Some(1_795_315_512_345))
        .unwrap();
    writer
        .append_at(&TranscriptEntry::Cleared, Some(0))
        .unwrap();
    let before = now_unix_ms();
    writer.append_at(&input("now"), None).unwrap();
    let after = now_unix_ms();
    writer.finish().unwrap();
    let text = std::fs::read_to_string(store.dir().join("s1.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1],
        r#"{"kind":"input","content":"then","at":1795315512345}"#
    );
    assert_eq!(lines[2], r#"{"kind":"cleared","at":0}"#);
    let loaded = store.load("s1").unwrap();
    assert_eq!(
        loaded.entries,
        [input("then"), TranscriptEntry::Cleared, input("now")]
    );
    assert_eq!(loaded.times[..2], [Some(1_795_315_512_345), Some(0)]);
    assert!(
        loaded.times[2].is_some_and(|at| before <= at && at <= after),
        "{before} <= {:?} <= {after}",
        loaded.times[2]
    );
}

/// `times` has one place per entry, in step with `entries`, whatever lines the reader passed
/// over: a kind this version does not know, an event type it does not know, a line cut and
/// later terminated, a blank line, a cut last line; lines without a time get `None`.
#[test]
fn times_line_up_with_entries_past_skipped_and_cut_lines() {
    let text = [
        r#"{"kind":"meta","worker":"w","workerPath":"w.worker","model":"test:default","mode":"chat","started":"2026-11-22T02:45:12Z","at":100}"#,
        r#"{"kind":"input","content":"one","at":101}"#,
        r#"{"kind":"bookmark","label":"here","at":102}"#,
        r#"{"kind":"input","content":"old"}"#,
        r#"{"kind":"event","event":{"type":"weather","sky":"grey"},"at":104}"#,
        r#"{"kind":"message","message":{"role":"assis"#,
        "",
        r#"{"kind":"cleared","at":107}"#,
        r#"{"kind":"ended","reason":"completed","at":108}"#,
        r#"{"kind":"input","content":"cut off","#,
    ]
    .join("\n");
    let transcript = Transcript::parse("s1", Path::new("s1.jsonl"), text.as_bytes()).unwrap();
    assert_eq!(transcript.meta_at, Some(100));
    assert_eq!(
        transcript.entries,
        [
            input("one"),
            input("old"),
            TranscriptEntry::Cleared,
            ended(SessionEndReason::Completed)
        ]
    );
    assert_eq!(transcript.times, [Some(101), None, Some(107), Some(108)]);
    assert!(transcript.partial_tail);
    assert_eq!(transcript.skipped_lines, [6, 10]);
    assert_eq!(
        transcript
            .unknown_lines
            .iter()
            .map(|u| u.line)
            .collect::<Vec<_>>(),
        [3, 5]
    );
}

/// A transcript written before lines carried their time reads as it always did, with no
/// times, in every reader (loading, listing, resuming, forking).
#[test]
fn an_old_transcript_without_times_reads_as_before() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    std::fs::create_dir_all(store.dir()).unwrap();
    let old = [
        r#"{"kind":"meta","worker":"w","workerPath":"w.worker","model":"test:default","mode":"chat","started":"2026-11-22T02:45:12Z"}"#,
        r#"{"kind":"input","content":"hello"}"#,
        r#"{"kind":"message","message":{"role":"user","content":"hello"}}"#,
        r#"{"kind":"cleared"}"#,
        r#"{"kind":"ended","reason":"completed"}"#,
    ]
    .map(|line| format!("{line}\n"))
    .concat();
    std::fs::write(store.dir().join("s1.jsonl"), &old).unwrap();
    let loaded = store.load("s1").unwrap();
    assert_eq!(loaded.meta_at, None);
    assert_eq!(
        loaded.entries,
        [
            input("hello"),
            Message::user("hello").into(),
            TranscriptEntry::Cleared,
            ended(SessionEndReason::Completed)
        ]
    );
    assert_eq!(loaded.times, [None; 4]);
    assert!(loaded.unknown_lines.is_empty() && loaded.skipped_lines.is_empty());
    assert_eq!(loaded.status(), SessionStatus::Completed);
    assert!(loaded.resume_point().history.is_empty(), "after the clear");
    let [summary] = store.list().unwrap().try_into().unwrap();
    assert_eq!((summary.inputs, summary.corrupt), (1, None));
    assert_eq!(
        loaded.entries_through_turn_with_times(1),
        Some(loaded.entries.iter().cloned().map(|e| (e, None)).collect())
    );
    // Exported and imported, it stays as it was written: nothing gains a time it never had.
    let other = tempfile::tempdir().unwrap();
    let there = SessionStore::new(other.path());
    let local = other.path().join("w.worker");
    there
        .import("s1", &store.export("s1").unwrap(), &local)
        .unwrap();
    let imported = there.load("s1").unwrap();
    assert_eq!((imported.meta_at, imported.times), (None, loaded.times));
    let text = std::fs::read_to_string(there.path("s1").unwrap()).unwrap();
    assert!(!text.contains(r#""at""#), "{text}");
    assert_eq!(
        text.split_once('\n').unwrap().1,
        old.split_once('\n').unwrap().1
    );
}

/// A fork's copy (as `sessions fork` writes it) keeps each entry's original time; the end
/// added to close it, and the new meta line, are written now.
#[test]
fn a_forked_copy_keeps_the_original_times() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    let mut writer = store
        .create_with_id("orig", meta("greeter", "2026-11-22T02:45:12Z"))
        .unwrap();
    let turns = [
        input("q1"),
        Message::assistant("a1").into(),
        input("q2"),
        Message::assistant("a2").into(),
    ];
    for (index, entry) in (1000_u64..).zip(&turns) {
        writer.append_at(entry, Some(index)).unwrap();
    }
    writer.finish().unwrap();
    let original = store.load("orig").unwrap();
    assert_eq!(
        original.times,
        [Some(1000), Some(1001), Some(1002), Some(1003)]
    );

    let copy = original.entries_through_turn_with_times(1).unwrap();
    assert_eq!(
        copy.iter().map(|(e, _)| e.clone()).collect::<Vec<_>>(),
        original.entries_through_turn(1).unwrap()
    );
    let before = now_unix_ms();
    let mut fork = store
        .create_with_id("fork", meta("greeter", "2026-11-23T00:00:00Z"))
        .unwrap();
    for (entry, at) in &copy {
        fork.append_at(entry, *at).unwrap();
    }
    fork.finish().unwrap();
    let after = now_unix_ms();
    let forked = store.load("fork").unwrap();
    assert_eq!(
        forked.entries,
        [
            input("q1"),
            Message::assistant("a1").into(),
            ended(SessionEndReason::Completed)
        ]
    );
    assert_eq!(forked.times[..2], [Some(1000), Some(1001)]);
    let now = |at: Option<u64>| at.is_some_and(|at| before <= at && at <= after);
    assert!(now(forked.times[2]), "{:?}", forked.times);
    assert!(now(forked.meta_at), "{:?}", forked.meta_at);
}

/// Stamping the line keeps the escapes of U+2028 and U+2029, on an entry and on the meta line
/// an import rewrites.
#[test]
fn stamped_lines_keep_line_separators_escaped() {
    let root = tempfile::tempdir().unwrap();
    let store = SessionStore::new(root.path());
    write(&store, "s1", &[input("one\u{2028}two\u{2029}three")]);
    let text = std::fs::read_to_string(store.dir().join("s1.jsonl")).unwrap();
    assert!(!text.contains(['\u{2028}', '\u{2029}']), "{text}");
    let line = text.lines().nth(1).unwrap();
    assert!(
        line.starts_with(r#"{"kind":"input","content":"one\u2028two\u2029three","at":"#),
        "{line}"
    );
    let loaded = store.load("s1").unwrap();
    assert_eq!(loaded.entries, [input("one\u{2028}two\u{2029}three")]);
    assert!(loaded.times[0].is_some());

    let other = tempfile::tempdir().unwrap();
    let there = SessionStore::new(other.path());
    let local = other.path().join("w\u{2028}x.worker");
    there
        .import("s1", &store.export("s1").unwrap(), &local)
        .unwrap();
    let text = std::fs::read_to_string(there.path("s1").unwrap()).unwrap();
    assert!(!text.contains('\u{2028}'), "{text}");
    assert_eq!(there.load("s1").unwrap().meta.worker_path, local);
}
