//! The one reader of transcript files: every command that reads a transcript (listing,
//! showing, exporting, resuming, forking, importing) goes through [`read_lines`], so that an
//! entry one of them accepts is never one another refuses.
//!
//! Each line's `kind` is decoded first, with its `at` (the Unix milliseconds it was written
//! at; lines written before lines were stamped have none, and a value that is not a whole
//! number of milliseconds reads as none: the time is a note about the line, never a reason to
//! refuse it). A kind this version does not know (a newer golem-forge
//! wrote it), or an `event` whose event `type` it does not know, is skipped and reported
//! ([`UnknownLine`]), never an error. Then the rules for damage a killed process leaves: a last
//! line without its newline that does not parse was cut mid-write (flagged, skipped); a line
//! that stops short of a complete JSON value was cut and later terminated by
//! [`SessionStore::reopen`](super::SessionStore::reopen) (skipped, its number reported); any
//! other line that does not parse, or whose known kind does not decode, is corruption, handed
//! to the caller as [`Line::Corrupt`] naming the file and the line: a listing lists the session
//! anyway, while what replays or renders it refuses it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use golem_protocol::DisplayEvent;
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::error::Category;

use super::entry::{EntryKind, TranscriptEntry};
use super::error::SessionError;

/// A line the reader passed over because this version does not know what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLine {
    /// The line number (from 1).
    pub line: usize,
    /// Its `kind` tag.
    pub kind: String,
    /// For an `event` of a known kind, the event `type` this version does not know.
    pub event_type: Option<String>,
}

impl UnknownLine {
    /// What it holds, in words: ``kind `x` `` or ``event type `y` ``.
    fn what(&self) -> String {
        match &self.event_type {
            Some(event_type) => format!("event type `{event_type}`"),
            None => format!("kind `{}`", self.kind),
        }
    }
}

/// The one warning about the lines of `file` that were skipped as unknown (`None` when there
/// are none): their numbers and what they hold.
pub fn unknown_lines_warning(file: &str, lines: &[UnknownLine]) -> Option<String> {
    let (first, rest) = lines.split_first()?;
    let mut what: Vec<String> = Vec::new();
    for line in lines {
        let text = line.what();
        if !what.contains(&text) {
            what.push(text);
        }
    }
    let numbers: Vec<String> = lines.iter().map(|l| l.line.to_string()).collect();
    Some(if rest.is_empty() {
        format!(
            "skipped line {} of {file}: an entry of {}, which this version does not know (a \
             newer golem-forge wrote it)",
            first.line,
            what.join(""),
        )
    } else {
        format!(
            "skipped lines {} of {file}: entries of {}, which this version does not know (a \
             newer golem-forge wrote them)",
            numbers.join(", "),
            what.join(", "),
        )
    })
}

/// One line as the reader hands it over.
#[derive(Debug)]
pub(crate) enum Line {
    /// A decoded entry, with the time it was written at (Unix milliseconds; `None` for a line
    /// without one).
    Entry(Box<TranscriptEntry>, Option<u64>),
    /// An entry of this kind, not decoded (the caller did not ask for its kind).
    Skimmed(EntryKind),
    /// A line that is not a transcript entry: the error names the file and the line.
    Corrupt(SessionError),
}

/// What the reader skipped.
#[derive(Debug, Default)]
pub(crate) struct Skipped {
    /// The last line was cut mid-write.
    pub(crate) partial_tail: bool,
    /// Line numbers (from 1) of cut entries, the partial tail included.
    pub(crate) lines: Vec<usize>,
    /// Lines this version does not know.
    pub(crate) unknown: Vec<UnknownLine>,
}

/// The `kind` and `at` of a line, the rest ignored.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    /// When the line was written, in Unix milliseconds.
    #[serde(default, deserialize_with = "stamp")]
    at: Option<u64>,
}

/// A line's `at`: its milliseconds when it is a whole number that fits in a `u64`, `None` for
/// anything else (a line of a newer kind may give `at` another meaning; it is still told apart
/// by its `kind`, and an entry of a known kind still decodes).
fn stamp<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stamp {
        Millis(u64),
        Other(IgnoredAny),
    }
    Ok(match Stamp::deserialize(deserializer)? {
        Stamp::Millis(ms) => Some(ms),
        Stamp::Other(_) => None,
    })
}

/// The event `type` of an `event` line, the rest ignored.
#[derive(Deserialize)]
struct EventHead<'a> {
    #[serde(borrow)]
    event: TypeHead<'a>,
}

#[derive(Deserialize)]
struct TypeHead<'a> {
    #[serde(borrow, rename = "type")]
    event_type: Cow<'a, str>,
}

/// Reads each non-blank line of `bytes` (the contents of `path`) and hands it to `each` with
/// its line number: decoded when `decode` says so for its kind, else only its kind.
pub(crate) fn read_lines(
    path: &Path,
    bytes: &[u8],
    decode: impl Fn(EntryKind) -> bool,
    mut each: impl FnMut(usize, Line) -> Result<(), SessionError>,
) -> Result<Skipped, SessionError> {
    let mut skipped = Skipped::default();
    let mut event_types = EventTypes::default();
    let ends_with_newline = bytes.last() == Some(&b'\n');
    let body = if ends_with_newline {
        &bytes[..bytes.len() - 1]
    } else {
        bytes
    };
    if body.is_empty() && !ends_with_newline {
        return Ok(skipped);
    }
    let count = body.split(|&b| b == b'\n').count();
    for (index, line) in body.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let head = match serde_json::from_slice::<Head<'_>>(line) {
            Ok(head) => head,
            Err(_) if number == count && !ends_with_newline => {
                tracing::debug!(
                    path = %path.display(),
                    line = number,
                    "the last entry was cut off mid-write; ignoring it"
                );
                skipped.partial_tail = true;
                skipped.lines.push(number);
                continue;
            }
            Err(err) if err.classify() == Category::Eof => {
                tracing::debug!(
                    path = %path.display(),
                    line = number,
                    "an entry was cut off mid-write by a killed process; ignoring it"
                );
                skipped.lines.push(number);
                continue;
            }
            Err(err) => {
                each(number, Line::Corrupt(corrupt(path, number, &err)))?;
                continue;
            }
        };
        let Some(kind) = EntryKind::from_tag(&head.kind) else {
            skipped.unknown.push(UnknownLine {
                line: number,
                kind: head.kind.into_owned(),
                event_type: None,
            });
            continue;
        };
        if !decode(kind) {
            // Told apart all the same, so that every reader warns about the same lines.
            match event_types.unknown(kind, line) {
                Some(event_type) => skipped.unknown.push(UnknownLine {
                    line: number,
                    kind: kind.as_str().to_owned(),
                    event_type: Some(event_type),
                }),
                None => each(number, Line::Skimmed(kind))?,
            }
            continue;
        }
        match serde_json::from_slice::<TranscriptEntry>(line) {
            Ok(entry) => each(number, Line::Entry(Box::new(entry), head.at))?,
            Err(err) => match event_types.unknown(kind, line) {
                Some(event_type) => skipped.unknown.push(UnknownLine {
                    line: number,
                    kind: kind.as_str().to_owned(),
                    event_type: Some(event_type),
                }),
                None => each(number, Line::Corrupt(corrupt(path, number, &err)))?,
            },
        }
    }
    Ok(skipped)
}

/// Which event types this version knows, found out once per type for one file: a transcript
/// holds thousands of events of a few dozen types, and a listing skims every one.
#[derive(Default)]
struct EventTypes(HashMap<String, bool>);

impl EventTypes {
    /// The event type of an `event` line, when this version does not know it.
    fn unknown(&mut self, kind: EntryKind, line: &[u8]) -> Option<String> {
        if kind != EntryKind::Event {
            return None;
        }
        let head = serde_json::from_slice::<EventHead<'_>>(line).ok()?;
        let event_type = head.event.event_type;
        let known = match self.0.get(event_type.as_ref()) {
            Some(known) => *known,
            None => {
                let known = knows_event_type(&event_type);
                self.0.insert(event_type.clone().into_owned(), known);
                known
            }
        };
        (!known).then(|| event_type.into_owned())
    }
}

/// Whether `event_type` names a display event of this version: an object holding only that
/// `type` decodes, or fails for want of a field rather than for its variant.
fn knows_event_type(event_type: &str) -> bool {
    let probe = serde_json::json!({ "type": event_type });
    match serde_json::from_value::<DisplayEvent>(probe) {
        Ok(_) => true,
        Err(err) => !err.to_string().starts_with("unknown variant"),
    }
}

fn corrupt(path: &Path, line: usize, err: &serde_json::Error) -> SessionError {
    SessionError::Corrupt {
        path: path.to_owned(),
        line,
        message: describe(err),
    }
}

/// serde_json's message without its " at line 1 column N" (we name the file's line), with
/// the column kept when it helps.
fn describe(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let message = match text.rfind(" at line ") {
        Some(at) => &text[..at],
        None => text.as_str(),
    };
    match err.classify() {
        Category::Syntax => format!("invalid JSON at column {}: {message}", err.column()),
        Category::Data => format!("not a transcript entry: {message}"),
        Category::Io | Category::Eof => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{EntryKind, Line, UnknownLine, read_lines, unknown_lines_warning};

    /// A line every version reads.
    const OK: &str = r#"{"kind":"cleared"}"#;

    /// What reading `text` (every kind decoded) gives: the lines handed over, whether the tail
    /// was cut, the cut lines, the unknown ones (number and what), and the corrupt ones.
    #[allow(clippy::type_complexity)]
    fn read(
        text: &str,
    ) -> (
        Vec<usize>,
        bool,
        Vec<usize>,
        Vec<(usize, String)>,
        Vec<String>,
    ) {
        let mut seen = Vec::new();
        let mut corrupt = Vec::new();
        let skipped = read_lines(
            Path::new("t.jsonl"),
            text.as_bytes(),
            |_| true,
            |n, line| {
                match line {
                    Line::Entry(..) | Line::Skimmed(_) => seen.push(n),
                    Line::Corrupt(err) => corrupt.push(err.to_string()),
                }
                Ok(())
            },
        )
        .unwrap();
        let unknown = skipped.unknown.iter().map(|u| (u.line, u.what())).collect();
        (seen, skipped.partial_tail, skipped.lines, unknown, corrupt)
    }

    #[test]
    fn classifies_damage() {
        assert_eq!(read(""), (vec![], false, vec![], vec![], vec![]));
        assert_eq!(
            read(&format!("{OK}\n{OK}\n")),
            (vec![1, 2], false, vec![], vec![], vec![])
        );
        assert_eq!(
            read(&format!("{OK}\n\n{OK}")),
            (vec![1, 3], false, vec![], vec![], vec![]),
            "complete last line"
        );
        assert_eq!(
            read(&format!("{OK}\n{{\"kind\":")),
            (vec![1], true, vec![2], vec![], vec![])
        );
        assert_eq!(
            read(&format!("{OK}\n\u{0}\u{0}")),
            (vec![1], true, vec![2], vec![], vec![]),
            "torn tail"
        );
        assert_eq!(
            read(&format!("{OK}\n{{\"kind\": \"x\n{OK}\n")),
            (vec![1, 3], false, vec![2], vec![], vec![]),
            "a cut line terminated by reopen"
        );
        assert_eq!(
            read(&format!("{OK}\n{{\"kind\" 1}}\n{OK}\n")),
            (
                vec![1, 3],
                false,
                vec![],
                vec![],
                vec!["t.jsonl line 2: invalid JSON at column 9: expected `:`".into()]
            ),
            "corruption is handed over, and reading goes on"
        );
        assert_eq!(
            read(&format!("{OK}\n{OK} x\n{OK}\n")).4,
            ["t.jsonl line 2: invalid JSON at column 20: trailing characters"]
        );
        assert_eq!(
            read("{}\n").4,
            ["t.jsonl line 1: not a transcript entry: missing field `kind`"]
        );
        assert_eq!(
            read("{\"kind\":\"input\",\"content\":7}\n").4,
            [
                "t.jsonl line 1: not a transcript entry: invalid type: integer `7`, expected a \
                 string"
            ]
        );
    }

    #[test]
    fn kinds_and_event_types_this_version_does_not_know_are_skipped() {
        let text = format!(
            "{OK}\n{}\n{}\n{}\n{OK}\n",
            r#"{"kind":"bookmark","at":3}"#,
            r#"{"kind":"event","event":{"type":"weather","sky":"grey"}}"#,
            r#"{"kind":"event","event":{"type":"status"}}"#,
        );
        let (seen, partial, cut, unknown, corrupt) = read(&text);
        assert_eq!(seen, [1, 5]);
        assert!(!partial && cut.is_empty());
        assert_eq!(
            unknown,
            [
                (2, "kind `bookmark`".to_owned()),
                (3, "event type `weather`".to_owned())
            ]
        );
        assert_eq!(
            corrupt,
            ["t.jsonl line 4: not a transcript entry: missing field `level`"],
            "a known event type that does not decode is corruption"
        );
    }

    /// Each entry comes with its `at`; a line without one, or with one that is not a whole
    /// number of milliseconds, comes with none and reads all the same, and an unknown kind
    /// with an `at` of its own is still told apart by its kind.
    #[test]
    fn each_entry_comes_with_its_time_and_an_odd_time_reads_as_none() {
        let text = [
            r#"{"kind":"cleared","at":1795315512345}"#,
            OK,
            r#"{"kind":"input","content":"x","at":18446744073709551615}"#,
            r#"{"kind":"cleared","at":"yesterday"}"#,
            r#"{"kind":"cleared","at":-1}"#,
            r#"{"kind":"cleared","at":1.5}"#,
            r#"{"kind":"cleared","at":null}"#,
            r#"{"kind":"cleared","at":{"deep":[1,2]}}"#,
            r#"{"kind":"bookmark","at":{"line":3}}"#,
            r#"{"at":7,"kind":"cleared"}"#,
        ]
        .join("\n");
        let mut times = Vec::new();
        let skipped = read_lines(
            Path::new("t.jsonl"),
            text.as_bytes(),
            |_| true,
            |n, line| {
                match line {
                    Line::Entry(_, at) => times.push((n, at)),
                    Line::Skimmed(kind) => panic!("{kind:?} skimmed"),
                    Line::Corrupt(err) => panic!("{err}"),
                }
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            times,
            [
                (1, Some(1_795_315_512_345)),
                (2, None),
                (3, Some(u64::MAX)),
                (4, None),
                (5, None),
                (6, None),
                (7, None),
                (8, None),
                (10, Some(7)),
            ]
        );
        assert_eq!(
            skipped.unknown,
            [UnknownLine {
                line: 9,
                kind: "bookmark".into(),
                event_type: None
            }]
        );
    }

    #[test]
    fn only_the_kinds_asked_for_are_decoded_and_unknown_events_are_told_apart_anyway() {
        let text = format!(
            "{OK}\n{}\n{}\n{}\n",
            r#"{"kind":"message","message":{"role":"nobody"}}"#,
            r#"{"kind":"event","event":{"type":"weather"}}"#,
            r#"{"kind":"event","event":{"type":"status"}}"#,
        );
        let mut kinds = Vec::new();
        let skipped = read_lines(
            Path::new("t.jsonl"),
            text.as_bytes(),
            |kind| kind == EntryKind::Cleared,
            |_, line| {
                kinds.push(match line {
                    Line::Entry(entry, _) => Ok(entry.entry_kind()),
                    Line::Skimmed(kind) => Err(kind),
                    Line::Corrupt(err) => panic!("{err}"),
                });
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            kinds,
            [
                Ok(EntryKind::Cleared),
                Err(EntryKind::Message),
                Err(EntryKind::Event)
            ]
        );
        assert_eq!(
            skipped.unknown,
            [UnknownLine {
                line: 3,
                kind: "event".into(),
                event_type: Some("weather".into())
            }]
        );
    }

    #[test]
    fn one_warning_names_the_file_and_the_lines() {
        let unknown = |line: usize, kind: &str, event_type: Option<&str>| UnknownLine {
            line,
            kind: kind.into(),
            event_type: event_type.map(str::to_owned),
        };
        assert_eq!(unknown_lines_warning("a.jsonl", &[]), None);
        assert_eq!(
            unknown_lines_warning("a.jsonl", &[unknown(176, "bookmark", None)]).unwrap(),
            "skipped line 176 of a.jsonl: an entry of kind `bookmark`, which this version does \
             not know (a newer golem-forge wrote it)"
        );
        assert_eq!(
            unknown_lines_warning(
                "a.jsonl",
                &[
                    unknown(3, "bookmark", None),
                    unknown(4, "event", Some("weather")),
                    unknown(9, "bookmark", None),
                ]
            )
            .unwrap(),
            "skipped lines 3, 4, 9 of a.jsonl: entries of kind `bookmark`, event type \
             `weather`, which this version does not know (a newer golem-forge wrote them)"
        );
    }
}
