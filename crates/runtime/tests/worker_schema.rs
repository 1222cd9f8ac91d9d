//! The JSON Schema of a worker file's front matter: the committed copy
//! (`docs/schema/worker.schema.json`) must match the types, and every example worker's front
//! matter must be valid by it. Run with `GOLEM_UPDATE_SCHEMA=1` to rewrite the copy after an
//! intended change.

use std::path::{Path, PathBuf};

use golem_runtime::worker::worker_schema_json;
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&worker_schema_json()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// The front matter of a worker file, as JSON.
fn front_matter(text: &str) -> Value {
    let yaml = text
        .trim_start_matches('\u{feff}')
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---"))
        .map(|(yaml, _)| yaml)
        .unwrap_or_else(|| panic!("no front matter in {text}"));
    serde_saphyr::from_str(yaml).unwrap()
}

#[test]
fn committed_schema_is_current() {
    let path = repo_root().join("docs/schema/worker.schema.json");
    let generated = worker_schema_json();
    if std::env::var_os("GOLEM_UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with the worker file's types; run \
         `GOLEM_UPDATE_SCHEMA=1 cargo test -p golem-runtime --test runner worker_schema` and \
         commit it",
        path.display()
    );
}

#[test]
fn every_example_worker_is_valid() {
    let validator = validator();
    let mut checked = 0;
    for dir in std::fs::read_dir(repo_root().join("examples")).unwrap() {
        let dir = dir.unwrap().path();
        let Ok(files) = std::fs::read_dir(&dir) else {
            continue;
        };
        for file in files {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|ext| ext != "worker") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let front = front_matter(&text);
            let problems: Vec<String> = validator
                .iter_errors(&front)
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            assert!(problems.is_empty(), "{}: {problems:?}", path.display());
            // The worker file reader agrees.
            golem_runtime::worker::parse_worker(&text, &path).unwrap();
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} example workers found");
}

#[test]
fn the_schema_knows_every_toolset_and_refuses_unknown_keys() {
    let validator = validator();
    let good = json!({
        "name": "all",
        "mode": "chat",
        "max_iterations": 5,
        "budget": { "tokens": 1000, "cost_usd": 0.5 },
        "context": { "elide_at": 0.6, "keep_turns": 3 },
        "sandbox": { "zones": [{ "name": "work", "mode": "rw", "approval": { "write": "ask" } }] },
        "toolsets": {
            "filesystem": null,
            "code": { "approval": "ask", "timeout": 5, "network": true, "jail": "best_effort" },
            "shell": {
                "rules": [{ "pattern": "git status", "approval": "preApproved" }],
                "default": "ask",
                "network": { "allow_private": ["10.0.0.0/8"] },
                "limits": { "cpu_seconds": 5 }
            },
            "workers": { "allowed_workers": ["helper"] },
            "web": { "allow": ["docs.rs"], "search": { "backend": "brave" } },
            "git": { "zone": "work", "author": { "name": "A", "email": "a@b" } },
            "custom": [{ "module": "./tools.py", "tools": ["x"] }],
            "mcp": {
                "servers": {
                    "everything": { "command": "npx", "args": ["x"], "jail": true },
                    "remote": { "url": "https://example.com/mcp" }
                }
            }
        }
    });
    let problems: Vec<String> = validator
        .iter_errors(&good)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    for bad in [
        json!({ "description": "no name" }),
        json!({ "name": "Bad-Name" }),
        json!({ "name": "w", "toolset": {} }),
        json!({ "name": "w", "toolsets": { "code": { "networks": true } } }),
        json!({ "name": "w", "toolsets": { "shell": { "timeout": 0 } } }),
        json!({ "name": "w", "toolsets": { "git": {} } }),
        json!({ "name": "w", "max_iterations": 0 }),
        json!({ "name": "w", "mode": "batch" }),
        json!({ "name": "w", "context": { "elide_at": 1.5 } }),
        json!({ "name": "w", "context": { "elide_at": "sometimes" } }),
        json!({ "name": "w", "context": { "compact": true } }),
    ] {
        assert!(!validator.is_valid(&bad), "the schema accepted {bad}");
    }
}
