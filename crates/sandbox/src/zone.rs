//! Zone configuration as written in a worker file's `sandbox.zones` (docs/worker-file.md, Zones):
//! the zone's name, host directory, capability (`mode`) and consent (`approval`) per operation.
//!
//! Pure data, the approval table and how two configured zones overlap; nothing here touches the
//! filesystem.

use std::fmt;
use std::path::{Component, PathBuf};

use golem_policy::{ApprovalDecisionType, ApprovalRequirement};
use serde::{Deserialize, Deserializer, Serialize};

/// What a zone allows (capability, not consent).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ZoneMode {
    /// Read only: every write or delete fails with `PERMISSION_DENIED` (the default).
    #[default]
    Ro,
    /// Read and write.
    Rw,
}

impl ZoneMode {
    /// The name used in worker files.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneMode::Ro => "ro",
            ZoneMode::Rw => "rw",
        }
    }
}

impl fmt::Display for ZoneMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A changing operation on a zone, each with its own approval decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZoneOperation {
    /// Creating a new file (or directory).
    Create,
    /// Modifying or overwriting an existing file.
    Write,
    /// Deleting a file or directory (also the source of a move).
    Delete,
}

impl ZoneOperation {
    /// All operations, for tables and tests.
    pub const ALL: [ZoneOperation; 3] = [
        ZoneOperation::Create,
        ZoneOperation::Write,
        ZoneOperation::Delete,
    ];

    /// The name used in worker files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ZoneOperation::Create => "create",
            ZoneOperation::Write => "write",
            ZoneOperation::Delete => "delete",
        }
    }
}

impl fmt::Display for ZoneOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Consent per operation; every decision defaults to `ask`, and `create` to the zone's `write`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ZoneApproval {
    /// Creating a new file; when absent, the zone's `write` decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create: Option<ApprovalDecisionType>,
    /// Modifying or overwriting an existing file.
    pub write: ApprovalDecisionType,
    /// Deleting a file or directory.
    pub delete: ApprovalDecisionType,
}

impl ZoneApproval {
    /// The same decision for every operation.
    pub fn uniform(decision: ApprovalDecisionType) -> Self {
        Self {
            create: Some(decision),
            write: decision,
            delete: decision,
        }
    }

    /// The configured decision for `op` (`create` falls back to `write`).
    pub fn decision(&self, op: ZoneOperation) -> ApprovalDecisionType {
        match op {
            ZoneOperation::Create => self.create.unwrap_or(self.write),
            ZoneOperation::Write => self.write,
            ZoneOperation::Delete => self.delete,
        }
    }

    /// The requirement for `op` in the zone `zone`; a blocked one names both
    /// (`delete is blocked in zone output`).
    pub fn requirement(&self, zone: &str, op: ZoneOperation) -> ApprovalRequirement {
        match self.decision(op) {
            ApprovalDecisionType::PreApproved => ApprovalRequirement::PreApproved,
            ApprovalDecisionType::Ask => ApprovalRequirement::Ask,
            ApprovalDecisionType::Blocked => {
                ApprovalRequirement::blocked(format!("{op} is blocked in zone {zone}"))
            }
        }
    }

    /// Per operation, the stricter of two approvals (blocked > ask > pre-approved); used when a
    /// sub-worker narrows its parent's sandbox, so it can never loosen consent.
    pub fn strictest(&self, other: &ZoneApproval) -> ZoneApproval {
        let pick = |a: ApprovalDecisionType, b: ApprovalDecisionType| {
            if rank(a) >= rank(b) { a } else { b }
        };
        ZoneApproval {
            create: Some(pick(
                self.decision(ZoneOperation::Create),
                other.decision(ZoneOperation::Create),
            )),
            write: pick(self.write, other.write),
            delete: pick(self.delete, other.delete),
        }
    }
}

/// How strict a decision is, for [`ZoneApproval::strictest`].
fn rank(decision: ApprovalDecisionType) -> u8 {
    match decision {
        ApprovalDecisionType::PreApproved => 0,
        ApprovalDecisionType::Ask => 1,
        ApprovalDecisionType::Blocked => 2,
    }
}

/// One entry of `sandbox.zones` in a worker file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ZoneConfig {
    /// The zone's name, `[a-z][a-z0-9_]*`; its virtual path is `/<name>`.
    #[serde(deserialize_with = "deserialize_zone_name")]
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]*$"))]
    pub name: String,
    /// The host directory, relative to the worker file's directory; `./<name>` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// `ro` (the default) or `rw`.
    #[serde(default)]
    pub mode: ZoneMode,
    /// Consent per operation; `ask` for everything not given.
    #[serde(default)]
    pub approval: ZoneApproval,
    /// Built-in protected paths (see `protected.rs`) that a person may still approve changing
    /// in this zone, as zone-relative patterns (`.git/**` for `git init`); every such change
    /// asks, and is never pre-approved, remembered or approved by a rule or a mode.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "deserialize_unprotect"
    )]
    pub unprotect: Vec<String>,
}

impl ZoneConfig {
    /// A zone at `./<name>` with `ask` for every operation.
    pub fn new(name: impl Into<String>, mode: ZoneMode) -> Self {
        Self {
            name: name.into(),
            path: None,
            mode,
            approval: ZoneApproval::default(),
            unprotect: Vec::new(),
        }
    }

    /// Sets the `unprotect` patterns.
    pub fn with_unprotect(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.unprotect = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the host directory (relative to the base directory, or absolute).
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Sets the approval decisions.
    pub fn with_approval(mut self, approval: ZoneApproval) -> Self {
        self.approval = approval;
        self
    }

    /// How this zone's directory lies relative to `other`'s, judged from the configured paths
    /// alone: `path` (or the name) with `.` and `..` resolved lexically, relative paths against
    /// the same base. `None` when they are apart, or cannot be compared without the file
    /// system (one path absolute, the other relative); [`crate::Sandbox::open`] compares the
    /// real directories again, links included.
    pub fn overlap(&self, other: &ZoneConfig) -> Option<ZoneOverlap> {
        let (mine, theirs) = (self.lexical_dir(), other.lexical_dir());
        if mine.is_absolute() != theirs.is_absolute() {
            None
        } else if mine == theirs {
            Some(ZoneOverlap::Same)
        } else if mine.starts_with(&theirs) {
            Some(ZoneOverlap::Inside)
        } else if theirs.starts_with(&mine) {
            Some(ZoneOverlap::Contains)
        } else {
            None
        }
    }

    /// The configured directory with `.` dropped and `..` applied to what precedes it.
    fn lexical_dir(&self) -> PathBuf {
        let configured = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from(&self.name));
        let mut dir = PathBuf::new();
        for component in configured.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    let last = dir.components().next_back();
                    match last {
                        Some(Component::Normal(_)) => {
                            dir.pop();
                        }
                        Some(Component::RootDir | Component::Prefix(_)) => {}
                        Some(Component::CurDir | Component::ParentDir) | None => {
                            dir.push("..");
                        }
                    }
                }
                Component::Normal(_) | Component::RootDir | Component::Prefix(_) => {
                    dir.push(component);
                }
            }
        }
        dir
    }
}

/// Where one zone's directory lies relative to another's ([`ZoneConfig::overlap`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneOverlap {
    /// Both are the same directory.
    Same,
    /// This zone's directory is inside the other's.
    Inside,
    /// The other zone's directory is inside this one's.
    Contains,
}

/// Whether `name` is a valid zone name: `[a-z][a-z0-9_]*`.
pub fn is_valid_zone_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if first.is_ascii_lowercase() => {}
        Some(_) | None => return false,
    }
    chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The message for an invalid zone name.
pub(crate) fn invalid_name_message(name: &str) -> String {
    format!(
        "invalid zone name `{name}`: use lowercase letters, digits and `_`, starting with a letter"
    )
}

fn deserialize_zone_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let name = String::deserialize(deserializer)?;
    if is_valid_zone_name(&name) {
        Ok(name)
    } else {
        Err(serde::de::Error::custom(invalid_name_message(&name)))
    }
}

fn deserialize_unprotect<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    let patterns = Option::<Vec<crate::protected::PathPattern>>::deserialize(deserializer)?;
    Ok(patterns
        .unwrap_or_default()
        .into_iter()
        .map(|pattern| pattern.0)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn overlaps_are_judged_from_the_configured_paths() {
        let zone = |name: &str, path: Option<&str>| {
            let zone = ZoneConfig::new(name, ZoneMode::Ro);
            match path {
                Some(path) => zone.with_path(path),
                None => zone,
            }
        };
        let data = zone("data", None);
        assert_eq!(
            zone("input", Some("data/in")).overlap(&data),
            Some(ZoneOverlap::Inside)
        );
        assert_eq!(
            data.overlap(&zone("input", Some("./data/x/../in/"))),
            Some(ZoneOverlap::Contains)
        );
        assert_eq!(
            zone("a", Some("./data")).overlap(&data),
            Some(ZoneOverlap::Same)
        );
        assert_eq!(
            zone("a", Some(".")).overlap(&data),
            Some(ZoneOverlap::Contains)
        );
        assert_eq!(
            zone("a", Some("../up/x")).overlap(&zone("b", Some("sub/../../up"))),
            Some(ZoneOverlap::Inside)
        );
        assert_eq!(zone("a", Some("datax")).overlap(&data), None);
        assert_eq!(zone("a", Some("../data")).overlap(&data), None);
        assert_eq!(zone("a", Some("/srv/data")).overlap(&data), None);
        assert_eq!(
            zone("a", Some("/srv/data/x")).overlap(&zone("b", Some("/srv/../srv/data"))),
            Some(ZoneOverlap::Inside)
        );
    }

    #[test]
    fn parses_the_design_example() {
        let zones: Vec<ZoneConfig> = serde_json::from_value(json!([
            {"name": "input", "path": "./input", "mode": "ro"},
            {"name": "scratch", "mode": "rw",
             "approval": {"write": "preApproved", "delete": "preApproved"}},
            {"name": "output", "mode": "rw",
             "approval": {"create": "preApproved", "write": "ask", "delete": "blocked"}},
        ]))
        .unwrap();
        assert_eq!(zones[0].path, Some(PathBuf::from("./input")));
        assert_eq!(zones[0].approval, ZoneApproval::default());
        assert_eq!(
            zones[1].approval.decision(ZoneOperation::Create),
            ApprovalDecisionType::PreApproved
        );
        assert_eq!(zones[2].approval.delete, ApprovalDecisionType::Blocked);
    }

    #[test]
    fn rejects_unknown_keys_and_bad_names() {
        let err = serde_json::from_value::<ZoneConfig>(json!({"name": "a", "modes": "rw"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("modes"), "{err}");
        let err = serde_json::from_value::<ZoneConfig>(
            json!({"name": "a", "approval": {"remove": "ask"}}),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("remove"), "{err}");
        for bad in ["", "Input", "1st", "a-b", "a b", "_x", "ä", "a/b", ".."] {
            let err = serde_json::from_value::<ZoneConfig>(json!({"name": bad}))
                .unwrap_err()
                .to_string();
            assert!(err.contains("invalid zone name"), "{bad}: {err}");
        }
        assert!(serde_json::from_value::<ZoneConfig>(json!({"name": "a", "mode": "wr"})).is_err());
    }

    #[test]
    fn unprotect_patterns_are_checked() {
        let zone: ZoneConfig =
            serde_json::from_value(json!({"name": "w", "unprotect": [".git/**"]})).unwrap();
        assert_eq!(zone.unprotect, [".git/**"]);
        let err =
            serde_json::from_value::<ZoneConfig>(json!({"name": "w", "unprotect": ["a/../b"]}))
                .unwrap_err()
                .to_string();
        assert!(err.contains(".."), "{err}");
        assert!(
            serde_json::from_value::<ZoneConfig>(json!({"name": "w", "unprotect": 3})).is_err()
        );
    }

    #[test]
    fn defaults_are_read_only_and_ask() {
        let zone: ZoneConfig = serde_json::from_value(json!({"name": "z9_x"})).unwrap();
        assert_eq!(zone, ZoneConfig::new("z9_x", ZoneMode::Ro));
        for op in ZoneOperation::ALL {
            assert_eq!(zone.approval.decision(op), ApprovalDecisionType::Ask);
        }
    }

    #[test]
    fn strictest_never_loosens() {
        use ApprovalDecisionType::*;
        let parent = ZoneApproval {
            create: None,
            write: PreApproved,
            delete: Blocked,
        };
        let child = ZoneApproval {
            create: Some(Ask),
            write: PreApproved,
            delete: PreApproved,
        };
        let merged = parent.strictest(&child);
        assert_eq!(merged.decision(ZoneOperation::Create), Ask);
        assert_eq!(merged.write, PreApproved);
        assert_eq!(merged.delete, Blocked);
    }
}
