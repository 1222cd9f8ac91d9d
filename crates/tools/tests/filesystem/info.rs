//! `file_exists`, `file_info`, and the toolset's shape (order, names, schemas).

use std::sync::Arc;

use golem_protocol::ToolErrorCode;
use golem_sandbox::Sandbox;
use golem_tools::filesystem_tools;
use serde_json::json;

use super::env::Env;

#[tokio::test]
async fn exists_answers_with_a_boolean() {
    let env = Env::new();
    let yes = env
        .ok("file_exists", json!({"path": "/input/notes.txt"}))
        .await;
    assert_eq!(yes.data, json!(true));
    assert_eq!(yes.summary.as_deref(), Some("/input/notes.txt exists"));
    let no = env.ok("file_exists", json!({"path": "/input/none"})).await;
    assert_eq!(no.data, json!(false));
    assert_eq!(
        env.ok("file_exists", json!({"path": "/"})).await.data,
        json!(true)
    );
    env.err(
        "file_exists",
        json!({"path": "/nozone/x"}),
        ToolErrorCode::InvalidPath,
    )
    .await;
}

#[tokio::test]
async fn info_describes_files_directories_and_the_root() {
    let env = Env::new();
    let value = env
        .ok("file_info", json!({"path": "/input/notes.txt"}))
        .await;
    assert_eq!(value.kind, "structured");
    assert_eq!(value.data["name"], "notes.txt");
    assert_eq!(value.data["type"], "file");
    assert_eq!(value.data["size"], 14);
    assert_eq!(value.data["zone"], "input");
    assert_eq!(value.data["writable"], false);
    assert!(value.data["modified"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        value.summary.as_deref(),
        Some("/input/notes.txt: file, 14 bytes")
    );
    let value = env.ok("file_info", json!({"path": "/scratch"})).await;
    assert_eq!(value.data["type"], "directory");
    assert_eq!(value.data["writable"], true);
    let value = env.ok("file_info", json!({"path": "/"})).await;
    assert_eq!(value.data["zone"], json!(null));
    env.err(
        "file_info",
        json!({"path": "/input/none"}),
        ToolErrorCode::FileNotFound,
    )
    .await;
}

#[test]
fn the_toolset_has_eight_tools_in_order_with_design_argument_names() {
    let tools = filesystem_tools(Sandbox::empty());
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        vec![
            "read_file",
            "write_file",
            "edit_file",
            "list_files",
            "delete_file",
            "move_file",
            "file_exists",
            "file_info"
        ]
    );
    let props = |i: usize| -> Vec<String> {
        let schema: &serde_json::Value = tools[i].input_schema();
        assert_eq!(schema["additionalProperties"], false, "{}", tools[i].name());
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(props(0), vec!["path", "encoding", "offset", "limit"]);
    assert_eq!(props(1), vec!["path", "content", "encoding", "createDirs"]);
    assert_eq!(
        props(2),
        vec!["path", "old_string", "new_string", "replace_all"]
    );
    assert_eq!(props(3), vec!["path", "recursive", "includeHidden"]);
    assert_eq!(props(4), vec!["path", "recursive"]);
    assert_eq!(props(5), vec!["from", "to", "overwrite"]);
    assert_eq!(props(6), vec!["path"]);
    assert_eq!(props(7), vec!["path"]);
    let read = tools[0].input_schema();
    assert_eq!(read["required"], json!(["path"]));
    // The model is told the form of a path once, in each tool's description.
    for tool in &tools {
        assert!(
            tool.description().contains("/<zone>/<path>"),
            "{}",
            tool.name()
        );
    }
    // Schemas are computed once and shared by every toolset instance.
    let again = filesystem_tools(Sandbox::empty());
    assert!(std::ptr::eq(
        again[0].input_schema(),
        tools[0].input_schema()
    ));
    let _keep: Vec<Arc<dyn golem_core::tool::Tool>> = again;
}

/// Makes a FIFO at `path` with mkfifo(1) (the tests have no libc binding of their own).
fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

#[tokio::test]
async fn info_and_listing_name_fifos_and_sockets_without_opening_them() {
    let env = Env::new();
    mkfifo(&env.host("scratch/pipe"));
    let _listener = std::os::unix::net::UnixListener::bind(env.host("scratch/sock")).unwrap();
    // Opening the FIFO for reading would block this test forever: the tools must only stat it.
    let value = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        env.ok("file_info", json!({"path": "/scratch/pipe"})),
    )
    .await
    .expect("file_info must not open a FIFO");
    assert_eq!(value.data["type"], "fifo");
    assert_eq!(
        value.summary.as_deref(),
        Some("/scratch/pipe: fifo, 0 bytes")
    );
    let value = env.ok("file_info", json!({"path": "/scratch/sock"})).await;
    assert_eq!(value.data["type"], "socket");
    let value = env.ok("file_info", json!({"path": "/scratch"})).await;
    assert_eq!(value.data["type"], "directory");

    for recursive in [false, true] {
        let value = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            env.ok(
                "list_files",
                json!({"path": "/scratch", "recursive": recursive}),
            ),
        )
        .await
        .expect("list_files must not open a FIFO");
        let types: Vec<(String, String)> = value.data["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_owned(),
                    e["type"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            types,
            [
                ("pipe".to_owned(), "fifo".to_owned()),
                ("sock".to_owned(), "socket".to_owned())
            ],
            "recursive: {recursive}"
        );
        // Neither is counted as a file.
        assert_eq!(
            value.summary.as_deref(),
            Some("0 files, 0 directories, 1 fifo, 1 socket"),
            "recursive: {recursive}"
        );
        // The typed view of a listing reads them too.
        let typed: golem_protocol::result::FileListData =
            serde_json::from_value(value.data.clone()).unwrap();
        assert_eq!(typed.entries.len(), 2);
    }
    // A device node (only root may make one; /dev/null is a character device everywhere) is
    // covered by the sandbox's own tests through a zone on /dev.
}
