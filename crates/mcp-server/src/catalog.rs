//! The workers a server offers, loaded once at start: each worker file (its errors name the
//! file, the line and the key, as `run` reports them) with its program config (the default
//! zones of a worker that declares none, the config's approval mode), and the MCP tool that
//! stands for it — named after the worker, described by its `description`, taking
//! `{input, instructions?}`, returning the structured result of [`crate::outcome`], and
//! annotated with whether it can change anything (from its zones' modes and its toolsets).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use golem_core::approval::{ApprovalDecisionType, ApprovalMode};
use golem_runtime::config::ProgramConfig;
use golem_runtime::worker::{WorkerDefinition, WorkerFileError, load_worker};
use golem_sandbox::{ZoneMode, ZoneOperation};
use golem_toolset::Reach;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// Why the workers could not be served.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum CatalogError {
    /// No worker was named.
    #[error("no worker to serve: name at least one .worker file")]
    Empty,
    /// A worker file cannot be read or is invalid (the error names the file, line and key).
    #[error(transparent)]
    Worker(#[from] WorkerFileError),
    /// The program config around a worker is invalid.
    #[error("{0}")]
    Config(String),
    /// Two workers have the same name, so they would be the same tool.
    #[error(
        "two workers are named `{name}` ({} and {}): each worker is one tool, named after it",
        first.display(),
        second.display()
    )]
    Duplicate {
        name: String,
        /// The first worker file.
        first: PathBuf,
        second: PathBuf,
    },
}

/// One worker, ready to be called.
#[derive(Debug)]
pub struct WorkerEntry {
    /// The worker's name: the tool's name.
    pub name: String,
    /// The worker file, absolute.
    pub path: PathBuf,
    /// The approval mode of its program config, if it sets one.
    pub config_mode: Option<ApprovalMode>,
    /// The tool that stands for it.
    pub tool: Tool,
    /// Whether it can change files or the world (the inverse of its `readOnlyHint`).
    pub can_write: bool,
}

/// The workers of one server, in the order they were named.
#[derive(Debug, Clone)]
pub struct Catalog {
    entries: Vec<Arc<WorkerEntry>>,
}

impl Catalog {
    /// Loads the worker files at `paths` (each already resolved from the command line).
    pub fn load(paths: &[PathBuf]) -> Result<Catalog, CatalogError> {
        if paths.is_empty() {
            return Err(CatalogError::Empty);
        }
        let mut entries: Vec<Arc<WorkerEntry>> = Vec::with_capacity(paths.len());
        for path in paths {
            let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            let entry = load_entry(&path)?;
            if let Some(first) = entries.iter().find(|e| e.name == entry.name) {
                return Err(CatalogError::Duplicate {
                    name: entry.name,
                    first: first.path.clone(),
                    second: path,
                });
            }
            entries.push(Arc::new(entry));
        }
        Ok(Catalog { entries })
    }

    /// The tools, in the order the workers were named.
    pub fn tools(&self) -> Vec<Tool> {
        self.entries.iter().map(|e| e.tool.clone()).collect()
    }

    /// The worker named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<WorkerEntry>> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The workers.
    pub fn entries(&self) -> &[Arc<WorkerEntry>] {
        &self.entries
    }

    /// The workers' tool names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }
}

fn load_entry(path: &Path) -> Result<WorkerEntry, CatalogError> {
    let mut definition = load_worker(path)?;
    let config =
        ProgramConfig::for_worker(path).map_err(|e| CatalogError::Config(e.to_string()))?;
    config.apply_default_zones(&mut definition);
    let effects = Effects::of(&definition);
    let description = definition
        .description
        .clone()
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| format!("Runs the Golem Forge worker `{}`.", definition.name));
    let tool = Tool::new(
        definition.name.clone(),
        description,
        Arc::new(input_schema()),
    )
    .with_title(definition.name.clone())
    .with_raw_output_schema(Arc::new(output_schema(
        definition.output.as_ref().map(|output| &output.schema),
    )))
    .with_annotations(effects.annotations(&definition.name));
    Ok(WorkerEntry {
        name: definition.name.clone(),
        path: path.to_owned(),
        config_mode: config.approval.mode,
        tool,
        can_write: effects.writes,
    })
}

/// What running a worker can do to its surroundings, judged from its file alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Effects {
    /// It can change something: a read-write zone (through the file tools, a program, git, a
    /// sub-worker), or the world (custom tools, a program with the network).
    pub writes: bool,
    /// A change can destroy something: a read-write zone whose overwrites or deletions are
    /// not blocked, or a program that runs in one.
    pub destroys: bool,
    /// It reaches outside its zones: the web toolset, a program with the network, custom
    /// tools.
    pub open_world: bool,
}

impl Effects {
    /// The effects of `worker`'s zones and toolsets.
    pub(crate) fn of(worker: &WorkerDefinition) -> Effects {
        let reach = worker
            .toolsets
            .configured()
            .iter()
            .map(|toolset| toolset.reach())
            .fold(Reach::default(), |all, one| Reach {
                zones: all.zones || one.zones,
                programs: all.programs || one.programs,
                network: all.network || one.network,
                web: all.web || one.web,
                anything: all.anything || one.anything,
            });
        let rw: Vec<_> = worker
            .zones
            .iter()
            .filter(|z| z.mode == ZoneMode::Rw)
            .collect();
        // Anything that can reach a read-write zone: the file tools, programs, git, and
        // sub-workers (whose zones narrow the caller's).
        let zone_writes = !rw.is_empty() && reach.zones;
        let destructive_zone = rw.iter().any(|zone| {
            [ZoneOperation::Write, ZoneOperation::Delete]
                .iter()
                .any(|op| zone.approval.decision(*op) != ApprovalDecisionType::Blocked)
        });
        let writes = zone_writes || reach.network || reach.anything;
        let destroys = (zone_writes && (destructive_zone || reach.programs))
            || reach.network
            || reach.anything;
        let open_world = reach.web || reach.network || reach.anything;
        Effects {
            writes,
            destroys,
            open_world,
        }
    }

    fn annotations(self, name: &str) -> ToolAnnotations {
        let annotations = ToolAnnotations::with_title(name)
            .read_only(!self.writes)
            .idempotent(false)
            .open_world(self.open_world);
        if self.writes {
            annotations.destructive(self.destroys)
        } else {
            annotations
        }
    }
}

/// `{input: string, instructions?: string}`, nothing else.
pub(crate) fn input_schema() -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "description": "The task for the worker, in plain words."
            },
            "instructions": {
                "type": "string",
                "description": "Extra instructions for this call, added to the worker's own."
            }
        },
        "required": ["input"],
        "additionalProperties": false
    }))
}

/// The shape of a call's `structuredContent`; `answer` is the schema of a worker's structured
/// answer (its `output:`), which the content then carries as `output` when the run completed.
pub(crate) fn output_schema(answer: Option<&Value>) -> JsonObject {
    let mut schema = record_schema();
    if let (Some(answer), Some(Value::Object(properties))) = (answer, schema.get_mut("properties"))
    {
        properties.insert("output".into(), answer.clone());
    }
    schema
}

/// The record every call's `structuredContent` holds.
fn record_schema() -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "worker": {"type": "string", "description": "The worker that ran."},
            "sessionId": {
                "type": "string",
                "description": "The session's transcript, under .golem-forge/sessions/."
            },
            "status": {
                "type": "string",
                "enum": ["completed", "failed", "interrupted", "budgetExceeded"]
            },
            "answer": {"type": "string", "description": "The worker's final answer."},
            "error": {"type": "string", "description": "Why the run failed."},
            "toolCalls": {
                "type": "array",
                "description": "Every tool call the worker (and its sub-workers) made, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "status": {
                            "type": "string",
                            "enum": ["success", "error", "denied", "blocked", "interrupted"]
                        },
                        "worker": {
                            "type": "string",
                            "description": "The sub-worker that made it, when not the worker called."
                        }
                    },
                    "required": ["name", "status"]
                }
            },
            "filesChanged": {
                "type": "array",
                "description": "Virtual paths (/zone/file) written, edited, deleted or moved.",
                "items": {"type": "string"}
            },
            "usage": {
                "type": "object",
                "properties": {
                    "inputTokens": {"type": "integer"},
                    "outputTokens": {"type": "integer"},
                    "cacheReadTokens": {"type": "integer"},
                    "cacheWriteTokens": {"type": "integer"}
                },
                "required": ["inputTokens", "outputTokens"]
            },
            "cost": {"type": "number", "description": "US dollars, when the model's price is known."}
        },
        "required": ["worker", "sessionId", "status", "toolCalls", "filesChanged", "usage"]
    }))
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use golem_core::schema_lean::{lean_schema, non_standard_keywords};
    use golem_runtime::worker::parse_worker;

    use super::*;

    fn effects(front_matter: &str) -> Effects {
        let text = format!("---\nname: w\ndescription: d\n{front_matter}---\nbody\n");
        Effects::of(&parse_worker(&text, Path::new("/tmp/w.worker")).unwrap())
    }

    const RW: &str = "sandbox:\n  zones:\n    - name: out\n      mode: rw\n";
    const RO: &str = "sandbox:\n  zones:\n    - name: out\n      mode: ro\n";

    #[test]
    fn a_worker_without_a_writable_zone_or_the_world_is_read_only() {
        let none = Effects {
            writes: false,
            destroys: false,
            open_world: false,
        };
        assert_eq!(effects(""), none);
        assert_eq!(
            effects(&format!("{RO}toolsets:\n  filesystem: {{}}\n")),
            none
        );
        // A read-write zone that no tool reaches changes nothing.
        assert_eq!(effects(RW), none);
    }

    #[test]
    fn a_writable_zone_with_tools_writes_and_blocked_deletes_make_it_additive() {
        let fs = effects(&format!("{RW}toolsets:\n  filesystem: {{}}\n"));
        assert!(fs.writes && fs.destroys && !fs.open_world, "{fs:?}");
        let additive = effects(
            "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: { write: \
             blocked, delete: blocked }\ntoolsets:\n  filesystem: {}\n",
        );
        assert!(additive.writes && !additive.destroys, "{additive:?}");
    }

    #[test]
    fn the_web_and_networked_programs_reach_the_world() {
        let web = effects("toolsets:\n  web: {}\n");
        assert!(web.open_world && !web.writes, "{web:?}");
        let code = effects("toolsets:\n  code: { network: true }\n");
        assert!(code.open_world && code.writes, "{code:?}");
    }

    #[test]
    fn the_tool_takes_an_input_and_says_what_it_may_do() {
        let schema = Value::Object(input_schema());
        assert_eq!(schema["required"], json!(["input"]));
        assert_eq!(schema["additionalProperties"], false);
        let read_only = effects("").annotations("w");
        assert_eq!(read_only.read_only_hint, Some(true));
        assert_eq!(read_only.destructive_hint, None);
        let writer = effects(&format!("{RW}toolsets:\n  filesystem: {{}}\n")).annotations("w");
        assert_eq!(writer.read_only_hint, Some(false));
        assert_eq!(writer.destructive_hint, Some(true));
        let output = Value::Object(output_schema(None));
        assert!(output["properties"]["toolCalls"].is_object());
        assert!(output["properties"].get("output").is_none());
        // What a client's model is told is lean already (`additionalProperties: false` stays
        // for the clients that validate arguments), and so is the record's own schema.
        assert_eq!(lean_schema(&schema), schema);
        assert_eq!(non_standard_keywords(&schema), Vec::<String>::new());
        assert_eq!(non_standard_keywords(&output), Vec::<String>::new());
    }

    #[test]
    fn a_worker_with_an_output_schema_lists_it_as_the_output_of_its_result() {
        let answer = json!({"type": "object", "properties": {"verdict": {"enum": ["ok", "bad"]}}});
        let output = Value::Object(output_schema(Some(&answer)));
        assert_eq!(output["properties"]["output"], answer);
        assert!(output["properties"]["toolCalls"].is_object());
    }

    #[test]
    fn two_workers_of_one_name_are_refused_and_a_broken_file_names_its_line() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        std::fs::create_dir_all(dir.join("b")).unwrap();
        let one = dir.join("a.worker");
        let two = dir.join("b/a.worker");
        for path in [&one, &two] {
            std::fs::write(path, "---\nname: same\ndescription: d\n---\nbody\n").unwrap();
        }
        let err = Catalog::load(&[one.clone(), two]).unwrap_err();
        assert!(matches!(err, CatalogError::Duplicate { ref name, .. } if name == "same"));
        let broken = dir.join("broken.worker");
        std::fs::write(&broken, "---\nname: broken\nzones: []\n---\nbody\n").unwrap();
        let err = Catalog::load(&[broken]).unwrap_err().to_string();
        assert!(err.contains("line 3"), "{err}");
        assert!(Catalog::load(&[]).is_err());
        let catalog = Catalog::load(&[one]).unwrap();
        assert_eq!(catalog.tools()[0].name, "same");
    }
}
