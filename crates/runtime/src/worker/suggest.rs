//! Near-miss suggestions ("did you mean …?") for misspelt keys and worker names.

/// The candidate closest to `word`, if one is close enough to be a likely typo: at most a third
/// of the word's characters edited (at least one, at most three), or a candidate that differs
/// only in case, `-` for `_`, or a trailing `s`.
pub(crate) fn did_you_mean<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let budget = (word.chars().count() / 3).clamp(1, 3);
    let folded = fold(word);
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        let distance = if fold(candidate) == folded {
            0
        } else {
            edit_distance(word, candidate)
        };
        if distance <= budget && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Lowercase with `-` read as `_` and a trailing `s` dropped: spellings people mix up.
fn fold(word: &str) -> String {
    let lower = word.to_lowercase().replace('-', "_");
    match lower.strip_suffix('s') {
        Some(stem) => stem.to_owned(),
        None => lower,
    }
}

/// Edit distance counting insertions, deletions, substitutions and swaps of neighbours.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the dynamic-programming table: two rows back, the previous one, this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(word: &str, candidates: &[&str], expected: Option<&str>) {
        assert_eq!(
            did_you_mean(word, candidates.iter().copied()),
            expected,
            "{word} among {candidates:?}"
        );
    }

    #[test]
    fn suggestions() {
        let keys = [
            "name",
            "toolsets",
            "model",
            "mode",
            "max_iterations",
            "sandbox",
        ];
        check("toolset", &keys, Some("toolsets"));
        check("nmae", &keys, Some("name"));
        check("modle", &keys, Some("model"));
        check("max-iterations", &keys, Some("max_iterations"));
        check("Sandbox", &keys, Some("sandbox"));
        check("zones", &keys, None);
        check("completely_different", &keys, None);
        check("x", &["y"], Some("y"));
        check("name", &["name"], None);
        check("", &["a"], Some("a"));
        check("greter", &["greeter", "summarizer"], Some("greeter"));
        check("ümlaut", &["umlaut"], Some("umlaut"));
    }

    #[test]
    fn distances() {
        for (a, b, d) in [
            ("", "", 0),
            ("abc", "abc", 0),
            ("abc", "acb", 1),
            ("kitten", "sitting", 3),
            ("", "abc", 3),
            ("ab", "", 2),
        ] {
            assert_eq!(edit_distance(a, b), d, "{a} {b}");
        }
    }
}
