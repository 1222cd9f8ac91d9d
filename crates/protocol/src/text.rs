//! Small text helpers shared by approval descriptions, error messages and the model clients.

/// Shortens `text` to at most `max` characters, marking the cut with `…`.
pub fn fold(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folds_long_text_on_char_boundaries() {
        assert_eq!(fold("short", 10), "short");
        assert_eq!(fold("ééééé", 3), "éé…");
        assert_eq!(fold("abcdef", 6), "abcdef");
    }
}
