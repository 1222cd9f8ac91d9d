//! Block structure of one line of markdown, read from the line alone: the indentation and
//! markers it starts with (quote bars, a heading's `#`s, a list bullet or number), code fences
//! and thematic breaks. (Model text is cleaned by `frontend::clean` before it is laid out.)
//!
//! Everything here works on a line that may still be growing: the prefix of a line is settled
//! once the characters after its markers have arrived, so the streaming layout can rely on it.

use super::style::{Painter, Style};

/// What a line's markers make it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A paragraph line (possibly inside quotes).
    Text,
    /// A heading of this level (1–6).
    Heading(usize),
    /// A list item (`-`, `*`, `+` or `1.`).
    Item,
}

/// One piece of a line's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// Spaces (indentation, or after a marker).
    Space(usize),
    /// A `>`.
    Quote,
    /// A `-`, `*` or `+` bullet.
    Bullet,
    /// An ordered item's number with its `.` or `)`.
    Number(usize),
    /// A heading's `#`s and the spaces after them (hidden when styled).
    HeadingMark(usize),
}

/// The indentation and block markers a line starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Prefix {
    pieces: Vec<Piece>,
    /// Bytes of the line the prefix takes (all of it is ASCII).
    pub end: usize,
    /// What the markers make the line.
    pub kind: Kind,
}

impl Prefix {
    /// Reads the prefix of `line`: indentation, any number of `>` (each with an optional space),
    /// then a heading's `#`s, a bullet or a number, each followed by a space (a `#` may also end
    /// the line).
    pub fn parse(line: &str) -> Prefix {
        let bytes = line.as_bytes();
        let mut pieces = Vec::new();
        let mut i = 0;
        let spaces_at = |i: usize| {
            bytes[i.min(bytes.len())..]
                .iter()
                .take_while(|b| **b == b' ')
                .count()
        };
        let add_spaces = |pieces: &mut Vec<Piece>, i: &mut usize| {
            let n = spaces_at(*i);
            if n > 0 {
                pieces.push(Piece::Space(n));
                *i += n;
            }
        };
        add_spaces(&mut pieces, &mut i);
        while bytes.get(i) == Some(&b'>') {
            pieces.push(Piece::Quote);
            i += 1;
            add_spaces(&mut pieces, &mut i);
        }
        let mut kind = Kind::Text;
        let hashes = bytes[i..].iter().take_while(|b| **b == b'#').count();
        let after = |n: usize| bytes.get(i + n).copied();
        if (1..=6).contains(&hashes) && matches!(after(hashes), None | Some(b' ')) {
            let n = hashes + spaces_at(i + hashes);
            pieces.push(Piece::HeadingMark(n));
            i += n;
            kind = Kind::Heading(hashes);
        } else if matches!(after(0), Some(b'-' | b'*' | b'+')) && after(1) == Some(b' ') {
            pieces.push(Piece::Bullet);
            i += 1;
            add_spaces(&mut pieces, &mut i);
            kind = Kind::Item;
        } else {
            let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            if (1..=9).contains(&digits)
                && matches!(after(digits), Some(b'.' | b')'))
                && after(digits + 1) == Some(b' ')
            {
                pieces.push(Piece::Number(digits + 1));
                i += digits + 1;
                add_spaces(&mut pieces, &mut i);
                kind = Kind::Item;
            }
        }
        Prefix {
            pieces,
            end: i,
            kind,
        }
    }

    /// The prefix as shown on the first row, styled: quote bars `│`, bullets `•`, numbers kept,
    /// heading marks hidden. Never wider than the raw prefix.
    pub fn paint_first(&self, line: &str, painter: &mut Painter) {
        let mut at = 0;
        for piece in &self.pieces {
            match *piece {
                Piece::Space(n) => {
                    painter.push(Style::PLAIN, &line[at..at + n]);
                    at += n;
                }
                Piece::Quote => {
                    painter.push(Style::DIM, "│");
                    at += 1;
                }
                Piece::Bullet => {
                    painter.push(Style::MARKER, "•");
                    at += 1;
                }
                Piece::Number(n) => {
                    painter.push(Style::MARKER, &line[at..at + n]);
                    at += n;
                }
                Piece::HeadingMark(n) => at += n,
            }
        }
    }

    /// The prefix of the rows a wrapped line continues on: quote bars kept (`│` with colour,
    /// `>` without), everything else as spaces, no heading marks; at most `max` columns.
    pub fn continuation(&self, color: bool, max: usize) -> Continuation {
        let mut cells = Vec::new();
        for piece in &self.pieces {
            match *piece {
                Piece::Space(n) | Piece::Number(n) => cells.extend(std::iter::repeat_n(' ', n)),
                Piece::Bullet => cells.push(' '),
                Piece::Quote => cells.push(if color { '│' } else { '>' }),
                Piece::HeadingMark(_) => {}
            }
        }
        cells.truncate(max);
        Continuation { cells }
    }
}

/// The prefix of a continuation row: one-column cells (spaces and quote bars).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Continuation {
    cells: Vec<char>,
}

impl Continuation {
    /// Its width in columns.
    pub fn width(&self) -> usize {
        self.cells.len()
    }

    /// Paints it (bars dimmed).
    pub fn paint(&self, painter: &mut Painter) {
        for c in &self.cells {
            let style = if *c == ' ' { Style::PLAIN } else { Style::DIM };
            painter.push_char(style, *c);
        }
    }

    /// It as plain text.
    pub fn plain(&self) -> String {
        self.cells.iter().collect()
    }
}

/// An open code fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FenceOpen {
    /// `` ` `` or `~`.
    pub marker: char,
    /// How many of them (at least 3).
    pub len: usize,
    /// The first word of the info string (`rust` in ```` ```rust title ````), if any.
    pub language: Option<String>,
}

/// Whether a (possibly partial) line will be a fence line: it starts, after spaces, with three
/// backticks or tildes. Such lines are never wrapped.
pub(super) fn looks_like_fence(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    t.starts_with("```") || t.starts_with("~~~")
}

/// The code fence a complete line opens, if it does (any indentation; a backtick fence's info
/// string may not contain a backtick, as in CommonMark).
pub(super) fn fence_open(line: &str) -> Option<FenceOpen> {
    let t = line.trim_start_matches(' ');
    let marker = t.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = t.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    let info = t[len..].trim();
    if marker == '`' && info.contains('`') {
        return None;
    }
    let language = info
        .split_whitespace()
        .next()
        .map(|w| w.trim_start_matches(['{', '.']).trim_end_matches('}'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned);
    Some(FenceOpen {
        marker,
        len,
        language,
    })
}

/// Whether a complete line closes `fence`: only its marker, at least as many, and spaces.
pub(super) fn fence_closes(fence: &FenceOpen, line: &str) -> bool {
    let t = line.trim_matches(' ');
    t.chars().count() >= fence.len && t.chars().all(|c| c == fence.marker)
}

/// Whether a complete line is a thematic break (`---`, `***`, `_ _ _`).
pub(super) fn is_rule(line: &str) -> bool {
    let mut marks = line.chars().filter(|c| *c != ' ');
    let Some(first) = marks.next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_')
        && line.chars().filter(|c| *c == first).count() >= 3
        && marks.all(|c| c == first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(line: &str) -> String {
        let mut p = Painter::default();
        Prefix::parse(line).paint_first(line, &mut p);
        p.finish().replace('\x1b', "␛")
    }

    #[test]
    fn prefixes() {
        let p = Prefix::parse("  - item");
        assert_eq!((p.end, p.kind), (4, Kind::Item));
        assert_eq!(p.continuation(false, 80).plain(), "    ");
        let p = Prefix::parse("> > 12) x");
        assert_eq!((p.end, p.kind), (8, Kind::Item));
        assert_eq!(p.continuation(false, 80).plain(), "> >     ");
        assert_eq!(p.continuation(true, 3).plain(), "│ │");
        assert_eq!(Prefix::parse("## Title").kind, Kind::Heading(2));
        assert_eq!(Prefix::parse("##").kind, Kind::Heading(2));
        assert_eq!(Prefix::parse("#hashtag").kind, Kind::Text);
        assert_eq!(Prefix::parse("####### seven").kind, Kind::Text);
        assert_eq!(Prefix::parse("-5 degrees").kind, Kind::Text);
        assert_eq!(Prefix::parse("1.5 is").kind, Kind::Text);
        assert_eq!(Prefix::parse("1234567890. x").kind, Kind::Text);
        assert_eq!(Prefix::parse("**bold**").kind, Kind::Text);
        assert_eq!(Prefix::parse(">quote").end, 1);
        assert_eq!(Prefix::parse("").end, 0);
        assert_eq!(first("> - x"), "␛[90m│␛[0m ␛[33m•␛[0m ");
        assert_eq!(first("### x"), "");
        assert_eq!(first("10. x"), "␛[33m10.␛[0m ");
    }

    #[test]
    fn fences_and_rules() {
        let f = fence_open("```rust title=x").unwrap();
        assert_eq!(
            (f.marker, f.len, f.language.as_deref()),
            ('`', 3, Some("rust"))
        );
        assert_eq!(
            fence_open("  ~~~~ {.py}").unwrap().language.as_deref(),
            Some("py")
        );
        assert_eq!(fence_open("```").unwrap().language, None);
        assert!(fence_open("```a`b").is_none());
        assert!(fence_open("``x").is_none());
        assert!(fence_closes(&f, " ```` "));
        assert!(!fence_closes(&f, "```rust"));
        assert!(!fence_closes(&f, "~~~"));
        let long = fence_open("````").unwrap();
        assert!(!fence_closes(&long, "```"));
        assert!(!looks_like_fence("   ``") && looks_like_fence("  ```x"));
        assert!(is_rule("---") && is_rule(" * * *") && is_rule("_____"));
        assert!(!is_rule("--") && !is_rule("-*-") && !is_rule("- item") && !is_rule(""));
    }
}
