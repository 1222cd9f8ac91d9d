//! YAML diagnostics shared by worker files and program config: deserialize with serde-saphyr
//! while tracking the path of keys, and turn a failure into one problem a person can act on —
//! the line, the key and what was wrong (`unknown key `toolset` (did you mean `toolsets`?)`).
//!
//! serde-saphyr attaches a source location to every error, including errors raised by our own
//! `deserialize_with` validators; `serde_path_to_error` supplies the key path. Messages written
//! by validators that start with `must` read as a sentence after the key.
//!
//! Scalars follow YAML 1.2's core schema: only `true` and `false` (any case) are booleans, so
//! a bare `n`, `y`, `yes`, `no`, `on` or `off` is a string wherever an untyped value is read (a
//! JSON Schema's `required` or `enum`, say), as every YAML 1.2 parser reads it. A boolean key
//! given a YAML 1.1 spelling is an error at its line that says what to write.

use serde::de::DeserializeOwned;
use serde_path_to_error::{Segment, Track};
use serde_saphyr::{Error, Location};

use super::suggest::did_you_mean;

/// Why a YAML file could not be read as text.
#[derive(Debug)]
pub enum TextFileProblem {
    /// Reading it failed.
    Read(std::io::Error),
    /// It is not UTF-8 from this 1-based line on.
    NotUtf8 {
        /// The line of the first byte that is not UTF-8.
        line: u64,
    },
}

impl TextFileProblem {
    /// The message for [`TextFileProblem::NotUtf8`].
    pub const NOT_UTF8: &'static str = "the file is not UTF-8 text";
}

/// The text of the file at `path` (worker files, test files): its bytes as UTF-8, or where the
/// first byte that is not lies.
pub fn read_text_file(path: &std::path::Path) -> Result<String, TextFileProblem> {
    let bytes = std::fs::read(path).map_err(TextFileProblem::Read)?;
    String::from_utf8(bytes).map_err(|err| {
        let valid = err
            .as_bytes()
            .get(..err.utf8_error().valid_up_to())
            .unwrap_or(&[]);
        let line = 1 + valid.iter().filter(|b| **b == b'\n').count() as u64;
        TextFileProblem::NotUtf8 { line }
    })
}

/// One problem in a YAML document, located in the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlProblem {
    /// 1-based line in the file.
    pub line: u64,
    /// The dotted key path (`toolsets.shell.rules[2].approval`), if the problem has one.
    pub key: Option<String>,
    /// What is wrong, naming the key.
    pub message: String,
}

/// Deserializes `text`, a YAML document that starts on line `first_line` of its file.
/// `document` names the whole document in messages about its shape ("the front matter").
pub fn from_yaml<T: DeserializeOwned>(
    text: &str,
    first_line: u64,
    document: &str,
) -> Result<T, YamlProblem> {
    let options = serde_saphyr::options! { with_snippet: false, strict_booleans: true };
    let mut failed_at: Option<serde_path_to_error::Path> = None;
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        let mut track = Track::new();
        T::deserialize(serde_path_to_error::Deserializer::new(de, &mut track))
            .inspect_err(|_| failed_at = Some(track.path()))
    });
    result.map_err(|err| {
        let segments = failed_at.as_ref().map(key_segments).unwrap_or_default();
        describe(&err, &segments, text, first_line, document)
    })
}

pub(crate) use golem_toolset::config::or_default;

/// The path as key names and `[index]` parts; serde-saphyr's `Spanned` wrappers and unknown
/// segments are left out.
fn key_segments(path: &serde_path_to_error::Path) -> Vec<String> {
    path.iter()
        .filter_map(|segment| match segment {
            Segment::Seq { index } => Some(format!("[{index}]")),
            Segment::Map { key } => Some(key.clone()),
            Segment::Enum { variant } => Some(variant.clone()),
            Segment::Unknown => None,
        })
        .collect()
}

/// Joins segments into `a.b[2].c`.
fn join_key(segments: &[String]) -> String {
    let mut key = String::new();
    for segment in segments {
        if !key.is_empty() && !segment.starts_with('[') {
            key.push('.');
        }
        key.push_str(segment);
    }
    key
}

fn describe(
    err: &Error,
    segments: &[String],
    text: &str,
    first_line: u64,
    document: &str,
) -> YamlProblem {
    let err = innermost(err);
    let location = err.location();
    let line = location
        .map(|l| l.line())
        .filter(|line| *line > 0)
        .unwrap_or(1)
        .saturating_add(first_line.saturating_sub(1));
    let key = join_key(segments);
    let subject = if key.is_empty() {
        format!("the {document}")
    } else {
        format!("`{key}`")
    };
    let found = || found_at(text, location, false);
    let found_scalar = || found_at(text, location, true);
    let message = match err {
        Error::SerdeUnknownField {
            field, expected, ..
        } => {
            let parent = join_key(
                segments
                    .get(..segments.len().saturating_sub(1))
                    .unwrap_or(&[]),
            );
            unknown_key(field, expected, &parent)
        }
        Error::SerdeUnknownVariant {
            variant, expected, ..
        } => {
            let choices = expected
                .iter()
                .map(|choice| format!("`{choice}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let found = if is_null(variant) {
                "nothing".to_owned()
            } else {
                format!("\"{variant}\"")
            };
            let mut message = format!("{subject} must be one of {choices}, found {found}");
            if let Some(near) = did_you_mean(variant, expected.iter().copied()) {
                message.push_str(&format!(" (did you mean `{near}`?)"));
            }
            message
        }
        Error::SerdeMissingField { field, .. } if key.is_empty() => {
            format!("missing key `{field}`")
        }
        Error::SerdeMissingField { field, .. } => format!("missing key `{field}` in `{key}`"),
        Error::SerdeInvalidType {
            unexpected,
            expected,
            ..
        }
        | Error::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => format!(
            "{subject} must be {}, found {}",
            expected_phrase(expected),
            found_phrase(unexpected).unwrap_or_else(found)
        ),
        Error::InvalidScalar { ty, .. } => {
            format!(
                "{subject} must be {}, found {}",
                expected_phrase(ty),
                found_scalar()
            )
        }
        Error::InvalidBooleanStrict { .. } => format!(
            "{subject} must be true or false, found {} (YAML 1.2 reads `yes`, `no`, `on` and \
             `off` as text)",
            found_scalar()
        ),
        Error::NullIntoString { .. } => format!("{subject} must be a string, found nothing"),
        Error::Unexpected { expected, .. } => {
            format!(
                "{subject} must be {}, found {}",
                expected_phrase(expected),
                found()
            )
        }
        Error::ExternallyTaggedEnumExpectedScalarOrMapping { .. }
        | Error::UnexpectedValueForUnitEnumVariant { .. } => {
            format!("{subject} must be a single word, found {}", found())
        }
        Error::Eof { .. } => format!("{subject} ends before a value"),
        Error::DuplicateMappingKey { key: Some(dup), .. } => format!("duplicate key `{dup}`"),
        Error::DuplicateMappingKey { key: None, .. } => "duplicate key".to_owned(),
        Error::Message { msg, .. } if msg.starts_with("must ") => format!("{subject} {msg}"),
        Error::Message { msg, .. } if key.is_empty() => msg.clone(),
        Error::Message { msg, .. } => format!("{subject}: {msg}"),
        other => {
            use serde_saphyr::MessageFormatter as _;
            let text = serde_saphyr::UserMessageFormatter.format_message(other);
            format!("invalid YAML: {}", visible_controls(&text))
        }
    };
    let key = match err {
        // The problem is about the missing key, not the mapping that lacks it.
        Error::SerdeMissingField { field, .. } if key.is_empty() => (*field).to_owned(),
        Error::SerdeMissingField { field, .. } => format!("{key}.{field}"),
        _ => key,
    };
    YamlProblem {
        line,
        key: (!key.is_empty()).then_some(key),
        message,
    }
}

/// The parser's message on one line: control characters (a newline, an escape) written as
/// escapes, everything else, quotes included, as it is.
fn visible_controls(text: &str) -> String {
    text.trim()
        .chars()
        .map(|c| match c {
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// The error itself, out of snippet and alias wrappers.
fn innermost(err: &Error) -> &Error {
    match err.without_snippet() {
        Error::AliasError { error, .. } => innermost(error),
        other => other,
    }
}

fn unknown_key(field: &str, expected: &[&str], parent: &str) -> String {
    let mut message = format!("unknown key `{field}`");
    if !parent.is_empty() {
        message.push_str(&format!(" in `{parent}`"));
    }
    if let Some(near) = did_you_mean(field, expected.iter().copied()) {
        message.push_str(&format!(" (did you mean `{near}`?)"));
    } else if expected.is_empty() {
        message.push_str(" (it takes no keys)");
    } else {
        let keys = expected
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        message.push_str(&format!(" (expected one of {keys})"));
    }
    message
}

/// What serde or serde-saphyr expected, in words.
fn expected_phrase(expected: &str) -> &str {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "bool" | "boolean" | "a boolean" => "true or false",
        "char" | "a character" => "a single character",
        "string scalar" | "a string" | "path string" => "a single value",
        "sequence start" | "a sequence" => "a list",
        "mapping start" | "a map" => "a mapping of keys",
        other => other,
    }
}

/// serde's description of an unexpected value, in words, when it is structural.
fn found_phrase(unexpected: &str) -> Option<String> {
    match unexpected {
        "sequence" => Some("a list".to_owned()),
        "map" => Some("a mapping".to_owned()),
        "unit value" | "null" | "none" => Some("nothing".to_owned()),
        _ => None,
    }
}

/// The value at `location`, as written: `"many"`, `nothing`, or — unless it is known to be
/// a `scalar` — `a list` or `a mapping`.
fn found_at(text: &str, location: Option<Location>, scalar: bool) -> String {
    let span = location.map(|l| l.span());
    let start = span
        .and_then(|span| span.byte_offset())
        .and_then(|offset| usize::try_from(offset).ok());
    let Some(rest) = start.and_then(|start| text.get(start..)) else {
        return "something else".to_owned();
    };
    let len = span
        .and_then(|span| span.byte_len())
        .and_then(|len| usize::try_from(len).ok())
        .unwrap_or(0);
    // An empty value (`key:`) is an empty span at its key's colon.
    if rest.trim().is_empty() || (len == 0 && rest.starts_with(':')) {
        return "nothing".to_owned();
    }
    let line = rest.lines().next().unwrap_or("").trim_end();
    if !scalar {
        if line.starts_with('[') || line == "-" || line.starts_with("- ") {
            return "a list".to_owned();
        }
        if line.starts_with('{') || looks_like_key(line) {
            return "a mapping".to_owned();
        }
    }
    let value = if len > 0 {
        rest.get(..len).unwrap_or(line)
    } else {
        line
    }
    .trim();
    if value.is_empty() || is_null(value) {
        return "nothing".to_owned();
    }
    let unquoted = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value);
    let shown: String = unquoted.chars().take(MAX_SHOWN_CHARS).collect();
    let more = if shown.len() < unquoted.len() {
        "…"
    } else {
        ""
    };
    format!("\"{}{more}\"", shown.escape_debug())
}

/// How much of a wrong value a message quotes.
const MAX_SHOWN_CHARS: usize = 60;

/// Whether a scalar is YAML's null.
fn is_null(value: &str) -> bool {
    matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

/// Whether a line starts with `key:` (a block mapping).
fn looks_like_key(line: &str) -> bool {
    if line.starts_with('"') || line.starts_with('\'') {
        return false;
    }
    line.find(':')
        .is_some_and(|at| matches!(line.as_bytes().get(at + 1), None | Some(b' ' | b'\t')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_paths_join() {
        let parts = |s: &[&str]| s.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>();
        assert_eq!(join_key(&parts(&[])), "");
        assert_eq!(join_key(&parts(&["a"])), "a");
        assert_eq!(
            join_key(&parts(&["toolsets", "shell", "rules", "[2]", "approval"])),
            "toolsets.shell.rules[2].approval"
        );
        assert_eq!(join_key(&parts(&["[0]", "x"])), "[0].x");
    }

    #[test]
    fn keys_recognised() {
        assert!(looks_like_key("a: 1"));
        assert!(looks_like_key("a:"));
        assert!(!looks_like_key("http://x"));
        assert!(!looks_like_key("\"a: b\""));
        assert!(!looks_like_key("plain"));
    }
}
