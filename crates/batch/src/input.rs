//! The items of a batch, one JSON line each: a string (the input) or `{id?, input,
//! instructions?}`. Ids default to the 1-based line number; blank lines are skipped but
//! counted. Every bad line is reported with its number before anything runs.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One item to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchItem {
    /// Unique within the batch.
    pub id: String,
    /// The user input of the item's session.
    pub input: String,
    /// Instructions for this item only, sent after the worker's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Its line in the input (1-based), for messages.
    pub line: usize,
}

/// What is wrong with one line of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// An item as written, in its object form.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    #[serde(default)]
    id: Option<Value>,
    input: String,
    #[serde(default)]
    instructions: Option<String>,
}

/// The items of `text`, or every problem found (bad JSON, a missing or empty input, a bad id,
/// an id used twice, no items at all).
pub fn parse_items(text: &str) -> Result<Vec<BatchItem>, Vec<LineProblem>> {
    let mut items = Vec::new();
    let mut problems = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        match parse_line(raw, line) {
            Ok(item) => match seen.get(&item.id) {
                Some(first) => problems.push(LineProblem {
                    line,
                    message: format!("the id `{}` is used on line {first} already", item.id),
                }),
                None => {
                    seen.insert(item.id.clone(), line);
                    items.push(item);
                }
            },
            Err(message) => problems.push(LineProblem { line, message }),
        }
    }
    if items.is_empty() && problems.is_empty() {
        problems.push(LineProblem {
            line: 1,
            message: "there are no items (one JSON line per item: a string or {\"input\": …})"
                .to_owned(),
        });
    }
    if problems.is_empty() {
        Ok(items)
    } else {
        Err(problems)
    }
}

fn parse_line(raw: &str, line: usize) -> Result<BatchItem, String> {
    let value: Value = serde_json::from_str(raw).map_err(|e| format!("not a JSON value: {e}"))?;
    let written = match value {
        Value::String(input) => Written {
            id: None,
            input,
            instructions: None,
        },
        Value::Object(_) => serde_json::from_value::<Written>(value)
            .map_err(|e| format!("{e} (an item is a string or {{id?, input, instructions?}})"))?,
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => {
            return Err(
                "an item is a string (the input) or an object {id?, input, instructions?}"
                    .to_owned(),
            );
        }
    };
    if written.input.trim().is_empty() {
        return Err("the input is empty".to_owned());
    }
    let id = match written.id {
        None => line.to_string(),
        Some(Value::String(id)) if !id.trim().is_empty() => id,
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err("`id` must be a non-empty string or a number".to_owned()),
    };
    Ok(BatchItem {
        id,
        input: written.input,
        instructions: written.instructions.filter(|i| !i.trim().is_empty()),
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_objects_with_ids_defaulting_to_the_line_number() {
        let text = "\"review a.md\"\n\n{\"id\": \"b\", \"input\": \"review b.md\", \"instructions\": \"be brief\"}\n{\"id\": 7, \"input\": \"x\"}\n";
        let items = parse_items(text).unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(
            items[0],
            BatchItem {
                id: "1".into(),
                input: "review a.md".into(),
                instructions: None,
                line: 1
            }
        );
        // The blank line is counted.
        assert_eq!(items[1].id, "b");
        assert_eq!(items[1].line, 3);
        assert_eq!(items[1].instructions.as_deref(), Some("be brief"));
        assert_eq!(items[2].id, "7");
    }

    #[test]
    fn every_bad_line_is_named_by_its_number() {
        let text = "\"ok\"\n{bad json\n42\n{\"input\": \"\"}\n{\"input\": \"x\", \"prompt\": 1}\n{\"id\": \"1\", \"input\": \"again\"}\n{\"id\": [1], \"input\": \"x\"}\n";
        let problems = parse_items(text).unwrap_err();
        let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2, 3, 4, 5, 6, 7]);
        assert!(
            problems[0]
                .to_string()
                .starts_with("line 2: not a JSON value")
        );
        assert!(
            problems[3].message.contains("unknown field `prompt`"),
            "{}",
            problems[3]
        );
        assert_eq!(
            problems[4].to_string(),
            "line 6: the id `1` is used on line 1 already"
        );
        let empty = parse_items("\n  \n").unwrap_err();
        assert!(empty[0].message.starts_with("there are no items"));
    }
}
