//! `@path` in a chat message: the file is read from the worker's zones and sent with the
//! message, as the model's input (docs/cli.md, The chat). A mention is an `@` at the start of a
//! word directly followed by a virtual path (`@/notes/a.md`, or quoted as the chat parser reads
//! words, `@'/notes/my file.md'`); any other `@` (an e-mail address, `@name`, `@` alone) is
//! plain text. The message the model gets is the line as typed, then each file once, in the
//! order first mentioned:
//!
//! ````text
//! summarise @/notes/summary.md
//!
//! Attached file /notes/summary.md:
//! ```
//! …the file's text…
//! ```
//! ````
//!
//! The fence is longer than any run of backticks in the file. A file that cannot be attached
//! (outside the zones, missing, a directory, binary, larger than `read_file` returns in one
//! call) refuses the whole message with one sentence, and nothing is sent.

use golem_tools::filesystem::ReadLimits;

use super::words::{Word, word_at};
use super::zones::ZoneFiles;

/// Why a message with `@` mentions was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachError {
    /// The file could not be attached.
    Refused {
        /// The virtual path as typed.
        path: String,
        /// Why, without the path's sentence around it.
        reason: String,
    },
    /// The quoted path after an `@` is never closed.
    Unclosed {
        /// `'` or `"` (or `\` for a trailing backslash).
        quote: char,
        /// The `@`'s 0-based character position.
        position: usize,
    },
}

impl std::fmt::Display for AttachError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttachError::Refused { path, reason } => {
                write!(f, "cannot attach {path}: {reason}; nothing was sent")
            }
            AttachError::Unclosed { quote, position } => write!(
                f,
                "the {quote} quote after the @ at position {position} is never closed; nothing \
                 was sent"
            ),
        }
    }
}

impl std::error::Error for AttachError {}

/// An `@` mention: where its `@` is and the word after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Byte offset of the `@`.
    pub at: usize,
    /// The word after the `@` (its text is the path).
    pub word: Word,
}

/// Every `@` that starts a word and is followed by a path (`/…`, or a quote and `/…`).
pub fn mentions(line: &str) -> Vec<Mention> {
    line.char_indices()
        .filter(|&(at, c)| {
            c == '@'
                && line[..at]
                    .chars()
                    .next_back()
                    .is_none_or(char::is_whitespace)
        })
        .filter_map(|(at, _)| {
            let rest = &line[at + 1..];
            let is_path =
                rest.starts_with('/') || rest.starts_with("'/") || rest.starts_with("\"/");
            is_path.then(|| Mention {
                at,
                word: word_at(line, at + 1),
            })
        })
        .collect()
}

/// The mention the end of `line` is in, for completion: an `@` starting a word whose path,
/// so far, is empty or starts with `/` and reaches the end of the line.
pub fn mention_at_end(line: &str) -> Option<Mention> {
    let at = line
        .char_indices()
        .filter(|&(at, c)| {
            c == '@'
                && line[..at]
                    .chars()
                    .next_back()
                    .is_none_or(char::is_whitespace)
        })
        .map(|(at, _)| at)
        .next_back()?;
    let word = word_at(line, at + 1);
    (word.end == line.len() && (word.text.is_empty() || word.text.starts_with('/')))
        .then_some(Mention { at, word })
}

/// `line` with the files it mentions attached (unchanged when it mentions none).
pub fn expand(line: &str, zones: &ZoneFiles) -> Result<String, AttachError> {
    let mut paths: Vec<String> = Vec::new();
    for mention in mentions(line) {
        if let Some(quote) = mention.word.open {
            return Err(AttachError::Unclosed {
                quote,
                position: line[..mention.at].chars().count(),
            });
        }
        if !paths.contains(&mention.word.text) {
            paths.push(mention.word.text);
        }
    }
    if paths.is_empty() {
        return Ok(line.to_owned());
    }
    let mut message = line.to_owned();
    for path in paths {
        let text = read(zones, &path).map_err(|reason| AttachError::Refused {
            path: path.clone(),
            reason,
        })?;
        let fence = "`".repeat(longest_backtick_run(&text).max(2) + 1);
        let newline = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        message.push_str(&format!(
            "\n\nAttached file {path}:\n{fence}\n{text}{newline}{fence}"
        ));
    }
    Ok(message)
}

/// The text of the file at `path`, read through the zones; why not, as a clause.
fn read(zones: &ZoneFiles, path: &str) -> Result<String, String> {
    let Some(sandbox) = zones.sandbox() else {
        return Err("this worker's zones could not be opened".to_owned());
    };
    let zone_path = sandbox.resolve(path).map_err(|e| e.message)?;
    if zone_path.is_root() {
        return Err("/ is the list of zones, not a file".to_owned());
    }
    if !sandbox.exists(&zone_path).map_err(|e| e.message)? {
        return Err("it does not exist".to_owned());
    }
    if sandbox
        .metadata(&zone_path)
        .is_ok_and(|info| info.kind == golem_sandbox::EntryKind::Directory)
    {
        return Err("it is a directory; attach a file".to_owned());
    }
    let max = ReadLimits::default().max_bytes;
    let (bytes, size) = sandbox
        .read_prefix(&zone_path, u64::try_from(max).unwrap_or(u64::MAX))
        .map_err(|e| e.message)?;
    if size > bytes.len() as u64 {
        return Err(format!(
            "it is too large to attach ({size} bytes, at most {max}); ask the model to read it with read_file"
        ));
    }
    if bytes.contains(&0) {
        return Err("it is a binary file (it has NUL bytes)".to_owned());
    }
    String::from_utf8(bytes).map_err(|_| "it is a binary file (it is not valid UTF-8)".to_owned())
}

/// The length of the longest run of backticks in `text`.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mentioned(line: &str) -> Vec<String> {
        mentions(line).into_iter().map(|m| m.word.text).collect()
    }

    #[test]
    fn an_at_starting_a_word_before_a_path_is_a_mention() {
        assert_eq!(
            mentioned("read @/notes/a.md and @'/notes/my b.md'"),
            ["/notes/a.md", "/notes/my b.md"]
        );
        assert_eq!(mentioned("@\"/n/x\""), ["/n/x"]);
    }

    #[test]
    fn other_ats_stay_plain_text() {
        for line in [
            "mail me at someone@example.com",
            "@ alone",
            "ask @alice",
            "x@/notes/a.md",
            "@",
            "@notes/a.md",
        ] {
            assert!(mentions(line).is_empty(), "{line}");
            assert_eq!(expand(line, &ZoneFiles::default()), Ok(line.to_owned()));
        }
    }

    #[test]
    fn an_unclosed_quote_refuses_the_message() {
        assert_eq!(
            expand("see @'/notes/a", &ZoneFiles::default()),
            Err(AttachError::Unclosed {
                quote: '\'',
                position: 4
            })
        );
    }

    #[test]
    fn without_zones_a_mention_is_refused() {
        let err = expand("@/notes/a.md", &ZoneFiles::default());
        assert!(
            matches!(&err, Err(AttachError::Refused { path, .. }) if path == "/notes/a.md"),
            "{err:?}"
        );
    }

    #[test]
    fn the_mention_at_the_end_is_the_one_being_typed() {
        let at = |line: &str| mention_at_end(line).map(|m| (m.at, m.word.text));
        assert_eq!(at("see @/no"), Some((4, "/no".to_owned())));
        assert_eq!(at("see @"), Some((4, String::new())));
        assert_eq!(at("see @'/my f"), Some((4, "/my f".to_owned())));
        assert_eq!(at("see @/notes/a.md "), None);
        assert_eq!(at("a@/x"), None);
        assert_eq!(at("@alice"), None);
    }

    #[test]
    fn the_fence_outgrows_the_backticks_inside() {
        assert_eq!(longest_backtick_run("a ``` b ```` c"), 4);
        assert_eq!(longest_backtick_run("none"), 0);
    }
}
