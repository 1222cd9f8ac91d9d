//! Bounding how deep an HTML page nests before it is converted: the converter walks the
//! document tree recursively, so a page of a few thousand nested `<div>`s would overflow the
//! stack (aborting the process) and costs time in proportion to depth times size. One linear
//! pass over the text counts the open elements the way a browser roughly would — void elements
//! open nothing, a `<p>`, `<li>`, `<td>`, … closes an open one of its kind, an end tag closes
//! up to its start tag, comments, doctypes and the content of `<script>`, `<style>`,
//! `<textarea>` and the like are skipped whole — and drops every tag that would open past
//! [`MAX_DEPTH`] (with its end tag); the text inside stays.

use std::borrow::Cow;

/// The deepest nesting kept; deeper tags are dropped, their text kept.
pub(crate) const MAX_DEPTH: usize = 128;

/// Elements that never hold content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen", "frame",
];

/// Elements whose content is raw text up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// Elements a start tag of the same name closes (`<li>one<li>two`).
const SELF_CLOSING_SIBLINGS: &[&str] = &[
    "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "rt", "rp", "thead", "tbody",
    "tfoot",
];

/// `html` with every tag past `max_depth` dropped, and whether any was; unchanged (borrowed)
/// when nothing nests that deep.
pub(crate) fn flatten_deep(html: &str, max_depth: usize) -> (Cow<'_, str>, bool) {
    let bytes = html.as_bytes();
    // Open elements by name; `true` when the element was kept.
    let mut open: Vec<(String, bool)> = Vec::new();
    let mut kept_depth = 0usize;
    // Ranges of `html` to drop, in order.
    let mut dropped: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while let Some(offset) = html[i..].find('<') {
        let start = i + offset;
        let rest = &bytes[start + 1..];
        if rest.starts_with(b"!--") {
            i = find_from(html, start + 4, "-->").map_or(html.len(), |end| end + 3);
            continue;
        }
        if rest.first().is_some_and(|b| *b == b'!' || *b == b'?') {
            i = tag_end(bytes, start + 1);
            continue;
        }
        let closing = rest.first() == Some(&b'/');
        let name_start = start + 1 + usize::from(closing);
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-' || **b == b':')
            .count();
        if name_len == 0 || !bytes[name_start].is_ascii_alphabetic() {
            // Not a tag: a lone `<` in text.
            i = start + 1;
            continue;
        }
        let name = html[name_start..name_start + name_len].to_ascii_lowercase();
        let end = tag_end(bytes, name_start + name_len);
        if closing {
            if let Some(at) = open.iter().rposition(|(open_name, _)| *open_name == name) {
                let kept = open[at].1;
                for (_, was_kept) in open.drain(at..) {
                    kept_depth -= usize::from(was_kept);
                }
                if !kept {
                    dropped.push((start, end));
                }
            }
            i = end;
            continue;
        }
        let self_closed = end >= 2 && bytes[end - 2] == b'/';
        if VOID.contains(&name.as_str()) || self_closed {
            i = end;
            continue;
        }
        if SELF_CLOSING_SIBLINGS.contains(&name.as_str())
            && open.last().is_some_and(|(last, _)| *last == name)
            && let Some((_, was_kept)) = open.pop()
        {
            kept_depth -= usize::from(was_kept);
        }
        let keep = kept_depth < max_depth;
        if keep {
            kept_depth += 1;
        } else {
            dropped.push((start, end));
        }
        if RAW_TEXT.contains(&name.as_str()) {
            // Its content is text up to its end tag, whatever it looks like.
            let close = format!("</{name}");
            i = find_from_ignore_case(html, end, &close).unwrap_or(html.len());
            open.push((name, keep));
            continue;
        }
        open.push((name, keep));
        i = end;
    }
    if dropped.is_empty() {
        return (Cow::Borrowed(html), false);
    }
    let mut out = String::with_capacity(html.len());
    let mut from = 0;
    for (start, end) in dropped {
        out.push_str(&html[from..start]);
        from = end;
    }
    out.push_str(&html[from..]);
    (Cow::Owned(out), true)
}

/// The index just past the `>` that ends the tag whose name ends at `from` (quoted attribute
/// values may hold `>`); the end of the text when there is none.
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut quote: Option<u8> = None;
    for (offset, byte) in bytes[from..].iter().enumerate() {
        match (quote, *byte) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(*byte),
            (None, b'>') => return from + offset + 1,
            (None, _) => {}
        }
    }
    bytes.len()
}

fn find_from(html: &str, from: usize, needle: &str) -> Option<usize> {
    html.get(from..)?.find(needle).map(|at| from + at)
}

/// Where `needle` (lower-case ASCII) starts at or after `from`, ignoring ASCII case.
fn find_from_ignore_case(html: &str, from: usize, needle: &str) -> Option<usize> {
    let bytes = html.as_bytes();
    let needle = needle.as_bytes();
    (from..bytes.len().saturating_sub(needle.len() - 1))
        .find(|&at| bytes[at..at + needle.len()].eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(tag: &str, depth: usize) -> String {
        format!(
            "{}deep{}",
            format!("<{tag}>").repeat(depth),
            format!("</{tag}>").repeat(depth)
        )
    }

    #[test]
    fn shallow_pages_are_left_alone() {
        let html = "<html><body><ul><li>one<li>two</ul><p>a<p>b<br><img src='x>y'>\
                    <script>if (a < b) { x = '<div>'.repeat(9999) }</script></body></html>";
        let (out, flattened) = flatten_deep(html, 4);
        assert!(!flattened, "{out}");
        assert!(matches!(out, Cow::Borrowed(_)));
    }

    #[test]
    fn tags_past_the_limit_are_dropped_and_their_text_kept() {
        let html = nested("div", 10);
        let (out, flattened) = flatten_deep(&html, 4);
        assert!(flattened);
        assert_eq!(
            out,
            format!("{}deep{}", "<div>".repeat(4), "</div>".repeat(4))
        );
    }

    #[test]
    fn unclosed_and_mixed_nesting_is_bounded() {
        let html = "<b>".repeat(50_000) + "x" + &"<ul><li>".repeat(50_000);
        let (out, flattened) = flatten_deep(&html, MAX_DEPTH);
        assert!(flattened);
        assert_eq!(out.matches('<').count(), MAX_DEPTH);
    }

    #[test]
    fn a_comment_or_raw_text_hides_no_tags_from_the_count_and_adds_none() {
        let html = format!(
            "<!-- {} --><textarea>{}</textarea>",
            nested("div", 999),
            nested("div", 999)
        );
        let (_, flattened) = flatten_deep(&html, 2);
        assert!(!flattened);
    }
}
