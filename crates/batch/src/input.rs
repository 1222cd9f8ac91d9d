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
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct LineProblem {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong.
    pub problem: ItemProblem,
}

/// What is wrong with an item, or with the input as a whole.
#[derive(Debug, thiserror::Error)]
pub enum ItemProblem {
    /// The line is not JSON.
    #[error("not a JSON value: {0}")]
    NotJson(#[source] serde_json::Error),
    /// An object that is not `{id?, input, instructions?}`.
    #[error("{0} (an item is a string or {{id?, input, instructions?}})")]
    BadObject(#[source] serde_json::Error),
    /// A JSON value that is neither a string nor an object.
    #[error("an item is a string (the input) or an object {{id?, input, instructions?}}")]
    NotAnItem,
    /// The input is blank.
    #[error("the input is empty")]
    EmptyInput,
    /// An `id` that is neither a non-empty string nor a number.
    #[error("`id` must be a non-empty string or a number")]
    BadId,
    /// An id an earlier line has.
    #[error("the id `{id}` is used on line {first} already")]
    DuplicateId {
        /// The id.
        id: String,
        /// The line that has it first.
        first: usize,
    },
    /// No line holds an item.
    #[error("there are no items (one JSON line per item: a string or {{\"input\": …}})")]
    NoItems,
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
                    problem: ItemProblem::DuplicateId {
                        id: item.id,
                        first: *first,
                    },
                }),
                None => {
                    seen.insert(item.id.clone(), line);
                    items.push(item);
                }
            },
            Err(problem) => problems.push(LineProblem { line, problem }),
        }
    }
    if items.is_empty() && problems.is_empty() {
        problems.push(LineProblem {
            line: 1,
            problem: ItemProblem::NoItems,
        });
    }
    if problems.is_empty() {
        Ok(items)
    } else {
        Err(problems)
    }
}

fn parse_line(raw: &str, line: usize) -> Result<BatchItem, ItemProblem> {
    let value: Value = serde_json::from_str(raw).map_err(ItemProblem::NotJson)?;
    let written = match value {
        Value::String(input) => Written {
            id: None,
            input,
            instructions: None,
        },
        Value::Object(_) => {
            serde_json::from_value::<Written>(value).map_err(ItemProblem::BadObject)?
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => {
            return Err(ItemProblem::NotAnItem);
        }
    };
    if written.input.trim().is_empty() {
        return Err(ItemProblem::EmptyInput);
    }
    let id = match written.id {
        None => line.to_string(),
        Some(Value::String(id)) if !id.trim().is_empty() => id,
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(ItemProblem::BadId),
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
            problems[3]
                .problem
                .to_string()
                .contains("unknown field `prompt`"),
            "{}",
            problems[3]
        );
        assert_eq!(
            problems[4].to_string(),
            "line 6: the id `1` is used on line 1 already"
        );
        assert_eq!(
            problems[1].to_string(),
            "line 3: an item is a string (the input) or an object {id?, input, instructions?}"
        );
        assert_eq!(problems[2].to_string(), "line 4: the input is empty");
        assert_eq!(
            problems[5].to_string(),
            "line 7: `id` must be a non-empty string or a number"
        );
        let empty = parse_items("\n  \n").unwrap_err();
        assert_eq!(
            empty[0].to_string(),
            "line 1: there are no items (one JSON line per item: a string or {\"input\": …})"
        );
    }

    #[test]
    fn a_line_that_is_not_json_keeps_the_parser_s_error_as_its_source() {
        let problems = parse_items("{bad json\n").unwrap_err();
        let ItemProblem::NotJson(parser) = &problems[0].problem else {
            panic!("{:?}", problems[0]);
        };
        let source = std::error::Error::source(&problems[0].problem).map(ToString::to_string);
        assert_eq!(source, Some(parser.to_string()));
        assert_eq!(
            problems[0].to_string(),
            format!("line 1: not a JSON value: {parser}")
        );
    }
}
