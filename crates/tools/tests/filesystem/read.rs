//! `read_file`: text, windows of lines, truncation markers, binary refusal, base64.

use golem_protocol::ToolErrorCode;
use golem_protocol::result::FileContentData;
use golem_tools::filesystem::{FilesystemLimits, ReadLimits};
use serde_json::json;

use super::env::Env;

fn content(value: &golem_protocol::ToolResultValue) -> FileContentData {
    assert_eq!(value.kind, "file_content");
    value.data_as().unwrap()
}

#[tokio::test]
async fn reads_a_text_file() {
    let env = Env::new();
    let value = env
        .ok("read_file", json!({"path": "/input/notes.txt"}))
        .await;
    let data = content(&value);
    assert_eq!(data.content, "one\ntwo\nthree\n");
    assert_eq!(data.size, 14);
    assert_eq!(data.encoding.as_deref(), Some("utf-8"));
    assert_eq!(value.data["totalLines"], 3);
    assert_eq!(value.data.get("truncated"), None);
    assert_eq!(
        value.summary.as_deref(),
        Some("/input/notes.txt (14 bytes, 3 lines)")
    );
    assert_eq!(value.mime_type.as_deref(), Some("text/plain"));
}

#[tokio::test]
async fn offset_and_limit_select_lines() {
    let env = Env::new();
    let value = env
        .ok(
            "read_file",
            json!({"path": "/input/notes.txt", "offset": 1, "limit": 1}),
        )
        .await;
    let data = content(&value);
    assert!(
        data.content
            .starts_with("two\n[truncated: showing lines 2-2 of 3"),
        "{}",
        data.content
    );
    assert_eq!(value.data["nextOffset"], 2);
    let value = env
        .ok(
            "read_file",
            json!({"path": "/input/notes.txt", "offset": 2}),
        )
        .await;
    assert_eq!(content(&value).content, "three\n");
    let message = env
        .err(
            "read_file",
            json!({"path": "/input/notes.txt", "offset": 3}),
            ToolErrorCode::InvalidArguments,
        )
        .await;
    assert!(message.contains("has 3 lines"), "{message}");
}

#[tokio::test]
async fn long_files_are_truncated_with_a_marker_and_the_total_size() {
    let env = Env::new();
    let text: String = (1..=3_000).map(|i| format!("line {i}\n")).collect();
    env.put("scratch/long.txt", &text);
    let value = env
        .ok("read_file", json!({"path": "/scratch/long.txt"}))
        .await;
    let data = content(&value);
    assert_eq!(data.size, text.len() as u64);
    assert!(data.content.starts_with("line 1\n"));
    assert!(
        data.content
            .contains("line 2000\n[truncated: showing lines 1-2000 "),
        "{}",
        &data.content[data.content.len() - 200..]
    );
    assert!(data.content.ends_with(&format!(
        "of {} bytes). Call read_file with path \"/scratch/long.txt\" and offset=2000 to read on]",
        text.len()
    )));
    assert_eq!(value.data["truncated"], true);
    assert_eq!(value.data["nextOffset"], 2000);
    // Reading on from the offset gets the rest, with the total line count.
    let value = env
        .ok(
            "read_file",
            json!({"path": "/scratch/long.txt", "offset": 2000}),
        )
        .await;
    let data = content(&value);
    assert!(data.content.starts_with("line 2001\n") && data.content.ends_with("line 3000\n"));
    assert_eq!(value.data["totalLines"], 3000);
    assert_eq!(value.data.get("truncated"), None);
}

#[tokio::test]
async fn large_files_are_cut_at_the_byte_limit() {
    let env = Env::new();
    let line = format!("{}\n", "x".repeat(999));
    env.put("scratch/wide.txt", line.repeat(400)); // 400,000 bytes, 400 lines
    let value = env
        .ok("read_file", json!({"path": "/scratch/wide.txt"}))
        .await;
    let data = content(&value);
    assert!(
        data.content
            .contains("[truncated: showing lines 1-262 (262000 of 400000 bytes)"),
        "{}",
        &data.content[data.content.len() - 200..]
    );
    assert_eq!(value.data["nextOffset"], 262);
}

#[tokio::test]
async fn limits_are_configurable() {
    let limits = FilesystemLimits {
        read: ReadLimits {
            max_bytes: 8,
            max_lines: 2,
        },
        ..FilesystemLimits::default()
    };
    let env = Env::with_limits(limits);
    let value = env
        .ok("read_file", json!({"path": "/input/notes.txt"}))
        .await;
    assert!(content(&value).content.starts_with("one\ntwo\n[truncated"));
}

#[tokio::test]
async fn binary_files_are_refused_as_text_with_a_hint() {
    let env = Env::new();
    env.put("scratch/img.bin", [0x89, b'P', b'N', b'G', 0, 1, 2]);
    env.put("scratch/latin1.txt", [b'c', b'a', b'f', 0xe9]);
    for path in ["/scratch/img.bin", "/scratch/latin1.txt"] {
        let message = env
            .err(
                "read_file",
                json!({"path": path}),
                ToolErrorCode::InvalidArguments,
            )
            .await;
        assert!(
            message.contains("binary file") && message.contains("encoding \"base64\""),
            "{message}"
        );
    }
}

#[tokio::test]
async fn base64_round_trips_every_byte() {
    let env = Env::new();
    let bytes: Vec<u8> = (0..=255u8).collect();
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let value = env
        .ok(
            "write_file",
            json!({"path": "/scratch/all.bin", "content": encoded, "encoding": "base64"}),
        )
        .await;
    assert_eq!(value.summary.as_deref(), Some("binary file: 256 bytes"));
    assert_eq!(std::fs::read(env.host("scratch/all.bin")).unwrap(), bytes);
    let value = env
        .ok(
            "read_file",
            json!({"path": "/scratch/all.bin", "encoding": "base64"}),
        )
        .await;
    let data = content(&value);
    assert_eq!(data.encoding.as_deref(), Some("base64"));
    assert_eq!(data.content, encoded);
    // offset and limit count bytes in base64 mode.
    let value = env
        .ok(
            "read_file",
            json!({"path": "/scratch/all.bin", "encoding": "base64", "offset": 16, "limit": 3}),
        )
        .await;
    assert_eq!(content(&value).content, "EBES");
    assert_eq!(value.data["nextOffset"], 19);
}

#[tokio::test]
async fn missing_files_directories_and_escapes_are_errors() {
    let env = Env::new();
    env.err(
        "read_file",
        json!({"path": "/input/none.txt"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
    let message = env
        .err(
            "read_file",
            json!({"path": "/input/sub"}),
            ToolErrorCode::InvalidPath,
        )
        .await;
    assert!(message.contains("directory"), "{message}");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), env.host("scratch/link")).unwrap();
    env.err(
        "read_file",
        json!({"path": "/scratch/link"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
    env.err(
        "read_file",
        json!({"path": "/scratch/../input/notes.txt"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
}

#[tokio::test]
async fn bad_arguments_never_reach_the_tool() {
    let env = Env::new();
    for args in [
        json!({"path": "/input/notes.txt", "encoding": "latin1"}),
        json!({"path": "/input/notes.txt", "limit": 0}),
        json!({"path": "/input/notes.txt", "offset": -1}),
        json!({"path": "/input/notes.txt", "lines": 3}),
        json!({}),
    ] {
        env.err("read_file", args, ToolErrorCode::InvalidArguments)
            .await;
    }
}
