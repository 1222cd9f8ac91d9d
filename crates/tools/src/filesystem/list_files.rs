//! `list_files {path, recursive?, includeHidden?}` → `file_list`; pre-approved.
//!
//! Entries carry name (relative to the listed directory in recursive listings), type, size
//! (not for directories) and modification time (ISO 8601, UTC). `/` lists the zones as
//! directories. Listings stop at `FilesystemLimits::max_list_entries` (10,000 by default)
//! with `truncated: true`. Hidden entries (names starting with `.`) are left out unless
//! `includeHidden` is set.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::tool::{ManualExecution, PreApprovedTool, ToolContext, ToolInfo};
use golem_protocol::result::FileEntryType;
use golem_protocol::{ToolError, ToolKind, ToolResultValue};
use golem_sandbox::{EntryInfo, EntryKind};
use golem_toolset::time::iso8601;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Fs, blocking};

/// List the entries of a directory (or, with path "/", the zones).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListFilesArgs {
    /// The directory, or "/" for the zones.
    path: String,
    /// Also list everything below, depth first.
    #[serde(default)]
    recursive: Option<bool>,
    /// Include names starting with ".".
    #[serde(default)]
    include_hidden: Option<bool>,
}

/// What the model and the user see of `list_files` (the user may run it too: `/list_files …`
/// in a chat).
static INFO: LazyLock<ToolInfo> = LazyLock::new(|| {
    ToolInfo::new::<ListFilesArgs>(
        "list_files",
        "List a directory (path /<zone>/<path>; \"/\" lists the zones): name, type, size and \
         modification time of each entry. recursive: true lists everything below; hidden \
         entries need includeHidden: true. Long listings are truncated.",
    )
    .with_kind(ToolKind::Read)
    .with_execution(ManualExecution::both("List files", Some("Files")))
    .with_approval_policy("pre-approved")
});

/// The `list_files` tool.
pub struct ListFiles {
    fs: Arc<Fs>,
}

impl ListFiles {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

/// The protocol's entry type for a sandbox entry kind.
pub(super) fn entry_type(kind: EntryKind) -> FileEntryType {
    match kind {
        EntryKind::File => FileEntryType::File,
        EntryKind::Directory => FileEntryType::Directory,
        EntryKind::Symlink => FileEntryType::Symlink,
        EntryKind::Fifo => FileEntryType::Fifo,
        EntryKind::Socket => FileEntryType::Socket,
        EntryKind::Device => FileEntryType::Device,
    }
}

/// The protocol's name of an entry type (its serialized form).
pub(super) fn type_name(entry_type: FileEntryType) -> &'static str {
    match entry_type {
        FileEntryType::File => "file",
        FileEntryType::Directory => "directory",
        FileEntryType::Symlink => "symlink",
        FileEntryType::Fifo => "fifo",
        FileEntryType::Socket => "socket",
        FileEntryType::Device => "device",
    }
}

/// One entry in the shape of `golem_protocol::result::FileEntry`, built as JSON directly (a
/// listing can have many thousands of entries; this skips a typed copy and its serialization).
fn entry_value(name: String, info: &EntryInfo) -> Value {
    let entry_type = type_name(entry_type(info.kind));
    let mut map = Map::with_capacity(4);
    map.insert("name".to_owned(), Value::String(name));
    map.insert("type".to_owned(), Value::String(entry_type.to_owned()));
    if info.kind != EntryKind::Directory {
        map.insert("size".to_owned(), Value::from(info.size));
    }
    if let Some(modified) = info.modified {
        map.insert("modified".to_owned(), Value::String(iso8601(modified)));
    }
    Value::Object(map)
}

fn list(fs: &Fs, args: ListFilesArgs) -> Result<ToolResultValue, ToolError> {
    let p = fs.sandbox.resolve(&args.path)?;
    let include_hidden = args.include_hidden.unwrap_or(false);
    let max = fs.limits.max_list_entries;
    let (raw, truncated) = if args.recursive.unwrap_or(false) {
        fs.sandbox.walk(&p, include_hidden, max)?
    } else {
        let mut raw = fs.sandbox.read_dir(&p)?;
        if !include_hidden {
            raw.retain(|(name, _)| !name.starts_with('.'));
        }
        let truncated = raw.len() > max;
        raw.truncate(max);
        (raw, truncated)
    };
    let mut counts = Counts::default();
    for (_, info) in &raw {
        counts.add(info.kind);
    }
    let entries: Vec<Value> = raw
        .into_iter()
        .map(|(name, info)| entry_value(name, &info))
        .collect();
    let mut data = Map::with_capacity(3);
    data.insert("path".to_owned(), Value::String(p.virtual_path()));
    data.insert("entries".to_owned(), Value::Array(entries));
    if truncated {
        data.insert("truncated".to_owned(), Value::Bool(true));
    }
    Ok(ToolResultValue::new("file_list", Value::Object(data))
        .with_summary(summary(&counts, truncated)))
}

/// How many entries of each kind a listing has.
#[derive(Debug, Default)]
struct Counts {
    files: usize,
    dirs: usize,
    links: usize,
    fifos: usize,
    sockets: usize,
    devices: usize,
}

impl Counts {
    fn add(&mut self, kind: EntryKind) {
        let count = match kind {
            EntryKind::File => &mut self.files,
            EntryKind::Directory => &mut self.dirs,
            EntryKind::Symlink => &mut self.links,
            EntryKind::Fifo => &mut self.fifos,
            EntryKind::Socket => &mut self.sockets,
            EntryKind::Device => &mut self.devices,
        };
        *count += 1;
    }

    fn total(&self) -> usize {
        self.files + self.dirs + self.links + self.fifos + self.sockets + self.devices
    }
}

/// `3 files, 1 directory` (links and special files only when there are some; and how the
/// listing was cut).
fn summary(counts: &Counts, truncated: bool) -> String {
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = vec![
        count(counts.files, "file", "files"),
        count(counts.dirs, "directory", "directories"),
    ];
    for (n, one, many) in [
        (counts.links, "symlink", "symlinks"),
        (counts.fifos, "fifo", "fifos"),
        (counts.sockets, "socket", "sockets"),
        (counts.devices, "device", "devices"),
    ] {
        if n > 0 {
            parts.push(count(n, one, many));
        }
    }
    let mut summary = parts.join(", ");
    if truncated {
        let shown = counts.total();
        summary.push_str(&format!(
            " (truncated after {shown} entries; list a subdirectory to see more)"
        ));
    }
    summary
}

#[async_trait]
impl PreApprovedTool for ListFiles {
    type Args = ListFilesArgs;

    fn info(&self) -> &ToolInfo {
        &INFO
    }

    fn describe(&self, args: &ListFilesArgs) -> String {
        if args.recursive.unwrap_or(false) {
            format!("List {} recursively", args.path)
        } else {
            format!("List {}", args.path)
        }
    }

    async fn execute(
        &self,
        args: ListFilesArgs,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let fs = self.fs.clone();
        blocking(move || list(&fs, args)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::{Duration, UNIX_EPOCH};

    use golem_protocol::result::{FileEntry, FileListData};

    #[test]
    fn entries_have_the_protocol_shape() {
        let info = |kind, size| EntryInfo {
            kind,
            size,
            modified: Some(UNIX_EPOCH + Duration::from_secs(86_400)),
        };
        let file = entry_value("a.txt".to_owned(), &info(EntryKind::File, 3));
        let typed: FileEntry = serde_json::from_value(file).unwrap();
        assert_eq!(
            typed,
            FileEntry {
                name: "a.txt".to_owned(),
                entry_type: FileEntryType::File,
                size: Some(3),
                modified: Some("1970-01-02T00:00:00.000Z".to_owned()),
            }
        );
        let dir = entry_value("d".to_owned(), &info(EntryKind::Directory, 4096));
        assert_eq!(dir.get("size"), None);
        let special = [
            (EntryKind::Fifo, "fifo"),
            (EntryKind::Socket, "socket"),
            (EntryKind::Device, "device"),
        ]
        .map(|(kind, name)| {
            let value = entry_value(name.to_owned(), &info(kind, 0));
            assert_eq!(value["type"], name);
            value
        });
        let list =
            serde_json::json!({"path": "/z", "entries": [dir, special[0], special[1], special[2]]});
        assert!(serde_json::from_value::<FileListData>(list).is_ok());
    }

    #[test]
    fn summaries_count_by_type() {
        let counts = |files, dirs, links| Counts {
            files,
            dirs,
            links,
            ..Counts::default()
        };
        assert_eq!(summary(&counts(1, 0, 0), false), "1 file, 0 directories");
        assert_eq!(
            summary(&counts(3, 1, 2), false),
            "3 files, 1 directory, 2 symlinks"
        );
        let special = Counts {
            fifos: 1,
            sockets: 2,
            devices: 1,
            ..Counts::default()
        };
        assert_eq!(
            summary(&special, true),
            "0 files, 0 directories, 1 fifo, 2 sockets, 1 device (truncated after 4 entries; \
             list a subdirectory to see more)"
        );
        assert_eq!(
            summary(&counts(10, 0, 0), true),
            "10 files, 0 directories (truncated after 10 entries; list a subdirectory to see more)"
        );
    }
}
