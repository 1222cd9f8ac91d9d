//! One transcript holding every kind of entry (and lines a newer version would write: a kind
//! and an event type this one does not know), read through every command that reads
//! transcripts: `sessions` (the list), `show`, `show --json`, `export`, `fork`, `resume`,
//! `undo`, and `SessionStore::import` as a queue consumer does it, then listed and shown there.

use std::collections::HashSet;

use golem_llm::Message;
use golem_protocol::{CompactionReason, DisplayEvent, SessionEndReason, StatusLevel, ToolStatus};
use golem_session::{EntryKind, SessionStore, TranscriptEntry};
use serde_json::json;

use super::{append_raw, assistant, call, ended, input, meta, normalize, results, run, write};
use golem_testkit::cli::TestEnv;

const ID: &str = "20261128-090000-a11c";

/// Lines a newer golem-forge could write: a kind, and an event type, this one does not know.
const NEWER: &str = concat!(
    r#"{"kind":"bookmark","label":"here"}"#,
    "\n",
    r#"{"kind":"event","event":{"type":"weather","sky":"grey"}}"#,
    "\n",
);

/// Every kind of entry, in the order a chat writes them: a turn with a tool call, a
/// compaction, a turn, a clear, a turn.
fn every_kind() -> Vec<TranscriptEntry> {
    vec![
        input("read the notes"),
        Message::user("read the notes").into(),
        DisplayEvent::Status {
            level: StatusLevel::Warning,
            message: "the model is slow today".into(),
        }
        .into(),
        assistant(
            "Reading.",
            &[("call_1", "read_file", r#"{"path":"/in/n.md"}"#)],
        ),
        TranscriptEntry::ToolCall(call(
            "call_1",
            "read_file",
            ToolStatus::Success,
            json!({"path": "/in/n.md"}),
        )),
        results(&[("call_1", "read_file", "x = 1", false)]),
        assistant("The notes say x = 1.", &[]),
        TranscriptEntry::Compacted {
            reason: CompactionReason::Threshold,
            summary: Message::user("[compacted] SUMMARY: the notes say x = 1."),
            kept: 1,
        },
        input("and y?"),
        Message::user("and y?").into(),
        assistant("There is no y.", &[]),
        TranscriptEntry::Cleared,
        input("start again"),
        Message::user("start again").into(),
        assistant("Started again.", &[]),
        ended(SessionEndReason::Completed, Some("Started again.")),
    ]
}

/// Writes the session: `every_kind`, with [`NEWER`] before its end.
fn write_every_kind(env: &TestEnv) -> SessionStore {
    env.write("golem-forge.config.yaml", "model: test:default\n");
    let worker = env.write("w.worker", "---\nname: w\n---\nHi\n");
    let store = SessionStore::new(env.path());
    let mut entries = every_kind();
    let end = entries.pop().unwrap();
    let mut meta = meta("w", "test:default", "chat", "2026-11-28T09:00:00Z");
    meta.worker_path = worker;
    write(&store, ID, meta, &entries);
    let path = store.dir().join(format!("{ID}.jsonl"));
    append_raw(&path, NEWER.as_bytes());
    append_raw(
        &path,
        format!("{}\n", serde_json::to_string(&end).unwrap()).as_bytes(),
    );
    store
}

/// The one warning about [`NEWER`]'s lines (they are lines 17 and 18 of the file).
fn newer_warning() -> String {
    format!(
        "Warning: skipped lines 17, 18 of {ID}.jsonl: entries of kind `bookmark`, event type \
         `weather`, which this version does not know (a newer golem-forge wrote them)\n"
    )
}

/// The `[stderr]` part of a rendered output.
fn stderr_of(out: &str) -> &str {
    out.split_once("[stderr]\n").map_or("", |(_, err)| err)
}

#[test]
fn the_transcript_holds_every_kind_of_entry() {
    let mut kinds: HashSet<EntryKind> = every_kind().iter().map(|e| e.entry_kind()).collect();
    kinds.insert(EntryKind::Meta);
    // A new kind fails to compile here until it is added, and then this test until it is in
    // `every_kind`.
    let each = |kind: EntryKind| match kind {
        EntryKind::Meta
        | EntryKind::Event
        | EntryKind::Message
        | EntryKind::ToolCall
        | EntryKind::Compacted
        | EntryKind::Cleared
        | EntryKind::Input
        | EntryKind::Ended => kind,
    };
    let all = [
        EntryKind::Meta,
        EntryKind::Event,
        EntryKind::Message,
        EntryKind::ToolCall,
        EntryKind::Compacted,
        EntryKind::Cleared,
        EntryKind::Input,
        EntryKind::Ended,
    ];
    assert_eq!(kinds, all.into_iter().map(each).collect());
}

#[test]
fn every_command_reads_every_kind_and_skips_what_a_newer_version_wrote() {
    let env = TestEnv::new();
    let store = write_every_kind(&env);

    // The list: the session is there, with all its inputs, and one warning names the lines.
    let listed = run(&env, &["sessions"]);
    assert!(
        listed.contains(&format!(
            "{ID}  2026-11-28 09:00:00  w       test:default  completed  3       read the notes"
        )),
        "{listed}"
    );
    assert_eq!(
        stderr_of(&listed),
        format!("{}[exit status: 0]\n", newer_warning())
    );

    // show and export: everything known, the same one warning.
    let shown = run(&env, &["sessions", "show", ID]);
    for needle in [
        "tool read_file: success",
        "warning\n  the model is slow today",
        "compacted (threshold)",
        "cleared\n",
        "assistant\n  There is no y.",
        "ended: completed",
    ] {
        assert!(shown.contains(needle), "{needle}:\n{shown}");
    }
    assert_eq!(
        stderr_of(&shown),
        format!("{}[exit status: 0]\n", newer_warning())
    );
    let report = run(&env, &["sessions", "export", ID]);
    assert!(report.contains("### Context cleared"), "{report}");
    assert!(report.contains("## Turn 3: user"), "{report}");
    assert_eq!(
        stderr_of(&report),
        format!("{}[exit status: 0]\n", newer_warning())
    );
    let output = env
        .command()
        .args(["sessions", "export", ID, "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        serde_json::from_value::<Vec<TranscriptEntry>>(document["entries"].clone()).unwrap(),
        every_kind()
    );

    // show --json: every stored line, the newer ones included.
    let raw = env
        .command()
        .args(["sessions", "show", ID, "--json"])
        .output()
        .unwrap();
    assert!(raw.status.success());
    let stored = std::fs::read_to_string(store.dir().join(format!("{ID}.jsonl"))).unwrap();
    assert_eq!(String::from_utf8(raw.stdout).unwrap(), stored);

    // fork: a new session from turn 2, listed beside the original.
    let forked = env
        .command()
        .args(["sessions", "fork", ID, "--at", "2"])
        .output()
        .unwrap();
    assert!(
        forked.status.success(),
        "{}",
        golem_testkit::cli::render(&forked)
    );
    let fork_id = String::from_utf8(forked.stdout).unwrap().trim().to_owned();
    let fork = store.load(&fork_id).unwrap();
    assert_eq!(fork.turns(), 2);
    assert!(
        fork.entries
            .iter()
            .any(|e| matches!(e, TranscriptEntry::Compacted { .. })),
        "{fork:?}"
    );
    assert_eq!(store.list().unwrap().len(), 2);

    // resume: from after the clear, with the warning.
    let resumed = normalize(&env, run(&env, &["sessions", "resume", ID, "one more"]));
    assert!(
        resumed.starts_with("Test model: you said \"one more\"."),
        "{resumed}"
    );
    assert!(resumed.ends_with("[exit status: 0]\n"), "{resumed}");
    assert!(
        resumed.contains("skipped lines 17, 18 of 20261128-090000-a11c.jsonl"),
        "{resumed}"
    );
    let transcript = store.load(ID).unwrap();
    assert_eq!(transcript.turns(), 4);
    assert_eq!(
        transcript.messages()[..2],
        [
            Message::user("start again"),
            Message::Assistant {
                text: "Started again.".into(),
                tool_calls: vec![]
            }
        ],
        "the conversation after the clear"
    );

    // undo: the transcript is not what stops it.
    let undo = run(&env, &["sessions", "undo", ID]);
    assert!(
        undo.contains(&format!(
            "Error: nothing to undo: session `{ID}` changed no files"
        )),
        "{undo}"
    );

    // import, as a queue consumer carries a parked session to another machine.
    let there = TestEnv::new();
    there.write("golem-forge.config.yaml", "model: test:default\n");
    let worker = there.write("w.worker", "---\nname: w\n---\nHi\n");
    let other = SessionStore::new(there.path());
    other
        .import(ID, &store.export(ID).unwrap(), &worker)
        .unwrap();
    let listed = run(&there, &["sessions"]);
    assert!(listed.contains(&format!("{ID}  ")), "{listed}");
    assert!(listed.contains("  4       read the notes"), "{listed}");
    assert_eq!(
        stderr_of(&listed),
        format!("{}[exit status: 0]\n", newer_warning())
    );
    let shown = run(&there, &["sessions", "show", ID]);
    assert!(shown.contains("user\n  one more"), "{shown}");
    assert_eq!(other.load(ID).unwrap().meta.worker_path, worker);
}
