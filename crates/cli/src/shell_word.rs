//! A word as a shell reads it, for the commands our hints print (`--queue URL`, `cd DIR &&`).

/// `word` as one shell word: as it is when nothing in it is special to a shell, else in
/// single quotes.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
