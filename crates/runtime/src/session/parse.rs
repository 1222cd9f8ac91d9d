//! Reading a transcript file line by line, with the rules for damage a killed process leaves:
//! a last line without its newline that does not parse was cut mid-write (flagged, skipped);
//! a line that stops short of a complete JSON value was cut and later terminated by
//! [`SessionStore::reopen`](super::SessionStore::reopen) (skipped, its number reported); any
//! other line that does not parse is corruption, reported with the file and the line.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::error::Category;

use super::error::SessionError;

/// What the reader skipped.
#[derive(Debug, Default)]
pub(crate) struct Skipped {
    /// The last line was cut mid-write.
    pub(crate) partial_tail: bool,
    /// Line numbers (from 1) of cut entries, the partial tail included.
    pub(crate) lines: Vec<usize>,
}

/// Parses each non-blank line of `bytes` (the contents of `path`) as a `T` and hands it to
/// `each` with its line number.
pub(crate) fn parse_lines<T: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    mut each: impl FnMut(usize, T) -> Result<(), SessionError>,
) -> Result<Skipped, SessionError> {
    let mut skipped = Skipped::default();
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
        match serde_json::from_slice::<T>(line) {
            Ok(value) => each(number, value)?,
            Err(_) if number == count && !ends_with_newline => {
                tracing::debug!(
                    path = %path.display(),
                    line = number,
                    "the last entry was cut off mid-write; ignoring it"
                );
                skipped.partial_tail = true;
                skipped.lines.push(number);
            }
            Err(err) if err.classify() == Category::Eof => {
                tracing::debug!(
                    path = %path.display(),
                    line = number,
                    "an entry was cut off mid-write by a killed process; ignoring it"
                );
                skipped.lines.push(number);
            }
            Err(err) => {
                return Err(SessionError::Corrupt {
                    path: path.to_owned(),
                    line: number,
                    message: describe(&err),
                });
            }
        }
    }
    Ok(skipped)
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

    use serde_json::Value;

    use super::parse_lines;

    fn parse(text: &str) -> Result<(Vec<usize>, bool, Vec<usize>), String> {
        let mut seen = Vec::new();
        parse_lines::<Value>(Path::new("t.jsonl"), text.as_bytes(), |n, _| {
            seen.push(n);
            Ok(())
        })
        .map(|s| (seen, s.partial_tail, s.lines))
        .map_err(|e| e.to_string())
    }

    #[test]
    fn classifies_damage() {
        assert_eq!(parse(""), Ok((vec![], false, vec![])));
        assert_eq!(parse("{}\n{}\n"), Ok((vec![1, 2], false, vec![])));
        assert_eq!(
            parse("{}\n\n{}"),
            Ok((vec![1, 3], false, vec![])),
            "complete last line"
        );
        assert_eq!(parse("{}\n{\"a\":"), Ok((vec![1], true, vec![2])));
        assert_eq!(
            parse("{}\n\u{0}\u{0}"),
            Ok((vec![1], true, vec![2])),
            "torn tail"
        );
        assert_eq!(
            parse("{}\n{\"a\": \"x\n{}\n"),
            Ok((vec![1, 3], false, vec![2])),
            "a cut line terminated by reopen"
        );
        assert_eq!(
            parse("{}\n{\"a\" 1}\n{}\n"),
            Err("t.jsonl line 2: invalid JSON at column 6: expected `:`".into())
        );
        assert_eq!(
            parse("{}\n{} x\n{}\n"),
            Err("t.jsonl line 2: invalid JSON at column 4: trailing characters".into())
        );
    }
}
