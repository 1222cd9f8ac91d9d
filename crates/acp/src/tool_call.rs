//! A tool call as an editor shows it: its kind (what icon and treatment it gets), its title,
//! the host files it touches (locations the editor can open, clean absolute paths with the line
//! where the tool knows it), and its content — a diff for a change to a file, readable markdown
//! otherwise (`render.rs`).

use std::path::{Component, Path, PathBuf};

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
    /// Zones by name with their host directories (made absolute and clean: a zone written
    /// `./notes` beside the worker is `<dir>/notes`, not `<dir>/./notes`).
    pub fn new(zones: impl IntoIterator<Item = (String, PathBuf)>) -> Self {
        Self {
            zones: zones
                .into_iter()
                .map(|(name, dir)| (name, clean_path(&dir)))
                .collect(),
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

/// `path` absolute (against the working directory when relative) with its `.` components
/// dropped and each `..` taking off the component before it, lexically: the filesystem is not
/// asked, so a path that does not exist yet is cleaned too.
pub fn clean_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut clean = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                clean.push(part.as_os_str());
            }
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
        }
    }
    clean
}

/// The virtual paths a call's arguments name (`path`, `source`, `destination`, …).
fn argument_paths(args: &Value) -> Vec<&str> {
    ["path", "source", "destination", "from", "to", "dir"]
        .iter()
        .filter_map(|key| args.get(*key).and_then(Value::as_str))
        .collect()
}

/// The host files a call touches, from its arguments; a text read from an `offset` starts at
/// line `offset + 1`.
pub fn locations(name: &str, args: &Value, zones: &ZoneMap) -> Vec<ToolCallLocation> {
    let first_line = match (name, args.get("offset").and_then(Value::as_u64)) {
        ("read_file", Some(offset))
            if args.get("encoding").and_then(Value::as_str) != Some("base64") =>
        {
            u32::try_from(offset.saturating_add(1)).ok()
        }
        _ => None,
    };
    argument_paths(args)
        .into_iter()
        .filter_map(|path| zones.host_path(path))
        .map(|path| ToolCallLocation::new(path).line(first_line))
        .collect()
}

/// The files a result (or preview) changes, each at the first line its change touches; empty
/// when the value is no change or says no lines.
pub fn changed_locations(value: &ToolResultValue, zones: &ZoneMap) -> Vec<ToolCallLocation> {
    let changes = if value.kind == "diff" {
        Some(value.clone())
    } else {
        value
            .data
            .get("changes")
            .and_then(|c| serde_json::from_value::<ToolResultValue>(c.clone()).ok())
    };
    let Some(changes) = changes else {
        return Vec::new();
    };
    let at = |data: &Value| {
        let diff = serde_json::from_value::<DiffData>(data.clone()).ok()?;
        let host = zones.host_path(&diff.path)?;
        let line = diff
            .hunks
            .as_ref()
            .and_then(|hunks| hunks.first())
            .map(|hunk| hunk.new_start.max(1));
        Some(ToolCallLocation::new(host).line(line))
    };
    match changes.data.get("files").and_then(Value::as_array) {
        Some(files) => files.iter().filter_map(at).collect(),
        None => at(&changes.data).into_iter().collect(),
    }
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
/// anything else as readable markdown ([`crate::render::markdown`]), never the model's text with
/// JSON appended (the value itself is the call's `rawOutput`).
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
        let mut out = vec![text(crate::render::markdown(value))];
        out.extend(diffs(&changes.data, zones));
        return out;
    }
    let shown = crate::render::markdown(value);
    if shown.is_empty() {
        return Vec::new();
    }
    vec![text(shown)]
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
    fn zone_dirs_are_clean_absolute_paths_without_touching_the_filesystem() {
        let zones = ZoneMap::new([
            ("notes".to_owned(), PathBuf::from("/home/u/notes/./notes")),
            ("up".to_owned(), PathBuf::from("/home/u/w/../common/./x")),
            ("rel".to_owned(), PathBuf::from("./nowhere-yet")),
        ]);
        assert_eq!(
            zones.host_path("/notes/./summary.md"),
            Some(PathBuf::from("/home/u/notes/notes/summary.md"))
        );
        assert_eq!(
            zones.host_path("/up/a"),
            Some(PathBuf::from("/home/u/common/x/a"))
        );
        let relative = zones.host_path("/rel/a").unwrap();
        assert!(relative.is_absolute(), "{relative:?}");
        assert!(relative.ends_with("nowhere-yet/a"), "{relative:?}");
        assert!(!relative.to_string_lossy().contains("/./"), "{relative:?}");
        assert_eq!(clean_path(Path::new("/a/../../b")), PathBuf::from("/b"));
    }

    #[test]
    fn a_read_from_an_offset_and_a_change_say_their_line() {
        let zones = zones();
        let read = locations(
            "read_file",
            &json!({"path": "/out/a.txt", "offset": 40}),
            &zones,
        );
        let read = serde_json::to_value(&read).unwrap();
        assert_eq!(read, json!([{"path": "/project/out/a.txt", "line": 41}]));
        // Bytes are no line; a read from the top and other tools name no line.
        let bytes = json!({"path": "/out/a.bin", "offset": 4, "encoding": "base64"});
        assert_eq!(locations("read_file", &bytes, &zones)[0].line, None);
        assert_eq!(
            locations("read_file", &json!({"path": "/out/a"}), &zones)[0].line,
            None
        );
        let edit = ToolResultValue::diff(DiffData {
            path: "/out/./a.txt".into(),
            original: Some("a\nb\n".into()),
            modified: "a\nc\n".into(),
            is_new: false,
            bytes_written: Some(4),
            hunks: Some(vec![golem_protocol::result::DiffHunk {
                old_start: 2,
                old_lines: 1,
                new_start: 2,
                new_lines: 1,
                lines: vec!["-b".into(), "+c".into()],
            }]),
        });
        let changed = serde_json::to_value(changed_locations(&edit, &zones)).unwrap();
        assert_eq!(changed, json!([{"path": "/project/out/a.txt", "line": 2}]));
        assert!(changed_locations(&ToolResultValue::text("x"), &zones).is_empty());
    }

    #[test]
    fn kinds_titles_and_locations_come_from_the_name_and_arguments() {
        assert_eq!(acp_kind(golem_protocol::ToolKind::Edit), ToolKind::Edit);
        assert_eq!(acp_kind(golem_protocol::ToolKind::Other), ToolKind::Other);
        let args = json!({"source": "/out/a", "destination": "/out/b"});
        assert_eq!(title("move_file", &args), "move_file /out/a → /out/b");
        assert_eq!(locations("move_file", &args, &zones()).len(), 2);
        assert_eq!(
            title("shell", &json!({"command": "ls -la\nrm x"})),
            "shell: ls -la"
        );
    }
}
