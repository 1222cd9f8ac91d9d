//! Project rules: approvals remembered for the project (`.golem-forge/approvals.yaml`, loaded
//! and saved by the runtime). A rule is `{tool, match}`; `match` maps argument names to an exact
//! value (deeply equal, as session memory compares) or to `{glob: "/notes/**"}`, a glob over a
//! virtual path (`*` within one segment, `**` across any number of segments). Arguments the rule
//! does not name may be anything. A rule only decides calls that would otherwise be asked: the
//! orchestrator settles blocked calls before the controller, and refuses a model's call to a
//! manual-only tool before that.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::memory::canonical_json;
use golem_policy::{check_glob, glob_matches};

/// How one argument must look for a rule to match.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgMatch {
    /// Deeply equal to this value.
    Exact(Value),
    /// A virtual path matched by this glob (see [`glob_matches`]).
    Glob(String),
}

impl ArgMatch {
    /// Whether `value` matches.
    pub fn matches(&self, value: &Value) -> bool {
        match self {
            ArgMatch::Exact(expected) => canonical_json(expected) == canonical_json(value),
            ArgMatch::Glob(pattern) => value
                .as_str()
                .is_some_and(|path| glob_matches(pattern, path)),
        }
    }

    /// The JSON form written in the rules file and shown to users: the value, or
    /// `{"glob": pattern}`.
    pub fn to_json(&self) -> Value {
        match self {
            ArgMatch::Exact(value) => value.clone(),
            ArgMatch::Glob(pattern) => serde_json::json!({ "glob": pattern }),
        }
    }
}

impl Serialize for ArgMatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ArgMatch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if let Value::Object(map) = &value
            && map.len() == 1
            && let Some(glob) = map.get("glob")
        {
            let Some(pattern) = glob.as_str() else {
                return Err(serde::de::Error::custom(
                    "must give `glob` as a string (a virtual path pattern such as /notes/**)",
                ));
            };
            check_glob(pattern).map_err(serde::de::Error::custom)?;
            return Ok(ArgMatch::Glob(pattern.to_owned()));
        }
        Ok(ArgMatch::Exact(value))
    }
}

/// One project rule: calls of `tool` whose arguments match every entry of `match` are
/// approved without asking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRule {
    /// The tool's name.
    pub tool: String,
    /// Argument name → how it must look; an empty map matches every call of the tool.
    #[serde(default, rename = "match")]
    pub matches: BTreeMap<String, ArgMatch>,
}

impl ApprovalRule {
    /// The rule remembered by an answer "always in this project": the call's exact `path` when
    /// it has a string `path` argument, else its exact arguments.
    pub fn for_call(tool: &str, args: &Value) -> Self {
        let matches = match args.get("path") {
            Some(path @ Value::String(_)) => {
                BTreeMap::from([("path".to_owned(), ArgMatch::Exact(path.clone()))])
            }
            _ => match args {
                Value::Object(map) => map
                    .iter()
                    .map(|(key, value)| (key.clone(), ArgMatch::Exact(value.clone())))
                    .collect(),
                _ => BTreeMap::new(),
            },
        };
        Self {
            tool: tool.to_owned(),
            matches,
        }
    }

    /// Whether a call of `tool` with `args` matches.
    pub fn matches(&self, tool: &str, args: &Value) -> bool {
        self.tool == tool
            && self
                .matches
                .iter()
                .all(|(key, expected)| args.get(key).is_some_and(|value| expected.matches(value)))
    }

    /// The `match` as one JSON object (what `approvalsRemembered` shows as its arguments).
    pub fn match_json(&self) -> Value {
        Value::Object(
            self.matches
                .iter()
                .map(|(key, expected)| (key.clone(), expected.to_json()))
                .collect(),
        )
    }
}

impl fmt::Display for ApprovalRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.tool, self.match_json())
    }
}

/// Where project rules are kept (the runtime's `.golem-forge/approvals.yaml`).
pub trait RuleStore: Send + Sync {
    /// Applies `change` to the rules as stored now (re-read, so that edits made meanwhile are
    /// kept), saves them, and returns them.
    fn update(
        &self,
        change: &mut dyn FnMut(&mut Vec<ApprovalRule>),
    ) -> Result<Vec<ApprovalRule>, RuleStoreError>;
}

/// Why a [`RuleStore`] could not keep a change: the store's own error (its file unreadable or
/// unwritable), shown as the store words it, its causes kept.
#[derive(Debug)]
pub struct RuleStoreError(Box<dyn std::error::Error + Send + Sync>);

impl RuleStoreError {
    /// The store's error `cause`.
    pub fn new(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self(cause.into())
    }
}

impl fmt::Display for RuleStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for RuleStoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// The project's rules, shared by every worker of a session (Clone shares).
#[derive(Clone, Default)]
pub struct ProjectRules {
    rules: Arc<Mutex<Vec<ApprovalRule>>>,
    store: Option<Arc<dyn RuleStore>>,
    /// Held while a change is written, so that two changes never interleave.
    saving: Arc<Mutex<()>>,
}

impl fmt::Debug for ProjectRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProjectRules")
            .field("rules", &*self.lock())
            .field("store", &self.store.is_some())
            .finish()
    }
}

impl ProjectRules {
    /// Rules held in memory only (tests, a program without a root).
    pub fn new(rules: Vec<ApprovalRule>) -> Self {
        Self {
            rules: Arc::new(Mutex::new(rules)),
            store: None,
            saving: Arc::default(),
        }
    }

    /// Rules loaded from `store`, which later changes are written through.
    pub fn stored(rules: Vec<ApprovalRule>, store: Arc<dyn RuleStore>) -> Self {
        Self {
            rules: Arc::new(Mutex::new(rules)),
            store: Some(store),
            saving: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<ApprovalRule>> {
        self.rules.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The first rule matching a call of `tool` with `args`.
    pub fn matching(&self, tool: &str, args: &Value) -> Option<ApprovalRule> {
        self.lock()
            .iter()
            .find(|rule| rule.matches(tool, args))
            .cloned()
    }

    /// The rules, in the file's order.
    pub fn rules(&self) -> Vec<ApprovalRule> {
        self.lock().clone()
    }

    /// How many rules there are.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `rule` (unless an equal one exists) and saves. On a failed save the rule still
    /// holds for this session; the error says why it was not kept.
    pub fn add(&self, rule: ApprovalRule) -> Result<(), RuleStoreError> {
        let mut add = |rules: &mut Vec<ApprovalRule>| {
            if !rules.contains(&rule) {
                rules.push(rule.clone());
            }
        };
        let saved = self.save(&mut add);
        if saved.is_err() {
            add(&mut self.lock());
        }
        saved
    }

    /// Removes every rule equal to `rule` and saves; returns whether one was there.
    pub fn remove(&self, rule: &ApprovalRule) -> Result<bool, RuleStoreError> {
        let mut found = self.lock().contains(rule);
        self.save(&mut |rules: &mut Vec<ApprovalRule>| {
            let before = rules.len();
            rules.retain(|r| r != rule);
            found |= rules.len() != before;
        })?;
        Ok(found)
    }

    fn save(&self, change: &mut dyn FnMut(&mut Vec<ApprovalRule>)) -> Result<(), RuleStoreError> {
        let _saving = self.saving.lock().unwrap_or_else(PoisonError::into_inner);
        match &self.store {
            Some(store) => {
                let rules = store.update(change)?;
                *self.lock() = rules;
            }
            None => change(&mut self.lock()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn glob_rule(tool: &str, key: &str, pattern: &str) -> ApprovalRule {
        ApprovalRule {
            tool: tool.into(),
            matches: BTreeMap::from([(key.into(), ArgMatch::Glob(pattern.into()))]),
        }
    }

    #[test]
    fn exact_values() {
        let rule = ApprovalRule {
            tool: "shell".into(),
            matches: BTreeMap::from([("command".into(), ArgMatch::Exact(json!("git status")))]),
        };
        assert!(rule.matches("shell", &json!({"command": "git status"})));
        assert!(rule.matches("shell", &json!({"command": "git status", "timeout": 5})));
        assert!(!rule.matches("shell", &json!({"command": "git status --porcelain"})));
        assert!(!rule.matches("shell", &json!({})));
        assert!(!rule.matches("run_code", &json!({"command": "git status"})));
        let deep = ApprovalRule::for_call("t", &json!({"o": {"b": 1, "a": [1.0]}}));
        assert!(deep.matches("t", &json!({"o": {"a": [1], "b": 1}})));
        assert!(!deep.matches("t", &json!({"o": {"a": [2], "b": 1}})));
    }

    #[test]
    fn path_globs() {
        let rule = glob_rule("write_file", "path", "/notes/**");
        for inside in ["/notes/a.md", "/notes/x/y/z.md", "/notes"] {
            assert!(
                rule.matches("write_file", &json!({"path": inside, "content": "x"})),
                "{inside}"
            );
        }
        for outside in [
            "/notes2/a.md",
            "/out/a.md",
            "/notes/../secret/a.md",
            "/notes/./a.md",
            "/notes//a.md",
            "notes/a.md",
            "/notes\\a.md",
        ] {
            assert!(
                !rule.matches("write_file", &json!({"path": outside})),
                "{outside}"
            );
        }
        assert!(!rule.matches("write_file", &json!({"path": 3})));
        assert!(!rule.matches("delete_file", &json!({"path": "/notes/a.md"})));
    }

    #[test]
    fn remembered_for_a_call() {
        let rule = ApprovalRule::for_call("write_file", &json!({"path": "/n/a", "content": "x"}));
        assert_eq!(rule.match_json(), json!({"path": "/n/a"}));
        assert!(rule.matches("write_file", &json!({"path": "/n/a", "content": "other"})));
        assert!(!rule.matches("write_file", &json!({"path": "/n/b", "content": "x"})));
        let rule = ApprovalRule::for_call("shell", &json!({"command": "ls"}));
        assert_eq!(rule.match_json(), json!({"command": "ls"}));
        assert_eq!(rule.to_string(), r#"shell {"command":"ls"}"#);
    }

    #[test]
    fn serde_form() {
        let rule: ApprovalRule = serde_json::from_value(
            json!({"tool": "write_file", "match": {"path": {"glob": "/notes/**"}, "n": 1}}),
        )
        .unwrap();
        assert_eq!(rule.matches["path"], ArgMatch::Glob("/notes/**".into()));
        assert_eq!(rule.matches["n"], ArgMatch::Exact(json!(1)));
        assert_eq!(
            serde_json::to_value(&rule).unwrap(),
            json!({"tool": "write_file", "match": {"n": 1, "path": {"glob": "/notes/**"}}})
        );
        let err = serde_json::from_value::<ApprovalRule>(
            json!({"tool": "w", "match": {"path": {"glob": "notes"}}}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("absolute"), "{err}");
        assert!(serde_json::from_value::<ApprovalRule>(json!({"tool": "w", "mtch": {}})).is_err());
    }

    #[test]
    fn add_and_remove_in_memory() {
        let rules = ProjectRules::new(Vec::new());
        let shared = rules.clone();
        let rule = ApprovalRule::for_call("t", &json!({"a": 1}));
        rules.add(rule.clone()).unwrap();
        rules.add(rule.clone()).unwrap();
        assert_eq!(shared.len(), 1);
        assert!(shared.matching("t", &json!({"a": 1})).is_some());
        assert!(shared.remove(&rule).unwrap());
        assert!(!shared.remove(&rule).unwrap());
        assert!(rules.is_empty());
    }

    struct Broken;

    impl RuleStore for Broken {
        fn update(
            &self,
            _change: &mut dyn FnMut(&mut Vec<ApprovalRule>),
        ) -> Result<Vec<ApprovalRule>, RuleStoreError> {
            Err(RuleStoreError::new(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                "disk full",
            )))
        }
    }

    #[test]
    fn a_failed_save_still_holds_for_the_session() {
        let rules = ProjectRules::stored(Vec::new(), Arc::new(Broken));
        let rule = ApprovalRule::for_call("t", &json!({"a": 1}));
        let error = rules.add(rule).unwrap_err();
        assert_eq!(error.to_string(), "disk full");
        assert!(
            std::error::Error::source(&error).is_none(),
            "the store's error is shown, not wrapped"
        );
        assert!(rules.matching("t", &json!({"a": 1})).is_some());
    }
}
