//! Example paths in the tools' input schemas, naming the worker's real zones (`/notes/…`), so a
//! model — and the offline `test` model, which uses schema examples — sees valid paths at once.

use std::sync::Arc;

use golem_core::decorated::DecoratedTool;
use golem_core::tool::Tool;
use golem_sandbox::{EntryKind, Sandbox, ZoneMode};
use serde_json::{Value, json};

/// Example virtual paths for one sandbox.
struct PathExamples {
    /// A file to read: the first file at the top of the first zone that has one.
    existing_file: Option<String>,
    /// A directory to list: the first zone.
    directory: Option<String>,
    /// A path to write: a new file in the first writable zone.
    writable: Option<String>,
}

impl PathExamples {
    fn of(sandbox: &Sandbox) -> Self {
        let existing_file = sandbox.zones().iter().find_map(|zone| {
            let root = sandbox.resolve(&format!("/{}", zone.name())).ok()?;
            let mut entries = sandbox.read_dir(&root).ok()?;
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
                .into_iter()
                .find(|(name, info)| info.kind == EntryKind::File && !name.starts_with('.'))
                .map(|(name, _)| format!("/{}/{name}", zone.name()))
        });
        let directory = sandbox
            .zones()
            .first()
            .map(|zone| format!("/{}", zone.name()));
        let writable = sandbox
            .zones()
            .iter()
            .find(|zone| zone.mode() == ZoneMode::Rw)
            .map(|zone| format!("/{}/notes.md", zone.name()));
        Self {
            existing_file,
            directory,
            writable,
        }
    }

    /// The example for a path-like property of `tool`.
    fn for_property(&self, tool: &str, property: &str) -> Option<&String> {
        match (tool, property) {
            ("list_files", "path") => self.directory.as_ref(),
            ("read_file" | "file_exists" | "file_info", "path") | ("move_file", "from") => {
                self.existing_file.as_ref().or(self.directory.as_ref())
            }
            ("write_file" | "edit_file" | "delete_file", "path") | ("move_file", "to") => {
                self.writable.as_ref()
            }
            _ => None,
        }
    }
}

/// `tools` with `examples` added to their path properties; tools with nothing to add are
/// returned as they are.
pub(super) fn with_path_examples(
    tools: Vec<Arc<dyn Tool>>,
    sandbox: &Sandbox,
) -> Vec<Arc<dyn Tool>> {
    let examples = PathExamples::of(sandbox);
    tools
        .into_iter()
        .map(|tool| {
            let mut schema = tool.input_schema().clone();
            let mut changed = false;
            if let Some(Value::Object(properties)) = schema.get_mut("properties") {
                for (name, property) in properties.iter_mut() {
                    if let (Some(example), Value::Object(property)) =
                        (examples.for_property(tool.name(), name), property)
                    {
                        property.insert("examples".into(), json!([example]));
                        changed = true;
                    }
                }
            }
            if changed {
                Arc::new(DecoratedTool::new(tool).with_input_schema(schema)) as Arc<dyn Tool>
            } else {
                tool
            }
        })
        .collect()
}
