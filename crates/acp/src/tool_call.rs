//! A tool call as an editor shows it: its kind (what icon and treatment it gets), its title,
//! the host files it touches (locations the editor can open), and its content — a diff for a
//! change to a file, text otherwise.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, TextContent, ToolCallContent, ToolCallLocation, ToolKind,
};
use golem_protocol::ToolResultValue;
use golem_protocol::result::DiffData;
use serde_json::Value;

/// How an editor shows a tool of `kind` (the tool says its kind; the events carry it).
pub fn acp_kind(kind: golem_protocol::ToolKind) -> ToolKind {
    use golem_protocol::ToolKind as Ours;
    match kind {
        Ours::Read => ToolKind::Read,
        Ours::Edit => ToolKind::Edit,
        Ours::Delete => ToolKind::Delete,
        Ours::Move => ToolKind::Move,
        Ours::Search => ToolKind::Search,
        Ours::Execute => ToolKind::Execute,
        Ours::Fetch => ToolKind::Fetch,
        Ours::Delegate | Ours::Other => ToolKind::Other,
    }
}

/// Where a worker's virtual paths (`/<zone>/…`) are on this machine.
#[derive(Debug, Clone, Default)]
pub struct ZoneMap {
    zones: Vec<(String, PathBuf)>,
}

impl ZoneMap {
    /// Zones by name with their host directories.
    pub fn new(zones: impl IntoIterator<Item = (String, PathBuf)>) -> Self {
        Self {
            zones: zones.into_iter().collect(),
        }
    }

    /// The host path of the virtual path `path`, when it lies in a zone.
    pub fn host_path(&self, path: &str) -> Option<PathBuf> {
        let rest = path.strip_prefix('/')?;
        let (zone, below) = rest.split_once('/').unwrap_or((rest, ""));
        let (_, dir) = self.zones.iter().find(|(name, _)| name == zone)?;
        let mut host = dir.clone();
        for part in below.split('/').filter(|p| !p.is_empty() && *p != ".") {
            if part == ".." {
                return None;
            }
            host.push(part);
        }
        Some(host)
    }

    /// The host path of `path`, or the virtual path itself when it lies in no zone.
    fn shown(&self, path: &str) -> PathBuf {
        self.host_path(path)
            .unwrap_or_else(|| Path::new(path).to_owned())
    }
}

/// The virtual paths a call's arguments name (`path`, `source`, `destination`, …).
fn argument_paths(args: &Value) -> Vec<&str> {
    ["path", "source", "destination", "from", "to", "dir"]
        .iter()
        .filter_map(|key| args.get(*key).and_then(Value::as_str))
        .collect()
}

/// The host files a call touches, from its arguments.
pub fn locations(args: &Value, zones: &ZoneMap) -> Vec<ToolCallLocation> {
    argument_paths(args)
        .into_iter()
        .filter_map(|path| zones.host_path(path))
        .map(ToolCallLocation::new)
        .collect()
}

/// The title of a call: the tool and what it works on.
pub fn title(name: &str, args: &Value) -> String {
    let paths = argument_paths(args);
    if !paths.is_empty() {
        return format!("{name} {}", paths.join(" → "));
    }
    for key in ["command", "url", "query"] {
        if let Some(text) = args.get(key).and_then(Value::as_str) {
            let line = text.lines().next().unwrap_or_default();
            let short: String = line.chars().take(80).collect();
            return format!("{name}: {short}");
        }
    }
    name.to_owned()
}

/// A value as the content of a tool call: a `diff` as ACP diffs (host paths, whole texts),
/// anything else as its text for the model.
pub fn content(value: &ToolResultValue, zones: &ZoneMap) -> Vec<ToolCallContent> {
    if value.kind == "diff" {
        let diffs = diffs(&value.data, zones);
        if !diffs.is_empty() {
            return diffs;
        }
    }
    if let Some(changes) = value
        .data
        .get("changes")
        .and_then(|c| serde_json::from_value::<ToolResultValue>(c.clone()).ok())
    {
        let mut out = vec![text(value.to_model_text())];
        out.extend(diffs(&changes.data, zones));
        return out;
    }
    let model_text = value.to_model_text();
    if model_text.is_empty() {
        return Vec::new();
    }
    vec![text(model_text)]
}

/// A text content block.
pub fn text(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::Content(agent_client_protocol::v1::schema::Content::new(
        ContentBlock::Text(TextContent::new(text)),
    ))
}

/// The diffs of a `diff` value's data: one file, or `files` of several.
fn diffs(data: &Value, zones: &ZoneMap) -> Vec<ToolCallContent> {
    let one = |data: &Value| {
        serde_json::from_value::<DiffData>(data.clone())
            .ok()
            .map(|diff| {
                ToolCallContent::Diff(
                    Diff::new(zones.shown(&diff.path), diff.modified).old_text(diff.original),
                )
            })
    };
    match data.get("files").and_then(Value::as_array) {
        Some(files) => files.iter().filter_map(one).collect(),
        None => one(data).into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn zones() -> ZoneMap {
        ZoneMap::new([("out".to_owned(), PathBuf::from("/project/out"))])
    }

    #[test]
    fn virtual_paths_become_host_paths_and_escapes_are_not_followed() {
        let zones = zones();
        assert_eq!(
            zones.host_path("/out/a/b.txt"),
            Some(PathBuf::from("/project/out/a/b.txt"))
        );
        assert_eq!(zones.host_path("/out"), Some(PathBuf::from("/project/out")));
        assert_eq!(zones.host_path("/out/../etc/passwd"), None);
        assert_eq!(zones.host_path("/other/x"), None);
        assert_eq!(zones.host_path("relative"), None);
    }

    #[test]
    fn a_diff_value_is_an_acp_diff_at_the_host_path() {
        let value = ToolResultValue::diff(DiffData {
            path: "/out/a.txt".into(),
            original: Some("old\n".into()),
            modified: "new\n".into(),
            is_new: false,
            bytes_written: None,
            hunks: None,
        });
        let content = content(&value, &zones());
        let json = serde_json::to_value(&content).unwrap();
        assert_eq!(
            json,
            json!([{"type": "diff", "path": "/project/out/a.txt", "oldText": "old\n",
                    "newText": "new\n"}])
        );
    }

    #[test]
    fn kinds_titles_and_locations_come_from_the_name_and_arguments() {
        assert_eq!(acp_kind(golem_protocol::ToolKind::Edit), ToolKind::Edit);
        assert_eq!(acp_kind(golem_protocol::ToolKind::Other), ToolKind::Other);
        let args = json!({"source": "/out/a", "destination": "/out/b"});
        assert_eq!(title("move_file", &args), "move_file /out/a → /out/b");
        assert_eq!(locations(&args, &zones()).len(), 2);
        assert_eq!(
            title("shell", &json!({"command": "ls -la\nrm x"})),
            "shell: ls -la"
        );
    }
}
