//! Inline markup of one paragraph line: `**strong**`, `*em*` / `_em_`, `~~strike~~`,
//! `` `code` ``, `[text](url)` and backslash escapes, found by a small hand-written scanner.
//!
//! The scanner marks each byte of the text with its style and whether it is shown, hidden (a
//! marker) or shown as a space (the `]` of a link). Each shown character stays one character of
//! the same width and markers disappear, so styled text is never wider than the source: the
//! layout can be computed on the source text as it streams in.
//!
//! A row of a wrapped line is painted before the rest of the line has arrived, so the scan can be
//! told the text is incomplete: then an opening `**`, `*`, `~~` or backtick run that has no closer
//! yet is taken as open to the end (a model almost always closes it), while a lone `_` (often a
//! name like `_id`) and a link whose `](url)` has not arrived stay literal. On the complete line
//! an unclosed marker is literal, as in CommonMark.

use std::ops::Range;

use super::style::{Fg, Painter, Style};

const BOLD: u8 = 1;
const ITALIC: u8 = 2;
const STRIKE: u8 = 4;
const CODE: u8 = 8;
const LINK: u8 = 16;
const URL: u8 = 32;

/// How a byte of the source is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    Text,
    Hidden,
    Space,
}

/// A run of `*`, `_` or `~` that may open or close emphasis.
#[derive(Debug, Clone, Copy)]
struct Delim {
    pos: usize,
    len: usize,
    ch: u8,
    can_open: bool,
    can_close: bool,
}

/// The style and visibility of every byte of a line's text.
#[derive(Debug)]
pub(super) struct Marks {
    flags: Vec<u8>,
    show: Vec<Show>,
}

/// Scans `text`; `complete` says whether the line ends here (else unclosed markers are open).
pub(super) fn scan(text: &str, complete: bool) -> Marks {
    let b = text.as_bytes();
    let n = b.len();
    let mut marks = Marks {
        flags: vec![0; n],
        show: vec![Show::Text; n],
    };
    let mut delims = Vec::new();
    let mut link: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < n {
        if let Some((close, paren)) = link
            && i >= close
        {
            marks.show[close] = Show::Space;
            if is_plain_url(text, close, paren) {
                marks.hide(close..paren + 1);
            } else {
                marks.set(close + 1..paren + 1, URL);
            }
            i = paren + 1;
            link = None;
            continue;
        }
        let limit = link.map_or(n, |(close, _)| close);
        match b[i] {
            b'\\' if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                marks.show[i] = Show::Hidden;
                i += 2;
            }
            b'`' => {
                let run = run_len(b, i, b'`');
                match closing_backticks(b, i + run, run, limit) {
                    Some(j) => {
                        marks.hide(i..i + run);
                        marks.hide(j..j + run);
                        marks.set(i + run..j, CODE);
                        i = j + run;
                    }
                    None if !complete && link.is_none() => {
                        marks.hide(i..i + run);
                        marks.set(i + run..n, CODE);
                        i = n;
                    }
                    None => i += run,
                }
            }
            b'[' if link.is_none() => {
                if let Some((close, paren)) = find_link(b, i) {
                    marks.show[i] = Show::Hidden;
                    marks.set(i + 1..close, LINK);
                    link = Some((close, paren));
                }
                i += 1;
            }
            c @ (b'*' | b'_' | b'~') => {
                let run = run_len(b, i, c);
                let prev = text[..i].chars().next_back();
                let next = text[i + run..].chars().next();
                let space = |c: Option<char>| c.is_none_or(char::is_whitespace);
                let mut can_open = !space(next);
                let mut can_close = !space(prev);
                if c == b'_' {
                    can_open &= !prev.is_some_and(char::is_alphanumeric);
                    can_close &= !next.is_some_and(char::is_alphanumeric);
                }
                let valid = if c == b'~' { run == 2 } else { run <= 3 };
                if valid && (can_open || can_close) {
                    delims.push(Delim {
                        pos: i,
                        len: run,
                        ch: c,
                        can_open,
                        can_close,
                    });
                }
                i += run;
            }
            _ => i += 1,
        }
    }
    marks.emphasis(&delims, complete);
    marks
}

/// Whether the link's text is exactly its URL (`[https://x](https://x)`), shown once.
fn is_plain_url(text: &str, close: usize, paren: usize) -> bool {
    let url = &text[close + 2..paren];
    !url.is_empty() && text[..close].ends_with(&format!("[{url}"))
}

fn run_len(b: &[u8], i: usize, c: u8) -> usize {
    b[i..].iter().take_while(|x| **x == c).count()
}

/// The start of the next run of exactly `run` backticks at or after `from`, before `limit`.
fn closing_backticks(b: &[u8], from: usize, run: usize, limit: usize) -> Option<usize> {
    let mut j = from;
    while j < limit {
        if b[j] == b'`' {
            let len = run_len(b, j, b'`');
            if len == run && j + len <= limit {
                return Some(j);
            }
            j += len;
        } else {
            j += 1;
        }
    }
    None
}

/// For a `[` at `i`: the positions of the `]` and the `)` of a complete `[text](url)`. The
/// text may hold code spans but no other brackets; the URL no spaces (parentheses balanced).
fn find_link(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'`' => {
                let run = run_len(b, j, b'`');
                j = closing_backticks(b, j + run, run, b.len()).map_or(j + run, |k| k + run);
            }
            b'\\' => j += 2,
            b'[' => return None,
            b']' => {
                if b.get(j + 1) != Some(&b'(') {
                    return None;
                }
                let mut depth = 0usize;
                for (k, c) in b.iter().enumerate().skip(j + 2) {
                    match c {
                        b'(' => depth += 1,
                        b')' if depth == 0 => return Some((j, k)),
                        b')' => depth -= 1,
                        b' ' => return None,
                        _ => {}
                    }
                }
                return None;
            }
            _ => j += 1,
        }
    }
    None
}

impl Marks {
    fn set(&mut self, range: Range<usize>, flag: u8) {
        for f in &mut self.flags[range] {
            *f |= flag;
        }
    }

    fn hide(&mut self, range: Range<usize>) {
        for s in &mut self.show[range] {
            *s = Show::Hidden;
        }
    }

    /// Pairs emphasis markers: a closer takes the nearest opener of the same character and
    /// length (openers in between become literal). Linear: each opener is kept on the stack of
    /// its kind and leaves it once; when the line is incomplete, the openers left each style to
    /// the end, which one pass per style does from the first of them.
    fn emphasis(&mut self, delims: &[Delim], complete: bool) {
        // One stack of delimiter indexes per kind (`*`, `_`, `~` × run length 1 to 3).
        let mut open: [Vec<usize>; 9] = Default::default();
        let kind = |d: &Delim| {
            let ch = match d.ch {
                b'*' => 0,
                b'_' => 1,
                _ => 2,
            };
            ch * 3 + d.len.clamp(1, 3) - 1
        };
        for (k, d) in delims.iter().enumerate() {
            if d.can_close
                && let Some(o) = open[kind(d)].pop()
            {
                // Openers of other kinds after it are inside the pair: literal now.
                for stack in &mut open {
                    while stack.last().is_some_and(|&later| later > o) {
                        stack.pop();
                    }
                }
                let o = delims[o];
                self.hide(o.pos..o.pos + o.len);
                self.hide(d.pos..d.pos + d.len);
                self.set(o.pos + o.len..d.pos, flag(o));
                continue;
            }
            if d.can_open {
                open[kind(d)].push(k);
            }
        }
        if complete {
            return;
        }
        let end = self.flags.len();
        // Per style, from the first opener left to the end of the line.
        let mut from: [Option<usize>; 4] = [None; 4];
        for o in open.iter().flatten().map(|&k| delims[k]) {
            if o.ch != b'_' || o.len > 1 {
                self.hide(o.pos..o.pos + o.len);
                let slot = match flag(o) {
                    STRIKE => 0,
                    ITALIC => 1,
                    BOLD => 2,
                    _ => 3,
                };
                let start = o.pos + o.len;
                from[slot] = Some(from[slot].map_or(start, |s: usize| s.min(start)));
            }
        }
        for (slot, start) in from.into_iter().enumerate() {
            if let Some(start) = start {
                let style = [STRIKE, ITALIC, BOLD, BOLD | ITALIC][slot];
                self.set(start..end, style);
            }
        }
    }

    /// Paints the bytes `range` of `text` (the text this was scanned from) over `base`.
    pub fn paint(&self, text: &str, range: Range<usize>, base: Style, painter: &mut Painter) {
        for (offset, c) in text[range.clone()].char_indices() {
            let at = range.start + offset;
            match self.show[at] {
                Show::Hidden => {}
                Show::Space => painter.push_char(base, ' '),
                Show::Text => painter.push_char(style_of(self.flags[at], base), c),
            }
        }
    }
}

fn flag(d: Delim) -> u8 {
    match (d.ch, d.len) {
        (b'~', _) => STRIKE,
        (_, 1) => ITALIC,
        (_, 2) => BOLD,
        _ => BOLD | ITALIC,
    }
}

fn style_of(flags: u8, base: Style) -> Style {
    let mut style = base;
    style.bold |= flags & BOLD != 0;
    style.italic |= flags & ITALIC != 0;
    style.strike |= flags & STRIKE != 0;
    style.underline |= flags & LINK != 0;
    if flags & CODE != 0 {
        style.fg = Style::CODE.fg;
    }
    if flags & URL != 0 {
        style = Style {
            fg: Some(Fg::Ansi(90)),
            ..Style::PLAIN
        };
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text as painted, with `[b]…` style tags instead of escape codes (b bold, i italic,
    /// s strike, u underline, c code colour, d dim).
    fn show(text: &str, complete: bool) -> String {
        let marks = scan(text, complete);
        let mut out = String::new();
        let mut current = String::new();
        for (at, c) in text.char_indices() {
            let shown = match marks.show[at] {
                Show::Hidden => continue,
                Show::Space => ' ',
                Show::Text => c,
            };
            let s = style_of(marks.flags[at], Style::PLAIN);
            let mut tag = String::new();
            for (on, t) in [
                (s.bold, 'b'),
                (s.italic, 'i'),
                (s.strike, 's'),
                (s.underline, 'u'),
            ] {
                if on {
                    tag.push(t);
                }
            }
            match s.fg {
                Some(Fg::Ansi(36)) => tag.push('c'),
                Some(_) => tag.push('d'),
                None => {}
            }
            if tag != current {
                if !tag.is_empty() {
                    out.push_str(&format!("[{tag}]"));
                } else {
                    out.push_str("[/]");
                }
                current = tag;
            }
            out.push(shown);
        }
        out
    }

    #[test]
    fn emphasis_code_and_escapes() {
        assert_eq!(show("a **b** c", true), "a [b]b[/] c");
        assert_eq!(
            show("*i* _j_ ~~s~~ ***bi***", true),
            "[i]i[/] [i]j[/] [s]s[/] [bi]bi"
        );
        assert_eq!(show("`x **y**` z", true), "[c]x **y**[/] z");
        assert_eq!(show("``a ` b`` c", true), "[c]a ` b[/] c");
        assert_eq!(show(r"\*not\* \\", true), r"*not* \");
        assert_eq!(
            show("**bold `code` bold**", true),
            "[b]bold [bc]code[b] bold"
        );
    }

    #[test]
    fn things_that_are_not_emphasis() {
        assert_eq!(
            show("snake_case_name and 2 * 3 * 4", true),
            "snake_case_name and 2 * 3 * 4"
        );
        assert_eq!(show("a ** b ** c", true), "a ** b ** c");
        assert_eq!(show("~single~ ~~~triple~~~", true), "~single~ ~~~triple~~~");
        assert_eq!(
            show("**unclosed and `unclosed", true),
            "**unclosed and `unclosed"
        );
        assert_eq!(show("****four****", true), "****four****");
    }

    #[test]
    fn incomplete_lines_keep_markers_open() {
        assert_eq!(show("a **bold so far", false), "a [b]bold so far");
        assert_eq!(show("a `code so far", false), "a [c]code so far");
        assert_eq!(show("a _maybe name", false), "a _maybe name");
        assert_eq!(show("a __strong", false), "a [b]strong");
        assert_eq!(show("see [the docs](http", false), "see [the docs](http");
    }

    #[test]
    fn links() {
        assert_eq!(
            show("see [the *docs*](https://x.y/a_(b)) now", true),
            "see [u]the [iu]docs[/] [d](https://x.y/a_(b))[/] now"
        );
        assert_eq!(show("[https://a.b](https://a.b)", true), "[u]https://a.b");
        assert_eq!(show("[a] (b) [c](d e) [x](", true), "[a] (b) [c](d e) [x](");
        assert_eq!(show("[`]`](u)", true), "[uc]][/] [d](u)");
        assert_eq!(show("![img](p.png)", true), "![u]img[/] [d](p.png)");
    }
}
