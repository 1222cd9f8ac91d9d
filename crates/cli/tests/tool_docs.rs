//! The generated parts of the documentation: the table of built-in tools in `docs/tools.md`
//! (built from the tools themselves: name, kind, arguments from the schema, who may call them,
//! their approval policy) and the table of toolset keys in `docs/worker-file.md` (from the
//! worker file's JSON Schema). Each sits between `<!-- generated: … -->` and
//! `<!-- end generated -->` and must be current; run with `GOLEM_UPDATE_DOCS=1` to rewrite them
//! after an intended change. Also: what each tool says it does stays within what its toolset
//! says it reaches, which the MCP server's annotations of a worker are judged from.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use golem_core::tool::Tool;
use golem_protocol::{ExecutionMode, ToolKind};
use golem_runtime::launch::outside_session;
use golem_sandbox::Sandbox;
use golem_toolset::Reach;
use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A worker with every built-in toolset that needs nothing from outside (no server, no
/// module, no sub-worker): their tools are the built-in ones.
const EVERY_TOOLSET: &str = "---
name: every_tool
sandbox:
  zones:
    - { name: work, path: ./work, mode: rw }
toolsets:
  filesystem:
  code:
  shell:
  web:
  git: { zone: work }
---
Every built-in tool.
";

/// A toolset's key, what it says it reaches, and its tools.
type BuiltToolset = (String, Reach, Vec<Arc<dyn Tool>>);

/// Every built-in tool, built as `check` builds them, with its toolset's key and reach.
fn every_tool() -> Vec<BuiltToolset> {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&work)
        .status()
        .unwrap();
    assert!(status.success(), "git init failed");
    let path = dir.path().join("every_tool.worker");
    std::fs::write(&path, EVERY_TOOLSET).unwrap();
    let worker = golem_runtime::worker::parse_worker(EVERY_TOOLSET, &path).unwrap();
    let sandbox = Sandbox::open(worker.dir(), &worker.zones).unwrap();
    let helper = PathBuf::from(env!("CARGO_BIN_EXE_golem-forge"));
    let cx = outside_session(&worker, &sandbox, dir.path(), Some(&helper));
    worker
        .toolsets
        .configured()
        .iter()
        .map(|toolset| {
            let tools = toolset
                .build(&cx)
                .unwrap_or_else(|e| panic!("toolset {}: {e}", toolset.key()));
            (toolset.key().to_owned(), toolset.reach(), tools)
        })
        .collect()
}

/// `| tool | toolset | kind | arguments | who may call | approval |`, one row per built-in tool in
/// the order the model is offered them.
fn tool_table() -> String {
    let mut table = String::from(
        "| tool | toolset | kind | arguments | who may call | approval |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for (key, _, tools) in every_tool() {
        for tool in tools {
            let who = match tool.execution().mode {
                ExecutionMode::Llm => "model",
                ExecutionMode::Manual => "user",
                ExecutionMode::Both => "model, user",
            };
            table.push_str(&format!(
                "| `{}` | `{key}` | {} | {} | {who} | {} |\n",
                tool.name(),
                tool.kind(),
                arguments(tool.input_schema()),
                tool.approval_policy()
                    .unwrap_or_else(|| "ask".to_owned())
                    .replace('|', "\\|"),
            ));
        }
    }
    table
}

/// The argument names of an object schema, in order, optional ones with `?` and a choice with
/// its values; `none` for none.
fn arguments(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<String> = schema["properties"]
        .as_object()
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| {
                    let optional = if required.contains(&name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    let values: Vec<String> = property["enum"]
                        .as_array()
                        .map(|values| {
                            values
                                .iter()
                                .filter_map(Value::as_str)
                                .map(|v| format!("`{v}`"))
                                .collect()
                        })
                        .unwrap_or_default();
                    match values.is_empty() {
                        true => format!("`{name}{optional}`"),
                        false => format!("`{name}{optional}` ({})", values.join(" or ")),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    match names.is_empty() {
        true => "none".to_owned(),
        false => names.join(", "),
    }
}

/// `| key | what it turns on | its keys |`, one row per toolset key of the worker file's schema.
fn toolset_table() -> String {
    let schema: Value = serde_json::from_str(&golem_runtime::worker::worker_schema_json()).unwrap();
    let definitions = &schema["$defs"];
    // Follows `$ref`s and the `anyOf: [{$ref}, …, {type: null}]` of optional sections (and of
    // a value written as one item or a list) to the object that has the keys.
    let resolve = |value: &Value| -> Value {
        let mut value = value.clone();
        loop {
            if let Some(reference) = value["$ref"].as_str() {
                value = definitions[reference.trim_start_matches("#/$defs/")].clone();
            } else if let Some(first) = value["anyOf"]
                .as_array()
                .and_then(|options| options.iter().find(|o| o.get("$ref").is_some()))
            {
                value = first.clone();
            } else {
                return value;
            }
        }
    };
    let toolsets = resolve(&schema["properties"]["toolsets"]);
    let properties = toolsets["properties"]
        .as_object()
        .expect("the toolsets section has properties");
    let mut table = String::from("| key | what it turns on | its keys |\n| --- | --- | --- |\n");
    for (key, property) in properties {
        let description = property["description"]
            .as_str()
            .unwrap_or_else(|| panic!("toolsets.{key} has no description (a doc comment)"));
        let config = resolve(property);
        let keys: Vec<String> = config["properties"]
            .as_object()
            .map(|own| own.keys().map(|k| format!("`{k}`")).collect())
            .unwrap_or_default();
        let keys = match keys.is_empty() {
            false => keys.join(", "),
            true => "none".to_owned(),
        };
        table.push_str(&format!(
            "| `{key}` | {} | {keys} |\n",
            description.replace('\n', " ")
        ));
    }
    table
}

/// Replaces (or, with `GOLEM_UPDATE_DOCS`, rewrites) the generated part named `name` of
/// `file` with `generated`, or fails naming the command that brings it up to date.
fn check_generated(file: &str, name: &str, generated: &str) {
    let path = repo_root().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let start = format!("<!-- generated: {name} -->\n");
    let end = "<!-- end generated -->";
    let from = text
        .find(&start)
        .unwrap_or_else(|| panic!("{file} has no `{}` line", start.trim_end()))
        + start.len();
    let to = from
        + text[from..]
            .find(end)
            .unwrap_or_else(|| panic!("{file}: `{}` is not closed by `{end}`", start.trim_end()));
    if text[from..to] == *generated {
        return;
    }
    if std::env::var_os("GOLEM_UPDATE_DOCS").is_some() {
        let updated = format!("{}{generated}{}", &text[..from], &text[to..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    panic!(
        "the {name} table of {file} is out of date with the code; run \
         `GOLEM_UPDATE_DOCS=1 cargo test -p golem-forge --test runner tool_docs` and commit it.\n\
         --- generated\n{generated}"
    );
}

#[test]
fn the_tool_table_of_tools_md_is_generated_from_the_tools() {
    let table = tool_table();
    // What an editor and `check` show comes from the tools themselves.
    assert!(
        table.contains("| `read_file` | `filesystem` | read |"),
        "{table}"
    );
    assert!(
        table.contains("| `delete_file` | `filesystem` | delete |"),
        "{table}"
    );
    assert!(
        table.contains("| `run_code` | `code` | execute |"),
        "{table}"
    );
    assert!(table.contains("| `git_pull` | `git` | fetch |"), "{table}");
    check_generated("docs/tools.md", "tools", &table);
}

#[test]
fn the_toolset_keys_of_worker_file_md_are_generated_from_the_schema() {
    let table = toolset_table();
    for key in [
        "filesystem",
        "code",
        "shell",
        "workers",
        "web",
        "git",
        "custom",
        "mcp",
    ] {
        assert!(
            table.contains(&format!("| `{key}` |")),
            "{key} missing:\n{table}"
        );
    }
    check_generated("docs/worker-file.md", "toolsets", &table);
}

#[test]
fn what_each_tool_does_is_within_what_its_toolset_reaches() {
    let mut checked = 0;
    for (key, reach, tools) in every_tool() {
        for tool in tools {
            let within = match tool.kind() {
                ToolKind::Read | ToolKind::Search => true,
                ToolKind::Edit | ToolKind::Delete | ToolKind::Move | ToolKind::Delegate => {
                    reach.zones
                }
                ToolKind::Execute => reach.zones || reach.programs,
                ToolKind::Fetch => reach.web || reach.network || reach.zones,
                ToolKind::Other => reach.anything,
            };
            assert!(
                within,
                "{} of toolset {key} is `{}`, beyond what the toolset says it reaches ({reach:?}): \
                 the MCP server would announce workers with it as doing less than they can",
                tool.name(),
                tool.kind()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 22, "every built-in tool is checked");
}
