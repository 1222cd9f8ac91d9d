//! `write_file`: new files, overwrites, exact diff summaries, parents, atomicity.

use golem_protocol::ToolErrorCode;
use golem_protocol::result::DiffData;
use serde_json::json;

use super::env::Env;

#[tokio::test]
async fn a_new_file_is_a_diff_from_nothing() {
    let env = Env::new();
    let value = env
        .ok(
            "write_file",
            json!({"path": "/scratch/report.md", "content": "# Title\n\nbody\n"}),
        )
        .await;
    assert_eq!(value.kind, "diff");
    assert_eq!(value.summary.as_deref(), Some("+3 \u{2212}0 lines"));
    let data: DiffData = value.data_as().unwrap();
    assert!(data.is_new);
    assert_eq!(data.path, "/scratch/report.md");
    assert_eq!(data.original, None);
    assert_eq!(data.bytes_written, Some(14));
    assert_eq!(data.hunks.unwrap()[0].new_lines, 3);
    assert_eq!(env.text("scratch/report.md"), "# Title\n\nbody\n");
}

#[tokio::test]
async fn an_overwrite_counts_lines_exactly() {
    let env = Env::new();
    env.put("scratch/list.txt", "a\nb\nc\n");
    let value = env
        .ok(
            "write_file",
            json!({"path": "/scratch/list.txt", "content": "b\nc\na\n"}),
        )
        .await;
    // A moved line is one removal and one addition, not zero changes.
    assert_eq!(value.summary.as_deref(), Some("+1 \u{2212}1 lines"));
    let data: DiffData = value.data_as().unwrap();
    assert!(!data.is_new);
    assert_eq!(data.original.as_deref(), Some("a\nb\nc\n"));
}

#[tokio::test]
async fn missing_parents_need_create_dirs() {
    let env = Env::new();
    let message = env
        .err(
            "write_file",
            json!({"path": "/scratch/a/b/c.txt", "content": "x"}),
            ToolErrorCode::FileNotFound,
        )
        .await;
    assert!(message.contains("createDirs"), "{message}");
    env.ok(
        "write_file",
        json!({"path": "/scratch/a/b/c.txt", "content": "x", "createDirs": true}),
    )
    .await;
    assert_eq!(env.text("scratch/a/b/c.txt"), "x");
}

#[tokio::test]
async fn writes_are_atomic_and_leave_no_temporary_files() {
    let env = Env::new();
    for i in 0..20 {
        env.ok(
            "write_file",
            json!({"path": "/scratch/f.txt", "content": format!("{i}\n")}),
        )
        .await;
    }
    env.ok(
        "write_file",
        json!({"path": "/scratch/d/g.txt", "content": "g", "createDirs": true}),
    )
    .await;
    assert_eq!(env.names("scratch"), vec!["d", "f.txt"]);
    assert_eq!(env.names("scratch/d"), vec!["g.txt"]);
    assert_eq!(env.text("scratch/f.txt"), "19\n");
}

#[tokio::test]
async fn a_failed_write_leaves_the_old_content_and_no_temporary_file() {
    let env = Env::new();
    env.put("scratch/dir/keep.txt", "keep");
    env.err(
        "write_file",
        json!({"path": "/scratch/dir", "content": "x"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    env.err(
        "write_file",
        json!({"path": "/scratch/dir/keep.txt/x", "content": "x"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    assert_eq!(env.names("scratch"), vec!["dir"]);
    assert_eq!(env.names("scratch/dir"), vec!["keep.txt"]);
}

#[tokio::test]
async fn invalid_base64_is_an_argument_error() {
    let env = Env::new();
    let message = env
        .err(
            "write_file",
            json!({"path": "/scratch/x.bin", "content": "%%%", "encoding": "base64"}),
            ToolErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("not valid base64"), "{message}");
    assert!(!env.host("scratch/x.bin").exists());
}

#[tokio::test]
async fn a_symlink_leading_outside_is_never_written_through() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("victim.txt");
    std::fs::write(&target, "safe").unwrap();
    std::os::unix::fs::symlink(&target, env.host("scratch/link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), env.host("scratch/linkdir")).unwrap();
    env.err(
        "write_file",
        json!({"path": "/scratch/link.txt", "content": "pwned"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    env.err(
        "write_file",
        json!({"path": "/scratch/linkdir/new.txt", "content": "pwned"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "safe");
    assert_eq!(super::env::names(outside.path()), vec!["victim.txt"]);
}

#[tokio::test]
async fn unknown_arguments_are_refused() {
    let env = Env::new();
    env.err(
        "write_file",
        json!({"path": "/scratch/x", "content": "x", "create_dirs": true}),
        ToolErrorCode::InvalidArguments,
    )
    .await;
    assert!(!env.host("scratch/x").exists());
}
