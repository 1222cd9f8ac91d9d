//! `list_files`: entries, recursion, hidden files, the zone list, truncation.

use golem_protocol::ToolErrorCode;
use golem_protocol::result::{FileEntryType, FileListData};
use golem_tools::filesystem::FilesystemLimits;
use serde_json::json;

use super::env::Env;

fn listing(value: &golem_protocol::ToolResultValue) -> FileListData {
    assert_eq!(value.kind, "file_list");
    value.data_as().unwrap()
}

fn is_iso8601_utc(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z'
}

#[tokio::test]
async fn lists_one_directory_sorted_with_types_sizes_and_times() {
    let env = Env::new();
    env.put("scratch/b.txt", "bb");
    env.put("scratch/a/inner.txt", "x");
    env.put("scratch/.hidden", "h");
    std::os::unix::fs::symlink("b.txt", env.host("scratch/c-link")).unwrap();
    let value = env.ok("list_files", json!({"path": "/scratch"})).await;
    let data = listing(&value);
    let names: Vec<&str> = data.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["a", "b.txt", "c-link"]);
    assert_eq!(data.entries[0].entry_type, FileEntryType::Directory);
    assert_eq!(data.entries[0].size, None);
    assert_eq!(data.entries[1].entry_type, FileEntryType::File);
    assert_eq!(data.entries[1].size, Some(2));
    assert_eq!(data.entries[2].entry_type, FileEntryType::Symlink);
    assert!(
        data.entries
            .iter()
            .all(|e| is_iso8601_utc(e.modified.as_deref().unwrap()))
    );
    assert_eq!(data.truncated, None);
    assert_eq!(
        value.summary.as_deref(),
        Some("1 file, 1 directory, 1 symlink")
    );
    let value = env
        .ok(
            "list_files",
            json!({"path": "/scratch", "includeHidden": true}),
        )
        .await;
    assert_eq!(listing(&value).entries[0].name, ".hidden");
}

#[tokio::test]
async fn recursive_listings_name_entries_relative_to_the_directory() {
    let env = Env::new();
    let value = env
        .ok("list_files", json!({"path": "/input", "recursive": true}))
        .await;
    let names: Vec<String> = listing(&value)
        .entries
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, vec!["notes.txt", "sub", "sub/deep.md"]);
}

#[tokio::test]
async fn the_root_lists_the_zones_as_directories() {
    let env = Env::new();
    let value = env.ok("list_files", json!({"path": "/"})).await;
    let data = listing(&value);
    assert_eq!(data.path, "/");
    let names: Vec<&str> = data.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["input", "scratch", "output", "docs"]);
    assert!(
        data.entries
            .iter()
            .all(|e| e.entry_type == FileEntryType::Directory)
    );
    let value = env
        .ok("list_files", json!({"path": "/", "recursive": true}))
        .await;
    let names: Vec<String> = listing(&value)
        .entries
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert!(names.contains(&"input/sub/deep.md".to_owned()), "{names:?}");
}

#[tokio::test]
async fn long_listings_are_truncated() {
    let env = Env::with_limits(FilesystemLimits {
        max_list_entries: 5,
        ..FilesystemLimits::default()
    });
    for i in 0..8 {
        env.put(&format!("scratch/d/f{i}.txt"), "x");
    }
    for recursive in [false, true] {
        let path = if recursive { "/scratch" } else { "/scratch/d" };
        let value = env
            .ok("list_files", json!({"path": path, "recursive": recursive}))
            .await;
        let data = listing(&value);
        assert_eq!(data.entries.len(), 5);
        assert_eq!(data.truncated, Some(true));
        assert!(value.summary.unwrap().contains("truncated after 5 entries"));
    }
}

#[tokio::test]
async fn listing_a_file_or_a_missing_directory_is_an_error() {
    let env = Env::new();
    env.err(
        "list_files",
        json!({"path": "/input/notes.txt"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    env.err(
        "list_files",
        json!({"path": "/input/none"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
    env.err(
        "list_files",
        json!({"path": "/elsewhere"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
}
