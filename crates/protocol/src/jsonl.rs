//! JSON Lines as every writer of ours writes them (`run --json`, session transcripts,
//! `--record`): one JSON value per line, with the characters that some readers take for a line
//! break escaped.
//!
//! JSON allows U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR and U+0085 NEXT LINE raw inside
//! strings, and `serde_json` writes them so; but JavaScript line readers, Python's
//! `str.splitlines` and Unicode-aware editors end a line there, and would cut one event in two.
//! Outside strings serialized JSON has only ASCII whitespace, so the three can only be inside a
//! string, where `\u2028`, `\u2029` and `\u0085` mean the same character: a textual replacement
//! after serialization keeps the value and leaves `\n` as the only line break.

use serde::Serialize;

/// The characters escaped by [`escape_line_breaks`].
const LINE_BREAKS: [char; 3] = ['\u{85}', '\u{2028}', '\u{2029}'];

/// `value` as one line of JSON Lines, without the final `\n`: compact JSON in which U+2028,
/// U+2029 and U+0085 are written as `\u` escapes, so the text has no line break of any kind.
pub fn to_jsonl_line<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    serde_json::to_string(value).map(escape_line_breaks)
}

/// Replaces U+2028, U+2029 and U+0085 in serialized JSON `json` by their `\u` escapes (for a
/// line that was serialized elsewhere, such as a stored transcript line). Only valid JSON text
/// keeps its meaning; without those characters, `json` comes back as it was.
pub fn escape_line_breaks(json: String) -> String {
    if !json.contains(LINE_BREAKS) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '\u{85}' => out.push_str("\\u0085"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::DisplayEvent;

    #[test]
    fn line_breaks_in_strings_and_keys_are_escaped_and_read_back_unchanged() {
        let value = json!({
            "text": "one\u{2028}two\u{2029}three\u{85}four\nfive\\\u{2028}",
            "key\u{2028}": ["\u{2029}"],
            "plain": "é ✓ 😀",
        });
        let line = to_jsonl_line(&value).unwrap();
        for c in ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'] {
            assert!(!line.contains(c), "{c:?} in {line}");
        }
        assert!(line.contains(r"one\u2028two\u2029three\u0085four\nfive\\\u2028"));
        assert!(line.contains("é ✓ 😀"), "other characters stay raw: {line}");
        let back: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, value);
        assert_eq!(line.lines().count(), 1);
    }

    #[test]
    fn events_round_trip_and_lines_without_breaks_are_untouched() {
        let event = DisplayEvent::Message {
            message: crate::ChatMessage {
                role: crate::Role::Assistant,
                content: "a\u{2028}b".to_owned(),
            },
            worker: None,
        };
        let line = to_jsonl_line(&event).unwrap();
        assert!(line.contains(r"a\u2028b"), "{line}");
        let back: DisplayEvent = serde_json::from_str(&line).unwrap();
        assert_eq!(back, event);

        let plain = serde_json::to_string(&json!({"a": "b"})).unwrap();
        assert_eq!(escape_line_breaks(plain.clone()), plain);
    }
}
