//! Virtual path syntax: `/<zone>/<relative path>`, normalized lexically before the kernel sees
//! anything. This is the first of two walls: it refuses malformed paths and any `..` that would
//! climb out of its zone; the second wall is the kernel resolving beneath the zone's handle
//! (symbolic links are only seen there).
//!
//! Rules: the path starts with `/`; `/` alone is the root (the list of zones); empty and `.`
//! components are dropped (so `//` and trailing `/` are harmless); `..` removes the previous
//! component and is refused when it would leave the zone; NUL, other control characters and
//! backslashes are refused; a component may have at most 255 bytes and the path 4096. Anything
//! else is a literal name: `%2e%2e`, `／` (U+FF0F) and `‥` (U+2025) are ordinary file names.

use std::path::PathBuf;

use golem_protocol::{ToolError, ToolErrorCode};

/// The longest accepted virtual path, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest accepted path component, in bytes (Linux `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// A lexically normalized virtual path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Normalized {
    /// `/`: the list of zones.
    Root,
    /// A path in a zone; `rel` has no `.`, `..` or empty components and is empty for the zone
    /// root.
    Zone {
        /// The zone name (not yet checked against the configured zones).
        zone: String,
        /// The relative path inside the zone.
        rel: PathBuf,
    },
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ToolErrorCode::InvalidPath, message)
}

/// Normalizes `virtual_path` (see the module docs for the rules).
pub(crate) fn normalize(virtual_path: &str) -> Result<Normalized, ToolError> {
    let shown = shown(virtual_path);
    if virtual_path.len() > MAX_PATH_BYTES {
        return Err(invalid(format!(
            "path is too long ({} bytes, at most {MAX_PATH_BYTES}): {shown}",
            virtual_path.len()
        )));
    }
    if virtual_path.contains('\0') {
        return Err(invalid(format!("path contains a NUL byte: {shown}")));
    }
    if virtual_path.chars().any(char::is_control) {
        return Err(invalid(format!(
            "path contains a control character: {shown}"
        )));
    }
    if virtual_path.contains('\\') {
        return Err(invalid(format!(
            "path contains a backslash: {shown}; separate components with `/`, as in /<zone>/dir/file.txt"
        )));
    }
    if !virtual_path.starts_with('/') {
        return Err(invalid(format!(
            "path must be absolute in the virtual file system, /<zone>/<path> (for example /{}): {shown}",
            virtual_path.trim_start_matches("./")
        )));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in virtual_path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.len() <= 1 {
                    let what = match parts.first() {
                        Some(zone) => format!("zone {zone}"),
                        None => "the root".to_owned(),
                    };
                    return Err(invalid(format!(
                        "`..` would leave {what}: {shown}; paths must stay inside their zone"
                    )));
                }
                parts.pop();
            }
            name => {
                if name.len() > MAX_COMPONENT_BYTES {
                    return Err(invalid(format!(
                        "a path component is too long ({} bytes, at most {MAX_COMPONENT_BYTES}): {shown}",
                        name.len()
                    )));
                }
                parts.push(name);
            }
        }
    }
    let mut iter = parts.into_iter();
    match iter.next() {
        None => Ok(Normalized::Root),
        Some(zone) => Ok(Normalized::Zone {
            zone: zone.to_owned(),
            rel: iter.collect(),
        }),
    }
}

/// The path as shown in messages: quoted with escapes, cut short when very long.
pub(crate) fn shown(virtual_path: &str) -> String {
    const MAX_SHOWN: usize = 200;
    if virtual_path.len() <= MAX_SHOWN {
        return format!("{virtual_path:?}");
    }
    let mut end = MAX_SHOWN;
    while !virtual_path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}…", &virtual_path[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(zone: &str, rel: &str) -> Normalized {
        Normalized::Zone {
            zone: zone.to_owned(),
            rel: PathBuf::from(rel),
        }
    }

    fn check_ok(input: &str, expect: Normalized) {
        assert_eq!(normalize(input).unwrap(), expect, "{input}");
    }

    fn check_err(input: &str, needle: &str) {
        let err = normalize(input).unwrap_err();
        assert_eq!(err.code, ToolErrorCode::InvalidPath, "{input}");
        assert!(err.message.contains(needle), "{input}: {}", err.message);
    }

    #[test]
    fn normalizes() {
        check_ok("/", Normalized::Root);
        check_ok("//", Normalized::Root);
        check_ok("/.", Normalized::Root);
        check_ok("/a", zone("a", ""));
        check_ok("/a/", zone("a", ""));
        check_ok("/a/./b//c/", zone("a", "b/c"));
        check_ok("/a/b/../c", zone("a", "c"));
        check_ok("/a/b/..", zone("a", ""));
        check_ok("/./a/b", zone("a", "b"));
        check_ok("/a/%2e%2e/x", zone("a", "%2e%2e/x"));
        check_ok("/a/‥/x", zone("a", "‥/x"));
        check_ok("/a／..／b", zone("a／..／b", ""));
        check_ok("/a/...", zone("a", "..."));
    }

    #[test]
    fn refuses() {
        check_err("/a/..", "leave zone a");
        check_err("/a/../b/x", "leave zone a");
        check_err("/a/b/../../..", "leave zone a");
        check_err("/..", "leave the root");
        check_err("/../etc/passwd", "leave the root");
        check_err("", "must be absolute");
        check_err("a/b", "must be absolute");
        check_err("../a", "must be absolute");
        check_err("/a/b\0c", "NUL");
        check_err("/a/b\nc", "control");
        check_err("/a\\..\\..\\etc", "backslash");
        check_err(&format!("/a/{}", "x".repeat(256)), "component is too long");
        check_err(&format!("/a{}", "/x".repeat(2100)), "path is too long");
        normalize(&format!("/a/{}", "x".repeat(255))).unwrap();
    }

    #[test]
    fn shown_is_bounded_and_escaped() {
        assert_eq!(shown("/a\0b"), "\"/a\\0b\"");
        let long = "é".repeat(300);
        assert!(shown(&long).len() < 220);
    }
}
