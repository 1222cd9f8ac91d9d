//! Text from bytes, for the tools that show files and the diffs of what changed: binary
//! detection and cutting at a character boundary. Pure: no I/O.

/// The content as text, or `None` for binary content: a NUL byte or invalid UTF-8.
pub fn as_text(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn cut_at_char_boundary(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
