//! `golem-forge sessions`: listing, showing, and the errors around them, over transcripts
//! written with the store API (fixed ids and times) into a temporary program root. Every kind
//! of entry through every command is `sessions/kinds.rs`; interrupts and undos in the record
//! are `sessions/happened.rs`.

mod happened;
mod kinds;
mod otlp_export;

use std::io::Write;
use std::path::Path;

use golem_llm::{Message, ModelToolCall, ToolResultMessage};
use golem_protocol::{DecidedBy, DisplayEvent, InvokedBy, SessionEndReason, StatusLevel};
use golem_protocol::{ToolError, ToolErrorCode, ToolStatus};
use golem_session::{
    ForkedFrom, SessionMeta, SessionStatus, SessionStore, ToolCallRecord, TranscriptEntry,
};
use golem_testkit::Wire;
use golem_testkit::mock::MockServer;
use insta::assert_snapshot;
use serde_json::json;

use golem_testkit::cli::{TestEnv, model_for, provider_env};

fn meta(worker: &str, model: &str, mode: &str, started: &str) -> SessionMeta {
    SessionMeta {
        worker: worker.into(),
        worker_path: format!("workers/{worker}.worker").into(),
        model: model.into(),
        mode: mode.into(),
        started: started.into(),
        forked_from: None,
    }
}

fn input(text: &str) -> TranscriptEntry {
    TranscriptEntry::Input {
        content: text.into(),
    }
}

fn ended(reason: SessionEndReason, message: Option<&str>) -> TranscriptEntry {
    TranscriptEntry::Ended {
        reason,
        message: message.map(str::to_owned),
    }
}

fn assistant(text: &str, calls: &[(&str, &str, &str)]) -> TranscriptEntry {
    Message::Assistant {
        text: text.into(),
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| ModelToolCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: (*args).into(),
            })
            .collect(),
    }
    .into()
}

fn results(results: &[(&str, &str, &str, bool)]) -> TranscriptEntry {
    Message::Tool {
        results: results
            .iter()
            .map(|(id, name, content, is_error)| ToolResultMessage {
                tool_call_id: (*id).into(),
                tool_name: (*name).into(),
                content: (*content).into(),
                is_error: *is_error,
            })
            .collect(),
    }
    .into()
}

fn call(id: &str, name: &str, status: ToolStatus, args: serde_json::Value) -> ToolCallRecord {
    ToolCallRecord {
        tool_call_id: id.into(),
        tool_name: name.into(),
        invoked_by: InvokedBy::Model,
        status,
        executed_args: (status == ToolStatus::Success).then(|| args.clone()),
        proposed_args: args,
        approved_args: None,
        decided_by: Some(DecidedBy::Policy),
        error: None,
        duration_ms: 3,
        value: None,
    }
}

fn write(store: &SessionStore, id: &str, meta: SessionMeta, entries: &[TranscriptEntry]) {
    let mut writer = store.create_with_id(id, meta).unwrap();
    for entry in entries {
        writer.append(entry).unwrap();
    }
    writer.finish().unwrap();
}

fn append_raw(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

/// A chat that moved files: tool calls pre-approved, edited at approval, denied.
fn organise_session(store: &SessionStore) {
    let edited = ToolCallRecord {
        approved_args: Some(json!({"path": "/output/2024/notes.md", "content": "# Notes"})),
        executed_args: Some(json!({"path": "/output/2024/notes.md", "content": "# Notes"})),
        decided_by: Some(DecidedBy::User),
        ..call(
            "call_2",
            "write_file",
            ToolStatus::Success,
            json!({"path": "/output/notes.md", "content": "# Notes"}),
        )
    };
    let denied = ToolCallRecord {
        decided_by: Some(DecidedBy::User),
        error: Some(ToolError::new(
            ToolErrorCode::Denied,
            "[DENIED] keep the originals",
        )),
        ..call(
            "call_3",
            "delete_file",
            ToolStatus::Denied,
            json!({"path": "/input/notes.md"}),
        )
    };
    write(
        store,
        "20261122-024512-7f3a",
        meta(
            "file_manager",
            "test:default",
            "chat",
            "2026-11-22T02:45:12Z",
        ),
        &[
            input(
                "Organise the files in /input by year, please.\nSome of them are duplicates; keep the newest copy.",
            ),
            Message::user("Organise the files in /input by year, please.").into(),
            assistant("", &[("call_1", "list_files", r#"{"path":"/input"}"#)]),
            TranscriptEntry::ToolCall(call(
                "call_1",
                "list_files",
                ToolStatus::Success,
                json!({"path": "/input"}),
            )),
            results(&[(
                "call_1",
                "list_files",
                "notes.md (2024-03-01, 7 bytes)",
                false,
            )]),
            assistant(
                "One file, from 2024.\nMoving it now.",
                &[
                    (
                        "call_2",
                        "write_file",
                        r##"{"path":"/output/notes.md","content":"# Notes"}"##,
                    ),
                    ("call_3", "delete_file", r#"{"path":"/input/notes.md"}"#),
                ],
            ),
            TranscriptEntry::ToolCall(edited),
            TranscriptEntry::ToolCall(denied),
            results(&[
                (
                    "call_2",
                    "write_file",
                    "Created /output/2024/notes.md",
                    false,
                ),
                (
                    "call_3",
                    "delete_file",
                    "Error [DENIED]: [DENIED] keep the originals",
                    true,
                ),
            ]),
            DisplayEvent::Status {
                level: StatusLevel::Warning,
                message: "the model asked to delete a file; denied".into(),
            }
            .into(),
            DisplayEvent::Streaming {
                request_id: "r3".into(),
                delta: "Done".into(),
                done: true,
                worker: None,
            }
            .into(),
            assistant(
                "Done: notes.md is in /output/2024. The original stays in /input.",
                &[],
            ),
            ended(
                SessionEndReason::Completed,
                Some("Done: notes.md is in /output/2024. The original stays in /input."),
            ),
        ],
    );
}

/// Four sessions: completed, failed, interrupted, and one killed mid-write.
fn fixture(env: &TestEnv) -> SessionStore {
    let store = SessionStore::new(env.path());
    organise_session(&store);
    write(
        &store,
        "20261122-031500-0b1c",
        meta(
            "summarizer",
            "anthropic:claude-haiku-4-5",
            "single",
            "2026-11-22T03:15:00Z",
        ),
        &[
            input("Summarise report.md"),
            ended(
                SessionEndReason::Failed,
                Some("stopped after 20 model turns (max_iterations)"),
            ),
        ],
    );
    write(
        &store,
        "20261121-235959-c0de",
        meta(
            "file_manager",
            "test:default",
            "chat",
            "2026-11-21T23:59:59Z",
        ),
        &[
            input("first"),
            input("second"),
            ended(SessionEndReason::Interrupted, None),
        ],
    );
    write(
        &store,
        "20261123-080000-dead",
        meta("greeter", "openai:gpt-4o", "chat", "2026-11-23T08:00:00Z"),
        &[
            input("Say hello to everyone in the team"),
            assistant("Hello, te", &[]),
        ],
    );
    append_raw(
        &store.dir().join("20261123-080000-dead.jsonl"),
        br#"{"kind":"message","message":{"role":"assistant","text":"Hello, tea"#,
    );
    store
}

/// The output with the temporary directory replaced by `[ROOT]`.
fn run(env: &TestEnv, args: &[&str]) -> String {
    normalize(env, env.run(args))
}

fn normalize(env: &TestEnv, text: String) -> String {
    text.replace(&env.path().display().to_string(), "[ROOT]")
}

#[test]
fn list_without_sessions_says_where_it_looked() {
    let env = TestEnv::new();
    assert_snapshot!(run(&env, &["sessions"]), @r"
    No sessions yet in [ROOT]/.golem-forge/sessions
    Sessions are recorded in the program's folder (the one with golem-forge.config.yaml or .golem-forge/): run this there.
    [exit status: 0]
    ");
}

/// A program root `dir` below the test root with one completed session `id`.
fn program_with_session(env: &TestEnv, dir: &str, id: &str, input_text: &str) {
    let root = env.path().join(dir);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("golem-forge.config.yaml"),
        "model: test:default\n",
    )
    .unwrap();
    write(
        &SessionStore::new(&root),
        id,
        meta("greeter", "test:default", "single", "2026-11-22T02:45:12Z"),
        &[
            input(input_text),
            ended(SessionEndReason::Completed, Some("Hello!")),
        ],
    );
}

#[test]
fn list_from_a_folder_above_a_program_lists_that_programs_sessions() {
    let env = TestEnv::new();
    program_with_session(&env, "work/examples", "20261122-024512-7f3a", "hi there");
    let out = run(&env, &["sessions"]);
    assert!(
        out.contains("20261122-024512-7f3a") && out.contains("hi there"),
        "{out}"
    );
    assert!(
        out.contains("No program in this folder; sessions of the program in work/examples:"),
        "{out}"
    );
    let shown = run(&env, &["sessions", "show", "20261122-024512"]);
    assert!(shown.contains("Session 20261122-024512-7f3a"), "{shown}");
}

#[test]
fn from_a_folder_above_several_programs_each_is_listed_and_ids_are_found() {
    let env = TestEnv::new();
    program_with_session(&env, "a", "20261122-024512-aaaa", "first program");
    program_with_session(&env, "b/c", "20261122-030000-bbbb", "second program");
    // Build output and hidden folders are not searched.
    program_with_session(&env, "target/x", "20261122-040000-cccc", "build output");
    let out = run(&env, &["sessions"]);
    assert!(
        out.contains("a:\n") && out.contains("first program"),
        "{out}"
    );
    assert!(
        out.contains("b/c:\n") && out.contains("second program"),
        "{out}"
    );
    assert!(!out.contains("build output"), "{out}");
    let shown = run(&env, &["sessions", "show", "20261122-030000-bbbb"]);
    assert!(shown.contains("second program"), "{shown}");
    let resumed = run(
        &env,
        &["sessions", "resume", "20261122-030000-bbbb", "again"],
    );
    assert!(
        resumed.contains("Error: session `20261122-030000-bbbb` belongs to the program in b/c"),
        "{resumed}"
    );
    assert!(
        resumed.contains("Hint: Resume it from there: cd b/c"),
        "{resumed}"
    );
    let unknown = run(&env, &["sessions", "show", "20991122"]);
    assert!(
        unknown.contains("no single program below it holds session `20991122`"),
        "{unknown}"
    );
}

#[test]
fn list_shows_sessions_newest_first() {
    let env = TestEnv::new();
    fixture(&env);
    let out = run(&env, &["sessions"]);
    assert_snapshot!(out);
    assert_eq!(
        run(&env, &["sessions", "list"]),
        out,
        "`list` is the default"
    );
}

#[test]
fn list_finds_the_program_root_from_a_subdirectory() {
    let env = TestEnv::new();
    program_with_session(&env, "project", "20261122-024512-7f3a", "hi");
    let root = env.path().join("project");
    let sub = root.join("workers/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let out = normalize(
        &env,
        common_render(env.command().current_dir(&sub).arg("sessions")),
    );
    assert!(out.contains("20261122-024512-7f3a"), "{out}");
    // Without a config, the nearest `.golem-forge/` marks the root.
    std::fs::remove_file(root.join("golem-forge.config.yaml")).unwrap();
    let again = normalize(
        &env,
        common_render(env.command().current_dir(&sub).arg("sessions")),
    );
    assert_eq!(again, out);
}

fn common_render(cmd: &mut assert_cmd::Command) -> String {
    golem_testkit::cli::render(&cmd.output().unwrap())
}

#[test]
fn list_skips_damaged_and_foreign_files_with_a_warning() {
    let env = TestEnv::new();
    let store = fixture(&env);
    std::fs::write(store.dir().join("README.txt"), "not mine").unwrap();
    std::fs::write(
        store.dir().join("20260101-000000-0000.jsonl"),
        "\u{0}\u{0}garbage\n",
    )
    .unwrap();
    let out = run(&env, &["sessions"]);
    assert_snapshot!(out);
}

#[test]
fn show_prints_the_transcript_readably() {
    let env = TestEnv::new();
    fixture(&env);
    assert_snapshot!(run(&env, &["sessions", "show", "20261122-024512-7f3a"]));
}

#[test]
fn show_takes_a_unique_prefix() {
    let env = TestEnv::new();
    fixture(&env);
    let full = run(&env, &["sessions", "show", "20261122-031500-0b1c"]);
    assert_eq!(run(&env, &["sessions", "show", "20261122-03"]), full);
    assert_snapshot!(full, @r"
    Session 20261122-031500-0b1c
      worker   summarizer (workers/summarizer.worker)
      model    anthropic:claude-haiku-4-5
      mode     single
      started  2026-11-22 03:15:00 UTC
      status   failed

    user
      Summarise report.md

    ended: failed
      stopped after 20 model turns (max_iterations)
    [exit status: 0]
    ");
}

#[test]
fn show_a_session_killed_mid_write() {
    let env = TestEnv::new();
    fixture(&env);
    assert_snapshot!(run(&env, &["sessions", "show", "20261123"]), @r"
    Session 20261123-080000-dead
      worker   greeter (workers/greeter.worker)
      model    openai:gpt-4o
      mode     chat
      started  2026-11-23 08:00:00 UTC
      status   unfinished

    user
      Say hello to everyone in the team

    assistant
      Hello, te

    (the last entry was cut off mid-write: the process was killed)

    (no end recorded: the process was killed or is still running)
    [exit status: 0]
    ");
}

#[test]
fn show_json_prints_the_stored_lines() {
    let env = TestEnv::new();
    let store = fixture(&env);
    let out = env
        .command()
        .args(["sessions", "show", "20261122-024512-7f3a", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored = std::fs::read_to_string(store.dir().join("20261122-024512-7f3a.jsonl")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), stored);

    // A cut-off last line is left out, so the output stays valid JSON lines.
    let out = env
        .command()
        .args(["sessions", "show", "20261123", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}

#[test]
fn line_separators_are_escaped_when_written_and_when_shown() {
    let env = TestEnv::new();
    let store = SessionStore::new(env.path());
    let id = "20261124-080000-aaaa";
    write(
        &store,
        id,
        meta("main", "test:default", "single", "2026-11-24T08:00:00Z"),
        &[input("one\u{2028}two\u{2029}three")],
    );
    let path = store.dir().join(format!("{id}.jsonl"));
    let stored = std::fs::read_to_string(&path).unwrap();
    assert!(
        !stored.contains(['\u{2028}', '\u{2029}']),
        "the writer escapes them: {stored}"
    );
    assert!(stored.contains(r"one\u2028two\u2029three"), "{stored}");
    // A transcript written before they were escaped holds them raw; --json escapes them.
    let old = serde_json::to_string(&input("four\u{2028}five")).unwrap();
    assert!(old.contains('\u{2028}'));
    append_raw(&path, format!("{old}\n").as_bytes());
    let out = env
        .command()
        .args(["sessions", "show", id, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains(['\u{2028}', '\u{2029}']), "{text}");
    let contents: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|v| v["kind"] == "input")
        .map(|v| v["content"].clone())
        .collect();
    assert_eq!(
        contents,
        [
            serde_json::json!("one\u{2028}two\u{2029}three"),
            serde_json::json!("four\u{2028}five")
        ]
    );
}

#[test]
fn unknown_and_ambiguous_ids_name_the_candidates() {
    let env = TestEnv::new();
    fixture(&env);
    assert_snapshot!(run(&env, &["sessions", "show", "2025"]), @r"
    [stderr]
    Error: no session `2025` in [ROOT]/.golem-forge/sessions (newest: 20261123-080000-dead, 20261122-031500-0b1c, 20261122-024512-7f3a, 20261121-235959-c0de)
    Hint: Run `golem-forge sessions` to list the sessions
    [exit status: 2]
    ");
    assert_snapshot!(run(&env, &["sessions", "show", "20261122"]), @r"
    [stderr]
    Error: session id `20261122` is ambiguous: it matches 20261122-031500-0b1c, 20261122-024512-7f3a
    Hint: Run `golem-forge sessions` to list the sessions
    [exit status: 2]
    ");
}

#[test]
fn a_corrupt_line_names_the_file_and_line() {
    let env = TestEnv::new();
    let store = fixture(&env);
    let path = store.dir().join("20261122-031500-0b1c.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    std::fs::write(
        &path,
        format!("{first}\n{{\"kind\":\"input\",\"content\":7}}\n{rest}"),
    )
    .unwrap();
    assert_snapshot!(run(&env, &["sessions", "show", "20261122-031500-0b1c"]), @r"
    [stderr]
    Error: [ROOT]/.golem-forge/sessions/20261122-031500-0b1c.jsonl line 2: not a transcript entry: invalid type: integer `7`, expected a string
    Hint: Run `golem-forge sessions show 20261122-031500-0b1c --json` to print the stored lines
    [exit status: 1]
    ");
    let raw = env
        .command()
        .args(["sessions", "show", "20261122-031500-0b1c", "--json"])
        .output()
        .unwrap();
    assert!(raw.status.success());
    assert_eq!(
        String::from_utf8(raw.stdout).unwrap(),
        std::fs::read_to_string(&path).unwrap()
    );
    assert!(String::from_utf8_lossy(&raw.stderr).starts_with("Warning: "));
    // The list does not hide it: it is there as far as it reads, and the warning names the
    // line and where to look.
    let listed = run(&env, &["sessions"]);
    assert!(
        listed.contains("20261122-031500-0b1c  2026-11-22 03:15:00  summarizer"),
        "{listed}"
    );
    assert!(
        listed.contains(
            "Warning: [ROOT]/.golem-forge/sessions/20261122-031500-0b1c.jsonl line 2: not a \
             transcript entry: invalid type: integer `7`, expected a string (session \
             20261122-031500-0b1c is listed as far as it can be read; `sessions show \
             20261122-031500-0b1c --json` prints its lines)\n"
        ),
        "{listed}"
    );
}

#[test]
fn resume_continues_a_session_with_its_history() {
    let env = TestEnv::new();
    std::fs::write(
        env.path().join("golem-forge.config.yaml"),
        "model: test:default\n",
    )
    .unwrap();
    std::fs::write(env.path().join("w.worker"), "---\nname: w\n---\nHi\n").unwrap();
    let out = run(&env, &["run", "w.worker", "first question"]);
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    let store = SessionStore::new(env.path());
    let id = store.list().unwrap()[0].id.clone();

    let out = run(&env, &["sessions", "resume", &id[..12], "second question"]);
    assert!(
        out.starts_with("Test model: you said \"second question\"."),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");

    let transcript = store.load(&id).unwrap();
    assert_eq!(
        transcript.inputs().collect::<Vec<_>>(),
        ["first question", "second question"]
    );
    let messages = transcript.messages();
    assert_eq!(
        messages.len(),
        4,
        "both turns, in one conversation: {messages:?}"
    );
    assert_eq!(
        store.list().unwrap().len(),
        1,
        "resume appends, it does not start a new session"
    );

    let out = run(&env, &["sessions", "resume", "nope", "x"]);
    assert!(out.contains("Error: no session `nope`"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

#[test]
fn show_adds_up_what_the_priced_model_calls_cost() {
    let env = TestEnv::new();
    let store = SessionStore::new(env.path());
    let usage = |cost: Option<f64>| TranscriptEntry::Event {
        event: golem_protocol::DisplayEvent::Usage {
            usage: golem_protocol::TokenUsage::default(),
            total: golem_protocol::TokenUsage::default(),
            model: Some("openai:gpt-4o".into()),
            cost,
            budget: None,
            context: None,
            worker: None,
            call: None,
        },
    };
    write(
        &store,
        "20261123-090000-c057",
        meta("greeter", "openai:gpt-4o", "chat", "2026-11-23T09:00:00Z"),
        &[
            input("hi"),
            usage(Some(0.0021)),
            usage(None),
            usage(Some(0.0009)),
            ended(SessionEndReason::Completed, None),
        ],
    );
    let shown = run(&env, &["sessions", "show", "20261123-090000-c057"]);
    assert!(shown.contains("\n  cost     $0.0030\n"), "{shown}");
    // Without a priced call there is no cost line at all.
    write(
        &store,
        "20261123-090100-0000",
        meta("greeter", "test:default", "chat", "2026-11-23T09:01:00Z"),
        &[
            input("hi"),
            usage(None),
            ended(SessionEndReason::Completed, None),
        ],
    );
    let plain = run(&env, &["sessions", "show", "20261123-090100-0000"]);
    assert!(!plain.contains("cost"), "{plain}");
}

#[test]
fn export_markdown_reads_as_a_report() {
    let env = TestEnv::new();
    let store = SessionStore::new(env.path());
    organise_session(&store);
    assert_snapshot!(run(&env, &["sessions", "export", "20261122-024512-7f3a"]));
    // `--format markdown` is the default.
    assert_eq!(
        run(
            &env,
            &["sessions", "export", "20261122", "--format", "markdown"]
        ),
        run(&env, &["sessions", "export", "20261122-024512-7f3a"])
    );
}

#[test]
fn export_markdown_shows_the_cost_and_a_missing_end() {
    let env = TestEnv::new();
    let store = fixture(&env);
    let usage = TranscriptEntry::Event {
        event: golem_protocol::DisplayEvent::Usage {
            usage: golem_protocol::TokenUsage::default(),
            total: golem_protocol::TokenUsage::default(),
            model: Some("openai:gpt-4o".into()),
            cost: Some(0.0042),
            budget: None,
            context: None,
            worker: None,
            call: None,
        },
    };
    write(
        &store,
        "20261123-090000-c057",
        meta("greeter", "openai:gpt-4o", "chat", "2026-11-23T09:00:00Z"),
        &[input("hi"), usage],
    );
    let out = run(&env, &["sessions", "export", "20261123-090000-c057"]);
    assert!(out.contains("\n- **Cost:** $0.0042\n"), "{out}");
    assert!(out.contains("- **Status:** unfinished\n"), "{out}");
    assert!(out.contains("_No end recorded"), "{out}");
    // A session killed mid-write: the cut line is named.
    let out = run(&env, &["sessions", "export", "20261123-080000-dead"]);
    assert!(out.contains("skipped (line 4)"), "{out}");
}

#[test]
fn export_json_round_trips_to_the_loaded_transcript() {
    let env = TestEnv::new();
    let store = fixture(&env);
    for id in [
        "20261122-024512-7f3a",
        "20261122-031500-0b1c",
        "20261121-235959-c0de",
        "20261123-080000-dead",
    ] {
        let out = env
            .command()
            .args(["sessions", "export", id, "--format", "json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let document: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let transcript = store.load(id).unwrap();
        assert_eq!(document["id"], id);
        assert_eq!(document["status"], transcript.status().as_str());
        let meta: SessionMeta = serde_json::from_value(document["meta"].clone()).unwrap();
        let entries: Vec<TranscriptEntry> =
            serde_json::from_value(document["entries"].clone()).unwrap();
        assert_eq!(meta, transcript.meta);
        assert_eq!(entries, transcript.entries);
    }
    let out = run(&env, &["sessions", "export", "nope", "--format", "json"]);
    assert!(out.contains("Error: no session `nope`"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
}

/// A session of four user turns, run for real with the offline test model; its id.
fn four_turn_session(env: &TestEnv) -> String {
    std::fs::write(
        env.path().join("golem-forge.config.yaml"),
        "model: test:default\n",
    )
    .unwrap();
    std::fs::write(env.path().join("w.worker"), "---\nname: w\n---\nHi\n").unwrap();
    let out = run(env, &["run", "w.worker", "question 1"]);
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    let id = SessionStore::new(env.path()).list().unwrap()[0].id.clone();
    for n in 2..=4 {
        let out = run(env, &["sessions", "resume", &id, &format!("question {n}")]);
        assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    }
    id
}

#[test]
fn fork_at_turn_two_of_four_replays_only_turns_one_and_two() {
    let env = TestEnv::new();
    let id = four_turn_session(&env);
    let store = SessionStore::new(env.path());
    let original = std::fs::read_to_string(store.path(&id).unwrap()).unwrap();

    let wire = Wire::OpenAi;
    let server = MockServer::start_blocking(vec![wire.text("Forked answer.")]);
    let output = env
        .command()
        .args(["sessions", "fork", &id, "--at", "2", "question five"])
        .args(["--model", model_for(wire)])
        .envs(provider_env(wire, &server))
        .output()
        .unwrap();
    let out = normalize(&env, golem_testkit::cli::render(&output));
    assert!(output.status.success(), "{out}");
    assert!(out.starts_with("Forked answer.\n"), "{out}");
    assert!(
        out.contains(&format!("Forked session {id} at turn 2 of 4 as ")),
        "{out}"
    );

    // The continued session's one model request holds turns 1 and 2, then the new input.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = requests[0].body.to_string();
    for present in ["question 1", "you said \\\"question 2\\\"", "question five"] {
        assert!(body.contains(present), "{present:?} in {body}");
    }
    for absent in ["question 3", "question 4"] {
        assert!(!body.contains(absent), "{absent:?} not in {body}");
    }

    // Both are listed; the fork records where it came from; the original is untouched.
    let listed = run(&env, &["sessions"]);
    let sessions = store.list().unwrap();
    assert_eq!(sessions.len(), 2, "{listed}");
    let fork = sessions.iter().find(|s| s.id != id).unwrap();
    assert!(
        listed.contains(&fork.id) && listed.contains(&id),
        "{listed}"
    );
    let forked = store.load(&fork.id).unwrap();
    assert_eq!(
        forked.meta.forked_from,
        Some(ForkedFrom {
            id: id.clone(),
            turn: 2
        })
    );
    assert_eq!(
        forked.inputs().collect::<Vec<_>>(),
        ["question 1", "question 2", "question five"]
    );
    assert_eq!(forked.status(), SessionStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(store.path(&id).unwrap()).unwrap(),
        original
    );
}

#[test]
fn fork_without_input_creates_the_session_at_the_last_turn_to_resume() {
    let env = TestEnv::new();
    let id = four_turn_session(&env);
    let store = SessionStore::new(env.path());
    let output = env
        .command()
        .args(["sessions", "fork", &id[..12]])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let new_id = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(&format!("golem-forge sessions resume {new_id}")),
        "{stderr}"
    );
    let forked = store.load(&new_id).unwrap();
    assert_eq!(forked.meta.forked_from.as_ref().unwrap().turn, 4);
    assert_eq!(forked.messages(), store.load(&id).unwrap().messages());
    assert_eq!(forked.status(), SessionStatus::Completed);

    let out = run(&env, &["sessions", "resume", &new_id, "question 5"]);
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    assert_eq!(store.load(&new_id).unwrap().turns(), 5);
    assert_eq!(store.load(&id).unwrap().turns(), 4);
}

#[test]
fn fork_at_a_turn_that_does_not_exist_names_how_many_there_are() {
    let env = TestEnv::new();
    let id = four_turn_session(&env);
    for at in ["0", "5"] {
        let out = run(&env, &["sessions", "fork", &id, "--at", at, "more"]);
        assert!(
            out.contains(&format!(
                "Error: session `{id}` has 4 user turns; there is no turn {at}"
            )),
            "{out}"
        );
        assert!(out.contains("from 1 to 4"), "{out}");
        assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    }
    assert_eq!(SessionStore::new(env.path()).list().unwrap().len(), 1);
}

#[test]
fn show_and_export_mark_where_the_conversation_was_compacted_or_cleared() {
    let env = TestEnv::new();
    let store = SessionStore::new(env.path());
    write(
        &store,
        "20261127-100000-c0c0",
        meta("reader", "test:default", "chat", "2026-11-27T10:00:00Z"),
        &[
            input("read the notes"),
            Message::user("read the notes").into(),
            assistant("Read them.", &[]),
            TranscriptEntry::Compacted {
                reason: golem_protocol::CompactionReason::Requested,
                summary: Message::user("[compacted] SUMMARY: the notes say x."),
                kept: 0,
            },
            input("forget it"),
            TranscriptEntry::Cleared,
            ended(SessionEndReason::Completed, None),
        ],
    );
    let shown = run(&env, &["sessions", "show", "20261127-100000-c0c0"]);
    assert!(
        shown.contains(
            "compacted (requested): the conversation before its last 0 messages became this \
             summary\n  [compacted] SUMMARY: the notes say x."
        ),
        "{shown}"
    );
    assert!(
        shown.contains("cleared\n  The conversation was cleared"),
        "{shown}"
    );
    let report = run(&env, &["sessions", "export", "20261127-100000-c0c0"]);
    assert!(
        report.contains("### Context compacted (requested): the conversation before its last 0 messages became this summary\n\n> [compacted] SUMMARY: the notes say x."),
        "{report}"
    );
    assert!(report.contains("### Context cleared"), "{report}");
}
