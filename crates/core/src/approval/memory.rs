//! Session memory of approvals: calls approved with `remember: session` are approved again when
//! the same tool is called with deeply equal arguments. Denials are never remembered.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

/// Approvals remembered for the session, shared by every worker of the session (Clone shares).
#[derive(Debug, Clone, Default)]
pub struct ApprovalMemory {
    entries: Arc<Mutex<HashMap<(String, String), Value>>>,
}

impl ApprovalMemory {
    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String), Value>> {
        // A panic while holding the lock cannot leave the map half-updated (single inserts and
        // removes), so a poisoned lock is safe to keep using.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Remembers an approval of `tool` with `args`.
    pub fn remember(&self, tool: &str, args: &Value) {
        self.lock()
            .insert((tool.to_owned(), canonical_json(args)), args.clone());
    }

    /// Whether an identical call was approved for the session.
    pub fn is_approved(&self, tool: &str, args: &Value) -> bool {
        let key = (tool.to_owned(), canonical_json(args));
        self.lock().contains_key(&key)
    }

    /// The remembered approvals as `(tool, args)`, sorted for stable display.
    pub fn entries(&self) -> Vec<(String, Value)> {
        let mut entries: Vec<_> = self
            .lock()
            .iter()
            .map(|((tool, canonical), args)| (tool.clone(), canonical.clone(), args.clone()))
            .collect();
        entries.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        entries
            .into_iter()
            .map(|(tool, _, args)| (tool, args))
            .collect()
    }

    /// Forgets one approval; returns whether it was remembered.
    pub fn forget(&self, tool: &str, args: &Value) -> bool {
        self.lock()
            .remove(&(tool.to_owned(), canonical_json(args)))
            .is_some()
    }

    /// Forgets every approval.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// How many approvals are remembered.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A canonical text of a JSON value: object keys sorted at every depth, and numbers with an
/// integral value written as integers (so `1` and `1.0` compare equal, as in JavaScript).
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => out.push_str(&value.to_string()),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                let _ = write!(out, "{}", f as i64);
            }
            _ => out.push_str(&n.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_unordered_equality() {
        let memory = ApprovalMemory::new();
        memory.remember(
            "write_file",
            &json!({"path": "/w/a", "opts": {"x": 1, "y": [1, {"b": 2, "a": 1}]}}),
        );
        assert!(memory.is_approved(
            "write_file",
            &json!({"opts": {"y": [1, {"a": 1, "b": 2}], "x": 1.0}, "path": "/w/a"})
        ));
        assert!(!memory.is_approved("write_file", &json!({"path": "/w/a"})));
        assert!(!memory.is_approved(
            "write_file",
            &json!({"path": "/w/a", "opts": {"x": 1, "y": [{"a": 1, "b": 2}, 1]}})
        ));
        assert!(!memory.is_approved(
            "delete_file",
            &json!({"path": "/w/a", "opts": {"x": 1, "y": [1, {"b": 2, "a": 1}]}})
        ));
    }

    #[test]
    fn types_are_not_conflated() {
        let memory = ApprovalMemory::new();
        memory.remember("t", &json!({"n": 1}));
        assert!(!memory.is_approved("t", &json!({"n": "1"})));
        assert!(!memory.is_approved("t", &json!({"n": true})));
        assert!(!memory.is_approved("t", &json!({"n": 1.5})));
        memory.remember("t", &json!({"s": "a\"b"}));
        assert!(memory.is_approved("t", &json!({"s": "a\"b"})));
    }

    #[test]
    fn list_forget_clear() {
        let memory = ApprovalMemory::new();
        let shared = memory.clone();
        memory.remember("b", &json!({}));
        memory.remember("a", &json!({"k": 1}));
        memory.remember("a", &json!({"k": 1}));
        assert_eq!(shared.len(), 2);
        assert_eq!(shared.entries()[0].0, "a");
        assert!(shared.forget("a", &json!({"k": 1})));
        assert!(!shared.forget("a", &json!({"k": 1})));
        shared.clear();
        assert!(memory.is_empty());
    }

    #[test]
    fn canonical_form() {
        assert_eq!(
            canonical_json(&json!({"b": [2.0, null], "a": "x"})),
            r#"{"a":"x","b":[2,null]}"#
        );
    }
}
