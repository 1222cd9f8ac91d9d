//! Small text helpers shared by approval descriptions and error messages (`fold`, kept in
//! `golem-protocol`, which the model clients use too), and the did-you-mean suggestion of error
//! messages (`closest`: unknown options and values here, unknown slash commands in the chat),
//! and counts for people (`thousands`).

pub use golem_protocol::text::fold;

/// A count for people, its thousands grouped: `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Levenshtein edit distance between two strings, by characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The candidate closest to `typed`, ignoring case: the smallest edit distance within
/// `min(2, len / 2)` (first candidate on ties), else the shortest candidate `typed` is a prefix of.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = typed.to_lowercase();
    let typed_len = typed.chars().count();
    if typed_len == 0 {
        return None;
    }
    let max_distance = (typed_len / 2).min(2);
    let mut best: Option<(usize, &'a str)> = None;
    let mut prefix: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let lowered = candidate.to_lowercase();
        let len = lowered.chars().count();
        if len.abs_diff(typed_len) <= max_distance {
            let distance = levenshtein(&typed, &lowered);
            if distance <= max_distance && best.is_none_or(|(d, _)| distance < d) {
                best = Some((distance, candidate));
            }
        }
        if lowered.starts_with(&typed) && prefix.is_none_or(|(l, _)| len < l) {
            prefix = Some((len, candidate));
        }
    }
    best.or(prefix).map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn levenshtein_basics() {
        assert_eq!(levenshtein("", ""), 0);
        assert_eq!(levenshtein("abc", ""), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("tols", "tools"), 1);
        assert_eq!(levenshtein("héllo", "hello"), 1);
    }

    #[test]
    fn closest_rules() {
        assert_eq!(closest("", ["a"]), None);
        assert_eq!(closest("tols", ["tool", "tools"]), Some("tools"));
        assert_eq!(
            closest("tol", ["tool", "toll"]),
            Some("tool"),
            "first wins on ties"
        );
        assert_eq!(
            closest("st", ["status", "stop"]),
            Some("stop"),
            "shortest prefix"
        );
        assert_eq!(closest("FORSE", ["force"]), Some("force"));
    }
}
