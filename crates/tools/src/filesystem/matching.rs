//! Exact-match editing for `edit_file`: find `old_string` in a text, replace it (once, or every
//! occurrence with `replace_all`), and explain a missing or ambiguous match so the model can fix
//! its call. Pure: no I/O.

use std::fmt;

/// How many match line numbers an ambiguity message lists.
const MAX_LISTED_LINES: usize = 10;

/// Texts longer than this (in lines) are not searched for whitespace-insensitive near misses.
const MAX_FUZZY_LINES: usize = 200_000;

/// A successful edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The new text.
    pub text: String,
    /// How many occurrences were replaced.
    pub replacements: usize,
}

/// Why an edit cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// `old_string` is empty.
    EmptyOld,
    /// `old_string` and `new_string` are the same.
    NoChange,
    /// `old_string` does not occur.
    NotFound {
        /// A hint about a near miss.
        hint: Option<String>,
    },
    /// `old_string` occurs more than once and `replace_all` is off.
    Ambiguous {
        /// How many times it occurs.
        count: usize,
        /// The 1-based lines of the first occurrences.
        lines: Vec<usize>,
    },
}

impl EditError {
    /// The number of matches found, for error details.
    pub fn matches(&self) -> usize {
        match self {
            EditError::EmptyOld | EditError::NoChange | EditError::NotFound { .. } => 0,
            EditError::Ambiguous { count, .. } => *count,
        }
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::EmptyOld => f.write_str(
                "old_string is empty; give the exact text to replace (use write_file to \
                 create or overwrite a whole file)",
            ),
            EditError::NoChange => {
                f.write_str("old_string and new_string are identical; there is nothing to change")
            }
            EditError::NotFound { hint } => {
                f.write_str(
                    "old_string was not found (0 matches); read the file again and copy the \
                     text exactly, including whitespace, indentation and line breaks",
                )?;
                match hint {
                    Some(hint) => write!(f, ". {hint}"),
                    None => Ok(()),
                }
            }
            EditError::Ambiguous { count, lines } => {
                let listed: Vec<String> = lines.iter().map(ToString::to_string).collect();
                let more = if *count > lines.len() { ", …" } else { "" };
                write!(
                    f,
                    "old_string matches {count} times (at lines {}{more}); include more \
                     surrounding lines to make it unique, or pass replace_all: true to replace \
                     every occurrence",
                    listed.join(", ")
                )
            }
        }
    }
}

/// Replaces `old` with `new` in `text`: exactly one occurrence, or all of them with
/// `replace_all` (occurrences are counted without overlap, left to right).
pub fn apply_edit(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Edited, EditError> {
    if old.is_empty() {
        return Err(EditError::EmptyOld);
    }
    if old == new {
        return Err(EditError::NoChange);
    }
    let starts: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
    match starts.len() {
        0 => Err(EditError::NotFound {
            hint: near_miss(text, old),
        }),
        1 => Ok(Edited {
            text: text.replacen(old, new, 1),
            replacements: 1,
        }),
        count if replace_all => Ok(Edited {
            text: text.replace(old, new),
            replacements: count,
        }),
        count => Err(EditError::Ambiguous {
            count,
            lines: line_numbers(text, &starts[..count.min(MAX_LISTED_LINES)]),
        }),
    }
}

/// The 1-based line of each byte offset in `starts` (ascending).
fn line_numbers(text: &str, starts: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(starts.len());
    let mut line = 1;
    let mut pos = 0;
    for &start in starts {
        line += text.as_bytes()[pos..start]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        pos = start;
        out.push(line);
    }
    out
}

/// Why an exact search may have failed: line endings, or whitespace around the lines.
fn near_miss(text: &str, old: &str) -> Option<String> {
    if text.contains("\r\n") && old.contains('\n') && !old.contains("\r\n") {
        let crlf = old.replace('\n', "\r\n");
        if text.contains(&crlf) {
            return Some(
                "The file uses CRLF (\\r\\n) line endings: write old_string and new_string \
                 with \\r\\n"
                    .to_owned(),
            );
        }
    }
    let line = whitespace_insensitive_match(text, old)?;
    Some(format!(
        "A passage that differs only in whitespace or indentation starts at line {line}"
    ))
}

/// The 1-based line where the lines of `old`, trimmed, equal consecutive trimmed lines of
/// `text`.
fn whitespace_insensitive_match(text: &str, old: &str) -> Option<usize> {
    let needle: Vec<&str> = old
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .collect();
    let needle: &[&str] = match needle.iter().rposition(|l| !l.is_empty()) {
        Some(last) => &needle[..=last],
        None => return None,
    };
    let hay: Vec<&str> = text.lines().map(str::trim).collect();
    if hay.len() > MAX_FUZZY_LINES || needle.len() > hay.len() {
        return None;
    }
    if needle.len() == 1 {
        // One trimmed line: a substring match within a line is the likely near miss.
        return hay
            .iter()
            .position(|l| l.contains(needle[0]))
            .map(|i| i + 1);
    }
    hay.windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unique_match_is_replaced() {
        let edited = apply_edit("fn a() {}\nfn b() {}\n", "fn b", "fn c", false).unwrap();
        assert_eq!(edited.text, "fn a() {}\nfn c() {}\n");
        assert_eq!(edited.replacements, 1);
    }

    #[test]
    fn several_matches_without_replace_all_are_refused_with_count_and_lines() {
        let err = apply_edit("x = 1\ny = 2\nx = 3\n", "x =", "z =", false).unwrap_err();
        assert_eq!(
            err,
            EditError::Ambiguous {
                count: 2,
                lines: vec![1, 3]
            }
        );
        assert_eq!(err.matches(), 2);
        let msg = err.to_string();
        assert!(msg.contains("matches 2 times (at lines 1, 3)"), "{msg}");
        assert!(msg.contains("replace_all: true"), "{msg}");
    }

    #[test]
    fn replace_all_replaces_every_occurrence() {
        let edited = apply_edit("a a a", "a", "bb", true).unwrap();
        assert_eq!(edited.text, "bb bb bb");
        assert_eq!(edited.replacements, 3);
    }

    #[test]
    fn occurrences_are_counted_without_overlap() {
        let err = apply_edit("aaaa", "aa", "b", false).unwrap_err();
        assert_eq!(err.matches(), 2);
        assert_eq!(apply_edit("aaaa", "aa", "b", true).unwrap().text, "bb");
    }

    #[test]
    fn many_matches_list_the_first_ten_lines() {
        let text = "x\n".repeat(25);
        let err = apply_edit(&text, "x", "y", false).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("matches 25 times (at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …)"));
    }

    #[test]
    fn a_missing_match_says_zero_matches() {
        let err = apply_edit("hello\n", "goodbye", "x", false).unwrap_err();
        assert_eq!(err, EditError::NotFound { hint: None });
        assert!(err.to_string().contains("(0 matches)"));
    }

    #[test]
    fn a_whitespace_near_miss_names_its_line() {
        let text = "fn main() {\n    let x = 1;\n    let y = 2;\n}\n";
        let err = apply_edit(text, "let x = 1;\nlet y = 2;", "", false).unwrap_err();
        assert!(err.to_string().contains("starts at line 2"), "{err}");
        let err = apply_edit(text, "let  y", "", false).unwrap_err();
        assert_eq!(err, EditError::NotFound { hint: None });
    }

    #[test]
    fn a_crlf_near_miss_says_so() {
        let err = apply_edit("a\r\nb\r\n", "a\nb", "c", false).unwrap_err();
        assert!(err.to_string().contains("CRLF"), "{err}");
    }

    #[test]
    fn empty_and_identical_strings_are_refused() {
        assert_eq!(apply_edit("a", "", "b", false), Err(EditError::EmptyOld));
        assert_eq!(apply_edit("a", "a", "a", true), Err(EditError::NoChange));
    }

    #[test]
    fn replacement_text_is_inserted_literally() {
        let edited = apply_edit("price: X", "X", "$1 \\n $$", false).unwrap();
        assert_eq!(edited.text, "price: $1 \\n $$");
    }

    #[test]
    fn multibyte_text_keeps_line_numbers_right() {
        let err = apply_edit("é\nü\né\n", "é", "e", false).unwrap_err();
        assert_eq!(
            err,
            EditError::Ambiguous {
                count: 2,
                lines: vec![1, 3]
            }
        );
    }
}
