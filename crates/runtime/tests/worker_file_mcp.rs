//! `toolsets.mcp` in worker files: every key and its default (stdio and streamable HTTP
//! servers), and each mistake (no command nor url, both, a URL that is not http(s), keys of
//! the other transport, a bad header name, an unknown key, a bad server name, a zero timeout)
//! as an error naming the file, the line and the key.

use std::collections::BTreeMap;
use std::path::Path;

use golem_core::approval::{ApprovalConfig, ApprovalDecisionType};
use golem_runtime::worker::{
    McpServerConfig, McpToolsetConfig, WorkerDefinition, WorkerFileError, parse_worker,
};

fn parse(yaml: &str) -> Result<WorkerDefinition, WorkerFileError> {
    parse_worker(
        &format!("---\n{yaml}---\nHi.\n"),
        Path::new("greeter.worker"),
    )
}

fn err(yaml: &str) -> String {
    parse(yaml).expect_err(yaml).to_string()
}

#[test]
fn every_key_and_the_defaults() {
    let worker = parse(
        "name: greeter\ntoolsets:\n  mcp:\n    servers:\n      everything: { command: npx, \
         args: [\"-y\", \"@modelcontextprotocol/server-everything\"], env: { TOKEN: \"${T}\" }, \
         cwd: . }\n      plain: { command: srv }\n      remote: { url: \"https://example.com/mcp\", \
         headers: { Authorization: \"Bearer ${MCP_TOKEN}\" } }\n      open: { url: \"http://127.0.0.1:8080/mcp\" }\n    tools: { everything: [echo, add] }\n    \
         approval: { default: ask, tools: { everything__echo: preApproved } }\n    \
         timeout: 5\n",
    )
    .unwrap();
    let want = McpToolsetConfig {
        servers: BTreeMap::from([
            (
                "everything".to_owned(),
                McpServerConfig::Stdio {
                    command: "npx".to_owned(),
                    args: vec![
                        "-y".to_owned(),
                        "@modelcontextprotocol/server-everything".to_owned(),
                    ],
                    env: BTreeMap::from([("TOKEN".to_owned(), "${T}".to_owned())]),
                    cwd: Some(".".to_owned()),
                },
            ),
            (
                "plain".to_owned(),
                McpServerConfig::Stdio {
                    command: "srv".to_owned(),
                    args: vec![],
                    env: BTreeMap::new(),
                    cwd: None,
                },
            ),
            (
                "remote".to_owned(),
                McpServerConfig::Http {
                    url: "https://example.com/mcp".to_owned(),
                    headers: BTreeMap::from([(
                        "Authorization".to_owned(),
                        "Bearer ${MCP_TOKEN}".to_owned(),
                    )]),
                },
            ),
            (
                "open".to_owned(),
                McpServerConfig::Http {
                    url: "http://127.0.0.1:8080/mcp".to_owned(),
                    headers: BTreeMap::new(),
                },
            ),
        ]),
        tools: BTreeMap::from([(
            "everything".to_owned(),
            vec!["echo".to_owned(), "add".to_owned()],
        )]),
        approval: ApprovalConfig {
            default: Some(ApprovalDecisionType::Ask),
            tools: BTreeMap::from([(
                "everything__echo".to_owned(),
                ApprovalDecisionType::PreApproved,
            )]),
        },
        timeout: 5,
    };
    assert_eq!(worker.toolsets.mcp, Some(want));

    let empty = parse("name: greeter\ntoolsets:\n  mcp:\n").unwrap();
    assert_eq!(
        empty.toolsets.mcp,
        Some(McpToolsetConfig {
            timeout: 60,
            ..McpToolsetConfig::default()
        })
    );
}

#[test]
fn mistakes_name_the_file_line_and_key() {
    let no_command =
        err("name: greeter\ntoolsets:\n  mcp:\n    servers:\n      a: { args: [x] }\n");
    assert!(
        no_command.starts_with("worker file greeter.worker, line 6:")
            && no_command.contains("toolsets.mcp.servers.a")
            && no_command.contains("must give `command`"),
        "{no_command}"
    );
    assert!(no_command.contains("or `url`"), "{no_command}");
    let server = |body: &str| {
        err(&format!(
            "name: greeter\ntoolsets:\n  mcp:\n    servers:\n      remote: {body}\n"
        ))
    };
    for (body, says) in [
        ("{ url: \"ftp://x/mcp\" }", "http or https"),
        ("{ url: \"https:///mcp\" }", "no host"),
        ("{ url: \"x/mcp\" }", "must start with http:// or https://"),
        ("{ url: \"https://x/mcp\", command: srv }", "not both"),
        (
            "{ url: \"https://x/mcp\", env: { A: b } }",
            "`env` is for `command` servers",
        ),
        (
            "{ command: srv, headers: { A: b } }",
            "`headers` is for `url` servers",
        ),
        (
            "{ url: \"https://x/mcp\", headers: { \"a b\": c } }",
            "not an HTTP header name",
        ),
    ] {
        let message = server(body);
        assert!(
            message.starts_with("worker file greeter.worker, line 6:")
                && message.contains("toolsets.mcp.servers.remote")
                && message.contains(says),
            "{body}: {message}"
        );
    }
    let unknown =
        err("name: greeter\ntoolsets:\n  mcp:\n    servers:\n      a: { command: x, jail: {} }\n");
    assert!(
        unknown.contains("line 6") && unknown.contains("unknown key `jail`"),
        "{unknown}"
    );
    let name =
        err("name: greeter\ntoolsets:\n  mcp:\n    servers:\n      \"a b\": { command: x }\n");
    assert!(
        name.contains("toolsets.mcp.servers") && name.contains("[a-zA-Z0-9_-]{1,64}"),
        "{name}"
    );
    let timeout = err("name: greeter\ntoolsets:\n  mcp:\n    timeout: 0\n");
    assert!(
        timeout.contains("line 5") && timeout.contains("toolsets.mcp.timeout"),
        "{timeout}"
    );
    let top = err("name: greeter\ntoolsets:\n  mcp:\n    server: {}\n");
    assert!(top.contains("unknown key `server`"), "{top}");
}
