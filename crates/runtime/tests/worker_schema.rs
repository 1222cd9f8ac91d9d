//! The JSON Schema of a worker file's front matter: the committed copy
//! (`docs/schema/worker.schema.json`) must match the types, and every example worker's front
//! matter must be valid by it — by our validator, by `ajv` in its default strict mode (draft
//! 2020-12), and in the editor setup of docs/worker-file.md, as `yaml-language-server` reports
//! it. Run with `GOLEM_UPDATE_SCHEMA=1` to rewrite the copy after an intended change.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use golem_runtime::worker::worker_schema_json;
use golem_testkit::parts::{SCHEMA_TOOLS_INSTALL, missing};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The installed npm package `name` of `target/schema-tools`; panics naming the install
/// commands when it is missing.
fn schema_tool(name: &str) -> PathBuf {
    let dir = repo_root()
        .join("target/schema-tools/node_modules")
        .join(name);
    assert!(
        dir.join("package.json").is_file(),
        "{}",
        missing(&format!("the npm package {name}"), SCHEMA_TOOLS_INSTALL)
    );
    dir
}

/// Every example worker: its path and text.
fn example_workers() -> Vec<(PathBuf, String)> {
    let mut workers = Vec::new();
    for dir in std::fs::read_dir(repo_root().join("examples")).unwrap() {
        let Ok(files) = std::fs::read_dir(dir.unwrap().path()) else {
            continue;
        };
        for file in files {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "worker") {
                let text = std::fs::read_to_string(&path).unwrap();
                workers.push((path, text));
            }
        }
    }
    workers.sort();
    assert!(workers.len() >= 5, "only {} example workers", workers.len());
    workers
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
    for (path, text) in example_workers() {
        let front = front_matter(&text);
        let problems: Vec<String> = validator
            .iter_errors(&front)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(problems.is_empty(), "{}: {problems:?}", path.display());
        // The worker file reader agrees.
        golem_runtime::worker::parse_worker(&text, &path).unwrap();
    }
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

/// Compiles the committed schema with `ajv` in its default strict mode (draft 2020-12, the
/// standard formats added) and validates each of `instances`: whether each is valid, or the
/// error that stopped the compilation.
fn ajv_strict(instances: &[Value]) -> Result<Vec<bool>, String> {
    let (ajv, formats) = (schema_tool("ajv"), schema_tool("ajv-formats"));
    let script = format!(
        "const Ajv2020 = require({ajv}); const addFormats = require({formats}).default;\n\
         const fs = require('fs');\n\
         const schema = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));\n\
         const instances = JSON.parse(fs.readFileSync(0, 'utf8'));\n\
         const ajv = new Ajv2020({{ allErrors: true }}); addFormats(ajv);\n\
         let validate;\n\
         try {{ validate = ajv.compile(schema); }}\n\
         catch (e) {{ console.log(JSON.stringify({{ error: e.message }})); process.exit(0); }}\n\
         console.log(JSON.stringify({{ valid: instances.map(i => validate(i)) }}));\n",
        ajv = json!(ajv.join("dist/2020.js")),
        formats = json!(formats),
    );
    let mut child = Command::new("node")
        .arg("-e")
        .arg(script)
        .arg(repo_root().join("docs/schema/worker.schema.json"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    let input = serde_json::to_vec(instances).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "node failed: {output:?}");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    match answer.get("error") {
        Some(error) => Err(error.to_string()),
        None => Ok(serde_json::from_value(answer["valid"].clone()).unwrap()),
    }
}

#[test]
fn strict_ajv_accepts_the_schema_and_every_example_and_refuses_a_bad_key() {
    let workers = example_workers();
    let mut instances: Vec<Value> = workers.iter().map(|(_, text)| front_matter(text)).collect();
    let mut bad = instances[0].clone();
    bad["toolset"] = json!({});
    instances.push(bad);
    instances.push(json!({ "name": "w", "max_iterations": -1 }));
    let valid = ajv_strict(&instances).unwrap_or_else(|e| panic!("ajv refused the schema: {e}"));
    for ((path, _), valid) in workers.iter().zip(&valid) {
        assert!(valid, "ajv refused {}", path.display());
    }
    assert_eq!(
        valid[workers.len()..],
        [false, false],
        "ajv accepted a bad key or a negative count"
    );
}

/// A language server over stdio: JSON-RPC messages framed by `Content-Length` headers.
struct LanguageServer {
    child: Child,
    input: ChildStdin,
    messages: mpsc::Receiver<Value>,
    next_id: u64,
}

/// The settings of the documented editor setup: validation on, no schema associations (the
/// worker file's modeline names the schema).
fn editor_settings() -> Value {
    json!({ "validate": true, "schemas": {} })
}

impl LanguageServer {
    fn start() -> LanguageServer {
        let server = schema_tool("yaml-language-server").join("bin/yaml-language-server");
        let mut child = Command::new("node")
            .arg(server)
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        let (send, messages) = mpsc::channel();
        std::thread::spawn(move || {
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if output.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length:") {
                        length = n.trim().parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                if output.read_exact(&mut body).is_err() {
                    return;
                }
                if send.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut server = LanguageServer {
            child,
            input,
            messages,
            next_id: 1,
        };
        let root = format!("file://{}", repo_root().canonicalize().unwrap().display());
        let id = server.request(
            "initialize",
            json!({ "processId": null, "rootUri": root,
                    "capabilities": { "workspace": { "configuration": true } } }),
        );
        while server.next().get("id") != Some(&json!(id)) {}
        server.notify("initialized", json!({}));
        server.notify(
            "workspace/didChangeConfiguration",
            json!({ "settings": { "yaml": editor_settings() } }),
        );
        server
    }

    fn send(&mut self, message: Value) {
        let body = serde_json::to_vec(&message).unwrap();
        write!(self.input, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        self.input.write_all(&body).unwrap();
        self.input.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The next message; the server's own requests are answered on the way (the settings for
    /// `workspace/configuration`, nothing for the rest).
    fn next(&mut self) -> Value {
        loop {
            let message = self
                .messages
                .recv_timeout(Duration::from_secs(60))
                .expect("yaml-language-server answered");
            let (Some(id), Some(method)) = (message.get("id"), message.get("method")) else {
                return message;
            };
            let result = match method.as_str() {
                Some("workspace/configuration") => {
                    let items = message["params"]["items"].as_array().map_or(0, Vec::len);
                    Value::Array(vec![editor_settings(); items])
                }
                _ => Value::Null,
            };
            let id = id.clone();
            self.send(json!({ "jsonrpc": "2.0", "id": id, "result": result }));
        }
    }

    /// Opens `text` as the YAML document `uri` and returns the first diagnostics published
    /// for it, as `line: message`.
    fn diagnostics(&mut self, uri: &str, text: &str) -> Vec<String> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1,
                                      "text": text } }),
        );
        loop {
            let message = self.next();
            if message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
            {
                return message["params"]["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| format!("{}: {}", d["range"]["start"]["line"], d["message"]))
                    .collect();
            }
        }
    }
}

impl Drop for LanguageServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` with the modeline docs/worker-file.md tells users to add as the front matter's first
/// line, naming the committed schema.
fn with_modeline(text: &str) -> String {
    let schema = repo_root()
        .join("docs/schema/worker.schema.json")
        .canonicalize()
        .unwrap();
    let rest = text.strip_prefix("---\n").expect("a worker file");
    format!(
        "---\n# yaml-language-server: $schema={}\n{rest}",
        schema.display()
    )
}

#[test]
fn the_editor_setup_checks_the_front_matter_and_not_the_instructions() {
    let mut server = LanguageServer::start();
    let dir = tempfile::tempdir().unwrap();
    // Workers whose instructions are prose (the markdown after the second `---` is a second
    // YAML document to the server): the schema applies to the front matter only.
    let mut checked = 0;
    for name in ["greeter", "analyst", "notes"] {
        let source = repo_root().join(format!("examples/{name}/main.worker"));
        let text = with_modeline(&std::fs::read_to_string(&source).unwrap());
        // The worker file reader takes the modeline as a comment.
        golem_runtime::worker::parse_worker(&text, &source).unwrap();
        let uri = format!("file://{}/{name}.worker", dir.path().display());
        let found = server.diagnostics(&uri, &text);
        assert_eq!(found, Vec::<String>::new(), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 3);
    // Instructions that are markdown but not YAML: after a plain `---` the server finds YAML
    // syntax errors in them; after `--- |` (which the worker file reader takes as the same
    // closing line) they are one block of text to it, and nothing is flagged.
    let markdown = "Summarise the notes.\n- **Summary**: one line: no more\n`code` *em* @who\n\n## Steps\n1. read: then write\n";
    let plain = with_modeline(&format!("---\nname: summariser\n---\n{markdown}"));
    let uri = format!("file://{}/plain.worker", dir.path().display());
    assert_ne!(
        server.diagnostics(&uri, &plain),
        Vec::<String>::new(),
        "{plain}"
    );
    let literal = with_modeline(&format!("---\nname: summariser\n--- |\n{markdown}"));
    let parsed =
        golem_runtime::worker::parse_worker(&literal, Path::new("summariser.worker")).unwrap();
    assert_eq!(parsed.instructions.trim_end(), markdown.trim_end());
    let uri = format!("file://{}/literal.worker", dir.path().display());
    assert_eq!(
        server.diagnostics(&uri, &literal),
        Vec::<String>::new(),
        "{literal}"
    );
    // A bad key in the front matter is the one diagnostic, on its line.
    let bad = with_modeline("---\nname: greeter\ntoolset: {}\n---\nSay hello.\n");
    let uri = format!("file://{}/bad.worker", dir.path().display());
    let found = server.diagnostics(&uri, &bad);
    assert_eq!(found, ["3: \"Property toolset is not allowed.\""], "{bad}");
}
