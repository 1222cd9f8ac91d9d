//! The zone approval table through the orchestrator: who is asked, who is not, what is blocked
//! or denied by capability before anyone is asked, and what the approval request carries.

use std::sync::Arc;

use golem_protocol::result::DiffData;
use golem_protocol::{DecidedBy, Risk, ToolErrorCode, ToolStatus};
use serde_json::json;

use super::env::Env;

#[tokio::test]
async fn scratch_writes_and_deletes_are_preapproved() {
    let env = Env::new();
    let new = env
        .call(
            "write_file",
            json!({"path": "/scratch/a.txt", "content": "1\n"}),
        )
        .await;
    assert_eq!(new.status, ToolStatus::Success);
    assert_eq!(new.decided_by, Some(DecidedBy::Policy));
    env.ok(
        "write_file",
        json!({"path": "/scratch/a.txt", "content": "2\n"}),
    )
    .await;
    env.ok(
        "edit_file",
        json!({"path": "/scratch/a.txt", "old_string": "2", "new_string": "3"}),
    )
    .await;
    env.ok("delete_file", json!({"path": "/scratch/a.txt"}))
        .await;
    assert!(env.asked().is_empty());
}

#[tokio::test]
async fn output_creates_freely_but_asks_to_overwrite() {
    let env = Env::new();
    env.ok(
        "write_file",
        json!({"path": "/output/r.md", "content": "v1\n"}),
    )
    .await;
    assert!(env.asked().is_empty(), "create is preApproved in output");
    env.ok(
        "write_file",
        json!({"path": "/output/r.md", "content": "v2\n"}),
    )
    .await;
    let asked = env.asked();
    assert_eq!(asked.len(), 1, "write is ask in output");
    assert_eq!(asked[0].tool_name, "write_file");
    assert_eq!(asked[0].risk, Risk::High);
    assert_eq!(
        asked[0].description,
        "Write 1 line to /output/r.md (overwrites 3 bytes)"
    );
    assert_eq!(env.text("output/r.md"), "v2\n");
}

#[tokio::test]
async fn a_blocked_delete_is_refused_without_asking() {
    let env = Env::new();
    env.put("output/keep.txt", "x");
    let outcome = env
        .call("delete_file", json!({"path": "/output/keep.txt"}))
        .await;
    assert_eq!(outcome.status, ToolStatus::Blocked);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::Blocked);
    assert_eq!(error.message, "delete is blocked in zone output");
    assert!(env.asked().is_empty());
    assert!(env.host("output/keep.txt").exists());
}

#[tokio::test]
async fn read_only_zones_refuse_changes_before_anyone_is_asked() {
    let env = Env::new();
    let calls = [
        (
            "write_file",
            json!({"path": "/input/new.txt", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "/input/notes.txt", "content": "x"}),
        ),
        (
            "edit_file",
            json!({"path": "/input/notes.txt", "old_string": "one", "new_string": "1"}),
        ),
        ("delete_file", json!({"path": "/input/notes.txt"})),
        (
            "move_file",
            json!({"from": "/input/notes.txt", "to": "/docs/notes.txt"}),
        ),
        (
            "move_file",
            json!({"from": "/docs/nothing.txt", "to": "/input/x.txt"}),
        ),
    ];
    for (tool, args) in calls {
        let message = env.err(tool, args, ToolErrorCode::PermissionDenied).await;
        assert!(message.contains("read-only"), "{tool}: {message}");
    }
    assert!(env.asked().is_empty());
    assert_eq!(env.text("input/notes.txt"), "one\ntwo\nthree\n");
    assert!(!env.host("input/new.txt").exists());
}

#[tokio::test]
async fn a_path_that_does_not_resolve_is_an_error_without_a_prompt() {
    let env = Env::new();
    for path in [
        "/nowhere/x.txt",
        "/docs/../../etc/passwd",
        "docs/x",
        "/docs/a\0b",
        "/",
    ] {
        let outcome = env
            .call("write_file", json!({"path": path, "content": "x"}))
            .await;
        let error = outcome.error.unwrap();
        assert!(
            matches!(
                error.code,
                ToolErrorCode::InvalidPath | ToolErrorCode::PermissionDenied
            ),
            "{path}: {error:?}"
        );
    }
    let message = env
        .err(
            "delete_file",
            json!({"path": "/nowhere/x"}),
            ToolErrorCode::InvalidPath,
        )
        .await;
    assert!(
        message.contains("/input, /scratch, /output, /docs"),
        "{message}"
    );
    assert!(env.asked().is_empty());
}

#[tokio::test]
async fn ask_zones_ask_for_create_and_write_with_a_preview() {
    let env = Env::new();
    env.ok(
        "write_file",
        json!({"path": "/docs/a.md", "content": "a\nb\n"}),
    )
    .await;
    env.ok(
        "write_file",
        json!({"path": "/docs/a.md", "content": "a\nc\n"}),
    )
    .await;
    let asked = env.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(
        asked[0].description,
        "Write 2 lines to /docs/a.md (new file)"
    );
    assert_eq!(asked[0].risk, Risk::Medium);
    let first = asked[0].preview.as_ref().unwrap();
    assert_eq!(first.kind, "diff");
    let first: DiffData = first.data_as().unwrap();
    assert!(first.is_new);
    assert_eq!(first.bytes_written, None, "a preview writes nothing");
    let second = asked[1].preview.as_ref().unwrap();
    assert_eq!(second.summary.as_deref(), Some("+1 \u{2212}1 lines"));
    let second: DiffData = second.data_as().unwrap();
    assert_eq!(second.original.as_deref(), Some("a\nb\n"));
    assert_eq!(second.modified, "a\nc\n");
}

#[tokio::test]
async fn an_edit_preview_is_the_diff_it_would_make() {
    let env = Env::new();
    env.put("docs/code.rs", "fn a() {}\nfn b() {}\n");
    env.ok(
        "edit_file",
        json!({"path": "/docs/code.rs", "old_string": "fn b", "new_string": "fn c"}),
    )
    .await;
    let asked = env.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].description,
        "Edit /docs/code.rs: replace one occurrence of 1 line with 1 line"
    );
    let preview: DiffData = asked[0].preview.as_ref().unwrap().data_as().unwrap();
    assert_eq!(preview.modified, "fn a() {}\nfn c() {}\n");
    assert_eq!(
        preview.hunks.unwrap()[0].lines,
        vec![" fn a() {}", "-fn b() {}", "+fn c() {}"]
    );
}

#[tokio::test]
async fn a_denied_write_leaves_the_file_untouched() {
    let env = Env::new();
    env.put("docs/keep.txt", "original\n");
    env.set_approve(false);
    let outcome = env
        .call(
            "write_file",
            json!({"path": "/docs/keep.txt", "content": "changed\n"}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert_eq!(
        outcome.error.unwrap().message,
        "The user denied write_file: not now"
    );
    assert_eq!(env.text("docs/keep.txt"), "original\n");
    let outcome = env
        .call(
            "edit_file",
            json!({"path": "/docs/keep.txt", "old_string": "original", "new_string": "x"}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert_eq!(env.text("docs/keep.txt"), "original\n");
    assert_eq!(env.names("docs"), vec!["keep.txt"]);
}

#[tokio::test]
async fn calls_that_cannot_succeed_are_not_put_to_the_user() {
    let env = Env::new();
    env.put("docs/a.txt", "x x\n");
    env.put("docs/dir/inner.txt", "x");
    env.err(
        "edit_file",
        json!({"path": "/docs/a.txt", "old_string": "y", "new_string": "z"}),
        ToolErrorCode::ExecutionError,
    )
    .await;
    env.err(
        "edit_file",
        json!({"path": "/docs/a.txt", "old_string": "x", "new_string": "z"}),
        ToolErrorCode::ExecutionError,
    )
    .await;
    env.err(
        "edit_file",
        json!({"path": "/docs/missing.txt", "old_string": "x", "new_string": "z"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
    env.err(
        "delete_file",
        json!({"path": "/docs/missing.txt"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
    env.err(
        "delete_file",
        json!({"path": "/docs/dir"}),
        ToolErrorCode::ExecutionError,
    )
    .await;
    env.err(
        "move_file",
        json!({"from": "/docs/missing", "to": "/docs/b"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
    env.err(
        "move_file",
        json!({"from": "/docs/a.txt", "to": "/docs/dir"}),
        ToolErrorCode::ExecutionError,
    )
    .await;
    env.err(
        "write_file",
        json!({"path": "/docs/dir", "content": "x"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    assert!(env.asked().is_empty(), "{:?}", env.asked());
}

#[tokio::test]
async fn move_takes_the_strictest_of_destination_and_source() {
    let env = Env::new();
    env.put("scratch/a.txt", "a");
    // scratch delete (pre-approved) + output create (pre-approved): no prompt.
    env.ok(
        "move_file",
        json!({"from": "/scratch/a.txt", "to": "/output/a.txt"}),
    )
    .await;
    assert!(env.asked().is_empty());
    // output delete is blocked.
    let outcome = env
        .call(
            "move_file",
            json!({"from": "/output/a.txt", "to": "/scratch/a.txt"}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Blocked);
    assert!(env.host("output/a.txt").exists());
    // scratch delete + docs create (ask): asked once.
    env.put("scratch/b.txt", "b");
    env.ok(
        "move_file",
        json!({"from": "/scratch/b.txt", "to": "/docs/b.txt"}),
    )
    .await;
    assert_eq!(env.asked().len(), 1);
    // Overwriting in output needs output's write (ask), not its create.
    env.put("scratch/c.txt", "new");
    env.put("output/c.txt", "old");
    env.ok(
        "move_file",
        json!({"from": "/scratch/c.txt", "to": "/output/c.txt", "overwrite": true}),
    )
    .await;
    let asked = env.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(
        asked[1].description,
        "Move /scratch/c.txt to /output/c.txt (replacing it)"
    );
    assert_eq!(asked[1].risk, Risk::High);
    assert_eq!(env.text("output/c.txt"), "new");
}

#[tokio::test]
async fn a_file_that_changes_while_the_user_decides_is_not_overwritten() {
    let env = Env::new();
    env.put("docs/race.txt", "seen\n");
    let host = env.host("docs/race.txt");
    env.on_ask(Arc::new(move |_| {
        std::fs::write(&host, "changed meanwhile\n").unwrap()
    }));
    let message = env
        .err(
            "write_file",
            json!({"path": "/docs/race.txt", "content": "approved\n"}),
            ToolErrorCode::ExecutionError,
        )
        .await;
    assert!(
        message.contains("changed after the user approved"),
        "{message}"
    );
    assert_eq!(env.text("docs/race.txt"), "changed meanwhile\n");
}

#[tokio::test]
async fn a_file_created_while_the_user_approves_a_new_file_is_not_overwritten() {
    let env = Env::new();
    let host = env.host("docs/fresh.txt");
    env.on_ask(Arc::new(move |_| {
        std::fs::write(&host, "someone else's\n").unwrap()
    }));
    env.err(
        "write_file",
        json!({"path": "/docs/fresh.txt", "content": "mine\n"}),
        ToolErrorCode::ExecutionError,
    )
    .await;
    assert_eq!(env.text("docs/fresh.txt"), "someone else's\n");
}

#[tokio::test]
async fn reads_are_preapproved_everywhere() {
    let env = Env::new();
    env.ok("read_file", json!({"path": "/input/notes.txt"}))
        .await;
    env.ok("list_files", json!({"path": "/docs"})).await;
    env.ok("file_exists", json!({"path": "/output/x"})).await;
    env.ok("file_info", json!({"path": "/input/notes.txt"}))
        .await;
    assert!(env.asked().is_empty());
}

#[tokio::test]
async fn edited_arguments_run_as_edited_and_keep_their_capability_checks() {
    let env = Env::new();
    env.put("docs/a.txt", "old\n");
    env.set_modified_args(json!({"path": "/docs/a.txt", "content": "edited\n"}));
    let outcome = env
        .call(
            "write_file",
            json!({"path": "/docs/a.txt", "content": "proposed\n"}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert_eq!(env.text("docs/a.txt"), "edited\n");
    // Edited to a read-only zone: refused by capability, nothing written.
    env.set_modified_args(json!({"path": "/input/notes.txt", "content": "x"}));
    env.err(
        "write_file",
        json!({"path": "/docs/a.txt", "content": "proposed\n"}),
        ToolErrorCode::PermissionDenied,
    )
    .await;
    assert_eq!(env.text("input/notes.txt"), "one\ntwo\nthree\n");
    assert_eq!(env.text("docs/a.txt"), "edited\n");
}

#[tokio::test]
async fn an_edit_of_a_file_that_changes_while_the_user_decides_is_refused() {
    let env = Env::new();
    env.put("docs/race.md", "alpha\nbeta\n");
    let host = env.host("docs/race.md");
    env.on_ask(Arc::new(move |_| {
        std::fs::write(&host, "alpha\nbeta\ngamma\n").unwrap()
    }));
    let message = env
        .err(
            "edit_file",
            json!({"path": "/docs/race.md", "old_string": "beta", "new_string": "BETA"}),
            ToolErrorCode::ExecutionError,
        )
        .await;
    assert!(
        message.contains("changed after the user approved"),
        "{message}"
    );
    assert_eq!(env.text("docs/race.md"), "alpha\nbeta\ngamma\n");
    assert_eq!(env.asked().len(), 1);
}

#[tokio::test]
async fn edited_arguments_on_the_previewed_file_are_checked_against_the_preview() {
    let env = Env::new();
    env.put("docs/race.txt", "seen\n");
    let host = env.host("docs/race.txt");
    env.on_ask(Arc::new(move |_| {
        std::fs::write(&host, "changed meanwhile\n").unwrap()
    }));
    // The user edits the content; the file they were shown has changed since.
    env.set_modified_args(json!({"path": "/docs/race.txt", "content": "edited\n"}));
    let message = env
        .err(
            "write_file",
            json!({"path": "/docs/race.txt", "content": "proposed\n"}),
            ToolErrorCode::ExecutionError,
        )
        .await;
    assert!(
        message.contains("changed after the user approved"),
        "{message}"
    );
    assert_eq!(env.text("docs/race.txt"), "changed meanwhile\n");
}

#[tokio::test]
async fn edited_arguments_are_prepared_again_and_a_blocked_edit_is_refused() {
    let env = Env::new();
    env.put("scratch/a.txt", "a");
    env.put("output/keep.txt", "keep");
    // Proposed: scratch → docs (asks for docs' create). Edited: from output, whose delete is
    // blocked.
    env.set_modified_args(json!({"from": "/output/keep.txt", "to": "/docs/keep.txt"}));
    let outcome = env
        .call(
            "move_file",
            json!({"from": "/scratch/a.txt", "to": "/docs/a.txt"}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Blocked);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(
        outcome.error.unwrap().message,
        "the edited call is blocked: delete is blocked in zone output"
    );
    assert_eq!(env.asked().len(), 1);
    assert!(env.host("output/keep.txt").exists());
    assert!(env.host("scratch/a.txt").exists());
    assert!(!env.host("docs/keep.txt").exists());
    assert!(!env.host("docs/a.txt").exists());
}

#[tokio::test]
async fn an_edited_delete_in_a_read_only_zone_is_refused_by_capability() {
    let env = Env::new();
    env.put("docs/old.txt", "x");
    env.set_modified_args(json!({"path": "/input/notes.txt"}));
    let message = env
        .err(
            "delete_file",
            json!({"path": "/docs/old.txt"}),
            ToolErrorCode::PermissionDenied,
        )
        .await;
    assert!(message.contains("read-only"), "{message}");
    assert_eq!(env.text("input/notes.txt"), "one\ntwo\nthree\n");
    assert!(env.host("docs/old.txt").exists());
}
