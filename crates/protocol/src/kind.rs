//! Result kinds: the naming rule for `ToolResultValue::kind` and the well-known kinds UIs render
//! with dedicated views.

/// The kinds every front end knows how to render with a dedicated view.
pub const WELL_KNOWN_KINDS: &[&str] = &[
    "text",
    "diff",
    "file_content",
    "file_list",
    "table",
    "image",
    "structured",
    "json",
    "code_result",
];

/// Whether `kind` follows the naming rule `^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`:
/// lowercase words of letters, digits and underscores, each starting with a letter, joined by
/// dots for namespacing (`git.status`, `mycompany.report`).
pub fn is_valid_kind(kind: &str) -> bool {
    !kind.is_empty() && kind.split('.').all(is_valid_segment)
}

fn is_valid_segment(segment: &str) -> bool {
    let mut chars = segment.chars();
    match chars.next() {
        Some(first) if first.is_ascii_lowercase() => {
            chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        }
        _ => false,
    }
}

/// Whether `kind` is one of [`WELL_KNOWN_KINDS`].
pub fn is_well_known_kind(kind: &str) -> bool {
    WELL_KNOWN_KINDS.contains(&kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_kinds() {
        for kind in [
            "git.status",
            "a.b.c.d",
            "v2_result",
            "text",
            "my_custom_type",
            "a",
            "x9.y_",
        ] {
            assert!(is_valid_kind(kind), "{kind} should be valid");
        }
    }

    #[test]
    fn invalid_kinds() {
        for kind in [
            "Text",
            "123test",
            "test-kind",
            "a..b",
            "test.",
            ".test",
            "",
            "_x",
            "a.9b",
            "a b",
            "é",
            "git.Status",
            ".",
        ] {
            assert!(!is_valid_kind(kind), "{kind:?} should be invalid");
        }
    }

    #[test]
    fn well_known_kinds_are_valid_and_recognised() {
        for kind in WELL_KNOWN_KINDS {
            assert!(is_valid_kind(kind));
            assert!(is_well_known_kind(kind));
        }
        assert!(!is_well_known_kind("git.status"));
        assert!(!is_well_known_kind("Text"));
    }
}
