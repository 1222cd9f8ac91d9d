//! `delete_file` and `move_file`.

use golem_protocol::ToolErrorCode;
use serde_json::json;

use super::env::Env;

#[tokio::test]
async fn deletes_a_file() {
    let env = Env::new();
    env.put("scratch/a.txt", "a");
    let value = env
        .ok("delete_file", json!({"path": "/scratch/a.txt"}))
        .await;
    assert_eq!(value.kind, "structured");
    assert_eq!(value.data["deleted"], json!(["/scratch/a.txt"]));
    assert_eq!(value.summary.as_deref(), Some("Deleted /scratch/a.txt"));
    assert!(!env.host("scratch/a.txt").exists());
}

#[tokio::test]
async fn directories_need_recursive_unless_empty() {
    let env = Env::new();
    env.put("scratch/d/x.txt", "x");
    env.put("scratch/d/e/y.txt", "y");
    std::fs::create_dir(env.host("scratch/empty")).unwrap();
    let message = env
        .err(
            "delete_file",
            json!({"path": "/scratch/d"}),
            ToolErrorCode::ExecutionError,
        )
        .await;
    assert!(
        message.contains("2 entries; pass recursive: true"),
        "{message}"
    );
    env.ok("delete_file", json!({"path": "/scratch/empty"}))
        .await;
    let value = env
        .ok(
            "delete_file",
            json!({"path": "/scratch/d", "recursive": true}),
        )
        .await;
    let mut deleted: Vec<String> = serde_json::from_value(value.data["deleted"].clone()).unwrap();
    deleted.sort();
    assert_eq!(
        deleted,
        vec![
            "/scratch/d",
            "/scratch/d/e",
            "/scratch/d/e/y.txt",
            "/scratch/d/x.txt"
        ]
    );
    assert_eq!(value.data["count"], 4);
    assert!(env.names("scratch").is_empty());
}

#[tokio::test]
async fn deleting_a_link_keeps_its_target() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("t"), "t").unwrap();
    std::os::unix::fs::symlink(outside.path(), env.host("scratch/out")).unwrap();
    env.ok(
        "delete_file",
        json!({"path": "/scratch/out", "recursive": true}),
    )
    .await;
    assert!(outside.path().join("t").exists());
}

#[tokio::test]
async fn zone_roots_missing_files_and_the_root_cannot_be_deleted() {
    let env = Env::new();
    let message = env
        .err(
            "delete_file",
            json!({"path": "/scratch", "recursive": true}),
            ToolErrorCode::InvalidPath,
        )
        .await;
    assert!(message.contains("root of zone scratch"), "{message}");
    env.err(
        "delete_file",
        json!({"path": "/scratch/none"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
    env.err(
        "delete_file",
        json!({"path": "/"}),
        ToolErrorCode::PermissionDenied,
    )
    .await;
}

#[tokio::test]
async fn moves_and_renames() {
    let env = Env::new();
    env.put("scratch/a.txt", "a");
    let value = env
        .ok(
            "move_file",
            json!({"from": "/scratch/a.txt", "to": "/scratch/b.txt"}),
        )
        .await;
    assert_eq!(
        value.data,
        json!({"from": "/scratch/a.txt", "to": "/scratch/b.txt"})
    );
    assert_eq!(
        value.summary.as_deref(),
        Some("Moved /scratch/a.txt \u{2192} /scratch/b.txt")
    );
    assert_eq!(env.names("scratch"), vec!["b.txt"]);
    env.put("scratch/d/x", "x");
    env.ok(
        "move_file",
        json!({"from": "/scratch/d", "to": "/output/d"}),
    )
    .await;
    assert_eq!(env.text("output/d/x"), "x");
}

#[tokio::test]
async fn an_existing_destination_needs_overwrite() {
    let env = Env::new();
    env.put("scratch/a", "a");
    env.put("scratch/b", "b");
    let message = env
        .err(
            "move_file",
            json!({"from": "/scratch/a", "to": "/scratch/b"}),
            ToolErrorCode::ExecutionError,
        )
        .await;
    assert!(message.contains("pass overwrite: true"), "{message}");
    assert_eq!(env.text("scratch/b"), "b");
    env.ok(
        "move_file",
        json!({"from": "/scratch/a", "to": "/scratch/b", "overwrite": true}),
    )
    .await;
    assert_eq!(env.text("scratch/b"), "a");
}

#[tokio::test]
async fn bad_moves_are_refused() {
    let env = Env::new();
    env.put("scratch/d/x", "x");
    env.err(
        "move_file",
        json!({"from": "/scratch/d", "to": "/scratch/d"}),
        ToolErrorCode::InvalidArguments,
    )
    .await;
    env.err(
        "move_file",
        json!({"from": "/scratch/d", "to": "/scratch/d/e"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    env.err(
        "move_file",
        json!({"from": "/scratch/none", "to": "/scratch/e"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
    env.err(
        "move_file",
        json!({"from": "/scratch", "to": "/output/s"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    env.err(
        "move_file",
        json!({"from": "/scratch/d", "to": "/scratch/no/such/dir"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
    assert_eq!(env.text("scratch/d/x"), "x");
}
