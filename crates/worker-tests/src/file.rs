//! Test files (docs/testing.md): `cases:`, each with its input, zone fixtures, scripted model
//! replies, approval answers and expectations, read with every key checked. A bad file is a
//! [`TestError::Invalid`] naming the file, the line and the dotted key, by the same YAML
//! diagnostics as worker files (`golem_runtime::worker::from_yaml`). Regular expressions are
//! compiled and virtual paths checked against the worker's zones as the file is read, so their
//! errors carry the line too.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use golem_protocol::TurnStatus;
use golem_runtime::worker::{TextFileProblem, read_text_file};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::error::TestError;

/// A test file: the cases of one worker.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Golem Forge worker test file")]
pub struct TestFile {
    /// The cases, run in order, each as a fresh session of the worker.
    pub cases: Vec<Case>,
}

/// One case: a session of the worker on one input.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// The case's name, unique in its file.
    pub name: String,
    /// The user's message.
    #[serde(default)]
    pub input: String,
    /// The zones' contents before the run, by virtual path (`/notes/a.md`); every other zone
    /// starts empty.
    #[serde(default)]
    pub files: BTreeMap<VirtualPath, String>,
    /// The model's replies, one per request, in order.
    #[serde(default)]
    pub model: Vec<Reply>,
    /// How calls that ask are answered, by tool (`true`/`yes` or `false`/`no`); a tool not
    /// named is denied.
    #[serde(default)]
    pub approve: BTreeMap<String, Answer>,
    /// What must hold after the run.
    #[serde(default)]
    pub expect: Expect,
}

/// One scripted model reply: text, tool calls, or both.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// The answer text.
    #[serde(default)]
    pub text: Option<String>,
    /// The tool calls the reply makes.
    #[serde(default)]
    pub tool_calls: Vec<ReplyCall>,
}

/// A tool call of a scripted reply.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyCall {
    /// The tool.
    pub name: String,
    /// Its arguments (a mapping).
    #[serde(default = "empty_object")]
    pub args: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// An approval answer: `true`, `false`, or the words `yes` and `no`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(with = "AnswerSchema")]
pub struct Answer(pub bool);

/// The schema of an [`Answer`].
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
#[serde(untagged)]
enum AnswerSchema {
    Flag(bool),
    Word(AnswerWord),
}

#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
#[serde(rename_all = "lowercase")]
enum AnswerWord {
    Yes,
    No,
}

impl<'de> Deserialize<'de> for Answer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AnswerVisitor;
        impl serde::de::Visitor<'_> for AnswerVisitor {
            type Value = Answer;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("yes, no, true or false")
            }
            fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Answer, E> {
                Ok(Answer(value))
            }
            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Answer, E> {
                match value {
                    "yes" => Ok(Answer(true)),
                    "no" => Ok(Answer(false)),
                    other => Err(E::custom(format!(
                        "must be yes, no, true or false, found \"{}\"",
                        other.escape_debug()
                    ))),
                }
            }
        }
        deserializer.deserialize_any(AnswerVisitor)
    }
}

/// What must hold after a case's run. Absent keys check nothing, but `status`, which is
/// `completed` unless given.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// How the turn ended (default `completed`).
    #[serde(default)]
    pub status: Option<TurnStatus>,
    /// The final answer.
    #[serde(default)]
    pub answer: Option<TextMatch>,
    /// Calls that must have been made, in this order (others may come between), each with at
    /// least these arguments.
    #[serde(default)]
    pub calls: Option<Vec<CallExpect>>,
    /// Tools that must not have been called at all.
    #[serde(default)]
    pub not_called: Vec<String>,
    /// Exactly the tools whose calls asked for approval.
    #[serde(default)]
    pub asked: Option<Vec<String>>,
    /// Exactly the tools whose calls were blocked by policy.
    #[serde(default)]
    pub blocked: Option<Vec<String>>,
    /// Zone files after the run, by virtual path.
    #[serde(default)]
    pub files: BTreeMap<VirtualPath, FileExpect>,
    /// The structured answer holds at least these keys and values.
    #[serde(default)]
    pub output: Option<Value>,
    /// The run cost at most this many US dollars.
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
    /// The run used at most this many tokens (input and output, every worker's).
    #[serde(default)]
    pub max_tokens: Option<u64>,
}

/// An expected call.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallExpect {
    /// The tool.
    pub tool: String,
    /// Arguments the call had at least (a subset: mappings match key by key, lists item by
    /// item).
    #[serde(default)]
    pub args: Option<Value>,
}

/// How a text must look.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum TextMatch {
    /// It contains this text.
    Contains(String),
    /// This regular expression matches somewhere in it.
    Regex(Pattern),
    /// It is exactly this text.
    Equals(String),
}

/// How a zone file must look after the run.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum FileExpect {
    /// It exists and contains this text.
    Contains(String),
    /// It exists and this regular expression matches somewhere in it.
    Regex(Pattern),
    /// It exists with exactly this content.
    Equals(String),
    /// It must not exist (`absent: true`).
    Absent(AbsentFlag),
}

/// `absent: true`.
#[derive(Debug, Clone, Copy)]
pub struct AbsentFlag;

impl JsonSchema for AbsentFlag {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AbsentFlag".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Only `true`: the file must not exist.",
            "const": true
        })
    }
}

impl<'de> Deserialize<'de> for AbsentFlag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match bool::deserialize(deserializer)? {
            true => Ok(AbsentFlag),
            false => Err(serde::de::Error::custom(
                "must be true (leave the file out to check nothing about it)",
            )),
        }
    }
}

/// A regular expression, compiled as the file is read.
#[derive(Debug, Clone, JsonSchema)]
#[schemars(with = "String")]
pub struct Pattern {
    /// As written.
    pub source: String,
    /// Compiled.
    pub regex: regex::Regex,
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let source = String::deserialize(deserializer)?;
        match regex::Regex::new(&source) {
            Ok(regex) => Ok(Pattern { source, regex }),
            Err(err) => {
                let text = err.to_string();
                let why = text.lines().last().unwrap_or("").trim();
                let why = why.strip_prefix("error: ").unwrap_or(why);
                Err(serde::de::Error::custom(format!(
                    "must be a regular expression: {why}"
                )))
            }
        }
    }
}

/// A path in one of the worker's zones, `/ZONE/REST`, with no `.`, `..` or empty parts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, JsonSchema)]
#[schemars(with = "String")]
pub struct VirtualPath {
    text: String,
}

/// Why a text is not a [`VirtualPath`] of the worker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// It does not start with `/`.
    #[error("must be a virtual path starting with a zone, like /{zone}/a.md, found \"{}\"", path.escape_debug())]
    NotAbsolute {
        /// The text.
        path: String,
        /// A zone to show in the example.
        zone: String,
    },
    /// It has an empty, `.` or `..` part.
    #[error("must be a plain path inside a zone, found \"{}\" with {}", path.escape_debug(), part_name(part))]
    NotPlain {
        /// The text.
        path: String,
        /// The part.
        part: String,
    },
    /// Its first part names no zone of the worker.
    #[error("must be in one of the worker's zones, found \"{}\" ({})", path.escape_debug(), zone_list(zones))]
    UnknownZone {
        /// The text.
        path: String,
        /// The worker's zones.
        zones: Vec<String>,
    },
    /// It is a zone, not a file in one.
    #[error("must name a file inside the zone, found the zone itself \"{}\"", path.escape_debug())]
    ZoneItself {
        /// The text.
        path: String,
    },
}

fn part_name(part: &str) -> String {
    if part.is_empty() {
        "an empty part".to_owned()
    } else {
        format!("`{}`", part.escape_debug())
    }
}

fn zone_list(zones: &[String]) -> String {
    if zones.is_empty() {
        "the worker has no zones".to_owned()
    } else {
        format!(
            "its zones are {}",
            zones
                .iter()
                .map(|z| format!("/{z}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl VirtualPath {
    /// Checks `text` against `zones` (the worker's zone names).
    pub fn parse(text: &str, zones: &[String]) -> Result<VirtualPath, PathError> {
        let path = text.to_owned();
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PathError::NotAbsolute {
                path,
                zone: zones.first().cloned().unwrap_or_else(|| "notes".to_owned()),
            });
        };
        let parts: Vec<&str> = rest.split('/').collect();
        if let Some(bad) = parts
            .iter()
            .find(|part| part.is_empty() || **part == "." || **part == ".." || part.contains('\0'))
        {
            return Err(PathError::NotPlain {
                path,
                part: (*bad).to_owned(),
            });
        }
        let zone = parts.first().copied().unwrap_or("");
        if !zones.iter().any(|z| z == zone) {
            return Err(PathError::UnknownZone {
                path,
                zones: zones.to_vec(),
            });
        }
        if parts.len() < 2 {
            return Err(PathError::ZoneItself { path });
        }
        Ok(VirtualPath { text: path })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for VirtualPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

thread_local! {
    /// The zone names virtual paths are checked against while a file is read on this thread.
    static ZONES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

impl<'de> Deserialize<'de> for VirtualPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ZONES
            .with(|zones| VirtualPath::parse(&text, &zones.borrow()))
            .map_err(serde::de::Error::custom)
    }
}

/// Reads the test file at `path`, checking its virtual paths against `zones`.
pub fn load_test_file(path: &Path, zones: &[String]) -> Result<TestFile, TestError> {
    let text = read_text_file(path).map_err(|problem| match problem {
        TextFileProblem::Read(source) => TestError::Read {
            path: path.to_owned(),
            source,
        },
        TextFileProblem::NotUtf8 { line } => {
            TestError::invalid(path, line, None, TextFileProblem::NOT_UTF8)
        }
    })?;
    parse_test_file(&text, path, zones)
}

/// Parses the text of a test file; `path` names it in errors.
pub fn parse_test_file(text: &str, path: &Path, zones: &[String]) -> Result<TestFile, TestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n");
    let previous = ZONES.with(|z| z.replace(zones.to_vec()));
    let parsed = golem_runtime::worker::from_yaml::<TestFile>(&text, 1, "test file");
    ZONES.with(|z| z.replace(previous));
    let file = parsed.map_err(|problem| TestError::from_yaml(path, problem))?;
    check_cases(&file, &text, path)?;
    Ok(file)
}

/// What the types cannot say: names unique and not empty, every reply saying something.
fn check_cases(file: &TestFile, text: &str, path: &Path) -> Result<(), TestError> {
    let line_of = |needle: &str| -> u64 {
        text.lines()
            .position(|line| line.contains(needle))
            .map_or(1, |at| at as u64 + 1)
    };
    if file.cases.is_empty() {
        return Err(TestError::invalid(
            path,
            line_of("cases"),
            Some("cases"),
            "`cases` must list at least one case",
        ));
    }
    // The line of case `index`'s `name:` key (the cases are the file's only `name:` keys at
    // the start of a list item).
    let case_line = |index: usize| -> u64 {
        text.lines()
            .enumerate()
            .filter(|(_, line)| {
                let item = line.trim_start();
                item.strip_prefix('-')
                    .is_some_and(|rest| rest.trim_start().starts_with("name:"))
            })
            .nth(index)
            .map_or(1, |(at, _)| at as u64 + 1)
    };
    let mut seen: Vec<&str> = Vec::new();
    for (index, case) in file.cases.iter().enumerate() {
        let key = format!("cases[{index}].name");
        if case.name.trim().is_empty() {
            return Err(TestError::invalid(
                path,
                case_line(index),
                Some(&key),
                format!("`{key}` must not be empty"),
            ));
        }
        if seen.contains(&case.name.as_str()) {
            return Err(TestError::invalid(
                path,
                case_line(index),
                Some(&key),
                format!("`{key}`: a case named \"{}\" comes earlier", case.name),
            ));
        }
        seen.push(&case.name);
        for (at, reply) in case.model.iter().enumerate() {
            if reply.text.is_none() && reply.tool_calls.is_empty() {
                let key = format!("cases[{index}].model[{at}]");
                return Err(TestError::invalid(
                    path,
                    case_line(index),
                    Some(&key),
                    format!("`{key}` must have `text`, `tool_calls` or both"),
                ));
            }
            for (n, call) in reply.tool_calls.iter().enumerate() {
                if !call.args.is_object() {
                    let key = format!("cases[{index}].model[{at}].tool_calls[{n}].args");
                    return Err(TestError::invalid(
                        path,
                        case_line(index),
                        Some(&key),
                        format!("`{key}` must be a mapping of arguments"),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones() -> Vec<String> {
        vec!["notes".to_owned()]
    }

    fn parse(text: &str) -> Result<TestFile, TestError> {
        parse_test_file(text, Path::new("t.test.yaml"), &zones())
    }

    fn problem(text: &str) -> (u64, Option<String>, String) {
        match parse(text) {
            Err(TestError::Invalid {
                line, key, message, ..
            }) => (line, key, message),
            other => panic!("expected an invalid file, got {other:?}"),
        }
    }

    #[test]
    fn the_issue_example_reads() {
        let file = parse(
            r#"cases:
  - name: greets and keeps a note
    input: "hello, I am Ada"
    files: { /notes/greeted.md: "Bob\n" }
    model:
      - tool_calls: [{ name: write_file, args: { path: /notes/greeted.md, content: "Bob\nAda\n" } }]
      - text: "Hello Ada!"
    approve: { write_file: yes, delete_file: no }
    expect:
      status: completed
      answer: { contains: "Ada" }
      calls: [{ tool: write_file, args: { path: /notes/greeted.md } }]
      not_called: [delete_file]
      asked: [write_file]
      blocked: []
      files: { /notes/greeted.md: { contains: "Ada" }, /notes/gone.md: { absent: true } }
      output: { n: 3 }
      max_cost_usd: 0.01
      max_tokens: 5000
"#,
        )
        .unwrap();
        let case = &file.cases[0];
        assert_eq!(case.approve["write_file"], Answer(true));
        assert_eq!(case.approve["delete_file"], Answer(false));
        assert_eq!(case.model.len(), 2);
        assert_eq!(case.expect.status, Some(TurnStatus::Completed));
        assert!(matches!(
            case.expect.files.values().next(),
            Some(FileExpect::Absent(_))
        ));
        assert_eq!(case.expect.max_tokens, Some(5000));
    }

    #[test]
    fn unknown_keys_name_line_and_key() {
        let (line, key, message) =
            problem("cases:\n  - name: a\n    expect:\n      answr: { contains: x }\n");
        assert_eq!(line, 4);
        assert_eq!(key.as_deref(), Some("cases[0].expect.answr"));
        assert!(message.starts_with("unknown key `answr`"), "{message}");
        assert!(message.contains("did you mean `answer`"), "{message}");
    }

    #[test]
    fn a_bad_regex_is_a_load_error_with_line_and_key() {
        let (line, key, message) =
            problem("cases:\n  - name: a\n    expect:\n      answer: { regex: \"(unclosed\" }\n");
        assert_eq!(line, 4);
        assert_eq!(key.as_deref(), Some("cases[0].expect.answer.regex"));
        assert!(
            message.contains("must be a regular expression"),
            "{message}"
        );
    }

    #[test]
    fn escaping_or_unknown_zone_paths_are_load_errors() {
        for (path, said) in [
            ("/notes/../../x", "`..`"),
            ("/other/a.md", "one of the worker's zones"),
            ("notes/a.md", "starting with a zone"),
            ("/notes", "the zone itself"),
            ("/notes//a", "an empty part"),
        ] {
            let (line, key, message) = problem(&format!(
                "cases:\n  - name: a\n    files:\n      {path}: x\n"
            ));
            assert_eq!(line, 4, "{path}: {message}");
            assert_eq!(
                key.as_deref(),
                Some(format!("cases[0].files.{path}").as_str()),
                "{path}"
            );
            assert!(message.contains(said), "{path}: {message}");
        }
        let (line, _, message) = problem(
            "cases:\n  - name: a\n    expect:\n      files:\n        /x/../notes/a: { absent: true }\n",
        );
        assert_eq!(line, 5);
        assert!(message.contains("`..`"), "{message}");
    }

    #[test]
    fn approvals_take_words_or_booleans_only() {
        let (line, key, message) =
            problem("cases:\n  - name: a\n    approve: { write_file: maybe }\n");
        assert_eq!(line, 3);
        assert_eq!(key.as_deref(), Some("cases[0].approve.write_file"));
        assert!(message.contains("yes, no, true or false"), "{message}");
    }

    #[test]
    fn empty_replies_duplicate_names_and_no_cases_are_errors() {
        let (_, key, _) = problem("cases:\n  - name: a\n    model:\n      - {}\n");
        assert_eq!(key.as_deref(), Some("cases[0].model[0]"));
        let (line, key, message) = problem("cases:\n  - name: a\n  - name: a\n");
        assert_eq!(key.as_deref(), Some("cases[1].name"));
        assert!(message.contains("comes earlier"), "{message}");
        assert_eq!(line, 3);
        let (_, key, _) = problem("cases: []\n");
        assert_eq!(key.as_deref(), Some("cases"));
        let (_, key, message) = problem(
            "cases:\n  - name: a\n    expect: { files: { /notes/a: { absent: false } } }\n",
        );
        assert_eq!(
            key.as_deref(),
            Some("cases[0].expect.files./notes/a.absent"),
            "{message}"
        );
    }

    #[test]
    fn a_file_that_is_not_utf8_is_an_error_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.test.yaml");
        std::fs::write(&path, b"cases:\n  - name: \xff\n").unwrap();
        match load_test_file(&path, &zones()) {
            Err(TestError::Invalid { line, message, .. }) => {
                assert_eq!(line, 2);
                assert_eq!(message, "the file is not UTF-8 text");
            }
            other => panic!("{other:?}"),
        }
    }
}
