//! `golem-forge init`: scaffold a worker project that runs offline at once.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::cli_error::CommandError;
use crate::frontend::clean::clean_text;

/// Create a worker project: a config, an example worker and its zone
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to create the project (default: the current directory)
    pub dir: Option<PathBuf>,
}

const CONFIG: &str = "\
# Golem Forge program config. Workers without a `model` use this one.
# `test:default` is the built-in offline model; for a real one, set e.g.
#   model: anthropic:claude-haiku-4-5   (and ANTHROPIC_API_KEY)
# or pass --model / set GOLEM_FORGE_MODEL.
model: test:default
approval:
  mode: interactive
delegation:
  max_depth: 5
";

const WORKER: &str = "\
---
name: assistant
description: A careful assistant that keeps its files in /workspace
sandbox:
  zones:
    - name: workspace
      path: ./workspace
      mode: rw
      approval:
        create: preApproved
        write: ask
        delete: ask
toolsets:
  filesystem: {}
---
You are a careful assistant. Keep any files you write in /workspace, and say what you changed.
";

const WORKSPACE_README: &str = "\
This folder is the `workspace` zone of main.worker: the only place the worker can read and
write files.
";

/// The worker's test cases (docs/testing.md): what `golem-forge test` runs offline, with
/// scripted model replies, in scratch copies of the zone. They pin the zone's approval policy:
/// a new file is created without asking, a change to an existing one asks first.
const WORKER_TESTS: &str = r#"# Test cases of main.worker: `golem-forge test` runs each as a fresh session with the
# model's replies written down here, in a scratch copy of /workspace (the real folder is
# never touched). Change the worker's zones or instructions, then run them again.
cases:
  - name: creates a new note without asking
    input: "Please note that I like tea."
    model:
      - tool_calls: [{ name: write_file, args: { path: /workspace/notes.md, content: "- likes tea\n" } }]
      - text: "I noted that you like tea in /workspace/notes.md."
    expect:
      calls: [{ tool: write_file, args: { path: /workspace/notes.md } }]
      asked: []
      blocked: []
      files: { /workspace/notes.md: { equals: "- likes tea\n" } }
      answer: { contains: "/workspace/notes.md" }

  - name: asks before changing a file, and a no leaves it as it was
    input: "Actually I prefer coffee."
    files: { /workspace/notes.md: "- likes tea\n" }
    model:
      - tool_calls: [{ name: write_file, args: { path: /workspace/notes.md, content: "- likes coffee\n" } }]
      - text: "You declined the change, so /workspace/notes.md still says tea."
    approve: { write_file: no }
    expect:
      asked: [write_file]
      files: { /workspace/notes.md: { equals: "- likes tea\n" } }
      answer: { contains: "declined" }
"#;

/// Keeps what golem-forge writes for itself on this machine (sessions, undo images, the inbox,
/// batches, caches, locks) out of the project's repository, whatever new folder a later
/// version adds there; the project's rules are meant to be shared, so they stay in.
const STATE_GITIGNORE: &str = "\
# What golem-forge keeps for itself on this machine: sessions, undo images, the approval inbox,
# batches, caches. Only the project's approval rules are meant to be committed.
*
!.gitignore
!approvals.yaml
";

/// The files a new project gets, relative to its directory.
fn scaffold() -> [(&'static str, &'static str); 5] {
    [
        ("golem-forge.config.yaml", CONFIG),
        ("main.worker", WORKER),
        ("tests/assistant.yaml", WORKER_TESTS),
        ("workspace/README.md", WORKSPACE_README),
        (".golem-forge/.gitignore", STATE_GITIGNORE),
    ]
}

/// Runs `golem-forge init`.
pub fn cmd_init(args: InitArgs) -> Result<ExitCode, CommandError> {
    let dir = args.dir.unwrap_or_else(|| PathBuf::from("."));
    create_project(&dir)?;
    let shown = dir.display().to_string();
    let shown = clean_text(&shown);
    println!("Created a worker project in {shown}:");
    for (path, _) in scaffold() {
        println!("  {path}");
    }
    println!("\nRun it offline with the built-in test model:\n  golem-forge run {shown} \"hello\"");
    println!("Check its tools and policies:\n  golem-forge check {shown}");
    println!("Run its test cases (tests/assistant.yaml), offline:\n  golem-forge test {shown}");
    Ok(ExitCode::SUCCESS)
}

fn create_project(dir: &Path) -> Result<(), CommandError> {
    let existing: Vec<String> = scaffold()
        .iter()
        .filter(|(path, _)| dir.join(path).exists())
        .map(|(path, _)| dir.join(path).display().to_string())
        .collect();
    if let Some((last, first)) = existing.split_last() {
        let message = match first {
            [] => format!("{last} already exists"),
            _ => format!("{} and {last} already exist", first.join(", ")),
        };
        return Err(CommandError::usage(message)
            .with_hint("Run `golem-forge init NEW_DIR` to create the project somewhere else"));
    }
    for (path, content) in scaffold() {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                CommandError::usage(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        std::fs::write(&target, content)
            .map_err(|e| CommandError::usage(format!("cannot write {}: {e}", target.display())))?;
    }
    Ok(())
}
