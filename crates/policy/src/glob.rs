//! Globs over virtual paths, as project rules and protected-path patterns are written:
//! `*` within one segment, `**` as a whole segment for any number of segments.

/// A glob [`check_glob`] refuses; each names the pattern as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    /// It does not start with `/`.
    #[error(
        "must be an absolute virtual path such as /notes/**, found \"{}\"",
        pattern.escape_debug()
    )]
    NotAbsolute {
        /// The pattern.
        pattern: String,
    },
    /// `**` inside a segment (`x**`).
    #[error(
        "must use `**` only as a whole path segment (as in /notes/**/x), found \"{}\"",
        pattern.escape_debug()
    )]
    PartialDoubleStar {
        /// The pattern.
        pattern: String,
    },
    /// A `.` or `..` segment.
    #[error("must not contain `.` or `..` segments, found \"{}\"", pattern.escape_debug())]
    DotSegment {
        /// The pattern.
        pattern: String,
    },
}

/// Checks a glob: an absolute virtual path whose `**` parts are whole segments.
pub fn check_glob(pattern: &str) -> Result<(), GlobError> {
    if !pattern.starts_with('/') {
        return Err(GlobError::NotAbsolute {
            pattern: pattern.to_owned(),
        });
    }
    for segment in pattern.split('/').skip(1) {
        if segment.contains("**") && segment != "**" {
            return Err(GlobError::PartialDoubleStar {
                pattern: pattern.to_owned(),
            });
        }
        if segment == "." || segment == ".." {
            return Err(GlobError::DotSegment {
                pattern: pattern.to_owned(),
            });
        }
    }
    Ok(())
}

/// Whether the virtual path `path` matches `pattern`: `*` matches any characters within one
/// segment, `**` (a whole segment) any number of segments, including none; everything else is
/// literal. A path that is not plainly absolute and normalized (relative, with empty, `.` or `..`
/// segments, or a backslash) matches nothing, so a rule never approves a path that might
/// resolve outside its pattern.
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    if check_glob(pattern).is_err() || !path.starts_with('/') || path.contains('\\') {
        return false;
    }
    let path: Vec<&str> = if path == "/" {
        Vec::new()
    } else {
        path.split('/').skip(1).collect()
    };
    if path
        .iter()
        .any(|segment| segment.is_empty() || *segment == "." || *segment == "..")
    {
        return false;
    }
    let pattern: Vec<&str> = if pattern == "/" {
        Vec::new()
    } else {
        pattern.split('/').skip(1).collect()
    };
    match_segments(&pattern, &path)
}

fn match_segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| match_segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((segment, tail)) => match_star(first, segment) && match_segments(rest, tail),
            None => false,
        },
    }
}

/// `*` within one segment.
fn match_star(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole segment is literal.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_match_within_a_segment_and_double_stars_across() {
        assert!(glob_matches("/notes/*.md", "/notes/a.md"));
        assert!(!glob_matches("/notes/*.md", "/notes/x/a.md"));
        assert!(glob_matches("/notes/**/*.md", "/notes/a.md"));
        assert!(glob_matches("/notes/**/*.md", "/notes/x/y/a.md"));
        assert!(!glob_matches("/notes/**/*.md", "/notes/x/a.txt"));
        assert!(glob_matches("/n/a*b*c", "/n/abbc"));
        assert!(!glob_matches("/n/a*b*c", "/n/acb"));
        assert!(glob_matches("/n/*", "/n/anything"));
        assert!(!glob_matches("/n/*", "/n"));
        assert!(glob_matches("/n/exact", "/n/exact"));
        assert!(!glob_matches("/n/exact", "/n/exactly"));
    }

    #[test]
    fn a_refused_glob_says_why_and_shows_the_pattern_escaped() {
        assert_eq!(
            check_glob("a/\n**").unwrap_err().to_string(),
            "must be an absolute virtual path such as /notes/**, found \"a/\\n**\""
        );
        assert_eq!(
            check_glob("/a/x**").unwrap_err(),
            GlobError::PartialDoubleStar {
                pattern: "/a/x**".to_owned()
            }
        );
        assert_eq!(
            check_glob("/a/../b").unwrap_err().to_string(),
            "must not contain `.` or `..` segments, found \"/a/../b\""
        );
    }

    #[test]
    fn bad_patterns_and_unnormalized_paths_match_nothing() {
        assert!(check_glob("/a/x**").is_err());
        assert!(check_glob("a/**").is_err());
        assert!(check_glob("/a/../b").is_err());
        assert!(!glob_matches("a/**", "a/b"));
        for path in [
            "/notes/../etc",
            "/notes//a.md",
            "notes/a.md",
            "/notes\\a.md",
            "/notes/./a",
        ] {
            assert!(!glob_matches("/notes/**", path), "{path}");
        }
    }
}
