//! The words of a chat line as the slash-command parser reads them (`command/parser.rs`:
//! whitespace separates words, single quotes are literal, double quotes know `\"`, `\\`, `\n`
//! and `\t`, a backslash outside quotes makes the next character literal), read leniently for
//! lines still being typed: the last word may end inside a quote or after a lone backslash.
//! Completion finds the word under the cursor with it, and `@` attachments read their path.

/// One word of a line, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Byte offset of its first character in the line.
    pub start: usize,
    /// Byte offset just past its last character.
    pub end: usize,
    /// The text with quotes and escapes removed.
    pub text: String,
    /// Whether its first character was neither quoted nor escaped: only such a word is read as
    /// an option.
    pub plain: bool,
    /// The quote still open at its end (`'` or `"`), or `\` for a lone trailing backslash.
    pub open: Option<char>,
}

impl Word {
    /// Whether the parser reads this word as an option (`--key`, `-k`), not as a value.
    pub fn is_option(&self) -> bool {
        self.plain
            && self.text.len() > 1
            && self.text.starts_with('-')
            && !self.text[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
    }
}

/// The word that starts at byte `start` of `line` (a character boundary), up to the first
/// whitespace outside quotes.
pub fn word_at(line: &str, start: usize) -> Word {
    let mut text = String::new();
    let mut open = None;
    let mut plain = true;
    let mut end = line.len();
    let mut chars = line[start..].char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        let first = offset == 0;
        match c {
            c if c.is_whitespace() => {
                end = start + offset;
                break;
            }
            '\'' => {
                plain &= !first;
                open = Some('\'');
                for (_, ch) in chars.by_ref() {
                    if ch == '\'' {
                        open = None;
                        break;
                    }
                    text.push(ch);
                }
            }
            '"' => {
                plain &= !first;
                open = Some('"');
                while let Some((_, ch)) = chars.next() {
                    match ch {
                        '"' => {
                            open = None;
                            break;
                        }
                        '\\' => match chars.next() {
                            Some((_, 'n')) => text.push('\n'),
                            Some((_, 't')) => text.push('\t'),
                            Some((_, ch @ ('"' | '\\'))) => text.push(ch),
                            Some((_, ch)) => {
                                text.push('\\');
                                text.push(ch);
                            }
                            None => break,
                        },
                        ch => text.push(ch),
                    }
                }
            }
            '\\' => {
                plain &= !first;
                match chars.next() {
                    Some((_, ch)) => text.push(ch),
                    None => open = Some('\\'),
                }
            }
            c => text.push(c),
        }
        if open.is_some() {
            break;
        }
    }
    Word {
        start,
        end,
        text,
        plain,
        open,
    }
}

/// Every word of `line`, in order.
pub fn split(line: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut pos = 0;
    while let Some(offset) = line[pos..].find(|c: char| !c.is_whitespace()) {
        let word = word_at(line, pos + offset);
        pos = word.end;
        words.push(word);
        if pos >= line.len() {
            break;
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<String> {
        split(line).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn words_read_as_the_parser_reads_them() {
        assert_eq!(texts("/read_file  /a/b"), ["/read_file", "/a/b"]);
        assert_eq!(
            texts("x 'a b' \"c\\\"d\" e\\ f"),
            ["x", "a b", "c\"d", "e f"]
        );
        assert_eq!(texts("'it'\\''s'"), ["it's"]);
        assert_eq!(texts("\"a\\nb\""), ["a\nb"]);
        assert!(split("   ").is_empty());
    }

    #[test]
    fn spans_cover_quotes_and_stop_at_whitespace() {
        let words = split("/t 'my file' next");
        assert_eq!((words[1].start, words[1].end), (3, 12));
        assert_eq!((words[2].start, words[2].end), (13, 17));
        assert!(!words[1].plain && words[2].plain);
    }

    #[test]
    fn an_unfinished_last_word_is_open() {
        let words = split("/read_file '/notes/my fi");
        assert_eq!(words[1].text, "/notes/my fi");
        assert_eq!(words[1].open, Some('\''));
        assert_eq!(words[1].end, "/read_file '/notes/my fi".len());
        assert_eq!(split("a\\").last().map(|w| w.open), Some(Some('\\')));
        assert_eq!(split("\"x").last().map(|w| w.open), Some(Some('"')));
    }

    #[test]
    fn options_are_plain_dash_words_but_not_numbers() {
        let words = split("--path -p -5 -.5 - '--x'");
        let options: Vec<bool> = words.iter().map(Word::is_option).collect();
        assert_eq!(options, [true, true, false, false, false, false]);
    }
}
