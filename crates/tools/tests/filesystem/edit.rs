//! `edit_file`: exact replacement, ambiguity and missing-match messages, replace_all.

use golem_protocol::ToolErrorCode;
use golem_protocol::result::DiffData;
use serde_json::json;

use super::env::Env;

#[tokio::test]
async fn replaces_a_unique_match() {
    let env = Env::new();
    env.put(
        "scratch/main.py",
        "def a():\n    return 1\n\ndef b():\n    return 2\n",
    );
    let value = env
        .ok(
            "edit_file",
            json!({"path": "/scratch/main.py", "old_string": "    return 2", "new_string": "    return 3"}),
        )
        .await;
    assert_eq!(value.summary.as_deref(), Some("+1 \u{2212}1 lines"));
    assert_eq!(value.data["replacements"], 1);
    let data: DiffData = value.data_as().unwrap();
    assert_eq!(data.bytes_written, Some(data.modified.len() as u64));
    assert_eq!(
        env.text("scratch/main.py"),
        "def a():\n    return 1\n\ndef b():\n    return 3\n"
    );
}

#[tokio::test]
async fn an_ambiguous_match_says_how_many_and_where() {
    let env = Env::new();
    env.put("scratch/a.txt", "x = 1\ny = 2\nx = 1\n");
    let outcome = env
        .call(
            "edit_file",
            json!({"path": "/scratch/a.txt", "old_string": "x = 1", "new_string": "x = 0"}),
        )
        .await;
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert_eq!(
        error.message,
        "/scratch/a.txt: old_string matches 2 times (at lines 1, 3); include more surrounding \
         lines to make it unique, or pass replace_all: true to replace every occurrence"
    );
    assert_eq!(error.details, Some(json!({"matches": 2})));
    assert_eq!(env.text("scratch/a.txt"), "x = 1\ny = 2\nx = 1\n");
}

#[tokio::test]
async fn replace_all_replaces_every_match() {
    let env = Env::new();
    env.put("scratch/a.txt", "x = 1\ny = 2\nx = 1\n");
    let value = env
        .ok(
            "edit_file",
            json!({"path": "/scratch/a.txt", "old_string": "x = 1", "new_string": "x = 0", "replace_all": true}),
        )
        .await;
    assert_eq!(value.data["replacements"], 2);
    assert_eq!(value.summary.as_deref(), Some("+2 \u{2212}2 lines"));
    assert_eq!(env.text("scratch/a.txt"), "x = 0\ny = 2\nx = 0\n");
}

#[tokio::test]
async fn a_missing_match_says_zero_and_hints_at_near_misses() {
    let env = Env::new();
    env.put("scratch/a.rs", "fn main() {\n    let x = 1;\n}\n");
    let message = env
        .err(
            "edit_file",
            json!({"path": "/scratch/a.rs", "old_string": "let x = 2;", "new_string": "let x = 3;"}),
            ToolErrorCode::ExecutionError,
        )
        .await;
    assert!(message.contains("(0 matches)"), "{message}");
    let message = env
        .err(
            "edit_file",
            json!({"path": "/scratch/a.rs", "old_string": "fn main() {\nlet x = 1;", "new_string": ""}),
            ToolErrorCode::ExecutionError,
        )
        .await;
    assert!(
        message.contains("differs only in whitespace or indentation starts at line 1"),
        "{message}"
    );
}

#[tokio::test]
async fn edits_need_an_existing_text_file_and_a_real_change() {
    let env = Env::new();
    let message = env
        .err(
            "edit_file",
            json!({"path": "/scratch/none.txt", "old_string": "a", "new_string": "b"}),
            ToolErrorCode::FileNotFound,
        )
        .await;
    assert!(message.contains("use write_file"), "{message}");
    env.put("scratch/bin", [0u8, 1, 2]);
    env.err(
        "edit_file",
        json!({"path": "/scratch/bin", "old_string": "a", "new_string": "b"}),
        ToolErrorCode::InvalidArguments,
    )
    .await;
    env.put("scratch/t.txt", "same");
    env.err(
        "edit_file",
        json!({"path": "/scratch/t.txt", "old_string": "same", "new_string": "same"}),
        ToolErrorCode::InvalidArguments,
    )
    .await;
    env.err(
        "edit_file",
        json!({"path": "/scratch/t.txt", "old_string": "", "new_string": "x"}),
        ToolErrorCode::InvalidArguments,
    )
    .await;
    assert_eq!(env.text("scratch/t.txt"), "same");
}
