//! Checking a case's expectations against what its run did ([`Observed`], gathered from the
//! session's display events and the scratch zones). Each failure names the expectation and
//! says what happened instead: the actual calls with their arguments, a unified diff of a
//! file, the answer.

use std::collections::BTreeSet;

use golem_protocol::{TokenUsage, ToolStatus, TurnStatus};
use serde_json::Value;

use crate::file::{Expect, FileExpect, TextMatch};

/// One call the run made (any worker's), as its `toolResult` reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedCall {
    /// The tool.
    pub tool: String,
    /// The arguments it ran with, or was proposed with when it never started.
    pub args: Value,
    /// How it ended.
    pub status: ToolStatus,
}

/// A zone file after the run.
#[derive(Debug, Clone, PartialEq)]
pub enum ObservedFile {
    /// It does not exist.
    Absent,
    /// Its bytes.
    Bytes(Vec<u8>),
}

/// What a case's run did.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// How the turn ended (`None`: it never ended, the session failed first).
    pub status: Option<TurnStatus>,
    /// The final answer.
    pub answer: Option<String>,
    /// Why the turn failed.
    pub error: Option<String>,
    /// The structured answer.
    pub output: Option<Value>,
    /// The calls, in the order they ended.
    pub calls: Vec<ObservedCall>,
    /// The tools whose calls asked for approval, in order.
    pub asked: Vec<String>,
    /// Tokens used.
    pub usage: TokenUsage,
    /// What it cost.
    pub cost: Option<f64>,
}

/// An expectation that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Which (`expect.calls`, `expect.files./notes/a.md`).
    pub expectation: String,
    /// What happened instead.
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.expectation, self.message)
    }
}

/// What became of a zone file that `expect.files` does not name, against the case's fixtures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnnamedChange {
    /// It was not among the fixtures and exists now.
    Created,
    /// It was a fixture and holds something else now.
    Changed,
    /// It was a fixture and is gone.
    Deleted,
}

/// When `expect.files` is given, the files it does not name must be as the fixtures left them:
/// a run that writes outside what the case expects fails, naming each such file. `changes`
/// are the unnamed files that differ, by virtual path.
pub fn check_unnamed_changes(changes: &[(String, UnnamedChange)]) -> Vec<Failure> {
    changes
        .iter()
        .map(|(path, change)| {
            let what = match change {
                UnnamedChange::Created => "created",
                UnnamedChange::Changed => "changed",
                UnnamedChange::Deleted => "deleted",
            };
            Failure {
                expectation: "expect.files".to_owned(),
                message: format!(
                    "the run {what} {path}, which `expect.files` does not name (name it with \
                     what it should hold, or `absent: true`)"
                ),
            }
        })
        .collect()
}

/// Checks everything but `files:` (see [`check_file`]).
pub fn check_run(expect: &Expect, observed: &Observed) -> Vec<Failure> {
    let mut failures = Vec::new();
    let mut fail = |expectation: &str, message: String| {
        failures.push(Failure {
            expectation: expectation.to_owned(),
            message,
        })
    };
    let want = expect.status.unwrap_or(TurnStatus::Completed);
    if observed.status != Some(want) {
        let got = match observed.status {
            Some(status) => status_name(status).to_owned(),
            None => "no end of the turn".to_owned(),
        };
        let why = observed
            .error
            .as_deref()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        fail(
            "expect.status",
            format!("expected {}, the turn ended {got}{why}", status_name(want)),
        );
    }
    if let Some(matcher) = &expect.answer {
        let answer = observed.answer.as_deref().unwrap_or("");
        if !text_matches(matcher, answer) {
            fail(
                "expect.answer",
                format!(
                    "expected an answer that {}, the answer was {}",
                    describe(matcher),
                    quoted(answer)
                ),
            );
        }
    }
    if let Some(calls) = &expect.calls {
        let mut at = 0;
        for (index, wanted) in calls.iter().enumerate() {
            let found = observed.calls[at..].iter().position(|call| {
                call.tool == wanted.tool
                    && wanted
                        .args
                        .as_ref()
                        .is_none_or(|args| subset(args, &call.args))
            });
            match found {
                Some(offset) => at += offset + 1,
                None => {
                    let args = wanted
                        .args
                        .as_ref()
                        .map(|a| format!(" with at least {a}"))
                        .unwrap_or_default();
                    fail(
                        &format!("expect.calls[{index}]"),
                        format!(
                            "expected a call of {}{args}{}; the calls were:\n{}",
                            wanted.tool,
                            if index > 0 {
                                " after the calls before it"
                            } else {
                                ""
                            },
                            list_calls(&observed.calls)
                        ),
                    );
                    break;
                }
            }
        }
    }
    for tool in &expect.not_called {
        let made: Vec<&ObservedCall> = observed.calls.iter().filter(|c| &c.tool == tool).collect();
        if !made.is_empty() {
            fail(
                "expect.not_called",
                format!(
                    "{tool} was called {} time(s):\n{}",
                    made.len(),
                    list_calls(&made.into_iter().cloned().collect::<Vec<_>>())
                ),
            );
        }
    }
    if let Some(asked) = &expect.asked {
        let want: BTreeSet<&str> = asked.iter().map(String::as_str).collect();
        let got: BTreeSet<&str> = observed.asked.iter().map(String::as_str).collect();
        if want != got {
            fail(
                "expect.asked",
                format!(
                    "expected approval asked for {}, it was asked for {}",
                    names(&want),
                    names(&got)
                ),
            );
        }
    }
    if let Some(blocked) = &expect.blocked {
        let want: BTreeSet<&str> = blocked.iter().map(String::as_str).collect();
        let got: BTreeSet<&str> = observed
            .calls
            .iter()
            .filter(|c| c.status == ToolStatus::Blocked)
            .map(|c| c.tool.as_str())
            .collect();
        if want != got {
            fail(
                "expect.blocked",
                format!(
                    "expected blocked calls of {}, blocked were {}; the calls were:\n{}",
                    names(&want),
                    names(&got),
                    list_calls(&observed.calls)
                ),
            );
        }
    }
    if let Some(output) = &expect.output {
        match &observed.output {
            Some(actual) if subset(output, actual) => {}
            Some(actual) => fail(
                "expect.output",
                format!("expected at least {output}, the structured answer was {actual}"),
            ),
            None => fail(
                "expect.output",
                format!("expected at least {output}, there was no structured answer"),
            ),
        }
    }
    if let Some(max) = expect.max_cost_usd {
        match observed.cost {
            Some(cost) if cost <= max => {}
            Some(cost) => fail(
                "expect.max_cost_usd",
                format!("the run cost ${cost:.6}, more than ${max}"),
            ),
            None => fail(
                "expect.max_cost_usd",
                "the run's cost is not known (the model has no price)".to_owned(),
            ),
        }
    }
    if let Some(max) = expect.max_tokens {
        let used = observed.usage.input_tokens
            + observed.usage.output_tokens
            + observed.usage.cache_read_tokens
            + observed.usage.cache_write_tokens;
        if used > max {
            fail(
                "expect.max_tokens",
                format!("the run used {used} tokens, more than {max}"),
            );
        }
    }
    failures
}

/// Checks one expected file against what the zone holds.
pub fn check_file(path: &str, expect: &FileExpect, actual: &ObservedFile) -> Option<Failure> {
    let expectation = format!("expect.files.{path}");
    let failure = |message: String| {
        Some(Failure {
            expectation: expectation.clone(),
            message,
        })
    };
    let matcher = match expect {
        FileExpect::Absent(_) => {
            return match actual {
                ObservedFile::Absent => None,
                ObservedFile::Bytes(bytes) => failure(format!(
                    "expected no file, it exists with {}",
                    match std::str::from_utf8(bytes) {
                        Ok(text) => quoted(text),
                        Err(_) => format!("{} bytes that are not UTF-8 text", bytes.len()),
                    }
                )),
            };
        }
        FileExpect::Contains(text) => TextMatch::Contains(text.clone()),
        FileExpect::Regex(pattern) => TextMatch::Regex(pattern.clone()),
        FileExpect::Equals(text) => TextMatch::Equals(text.clone()),
    };
    let bytes = match actual {
        ObservedFile::Absent => {
            return failure(format!(
                "expected a file that {}; the file does not exist",
                describe(&matcher)
            ));
        }
        ObservedFile::Bytes(bytes) => bytes,
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return failure(format!(
            "expected a file that {}; the file is not UTF-8 text ({} bytes)",
            describe(&matcher),
            bytes.len()
        ));
    };
    if text_matches(&matcher, text) {
        return None;
    }
    let diff = match &matcher {
        TextMatch::Equals(want) => unified(want, text, path),
        TextMatch::Contains(_) | TextMatch::Regex(_) => format!("the file holds:\n{text}"),
    };
    failure(format!(
        "expected a file that {}; {}",
        describe(&matcher),
        diff
    ))
}

/// A unified diff from what was expected to what the file holds.
fn unified(want: &str, got: &str, path: &str) -> String {
    let diff = similar::TextDiff::from_lines(want, got)
        .unified_diff()
        .header(&format!("expected {path}"), &format!("actual {path}"))
        .to_string();
    format!("the file differs:\n{diff}")
}

/// Whether `text` matches.
pub fn text_matches(matcher: &TextMatch, text: &str) -> bool {
    match matcher {
        TextMatch::Contains(part) => text.contains(part.as_str()),
        TextMatch::Regex(pattern) => pattern.regex.is_match(text),
        TextMatch::Equals(whole) => text == whole,
    }
}

fn describe(matcher: &TextMatch) -> String {
    match matcher {
        TextMatch::Contains(part) => format!("contains {}", quoted(part)),
        TextMatch::Regex(pattern) => format!("matches /{}/", pattern.source),
        TextMatch::Equals(whole) => format!("equals {}", quoted(whole)),
    }
}

/// Whether `actual` holds at least `expected`: mappings key by key, lists item by item (same
/// length), anything else equal.
pub fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => want
            .iter()
            .all(|(key, value)| got.get(key).is_some_and(|g| subset(value, g))),
        (Value::Array(want), Value::Array(got)) => {
            want.len() == got.len() && want.iter().zip(got).all(|(w, g)| subset(w, g))
        }
        (Value::Number(want), Value::Number(got)) => want.as_f64() == got.as_f64(),
        (want, got) => want == got,
    }
}

fn status_name(status: TurnStatus) -> &'static str {
    match status {
        TurnStatus::Completed => "completed",
        TurnStatus::Failed => "failed",
        TurnStatus::Interrupted => "interrupted",
        TurnStatus::BudgetExceeded => "budgetExceeded",
        TurnStatus::WaitingApproval => "waitingApproval",
    }
}

fn tool_status_name(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Success => "success",
        ToolStatus::Error => "error",
        ToolStatus::Denied => "denied",
        ToolStatus::Blocked => "blocked",
        ToolStatus::Interrupted => "interrupted",
    }
}

/// The calls, one line each: `  1. write_file {"path": …} → success`.
fn list_calls(calls: &[ObservedCall]) -> String {
    if calls.is_empty() {
        return "  (none)".to_owned();
    }
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            format!(
                "  {}. {} {} → {}",
                i + 1,
                call.tool,
                call.args,
                tool_status_name(call.status)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn names(set: &BTreeSet<&str>) -> String {
    if set.is_empty() {
        "none".to_owned()
    } else {
        set.iter().copied().collect::<Vec<_>>().join(", ")
    }
}

fn quoted(text: &str) -> String {
    format!("\"{}\"", text.escape_debug())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::{CallExpect, Pattern};
    use serde_json::json;

    fn completed() -> Observed {
        Observed {
            status: Some(TurnStatus::Completed),
            answer: Some("Hello Ada!".into()),
            calls: vec![
                ObservedCall {
                    tool: "read_file".into(),
                    args: json!({"path": "/notes/a.md"}),
                    status: ToolStatus::Success,
                },
                ObservedCall {
                    tool: "write_file".into(),
                    args: json!({"path": "/notes/a.md", "content": "x"}),
                    status: ToolStatus::Success,
                },
                ObservedCall {
                    tool: "delete_file".into(),
                    args: json!({"path": "/notes/b.md"}),
                    status: ToolStatus::Blocked,
                },
            ],
            asked: vec!["write_file".into()],
            usage: TokenUsage {
                input_tokens: 40,
                output_tokens: 10,
                ..TokenUsage::default()
            },
            cost: Some(0.0),
            ..Observed::default()
        }
    }

    fn pattern(source: &str) -> Pattern {
        Pattern {
            source: source.into(),
            regex: regex::Regex::new(source).unwrap(),
        }
    }

    #[test]
    fn status_defaults_to_completed_and_names_the_error() {
        let observed = Observed {
            status: Some(TurnStatus::Failed),
            error: Some("the model ran out".into()),
            ..completed()
        };
        let failures = check_run(&Expect::default(), &observed);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].expectation, "expect.status");
        assert_eq!(
            failures[0].message,
            "expected completed, the turn ended failed (the model ran out)"
        );
        let expect = Expect {
            status: Some(TurnStatus::Failed),
            ..Expect::default()
        };
        assert!(check_run(&expect, &observed).is_empty());
    }

    #[test]
    fn answers_match_each_way_and_say_the_answer() {
        for (matcher, ok) in [
            (TextMatch::Contains("Ada".into()), true),
            (TextMatch::Contains("Bob".into()), false),
            (TextMatch::Regex(pattern(r"^Hello \w+!$")), true),
            (TextMatch::Regex(pattern(r"^Bye")), false),
            (TextMatch::Equals("Hello Ada!".into()), true),
            (TextMatch::Equals("Hello Ada".into()), false),
        ] {
            let expect = Expect {
                answer: Some(matcher.clone()),
                ..Expect::default()
            };
            let failures = check_run(&expect, &completed());
            assert_eq!(failures.is_empty(), ok, "{matcher:?}");
            if !ok {
                assert!(
                    failures[0]
                        .message
                        .ends_with("the answer was \"Hello Ada!\""),
                    "{}",
                    failures[0].message
                );
            }
        }
    }

    #[test]
    fn calls_match_in_order_by_subset_and_list_the_actual_calls() {
        let call = |tool: &str, args: Option<Value>| CallExpect {
            tool: tool.into(),
            args,
        };
        let ok = Expect {
            calls: Some(vec![
                call("read_file", None),
                call("write_file", Some(json!({"path": "/notes/a.md"}))),
            ]),
            ..Expect::default()
        };
        assert!(check_run(&ok, &completed()).is_empty());
        let out_of_order = Expect {
            calls: Some(vec![call("write_file", None), call("read_file", None)]),
            ..Expect::default()
        };
        let failures = check_run(&out_of_order, &completed());
        assert_eq!(failures[0].expectation, "expect.calls[1]");
        assert!(
            failures[0]
                .message
                .contains("  2. write_file {\"path\":\"/notes/a.md\",\"content\":\"x\"} → success"),
            "{}",
            failures[0].message
        );
        let wrong_args = Expect {
            calls: Some(vec![call(
                "write_file",
                Some(json!({"path": "/notes/b.md"})),
            )]),
            ..Expect::default()
        };
        let failures = check_run(&wrong_args, &completed());
        assert!(
            failures[0]
                .message
                .contains("with at least {\"path\":\"/notes/b.md\"}")
        );
    }

    #[test]
    fn not_called_asked_and_blocked() {
        let expect = Expect {
            not_called: vec!["delete_file".into(), "shell".into()],
            asked: Some(vec![]),
            blocked: Some(vec![]),
            ..Expect::default()
        };
        let failures = check_run(&expect, &completed());
        let names: Vec<&str> = failures.iter().map(|f| f.expectation.as_str()).collect();
        assert_eq!(
            names,
            ["expect.not_called", "expect.asked", "expect.blocked"]
        );
        assert!(
            failures[0]
                .message
                .starts_with("delete_file was called 1 time(s)")
        );
        assert_eq!(
            failures[1].message,
            "expected approval asked for none, it was asked for write_file"
        );
        assert!(failures[2].message.contains("blocked were delete_file"));
        let right = Expect {
            asked: Some(vec!["write_file".into()]),
            blocked: Some(vec!["delete_file".into()]),
            ..Expect::default()
        };
        assert!(check_run(&right, &completed()).is_empty());
    }

    #[test]
    fn output_cost_and_tokens() {
        let observed = Observed {
            output: Some(json!({"n": 3, "items": [1, 2], "extra": true})),
            ..completed()
        };
        let ok = Expect {
            output: Some(json!({"n": 3.0, "items": [1, 2]})),
            max_cost_usd: Some(0.01),
            max_tokens: Some(50),
            ..Expect::default()
        };
        assert!(check_run(&ok, &observed).is_empty());
        let bad = Expect {
            output: Some(json!({"items": [1]})),
            max_tokens: Some(49),
            ..Expect::default()
        };
        let failures = check_run(&bad, &observed);
        assert_eq!(failures[0].expectation, "expect.output");
        assert_eq!(failures[1].message, "the run used 50 tokens, more than 49");
        let unpriced = Observed {
            cost: None,
            ..completed()
        };
        let priced = Expect {
            max_cost_usd: Some(1.0),
            ..Expect::default()
        };
        assert!(
            check_run(&priced, &unpriced)[0]
                .message
                .contains("not known")
        );
    }

    #[test]
    fn files_the_case_does_not_name_are_each_a_failure() {
        let failures = check_unnamed_changes(&[
            ("/notes/new.md".to_owned(), UnnamedChange::Created),
            ("/notes/a.md".to_owned(), UnnamedChange::Changed),
            ("/notes/gone.md".to_owned(), UnnamedChange::Deleted),
        ]);
        let messages: Vec<String> = failures.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 3);
        assert!(messages[0].starts_with("expect.files: the run created /notes/new.md"));
        assert!(messages[1].contains("changed /notes/a.md"));
        assert!(messages[2].contains("deleted /notes/gone.md"));
        assert!(check_unnamed_changes(&[]).is_empty());
    }

    #[test]
    fn files_report_a_diff_absence_and_bytes_that_are_not_text() {
        let want = FileExpect::Equals("Bob\nAda\n".into());
        let got = ObservedFile::Bytes(b"Bob\nEve\n".to_vec());
        let failure = check_file("/notes/a.md", &want, &got).unwrap();
        assert_eq!(failure.expectation, "expect.files./notes/a.md");
        assert!(
            failure.message.contains("--- expected /notes/a.md"),
            "{}",
            failure.message
        );
        assert!(
            failure.message.contains("-Ada\n+Eve\n"),
            "{}",
            failure.message
        );
        assert!(
            check_file(
                "/notes/a.md",
                &want,
                &ObservedFile::Bytes(b"Bob\nAda\n".to_vec())
            )
            .is_none()
        );
        let missing = check_file("/notes/a.md", &want, &ObservedFile::Absent).unwrap();
        assert!(missing.message.ends_with("the file does not exist"));
        let binary = ObservedFile::Bytes(vec![0xff, 0xfe, 0x00]);
        let failure =
            check_file("/notes/a.md", &FileExpect::Contains("x".into()), &binary).unwrap();
        assert!(
            failure.message.contains("not UTF-8 text (3 bytes)"),
            "{}",
            failure.message
        );
        let absent = FileExpect::Absent(crate::file::AbsentFlag);
        assert!(check_file("/notes/a.md", &absent, &ObservedFile::Absent).is_none());
        assert!(
            check_file("/notes/a.md", &absent, &binary)
                .unwrap()
                .message
                .contains("not UTF-8")
        );
        let regex = FileExpect::Regex(pattern("E.e"));
        assert!(check_file("/notes/a.md", &regex, &got).is_none());
    }
}
