//! Wire-shape tests: every protocol type serializes to the exact JSON of docs/protocol.md and
//! docs/tools.md (Result kinds), and reads back to the same value.

use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::approval::*;
use crate::error::*;
use crate::events::*;
use crate::form::*;
use crate::result::*;
use crate::workers::{ContextFill, ModelCall, ModelCallPurpose, TokenUsage, WorkerOrigin};

/// Asserts that `value` serializes to `expected` and that `expected` reads back to `value`.
pub(crate) fn check<T>(value: T, expected: Value)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let actual = serde_json::to_value(&value).unwrap();
    assert_eq!(actual, expected);
    let back: T = serde_json::from_value(expected).unwrap();
    assert_eq!(back, value);
}

fn origin() -> Option<WorkerOrigin> {
    Some(WorkerOrigin {
        name: "summarizer".into(),
        depth: 1,
        id: String::new(),
    })
}

#[test]
fn text_result() {
    check(
        ToolResultValue::text("hi"),
        json!({"kind": "text", "data": {"content": "hi"}}),
    );
    check(
        ToolResultValue::markdown("# T"),
        json!({"kind": "text", "data": {"content": "# T"}, "mimeType": "text/markdown",
               "display": {"preferredView": "markdown"}}),
    );
}

#[test]
fn diff_result() {
    let value = ToolResultValue::diff(DiffData {
        path: "/out/a.md".into(),
        original: Some("a\nb\n".into()),
        modified: "a\nc\nd\n".into(),
        is_new: false,
        bytes_written: Some(6),
        hunks: Some(vec![DiffHunk {
            old_start: 2,
            old_lines: 1,
            new_start: 2,
            new_lines: 2,
            lines: vec!["-b".into(), "+c".into(), "+d".into()],
        }]),
    });
    check(
        value,
        json!({"kind": "diff", "summary": "+2 \u{2212}1 lines", "data": {
            "path": "/out/a.md", "original": "a\nb\n", "modified": "a\nc\nd\n", "isNew": false,
            "bytesWritten": 6,
            "hunks": [{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 2,
                       "lines": ["-b", "+c", "+d"]}]}}),
    );
    let new_file = ToolResultValue::diff(DiffData {
        path: "/o/n".into(),
        original: None,
        modified: "x\n".into(),
        is_new: true,
        bytes_written: None,
        hunks: None,
    });
    check(
        new_file,
        json!({"kind": "diff", "summary": "+1 \u{2212}0 lines",
               "data": {"path": "/o/n", "modified": "x\n", "isNew": true}}),
    );
}

#[test]
fn file_content_and_list_results() {
    check(
        ToolResultValue::file_content(FileContentData {
            path: "/in/a.rs".into(),
            content: "fn main() {}".into(),
            size: 12,
            encoding: Some("utf-8".into()),
        }),
        json!({"kind": "file_content", "summary": "/in/a.rs (12 bytes)",
               "data": {"path": "/in/a.rs", "content": "fn main() {}", "size": 12,
                        "encoding": "utf-8"}}),
    );
    check(
        ToolResultValue::file_list(FileListData {
            path: "/in".into(),
            entries: vec![
                FileEntry {
                    name: "a".into(),
                    entry_type: FileEntryType::File,
                    size: Some(3),
                    modified: Some("2026-01-01T00:00:00Z".into()),
                },
                FileEntry {
                    name: "d".into(),
                    entry_type: FileEntryType::Directory,
                    size: None,
                    modified: None,
                },
                FileEntry {
                    name: "l".into(),
                    entry_type: FileEntryType::Symlink,
                    size: None,
                    modified: None,
                },
            ],
            truncated: Some(true),
        }),
        json!({"kind": "file_list", "summary": "3 entries (truncated)", "data": {
            "path": "/in", "truncated": true, "entries": [
                {"name": "a", "type": "file", "size": 3, "modified": "2026-01-01T00:00:00Z"},
                {"name": "d", "type": "directory"},
                {"name": "l", "type": "symlink"}]}}),
    );
}

#[test]
fn special_entry_types_have_their_own_names() {
    for (entry_type, name) in [
        (FileEntryType::Fifo, "fifo"),
        (FileEntryType::Socket, "socket"),
        (FileEntryType::Device, "device"),
    ] {
        assert_eq!(serde_json::to_value(entry_type).unwrap(), json!(name));
        let back: FileEntryType = serde_json::from_value(json!(name)).unwrap();
        assert_eq!(back, entry_type);
    }
}

#[test]
fn table_image_structured_results() {
    let mut row = serde_json::Map::new();
    row.insert("name".into(), json!("a"));
    row.insert("n".into(), json!(1));
    check(
        ToolResultValue::table(TableData {
            columns: vec![
                ColumnDef {
                    key: "name".into(),
                    label: Some("Name".into()),
                    column_type: None,
                    align: Some(ColumnAlign::Left),
                },
                ColumnDef {
                    key: "n".into(),
                    label: None,
                    column_type: Some(ColumnType::Number),
                    align: Some(ColumnAlign::Right),
                },
            ],
            rows: vec![row],
        })
        .with_display(DisplayHints {
            max_height: Some(20),
            ..DisplayHints::default()
        }),
        json!({"kind": "table", "summary": "1 row", "display": {"maxHeight": 20}, "data": {
            "columns": [{"key": "name", "label": "Name", "align": "left"},
                        {"key": "n", "type": "number", "align": "right"}],
            "rows": [{"name": "a", "n": 1}]}}),
    );
    check(
        ToolResultValue::image(
            ImageData {
                base64: Some("iVBO".into()),
                alt: Some("chart".into()),
                width: Some(2),
                height: Some(1),
                ..ImageData::default()
            },
            "image/png",
        ),
        json!({"kind": "image", "mimeType": "image/png",
               "data": {"base64": "iVBO", "alt": "chart", "width": 2, "height": 1}}),
    );
    check(
        ToolResultValue::new("git.status", json!({"branch": "main"}))
            .with_summary("0 staged")
            .with_display(DisplayHints {
                preferred_view: Some(PreferredView::Tree),
                language: Some("rust".into()),
                collapsed: Some(true),
                max_height: Some(10),
                priority: Some(-1),
            }),
        json!({"kind": "git.status", "data": {"branch": "main"}, "summary": "0 staged",
               "display": {"preferredView": "tree", "language": "rust", "collapsed": true,
                           "maxHeight": 10, "priority": -1}}),
    );
    check(
        ToolResultValue::structured(json!([1])),
        json!({"kind": "structured", "data": [1]}),
    );
    check(
        ToolResultValue::json(json!(null)),
        json!({"kind": "json", "data": null}),
    );
}

fn run(exit_code: Option<i32>, signal: Option<i32>, duration_ms: u64) -> CodeResultData {
    CodeResultData {
        command: "python3 main.py".into(),
        stdout: String::new(),
        stderr: String::new(),
        exit_code,
        signal,
        duration_ms,
        timed_out: false,
        weakened: vec![],
        changes: None,
        limits: None,
    }
}

#[test]
fn code_results() {
    check(
        ToolResultValue::code_result(CodeResultData {
            stdout: "hi\n".into(),
            ..run(Some(0), None, 41)
        }),
        json!({"kind": "code_result", "summary": "exit 0 in 41 ms", "data": {
            "command": "python3 main.py", "stdout": "hi\n", "stderr": "", "exitCode": 0,
            "durationMs": 41}}),
    );
    // Killed by a signal: no exit code (null, not absent), the signal; best-effort layers.
    check(
        ToolResultValue::code_result(CodeResultData {
            weakened: vec!["seccomp: not supported by the kernel".into()],
            ..run(None, Some(9), 2034)
        }),
        json!({"kind": "code_result", "summary": "killed by signal 9 in 2.0 s", "data": {
            "command": "python3 main.py", "stdout": "", "stderr": "", "exitCode": null,
            "signal": 9, "durationMs": 2034,
            "weakened": ["seccomp: not supported by the kernel"]}}),
    );
    check(
        ToolResultValue::code_result(CodeResultData {
            timed_out: true,
            ..run(None, Some(9), 5003)
        }),
        json!({"kind": "code_result", "summary": "timed out after 5.0 s", "data": {
            "command": "python3 main.py", "stdout": "", "stderr": "", "exitCode": null,
            "signal": 9, "durationMs": 5003, "timedOut": true}}),
    );
    assert_eq!(run(Some(2), None, 999).status_line(), "exit 2 in 999 ms");
    assert_eq!(run(Some(0), None, 1000).status_line(), "exit 0 in 1.0 s");
    assert_eq!(run(Some(0), None, 61_999).status_line(), "exit 0 in 61.9 s");
    assert_eq!(
        run(None, None, 0).status_line(),
        "ended without an exit status in 0 ms"
    );
    // Optional fields may be absent on the wire.
    let minimal: CodeResultData = serde_json::from_value(json!({
        "command": "ls", "stdout": "", "stderr": "", "durationMs": 1}))
    .unwrap();
    assert_eq!(
        minimal,
        CodeResultData {
            command: "ls".into(),
            ..run(None, None, 1)
        }
    );
    assert!(crate::kind::is_well_known_kind("code_result"));
}

#[test]
fn code_results_carry_the_limits_of_the_run_when_known() {
    let limits = RunLimits {
        wall_ms: 60_000,
        cpu_secs: 120,
        memory_bytes: 2 << 30,
        run_memory_bytes: 1 << 30,
        processes: 256,
        file_size_bytes: 256 << 20,
        output_bytes: 1 << 20,
        network: "none".into(),
    };
    check(
        ToolResultValue::code_result(CodeResultData {
            limits: Some(limits.clone()),
            ..run(Some(0), None, 41)
        }),
        json!({"kind": "code_result", "summary": "exit 0 in 41 ms", "data": {
            "command": "python3 main.py", "stdout": "", "stderr": "", "exitCode": 0,
            "durationMs": 41, "limits": {"wallMs": 60_000, "cpuSecs": 120,
            "memoryBytes": 2_147_483_648_u64, "runMemoryBytes": 1_073_741_824,
            "processes": 256, "fileSizeBytes": 268_435_456, "outputBytes": 1_048_576,
            "network": "none"}}}),
    );
    // Without limits the key is absent, and an older transcript without it reads as `None`.
    let without = serde_json::to_value(run(Some(0), None, 41)).unwrap();
    assert!(without.get("limits").is_none(), "{without}");
    let older: CodeResultData = serde_json::from_value(json!({
        "command": "python3 main.py", "stdout": "", "stderr": "", "exitCode": 0,
        "durationMs": 41}))
    .unwrap();
    assert_eq!(older.limits, None);
    // The model reads the same text with or without them.
    let with = ToolResultValue::code_result(CodeResultData {
        stdout: "hi\n".into(),
        limits: Some(limits),
        ..run(Some(0), None, 41)
    });
    assert_eq!(with.to_model_text(), "exit 0 in 41 ms\n--- stdout ---\nhi");
}

#[test]
fn every_preferred_view_round_trips() {
    for (view, name) in [
        (PreferredView::Text, "text"),
        (PreferredView::Markdown, "markdown"),
        (PreferredView::Code, "code"),
        (PreferredView::Diff, "diff"),
        (PreferredView::Table, "table"),
        (PreferredView::Tree, "tree"),
        (PreferredView::Image, "image"),
        (PreferredView::Raw, "raw"),
        (PreferredView::Hidden, "hidden"),
    ] {
        check(view, json!(name));
    }
}

#[test]
fn tool_errors() {
    let codes = [
        (ToolErrorCode::InvalidPath, "INVALID_PATH"),
        (ToolErrorCode::FileNotFound, "FILE_NOT_FOUND"),
        (ToolErrorCode::PermissionDenied, "PERMISSION_DENIED"),
        (ToolErrorCode::Timeout, "TIMEOUT"),
        (ToolErrorCode::ExecutionError, "EXECUTION_ERROR"),
        (ToolErrorCode::InvalidArguments, "INVALID_ARGUMENTS"),
        (ToolErrorCode::Blocked, "BLOCKED"),
        (ToolErrorCode::Denied, "DENIED"),
        (ToolErrorCode::Interrupted, "INTERRUPTED"),
        (ToolErrorCode::NotFound, "NOT_FOUND"),
    ];
    for (code, name) in codes {
        check(code, json!(name));
        assert_eq!(code.as_str(), name);
    }
    check(
        ToolError::new(ToolErrorCode::InvalidPath, "outside every zone")
            .with_details(json!({"zones": ["in"]})),
        json!({"code": "INVALID_PATH", "message": "outside every zone",
               "details": {"zones": ["in"]}}),
    );
    let value = ToolError::new(ToolErrorCode::Denied, "no").to_result_value();
    assert_eq!(value.kind, "tool_error");
    assert_eq!(value.summary.as_deref(), Some("DENIED: no"));
}

fn request_for_effects() -> ApprovalRequest {
    ApprovalRequest {
        request_id: "a2".into(),
        tool_call_id: "t1".into(),
        tool_name: "run_code".into(),
        tool_kind: crate::ToolKind::Other,
        args: json!({"changes": ["write /out/x (0644, 1 bytes)"]}),
        description: "run_code changed 1 file in /out".into(),
        risk: Risk::Medium,
        preview: None,
        invoked_by: InvokedBy::Model,
        worker: None,
        fields: Vec::new(),
        editable: false,
    }
}

#[test]
fn approval_types() {
    let request = ApprovalRequest {
        request_id: "a1".into(),
        tool_call_id: "t1".into(),
        tool_name: "write_file".into(),
        tool_kind: crate::ToolKind::Other,
        args: json!({"path": "/out/x", "content": "y"}),
        description: "Write /out/x".into(),
        risk: Risk::Medium,
        preview: Some(ToolResultValue::text("p")),
        invoked_by: InvokedBy::Model,
        worker: origin(),
        fields: vec![FormField {
            name: "path".into(),
            field_type: FieldType::Text,
            required: true,
            default: None,
            description: Some("where".into()),
            options: Vec::new(),
            integer: false,
        }],
        editable: true,
    };
    check(
        DisplayEvent::ApprovalRequired(request),
        json!({"type": "approvalRequired", "requestId": "a1", "toolCallId": "t1",
               "toolName": "write_file", "args": {"path": "/out/x", "content": "y"},
               "description": "Write /out/x", "risk": "medium",
               "preview": {"kind": "text", "data": {"content": "p"}}, "invokedBy": "model",
               "worker": {"name": "summarizer", "depth": 1},
               "fields": [{"name": "path", "type": "text", "required": true,
                           "description": "where"}]}),
    );
    // Consent for what a call did has nothing to edit; absent, `editable` is true.
    let effects = ApprovalRequest {
        fields: Vec::new(),
        editable: false,
        preview: None,
        worker: None,
        ..request_for_effects()
    };
    check(
        DisplayEvent::ApprovalRequired(effects),
        json!({"type": "approvalRequired", "requestId": "a2", "toolCallId": "t1",
               "toolName": "run_code", "args": {"changes": ["write /out/x (0644, 1 bytes)"]},
               "description": "run_code changed 1 file in /out", "risk": "medium",
               "invokedBy": "model", "editable": false}),
    );
    let old: ApprovalRequest = serde_json::from_value(json!({
        "requestId": "a3", "toolCallId": "t1", "toolName": "w", "args": {},
        "description": "d", "risk": "low", "invokedBy": "model"}))
    .unwrap();
    assert!(old.editable, "a 1.4 request is editable");
    for (risk, name) in [
        (Risk::Low, "low"),
        (Risk::Medium, "medium"),
        (Risk::High, "high"),
    ] {
        check(risk, json!(name));
    }
    check(
        ActionEvent::ApprovalResponse(ApprovalResponse {
            request_id: "a1".into(),
            approved: true,
            remember: RememberScope::Session,
            note: Some("ok".into()),
            modified_args: Some(json!({"path": "/out/y"})),
        }),
        json!({"type": "approvalResponse", "requestId": "a1", "approved": true,
               "remember": "session", "note": "ok", "modifiedArgs": {"path": "/out/y"}}),
    );
    let mut project = ApprovalResponse::approve("a4");
    project.remember = RememberScope::Project;
    check(
        ActionEvent::ApprovalResponse(project),
        json!({"type": "approvalResponse", "requestId": "a4", "approved": true,
               "remember": "project"}),
    );
    check(
        DisplayEvent::ApprovalResolved(ApprovalResolved {
            request_id: Some("a5".into()),
            tool_call_id: "t5".into(),
            tool_name: "write_file".into(),
            approved: true,
            decided_by: DecidedBy::Rule,
            note: None,
            modified_args: None,
            worker: None,
        }),
        json!({"type": "approvalResolved", "requestId": "a5", "toolCallId": "t5",
               "toolName": "write_file", "approved": true, "decidedBy": "rule"}),
    );
    check(
        DisplayEvent::ApprovalDeferred {
            request: ApprovalRequest {
                request_id: "a6".into(),
                tool_call_id: "t6".into(),
                tool_name: "write_file".into(),
                tool_kind: crate::ToolKind::Other,
                args: json!({"path": "/out/a.txt"}),
                description: "Write /out/a.txt".into(),
                risk: Risk::Medium,
                preview: None,
                invoked_by: InvokedBy::Model,
                worker: None,
                fields: Vec::new(),
                editable: true,
            },
            inbox_id: Some(3),
        },
        json!({"type": "approvalDeferred", "inboxId": 3,
               "request": {"requestId": "a6", "toolCallId": "t6", "toolName": "write_file",
                           "args": {"path": "/out/a.txt"}, "description": "Write /out/a.txt",
                           "risk": "medium", "invokedBy": "model"}}),
    );
    check(
        ActionEvent::ApprovalResponse(ApprovalResponse::deny("a2", None)),
        json!({"type": "approvalResponse", "requestId": "a2", "approved": false,
               "remember": "none"}),
    );
    // `remember` may be omitted by a client.
    let minimal: ActionEvent = serde_json::from_value(
        json!({"type": "approvalResponse", "requestId": "a3", "approved": true}),
    )
    .unwrap();
    assert_eq!(
        minimal,
        ActionEvent::ApprovalResponse(ApprovalResponse::approve("a3"))
    );
    for (by, name) in [
        (DecidedBy::User, "user"),
        (DecidedBy::SessionMemory, "session_memory"),
        (DecidedBy::Mode, "mode"),
        (DecidedBy::Policy, "policy"),
        (DecidedBy::Rule, "rule"),
    ] {
        check(by, json!(name));
    }
    check(
        DisplayEvent::ApprovalResolved(ApprovalResolved {
            request_id: None,
            tool_call_id: "t1".into(),
            tool_name: "read_file".into(),
            approved: true,
            decided_by: DecidedBy::Policy,
            note: None,
            modified_args: None,
            worker: None,
        }),
        json!({"type": "approvalResolved", "toolCallId": "t1", "toolName": "read_file",
               "approved": true, "decidedBy": "policy"}),
    );
}

#[test]
fn display_events() {
    check(
        DisplayEvent::SessionStarted {
            protocol_version: PROTOCOL_VERSION.into(),
            session_id: "s1".into(),
            worker: "greeter".into(),
            model: "test:default".into(),
        },
        json!({"type": "sessionStarted", "protocolVersion": "1.16", "sessionId": "s1",
               "worker": "greeter", "model": "test:default"}),
    );
    check(
        DisplayEvent::Message {
            message: ChatMessage {
                role: Role::Assistant,
                content: "Hello!".into(),
            },
            worker: None,
        },
        json!({"type": "message", "message": {"role": "assistant", "content": "Hello!"}}),
    );
    for (role, name) in [
        (Role::User, "user"),
        (Role::Assistant, "assistant"),
        (Role::System, "system"),
    ] {
        check(role, json!(name));
    }
    check(
        DisplayEvent::Streaming {
            request_id: "r1".into(),
            delta: "tok".into(),
            done: false,
            worker: origin(),
        },
        json!({"type": "streaming", "requestId": "r1", "delta": "tok", "done": false,
               "worker": {"name": "summarizer", "depth": 1}}),
    );
    check(
        DisplayEvent::ToolStarted {
            tool_call_id: "t1".into(),
            tool_name: "read_file".into(),
            tool_kind: crate::ToolKind::Read,
            args: json!({"path": "/src"}),
            invoked_by: InvokedBy::User,
            worker: None,
        },
        json!({"type": "toolStarted", "toolCallId": "t1", "toolName": "read_file",
               "toolKind": "read", "args": {"path": "/src"}, "invokedBy": "user"}),
    );
    check(
        DisplayEvent::ToolResult {
            tool_call_id: "t1".into(),
            tool_name: "read_file".into(),
            tool_kind: crate::ToolKind::Other,
            status: ToolStatus::Success,
            args: None,
            value: ToolResultValue::text("x"),
            duration_ms: 3,
            invoked_by: InvokedBy::Model,
            worker: None,
        },
        json!({"type": "toolResult", "toolCallId": "t1", "toolName": "read_file",
               "status": "success", "value": {"kind": "text", "data": {"content": "x"}},
               "durationMs": 3, "invokedBy": "model"}),
    );
    check(
        DisplayEvent::ToolResult {
            tool_call_id: "t2".into(),
            tool_name: "delete_file".into(),
            tool_kind: crate::ToolKind::Delete,
            status: ToolStatus::Blocked,
            args: Some(json!({"path": "/out/a"})),
            value: ToolResultValue::text("blocked"),
            duration_ms: 0,
            invoked_by: InvokedBy::Model,
            worker: None,
        },
        json!({"type": "toolResult", "toolCallId": "t2", "toolName": "delete_file",
               "toolKind": "delete", "status": "blocked", "args": {"path": "/out/a"},
               "value": {"kind": "text", "data": {"content": "blocked"}},
               "durationMs": 0, "invokedBy": "model"}),
    );
    for (status, name) in [
        (ToolStatus::Success, "success"),
        (ToolStatus::Error, "error"),
        (ToolStatus::Denied, "denied"),
        (ToolStatus::Blocked, "blocked"),
        (ToolStatus::Interrupted, "interrupted"),
    ] {
        check(status, json!(name));
    }
    check(
        DisplayEvent::InputRequired {
            request_id: "i1".into(),
            prompt: "Name?".into(),
            source: None,
            fields: Vec::new(),
        },
        json!({"type": "inputRequired", "requestId": "i1", "prompt": "Name?"}),
    );
    check(
        DisplayEvent::Status {
            level: StatusLevel::Warning,
            message: "slow".into(),
        },
        json!({"type": "status", "level": "warning", "message": "slow"}),
    );
    for (level, name) in [
        (StatusLevel::Info, "info"),
        (StatusLevel::Warning, "warning"),
        (StatusLevel::Error, "error"),
    ] {
        check(level, json!(name));
    }
    check(
        DisplayEvent::WorkerStarted {
            worker_id: String::new(),
            parent_id: None,
            worker_name: "summarizer".into(),
            depth: 1,
            model: Some("test:default".into()),
            parent_tool_call_id: Some("t9".into()),
            budget: None,
            trace_context: None,
            trace_parent: None,
        },
        json!({"type": "workerStarted", "workerName": "summarizer", "depth": 1,
               "model": "test:default", "parentToolCallId": "t9"}),
    );
    check(
        DisplayEvent::WorkerFinished {
            worker_id: String::new(),
            worker_name: "summarizer".into(),
            depth: 1,
            success: false,
            duration_ms: 40,
            error: Some("max iterations".into()),
            usage: None,
            cost: None,
        },
        json!({"type": "workerFinished", "workerName": "summarizer", "depth": 1,
               "success": false, "durationMs": 40, "error": "max iterations"}),
    );
    let usage = TokenUsage {
        input_tokens: 10,
        output_tokens: 5,
        cache_read_tokens: 2,
        cache_write_tokens: 0,
    };
    check(
        DisplayEvent::Usage {
            usage,
            total: usage,
            model: None,
            cost: None,
            budget: None,
            context: None,
            worker: None,
            call: None,
        },
        json!({"type": "usage",
               "usage": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2},
               "total": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2}}),
    );
    check(
        DisplayEvent::Usage {
            usage,
            total: usage,
            model: Some("anthropic:claude-sonnet-4".into()),
            cost: Some(0.25),
            budget: None,
            context: Some(ContextFill {
                used: 126_000,
                window: 200_000,
            }),
            worker: None,
            call: None,
        },
        json!({"type": "usage",
               "usage": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2},
               "total": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2},
               "model": "anthropic:claude-sonnet-4", "cost": 0.25,
               "context": {"used": 126000, "window": 200000}}),
    );
    check(
        DisplayEvent::Usage {
            usage,
            total: usage,
            model: Some("anthropic:claude-sonnet-4".into()),
            cost: None,
            budget: None,
            context: None,
            worker: None,
            call: Some(ModelCall {
                provider: "anthropic".into(),
                request_model: "claude-sonnet-4".into(),
                response_model: Some("claude-sonnet-4-20250514".into()),
                response_id: Some("msg_01".into()),
                finish_reasons: vec!["tool_call".into()],
                server_address: Some("api.anthropic.com".into()),
                server_port: Some(443),
                duration_ms: 1200,
                retries: 2,
                retry_wait_ms: 700,
                rate_limit_wait_ms: 500,
                purpose: ModelCallPurpose::Conversation,
                error: None,
            }),
        },
        json!({"type": "usage",
               "usage": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2},
               "total": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2},
               "model": "anthropic:claude-sonnet-4",
               "call": {"provider": "anthropic", "requestModel": "claude-sonnet-4",
                        "responseModel": "claude-sonnet-4-20250514", "responseId": "msg_01",
                        "finishReasons": ["tool_call"], "serverAddress": "api.anthropic.com",
                        "serverPort": 443, "durationMs": 1200, "retries": 2,
                        "retryWaitMs": 700, "rateLimitWaitMs": 500,
                        "purpose": "conversation"}}),
    );
    // A failed request: nothing counted, the error said; what is zero or unknown is left out.
    check(
        DisplayEvent::Usage {
            usage: TokenUsage::default(),
            total: usage,
            model: Some("test:default".into()),
            cost: None,
            budget: None,
            context: None,
            worker: None,
            call: Some(ModelCall {
                provider: "test".into(),
                request_model: "default".into(),
                response_model: None,
                response_id: None,
                finish_reasons: Vec::new(),
                server_address: None,
                server_port: None,
                duration_ms: 3,
                retries: 0,
                retry_wait_ms: 0,
                rate_limit_wait_ms: 0,
                purpose: ModelCallPurpose::Summary,
                error: Some("test is unavailable (HTTP 500): down".into()),
            }),
        },
        json!({"type": "usage",
               "usage": {"inputTokens": 0, "outputTokens": 0},
               "total": {"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 2},
               "model": "test:default",
               "call": {"provider": "test", "requestModel": "default", "durationMs": 3,
                        "purpose": "summary",
                        "error": "test is unavailable (HTTP 500): down"}}),
    );
    assert_eq!(ModelCallPurpose::Summary.as_str(), "summary");
    assert_eq!(
        ContextFill {
            used: 126_000,
            window: 200_000
        }
        .percent(),
        63
    );
    assert_eq!(ContextFill::default().percent(), 0);
    check(
        DisplayEvent::SessionEnded {
            reason: SessionEndReason::Interrupted,
            message: None,
            usage: Some(TokenUsage::default()),
            cost: None,
        },
        json!({"type": "sessionEnded", "reason": "interrupted",
               "usage": {"inputTokens": 0, "outputTokens": 0}}),
    );
    for (reason, name) in [
        (SessionEndReason::Completed, "completed"),
        (SessionEndReason::Failed, "failed"),
        (SessionEndReason::Interrupted, "interrupted"),
        (SessionEndReason::BudgetExceeded, "budgetExceeded"),
    ] {
        check(reason, json!(name));
    }
}

#[test]
fn manual_tools_available() {
    let info = ManualToolInfo {
        name: "git_push".into(),
        label: "Push to Remote".into(),
        description: "Push commits".into(),
        category: Some("Git".into()),
        mode: ExecutionMode::Manual,
        fields: vec![
            FormField {
                name: "branch".into(),
                field_type: FieldType::Text,
                required: true,
                default: None,
                description: Some("Target branch".into()),
                options: vec![],
                integer: false,
            },
            FormField {
                name: "remote".into(),
                field_type: FieldType::Select,
                required: false,
                default: Some(json!("origin")),
                description: None,
                options: vec![
                    FieldOption {
                        value: json!("origin"),
                        label: "origin".into(),
                    },
                    FieldOption {
                        value: json!("upstream"),
                        label: "upstream".into(),
                    },
                ],
                integer: false,
            },
            FormField {
                name: "depth".into(),
                field_type: FieldType::Number,
                required: false,
                default: None,
                description: None,
                options: vec![],
                integer: true,
            },
            FormField {
                name: "force".into(),
                field_type: FieldType::Boolean,
                required: false,
                default: Some(json!(false)),
                description: None,
                options: vec![],
                integer: false,
            },
        ],
    };
    check(
        DisplayEvent::ManualToolsAvailable {
            request_id: None,
            tools: vec![info],
        },
        json!({"type": "manualToolsAvailable", "tools": [{
            "name": "git_push", "label": "Push to Remote", "description": "Push commits",
            "category": "Git", "mode": "manual", "fields": [
                {"name": "branch", "type": "text", "required": true,
                 "description": "Target branch"},
                {"name": "remote", "type": "select", "required": false, "default": "origin",
                 "options": [{"value": "origin", "label": "origin"},
                             {"value": "upstream", "label": "upstream"}]},
                {"name": "depth", "type": "number", "required": false, "integer": true},
                {"name": "force", "type": "boolean", "required": false, "default": false}]}]}),
    );
    for (mode, name) in [
        (ExecutionMode::Llm, "llm"),
        (ExecutionMode::Manual, "manual"),
        (ExecutionMode::Both, "both"),
    ] {
        check(mode, json!(name));
    }
    assert!(ExecutionMode::Both.is_llm_visible() && ExecutionMode::Both.is_manual_invocable());
    assert!(!ExecutionMode::Manual.is_llm_visible());
    assert!(!ExecutionMode::Llm.is_manual_invocable());
}

#[test]
fn action_events() {
    check(
        ActionEvent::UserInput {
            request_id: Some("i1".into()),
            content: "hi".into(),
        },
        json!({"type": "userInput", "requestId": "i1", "content": "hi"}),
    );
    check(
        ActionEvent::Interrupt {
            reason: Some("User cancelled".into()),
        },
        json!({"type": "interrupt", "reason": "User cancelled"}),
    );
    check(
        ActionEvent::Interrupt { reason: None },
        json!({"type": "interrupt"}),
    );
    check(
        ActionEvent::ContinueTurn {},
        json!({"type": "continueTurn"}),
    );
    check(
        ActionEvent::ManualToolInvoke {
            request_id: None,
            tool_name: "deploy".into(),
            args: json!({}),
        },
        json!({"type": "manualToolInvoke", "toolName": "deploy", "args": {}}),
    );
    assert_eq!(
        ActionEvent::UserInput {
            request_id: Some("i".into()),
            content: String::new()
        }
        .answers_request(),
        Some("i")
    );
    assert_eq!(
        ActionEvent::Interrupt { reason: None }.answers_request(),
        None
    );
}

#[test]
fn protocol_event_reads_either_direction() {
    let display: ProtocolEvent =
        serde_json::from_value(json!({"type": "status", "level": "info", "message": "m"})).unwrap();
    assert!(
        matches!(display, ProtocolEvent::Display(ref e) if matches!(**e, DisplayEvent::Status { .. }))
    );
    let action: ProtocolEvent = serde_json::from_value(json!({"type": "interrupt"})).unwrap();
    assert!(
        matches!(action, ProtocolEvent::Action(ref e) if matches!(**e, ActionEvent::Interrupt { .. }))
    );
    assert!(serde_json::from_value::<ProtocolEvent>(json!({"type": "bogus"})).is_err());
}

#[test]
fn unknown_fields_and_bad_values_are_rejected_or_ignored_predictably() {
    // Unknown enum values are errors, never silently mapped.
    assert!(serde_json::from_value::<ToolStatus>(json!("ok")).is_err());
    assert!(serde_json::from_value::<RememberScope>(json!("forever")).is_err());
    // Missing required fields are errors.
    assert!(
        serde_json::from_value::<ActionEvent>(json!({"type": "approvalResponse",
                                                      "requestId": "a"}))
        .is_err()
    );
}

#[test]
fn token_usage_adds() {
    let mut total = TokenUsage::default();
    total.add(&TokenUsage {
        input_tokens: 1,
        output_tokens: 2,
        cache_read_tokens: 3,
        cache_write_tokens: 4,
    });
    total.add(&TokenUsage {
        input_tokens: 1,
        output_tokens: 1,
        cache_read_tokens: 0,
        cache_write_tokens: 1,
    });
    assert_eq!(
        total,
        TokenUsage {
            input_tokens: 2,
            output_tokens: 3,
            cache_read_tokens: 3,
            cache_write_tokens: 5
        }
    );
}

#[test]
fn model_text() {
    assert_eq!(ToolResultValue::text("plain").to_model_text(), "plain");
    assert_eq!(
        ToolResultValue::structured(json!({"a": 1}))
            .with_summary("s")
            .to_model_text(),
        "s\n{\"a\":1}"
    );
}

#[test]
fn diffs_reach_the_model_as_hunks_not_whole_texts() {
    let value = ToolResultValue::diff(DiffData {
        path: "/out/a.md".into(),
        original: Some("a\nb\n".into()),
        modified: "a\nc\n".into(),
        is_new: false,
        bytes_written: Some(4),
        hunks: Some(vec![DiffHunk {
            old_start: 1,
            old_lines: 2,
            new_start: 1,
            new_lines: 2,
            lines: vec![" a".into(), "-b".into(), "+c".into()],
        }]),
    });
    assert_eq!(
        value.to_model_text(),
        "Changed /out/a.md (+1 \u{2212}1 lines)\n@@ -1,2 +1,2 @@\n a\n-b\n+c"
    );
    // The summary counts the hunks' lines exactly, even where a line moved.
    let moved = ToolResultValue::diff(DiffData {
        path: "/m".into(),
        original: Some("a\nb\n".into()),
        modified: "b\na\n".into(),
        is_new: false,
        bytes_written: None,
        hunks: Some(vec![DiffHunk {
            old_start: 1,
            old_lines: 2,
            new_start: 1,
            new_lines: 2,
            lines: vec!["-a".into(), " b".into(), "+a".into()],
        }]),
    });
    assert_eq!(moved.summary.as_deref(), Some("+1 \u{2212}1 lines"));
    // Without hunks the data goes as it is.
    let plain = ToolResultValue::diff(DiffData {
        path: "/o".into(),
        original: None,
        modified: "x".into(),
        is_new: true,
        bytes_written: None,
        hunks: None,
    });
    assert!(plain.to_model_text().contains("\"modified\":\"x\""));
}

#[test]
fn code_results_reach_the_model_as_status_and_output() {
    let both = ToolResultValue::code_result(CodeResultData {
        stdout: "1\n2\n".into(),
        stderr: "warning: x\n".into(),
        ..run(Some(1), None, 41)
    });
    assert_eq!(
        both.to_model_text(),
        "exit 1 in 41 ms\n--- stdout ---\n1\n2\n--- stderr ---\nwarning: x"
    );
    let stderr_only = ToolResultValue::code_result(CodeResultData {
        stderr: "boom".into(),
        ..run(None, Some(9), 1500)
    });
    assert_eq!(
        stderr_only.to_model_text(),
        "killed by signal 9 in 1.5 s\n--- stderr ---\nboom"
    );
    let silent = ToolResultValue::code_result(run(Some(0), None, 3));
    assert_eq!(silent.to_model_text(), "exit 0 in 3 ms, no output");
    // Only the last newline goes; blank lines the program printed stay.
    let blank = ToolResultValue::code_result(CodeResultData {
        stdout: "a\n\n".into(),
        ..run(Some(0), None, 3)
    });
    assert_eq!(blank.to_model_text(), "exit 0 in 3 ms\n--- stdout ---\na\n");
    // Data that is not a code result falls back to the generic rendering.
    let odd = ToolResultValue::new("code_result", json!({"x": 1})).with_summary("s");
    assert_eq!(odd.to_model_text(), "s\n{\"x\":1}");
}

#[test]
fn test_events_round_trip_in_camel_case() {
    use crate::worker_test::TestEvent;
    let finished = TestEvent::TestFinished {
        case: "greets".into(),
        worker: "greeter".into(),
        run: 1,
        passed: false,
        failures: vec!["expect.answer: …".into()],
        usage: TokenUsage {
            input_tokens: 3,
            output_tokens: 2,
            ..TokenUsage::default()
        },
        cost: Some(0.0),
        duration_ms: 12,
    };
    let value = serde_json::to_value(&finished).unwrap();
    assert_eq!(
        value,
        json!({"type": "testFinished", "case": "greets", "worker": "greeter", "run": 1,
               "passed": false, "failures": ["expect.answer: …"],
               "usage": {"inputTokens": 3, "outputTokens": 2}, "cost": 0.0, "durationMs": 12})
    );
    assert_eq!(
        serde_json::from_value::<TestEvent>(value).unwrap(),
        finished
    );
    let ended: ProtocolEvent =
        serde_json::from_value(json!({"type": "testsEnded", "passed": 2, "failed": 1})).unwrap();
    assert!(
        matches!(ended, ProtocolEvent::Test(ref e) if **e == TestEvent::TestsEnded { passed: 2, failed: 1 })
    );
}
