//! `toolsets.mcp` in worker files: every key and its default (stdio and streamable HTTP
//! servers, a stdio server's `jail:` as a map, `true` or `false`), and each mistake (no
//! command nor url, both, a URL that is not http(s), keys of the other transport, `jail` on
//! a URL server, a bad header name, an unknown key, a bad server name, a zero timeout, a
//! jail's zone listed twice or an unknown key in it, a jailed server's relative `cwd`) as an
//! error naming the file, the line and the key.

use std::collections::BTreeMap;
use std::path::Path;

use golem_core::approval::{ApprovalConfig, ApprovalDecisionType};
use golem_runtime::worker::{
    JailMode, McpJailConfig, McpServerConfig, McpToolsetConfig, ProcessLimitsConfig,
    WorkerDefinition, WorkerFileError, parse_worker,
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
                    jail: None,
                },
            ),
            (
                "plain".to_owned(),
                McpServerConfig::Stdio {
                    command: "srv".to_owned(),
                    args: vec![],
                    env: BTreeMap::new(),
                    cwd: None,
                    jail: None,
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
        err("name: greeter\ntoolsets:\n  mcp:\n    servers:\n      a: { command: x, jial: {} }\n");
    assert!(
        unknown.contains("line 6") && unknown.contains("unknown key `jial`"),
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

/// The stdio server `files` of a worker whose `toolsets.mcp.servers.files` is `body`.
fn jailed(body: &str) -> Result<McpServerConfig, WorkerFileError> {
    let worker = parse(&format!(
        "name: greeter\ntoolsets:\n  mcp:\n    servers:\n      files: {body}\n"
    ))?;
    let mcp = worker.toolsets.mcp.expect("the toolset");
    Ok(mcp.servers["files"].clone())
}

/// The `jail` of a stdio server.
fn jail_of(server: &McpServerConfig) -> Option<&McpJailConfig> {
    match server {
        McpServerConfig::Stdio { jail, .. } => jail.as_deref(),
        McpServerConfig::Http { .. } => panic!("not a stdio server: {server:?}"),
    }
}

#[test]
fn a_stdio_server_opts_into_the_jail() {
    let full = jailed(
        "{ command: node, args: [\"/servers/index.js\"], cwd: /docs/src, jail: { zones: [docs, \
         servers], network: true, mode: best_effort, limits: { cpu_seconds: 600, memory_mb: 4096 } } }",
    )
    .unwrap();
    assert_eq!(
        jail_of(&full),
        Some(&McpJailConfig {
            zones: Some(vec!["docs".to_owned(), "servers".to_owned()]),
            network: true.into(),
            mode: JailMode::BestEffort,
            limits: ProcessLimitsConfig {
                cpu_seconds: Some(600),
                memory_mb: Some(4096),
                ..ProcessLimitsConfig::default()
            },
        })
    );
    let McpServerConfig::Stdio { cwd, .. } = &full else {
        panic!("{full:?}");
    };
    assert_eq!(cwd.as_deref(), Some("/docs/src"));
    let all = jailed("{ command: node, jail: true }").unwrap();
    assert_eq!(
        jail_of(&all),
        Some(&McpJailConfig::default()),
        "`true`: every zone of the worker, no network, strict"
    );
    assert_eq!(McpJailConfig::default().zones, None);
    assert!(!McpJailConfig::default().network.on);
    let defaults = jailed("{ command: node, jail: {} }").unwrap();
    assert_eq!(jail_of(&defaults), Some(&McpJailConfig::default()));
    let none = jailed("{ command: node, jail: { zones: [] } }").unwrap();
    assert_eq!(jail_of(&none).and_then(|j| j.zones.clone()), Some(vec![]));
    for outside in [
        "{ command: node }",
        "{ command: node, jail: false }",
        "{ command: node, cwd: sub, jail: false }",
    ] {
        assert_eq!(jail_of(&jailed(outside).unwrap()), None, "{outside}");
    }
}

#[test]
fn jail_mistakes_name_the_file_line_and_key() {
    for (body, says) in [
        (
            "{ url: \"https://x/mcp\", jail: { zones: [docs] } }",
            "`jail` is for `command` servers",
        ),
        ("{ url: \"https://x/mcp\", jail: true }", "`jail` is for"),
        (
            "{ command: node, cwd: ./docs, jail: true }",
            "in the jail the working directory is a virtual path",
        ),
        (
            "{ command: node, jail: { zones: [docs, docs] } }",
            "`docs` is listed twice",
        ),
        (
            "{ command: node, jail: { zone: [docs] } }",
            "unknown key `zone`",
        ),
        ("{ command: node, jail: { network: maybe } }", "network"),
        ("{ command: node, jail: { mode: loose } }", "mode"),
        ("{ command: node, jail: 3 }", "must be `true`, `false` or"),
        ("{ command: node, jail: [docs] }", "found a list"),
        ("{ command: node, jail: \"on\" }", "found \"on\""),
    ] {
        let message = jailed(body).expect_err(body).to_string();
        assert!(
            message.starts_with("worker file greeter.worker, line 6:")
                && message.contains("toolsets.mcp.servers.files")
                && message.contains(says),
            "{body}: {message}"
        );
    }
}
