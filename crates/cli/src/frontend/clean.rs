//! Text from outside golem-forge — a model, a tool, a file, a worker's config, a transcript —
//! made safe to write to a terminal: every character that could drive the terminal is drawn as
//! a visible stand-in, so such text can neither clear the screen, move the cursor, set the
//! window title, overwrite a line from its start, nor make a path read differently from the
//! real one.
//!
//! This is the one mapping every front end uses (the result renderers, the streaming markdown,
//! the chat's screen, `run`'s prompt, trace and answer, errors, `sessions show`, `check`):
//! C0 controls become their Unicode control pictures (ESC `␛`, BEL `␇`, CR `␍`), DEL is `␡`,
//! and C1 controls (U+0080–U+009F) and the bidirectional overrides and isolates (U+202A–U+202E,
//! U+2066–U+2069) are written out as `\u{…}`. Nothing else is changed. It must be applied to
//! outside text *before* our own styling is added: our ANSI codes are written around cleaned
//! text, never through it.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

/// Columns between tab stops when tabs are expanded.
pub const TAB_WIDTH: usize = 4;

/// A character as it is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cleaned {
    /// The character itself or its one-character stand-in.
    Char(char),
    /// A tab, as this many spaces.
    Spaces(usize),
    /// A control without a picture, written out as `\u{…}` (see [`escape_code`]).
    Code(char),
}

impl Cleaned {
    /// Appends what is shown to `out`.
    pub fn push_to(self, out: &mut String) {
        match self {
            Cleaned::Char(c) => out.push(c),
            Cleaned::Spaces(n) => out.extend(std::iter::repeat_n(' ', n)),
            Cleaned::Code(c) => out.push_str(&escape_code(c)),
        }
    }
}

/// Whether `c` must not reach a terminal as it is: C0 controls (tab and newline included),
/// DEL, C1 controls, and the bidirectional overrides and isolates.
pub fn needs_cleaning(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// `c` written out as `\u{9b}` (lower-case hex, as Rust writes it).
pub fn escape_code(c: char) -> String {
    format!("\\u{{{:x}}}", u32::from(c))
}

/// How `c` is shown when it stands at display column `column` (which only tabs use): a tab
/// becomes spaces to the next stop, C0 controls (newline and CR included) their control
/// pictures, DEL `␡`, C1 controls and bidirectional controls `\u{…}`; anything else is itself.
pub fn clean_char(c: char, column: usize) -> Cleaned {
    match c {
        '\t' => Cleaned::Spaces(TAB_WIDTH - column % TAB_WIDTH),
        '\u{0}'..='\u{1f}' => Cleaned::Char(char::from_u32(0x2400 + u32::from(c)).unwrap_or('?')),
        '\u{7f}' => Cleaned::Char('\u{2421}'),
        c if needs_cleaning(c) => Cleaned::Code(c),
        c => Cleaned::Char(c),
    }
}

/// `text` as one row: tabs expanded to spaces and every control (newlines included) made
/// visible. Borrowed when there was nothing to change.
pub fn clean_line(text: &str) -> Cow<'_, str> {
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) || !text.chars().any(needs_cleaning) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut column = 0;
    for c in text.chars() {
        let before = out.len();
        clean_char(c, column).push_to(&mut out);
        column += out[before..]
            .chars()
            .map(|shown| shown.width().unwrap_or(0))
            .sum::<usize>();
    }
    Cow::Owned(out)
}

/// `text` as lines: newlines and tabs are kept (they only lay text out), a CR before a newline
/// is dropped, and every other control is made visible — a lone CR too, so that no text can
/// return to the start of its line and overwrite what was shown there. Borrowed when there was
/// nothing to change.
pub fn clean_text(text: &str) -> Cow<'_, str> {
    let kept = |c: char| c == '\n' || c == '\t';
    if !text.chars().any(|c| needs_cleaning(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            c if kept(c) => out.push(c),
            c => clean_char(c, 0).push_to(&mut out),
        }
    }
    Cow::Owned(out)
}

/// JSON text with every character that [`needs_cleaning`] written as a JSON `\uXXXX` escape:
/// the same JSON value, with nothing left for a terminal to act on (for JSON put in front of
/// the user to edit). `serde_json` escapes C0 controls itself, not DEL, C1 or bidi controls.
pub fn escape_json_controls(json: &str) -> Cow<'_, str> {
    if !json.chars().any(needs_cleaning) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if needs_cleaning(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_drawn_visibly() {
        // CSI: clear the screen, go home, colour.
        assert_eq!(clean_text("\x1b[2J\x1b[H\x1b[31mred"), "␛[2J␛[H␛[31mred");
        // OSC, ended by BEL and by ST (ESC \).
        assert_eq!(clean_text("\x1b]0;pwned\x07"), "␛]0;pwned␇");
        assert_eq!(clean_text("\x1b]2;pwned\x1b\\"), "␛]2;pwned␛\\");
        // The one-byte C1 CSI.
        assert_eq!(clean_text("\u{9b}31mred"), "\\u{9b}31mred");
        assert_eq!(clean_text("\u{80}\u{9f}"), "\\u{80}\\u{9f}");
        // DEL, backspace, NUL.
        assert_eq!(clean_text("a\x7f\x08\x00"), "a␡␈␀");
    }

    #[test]
    fn bidirectional_controls_cannot_reorder_a_path() {
        assert_eq!(clean_text("/out/\u{202e}hs.nur"), "/out/\\u{202e}hs.nur");
        for c in [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{2066}', '\u{2069}',
        ] {
            let shown = clean_text(&format!("a{c}b")).into_owned();
            assert!(!shown.contains(c), "{c:?}: {shown}");
            assert_eq!(shown, format!("a{}b", escape_code(c)));
        }
    }

    #[test]
    fn a_lone_cr_is_visible_and_a_crlf_is_a_newline() {
        assert_eq!(clean_text("rm -rf /\rls"), "rm -rf /␍ls");
        assert_eq!(clean_text("a\r\nb\r"), "a\nb␍");
        assert_eq!(clean_text("a\r\r\nb"), "a␍\nb");
    }

    #[test]
    fn clean_text_keeps_newlines_tabs_and_other_text() {
        assert_eq!(clean_text("a\n\tb"), "a\n\tb");
        assert!(matches!(clean_text("a\n\tb"), Cow::Borrowed(_)));
        assert!(matches!(clean_text("naïve 日本 ‥ →"), Cow::Borrowed(_)));
        // Our own stand-ins and look-alikes are text like any other.
        assert_eq!(clean_text("␛[2J"), "␛[2J");
    }

    #[test]
    fn clean_line_makes_every_control_visible_and_expands_tabs() {
        assert_eq!(clean_line("plain"), "plain");
        assert!(matches!(clean_line("plain"), Cow::Borrowed(_)));
        assert!(matches!(clean_line("naïve"), Cow::Borrowed(_)));
        assert_eq!(clean_line("\x1b]0;pwned\x07"), "\u{241b}]0;pwned\u{2407}");
        assert_eq!(clean_line("a\rb\nc\x7f"), "a\u{240d}b\u{240a}c\u{2421}");
        assert_eq!(clean_line("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(clean_line("abc\u{202e}def"), "abc\\u{202e}def");
        assert_eq!(clean_line("a\tb\tc"), "a   b   c");
        assert_eq!(clean_line("\tx"), "    x");
        assert_eq!(clean_line("日\tx"), "日  x");
        // Columns after a written-out code count its characters.
        assert_eq!(clean_line("\u{9b}\tx"), "\\u{9b}  x");
    }

    #[test]
    fn json_keeps_its_value_with_controls_escaped() {
        let value =
            serde_json::json!({"path": "/out/\u{202e}hs.nur", "content": "a\u{9b}b\x7f\x1b"});
        let text = serde_json::to_string(&value).unwrap_or_default();
        let escaped = escape_json_controls(&text);
        assert!(!escaped.contains(needs_cleaning), "{escaped}");
        assert!(escaped.contains("/out/\\u202ehs.nur"), "{escaped}");
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap_or_default();
        assert_eq!(back, value);
        assert!(matches!(
            escape_json_controls("{\"a\":1}"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn clean_char_maps_each_kind() {
        assert_eq!(clean_char('\x1b', 0), Cleaned::Char('␛'));
        assert_eq!(clean_char('\x07', 0), Cleaned::Char('␇'));
        assert_eq!(clean_char('\x7f', 0), Cleaned::Char('␡'));
        assert_eq!(clean_char('\n', 0), Cleaned::Char('␊'));
        assert_eq!(clean_char('\u{9b}', 0), Cleaned::Code('\u{9b}'));
        assert_eq!(clean_char('\u{202e}', 0), Cleaned::Code('\u{202e}'));
        assert_eq!(clean_char('\t', 0), Cleaned::Spaces(4));
        assert_eq!(clean_char('\t', 6), Cleaned::Spaces(2));
        assert_eq!(clean_char('é', 0), Cleaned::Char('é'));
        assert_eq!(escape_code('\u{2066}'), "\\u{2066}");
    }
}
