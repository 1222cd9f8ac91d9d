//! What kind of thing a tool does, as a front end shows it: an editor picks its icon and
//! treatment by it (ACP's `kind`), `golem-forge check` and the tool table of `docs/tools.md`
//! list it. It is a fact of the tool (each tool says it in its own metadata) and travels with
//! the events of each call, so no front end keeps its own table of tool names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The kind of a tool. A tool that does not say is `other`, as is an event written before
/// kinds were sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ToolKind {
    /// Reads files or state and changes nothing (`read_file`, `git_status`).
    Read,
    /// Changes the content of files (`write_file`, `edit_file`, `git_stage`).
    Edit,
    /// Removes files (`delete_file`).
    Delete,
    /// Moves or renames files (`move_file`).
    Move,
    /// Searches (`web_search`).
    Search,
    /// Runs a program or a command whose effects the program decides (`run_code`, `shell`,
    /// `git_commit`).
    Execute,
    /// Fetches from elsewhere (`web_fetch`, `git_pull`).
    Fetch,
    /// Hands a task to another worker (the tools of `toolsets.workers`).
    Delegate,
    /// Anything else: custom modules, MCP servers' tools that do not say they only read.
    #[default]
    Other,
}

impl ToolKind {
    /// Every kind, in the order listings show them.
    pub const ALL: [ToolKind; 9] = [
        ToolKind::Read,
        ToolKind::Edit,
        ToolKind::Delete,
        ToolKind::Move,
        ToolKind::Search,
        ToolKind::Execute,
        ToolKind::Fetch,
        ToolKind::Delegate,
        ToolKind::Other,
    ];

    /// Its name on the wire (`read`, `edit`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Fetch => "fetch",
            ToolKind::Delegate => "delegate",
            ToolKind::Other => "other",
        }
    }

    /// Whether calls of this kind change nothing: reading and searching (fetching from the
    /// web reads too, but `git_pull` also writes, so `fetch` is not counted).
    pub fn only_reads(self) -> bool {
        match self {
            ToolKind::Read | ToolKind::Search => true,
            ToolKind::Edit
            | ToolKind::Delete
            | ToolKind::Move
            | ToolKind::Execute
            | ToolKind::Fetch
            | ToolKind::Delegate
            | ToolKind::Other => false,
        }
    }

    /// For `skip_serializing_if`: `other` is not written.
    pub fn is_other(&self) -> bool {
        *self == ToolKind::Other
    }
}

impl std::fmt::Display for ToolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_name_is_the_display_name_and_other_is_the_default() {
        for kind in ToolKind::ALL {
            let json = serde_json::to_value(kind).expect("serializes");
            assert_eq!(json, serde_json::Value::String(kind.as_str().to_owned()));
            let back: ToolKind = serde_json::from_value(json).expect("deserializes");
            assert_eq!(back, kind);
            assert_eq!(kind.to_string(), kind.as_str());
        }
        assert_eq!(ToolKind::default(), ToolKind::Other);
        assert!(serde_json::from_str::<ToolKind>("\"think\"").is_err());
    }
}
