//! The project's approval rules file, `.golem-forge/approvals.yaml` under the program root:
//! read at session open (a bad file is an error naming the file, line and key, as program
//! config errors do), and rewritten through a temp file and a rename when a rule is added or
//! removed. The file is meant to be read and edited by hand:
//!
//! ```yaml
//! rules:
//!   - tool: write_file
//!     match:
//!       path: {glob: /notes/**}
//!   - tool: shell
//!     match:
//!       command: git status
//! ```
//!
//! What a rule means is `golem_core::approval::ApprovalRule`'s business.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use golem_core::approval::{ApprovalRule, ProjectRules, RuleStore, RuleStoreError};
use serde::Deserialize;

use crate::worker::yaml::{self, or_default};

/// Where the rules file is, relative to the program root.
pub const APPROVALS_FILE: &str = ".golem-forge/approvals.yaml";

/// The rules file of the program at `root`.
pub fn approvals_path(root: &Path) -> PathBuf {
    root.join(APPROVALS_FILE)
}

/// A rules file that cannot be read, parsed or written.
#[derive(Debug, thiserror::Error)]
pub enum RulesFileError {
    /// The file cannot be read.
    #[error("cannot read approvals file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is invalid; `message` names the key when there is one.
    #[error("approvals file {}, line {line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line in the file.
        line: u64,
        /// The dotted key path, when the problem has one.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// The file cannot be written.
    #[error("cannot write approvals file {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default, deserialize_with = "or_default")]
    rules: Vec<ApprovalRule>,
}

/// Reads the rules in `path`; a missing or empty file has none.
pub fn load(path: &Path) -> Result<Vec<ApprovalRule>, RulesFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(RulesFileError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    parse(&text, path)
}

/// Parses the text of the rules file at `path`.
pub fn parse(text: &str, path: &Path) -> Result<Vec<ApprovalRule>, RulesFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n");
    let blank = text.lines().all(|line| {
        let line = line.trim_start();
        line.is_empty() || line.starts_with('#')
    });
    if blank {
        return Ok(Vec::new());
    }
    let file: RulesFile =
        yaml::from_yaml(&text, 1, "approvals file").map_err(|problem| RulesFileError::Invalid {
            path: path.to_owned(),
            line: problem.line,
            key: problem.key,
            message: problem.message,
        })?;
    Ok(file.rules)
}

/// The text of a rules file holding `rules`: YAML whose values are written as JSON (a subset
/// of YAML), so that any value reads back as it was.
pub fn render(rules: &[ApprovalRule]) -> String {
    let mut out = String::from(
        "# Approvals remembered for this project by golem-forge: calls that match a rule are\n\
         # approved without asking (never blocked calls). Edit by hand, or list and remove with\n\
         # `golem-forge approvals`. A `match` value is exact, or {glob: /zone/**} for a path.\n",
    );
    if rules.is_empty() {
        out.push_str("rules: []\n");
        return out;
    }
    out.push_str("rules:\n");
    for rule in rules {
        out.push_str(&format!("  - tool: {}\n", scalar(&rule.tool)));
        if rule.matches.is_empty() {
            out.push_str("    match: {}\n");
            continue;
        }
        out.push_str("    match:\n");
        for (key, expected) in &rule.matches {
            out.push_str(&format!(
                "      {}: {}\n",
                scalar(key),
                json_text(&expected.to_json())
            ));
        }
    }
    out
}

/// A string as YAML: plain when it is a simple name, else double-quoted.
fn scalar(text: &str) -> String {
    let simple = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && !matches!(
            text,
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if simple {
        text.to_owned()
    } else {
        json_text(&serde_json::Value::String(text.to_owned()))
    }
}

/// A JSON value as YAML flow text, with the characters YAML does not allow raw (or that some
/// readers take for line breaks) escaped.
fn json_text(value: &serde_json::Value) -> String {
    let json = value.to_string();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        let code = u32::from(c);
        let raw = matches!(code, 0x20..=0x7e | 0xa0..=0xd7ff | 0xe000..=0xfefe | 0xff00..=0xfffd)
            || code >= 0x10000
            || c == '\t';
        if raw && c != '\u{2028}' && c != '\u{2029}' {
            out.push(c);
        } else if code <= 0xffff {
            out.push_str(&format!("\\u{code:04x}"));
        } else {
            out.push_str(&format!("\\U{code:08x}"));
        }
    }
    out
}

/// Writes `rules` to `path` through a temp file beside it and a rename, creating the folder.
pub fn save(path: &Path, rules: &[ApprovalRule]) -> Result<(), RulesFileError> {
    let write_error = |source| RulesFileError::Write {
        path: path.to_owned(),
        source,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        Some(_) | None => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(write_error)?;
    golem_session::replace_file(path, render(rules).as_bytes()).map_err(write_error)?;
    Ok(())
}

/// The rules file as a [`RuleStore`]: every change re-reads the file, applies, and saves.
#[derive(Debug, Clone)]
pub struct FileRuleStore {
    path: PathBuf,
}

impl FileRuleStore {
    /// The store of the rules file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }
}

impl RuleStore for FileRuleStore {
    fn update(
        &self,
        change: &mut dyn FnMut(&mut Vec<ApprovalRule>),
    ) -> Result<Vec<ApprovalRule>, RuleStoreError> {
        let mut rules = load(&self.path).map_err(RuleStoreError::new)?;
        change(&mut rules);
        save(&self.path, &rules).map_err(RuleStoreError::new)?;
        Ok(rules)
    }
}

/// The project rules of the program at `root`, loaded now and saved back to its file.
pub fn project_rules(root: &Path) -> Result<ProjectRules, RulesFileError> {
    let path = approvals_path(root);
    let rules = load(&path)?;
    Ok(ProjectRules::stored(
        rules,
        Arc::new(FileRuleStore::new(path)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_core::approval::ArgMatch;
    use serde_json::json;

    #[test]
    fn reads_what_a_person_writes() {
        let rules = parse(
            "# mine\nrules:\n  - tool: write_file\n    match:\n      path: {glob: /notes/**}\n  \
             - tool: shell\n    match:\n      command: git status\n  - tool: read_file\n",
            Path::new("a.yaml"),
        )
        .unwrap();
        assert_eq!(rules.len(), 3);
        assert_eq!(rules[0].matches["path"], ArgMatch::Glob("/notes/**".into()));
        assert_eq!(
            rules[1].matches["command"],
            ArgMatch::Exact(json!("git status"))
        );
        assert!(rules[2].matches.is_empty());
        assert!(
            parse("# nothing\n", Path::new("a.yaml"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_bad_file_names_the_file_line_and_key() {
        let err = parse(
            "rules:\n  - tool: write_file\n    match:\n      path: {glob: notes/**}\n",
            Path::new("/p/.golem-forge/approvals.yaml"),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("approvals file /p/.golem-forge/approvals.yaml, line 4:"),
            "{text}"
        );
        assert!(text.contains("rules[0].match.path"), "{text}");
        assert!(text.contains("absolute"), "{text}");
        let err = parse(
            "rules:\n  - tool: write_file\n    matches: {}\n",
            Path::new("a.yaml"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
        assert!(err.to_string().contains("matches"), "{err}");
    }

    #[test]
    fn what_is_written_reads_back() {
        let tricky = "a \"q\" \\ \t\n\u{7f}\u{85}\u{2028}\u{feff}é😀: # x";
        let rules = vec![
            ApprovalRule {
                tool: "write_file".into(),
                matches: [("path".to_owned(), ArgMatch::Glob("/notes/**".into()))].into(),
            },
            ApprovalRule::for_call("t", &json!({"s": tricky, "n": [1, 2.5, null, {"k": true}]})),
            ApprovalRule::for_call("yes", &json!({"odd key: x": "y"})),
            ApprovalRule::for_call("empty", &json!(null)),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = approvals_path(dir.path());
        save(&path, &rules).unwrap();
        assert_eq!(load(&path).unwrap(), rules);
        save(&path, &[]).unwrap();
        assert!(load(&path).unwrap().is_empty());
    }

    #[test]
    fn the_store_keeps_edits_made_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let rules = project_rules(dir.path()).unwrap();
        assert!(rules.is_empty());
        let path = approvals_path(dir.path());
        save(&path, &[ApprovalRule::for_call("by_hand", &json!({}))]).unwrap();
        let added = ApprovalRule::for_call("w", &json!({"path": "/n/a"}));
        rules.add(added.clone()).unwrap();
        assert_eq!(load(&path).unwrap().len(), 2);
        assert_eq!(rules.len(), 2);
        assert!(rules.remove(&added).unwrap());
        assert_eq!(load(&path).unwrap()[0].tool, "by_hand");
    }
}
