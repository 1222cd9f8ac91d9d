//! Reading the patch `git diff` prints (`--no-color --src-prefix=a/ --dst-prefix=b/`) into one
//! [`FilePatch`] per file with its hunks, the shape of the `diff` result kind. Pure.
//!
//! A file starts at `diff --git`; its names come from the `---`/`+++` lines (or `rename
//! from`/`rename to`, or, for a binary or mode-only change, the `diff --git` line itself), each
//! either plain or C-quoted (`"a/tab\there"`). A hunk's lines are counted against its header,
//! so a line that only looks like a header (`--- x` inside a hunk) is read as content.

use golem_protocol::result::DiffHunk;

/// The change to one file.
#[derive(Debug, Clone, Default, PartialEq)]
#[allow(missing_docs)] // fields are named for what they hold
pub struct FilePatch {
    /// The path after the change (before it, for a deletion), relative to the repository.
    pub path: String,
    /// The path before a rename or copy.
    pub from: Option<String>,
    /// Whether the file is new.
    pub is_new: bool,
    /// Whether the file was deleted.
    pub is_deleted: bool,
    /// Whether git found the file binary (no hunks then).
    pub binary: bool,
    pub hunks: Vec<DiffHunk>,
}

/// Where the reader is.
enum State {
    /// Between files, or in a file's extended header lines.
    Header,
    /// In a hunk, with this many old and new lines still to come.
    Hunk { old: u32, new: u32 },
}

/// Parses a patch; `complete` is false when the text was cut, in which case a last line that
/// may be partial is dropped.
pub fn parse_patch(text: &str, complete: bool) -> Vec<FilePatch> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") || !complete {
        lines.pop();
    }
    let mut files: Vec<FilePatch> = Vec::new();
    let mut state = State::Header;
    for line in lines {
        if let State::Hunk { old, new } = &mut state {
            if let Some(hunk) = files.last_mut().and_then(|f| f.hunks.last_mut()) {
                let tag = line.chars().next().unwrap_or(' ');
                let counted = match tag {
                    '\\' => true,
                    ' ' if *old > 0 && *new > 0 => {
                        *old -= 1;
                        *new -= 1;
                        true
                    }
                    '-' if *old > 0 => {
                        *old -= 1;
                        true
                    }
                    '+' if *new > 0 => {
                        *new -= 1;
                        true
                    }
                    _ => false,
                };
                if counted {
                    // An empty context line (trailing blanks trimmed on the way) is a space.
                    hunk.lines.push(if line.is_empty() {
                        " ".to_owned()
                    } else {
                        line.to_owned()
                    });
                    continue;
                }
                if line.is_empty() && *old > 0 && *new > 0 {
                    *old -= 1;
                    *new -= 1;
                    hunk.lines.push(" ".to_owned());
                    continue;
                }
            }
            state = State::Header;
        }
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.push(FilePatch {
                path: git_line_path(rest).unwrap_or_default(),
                ..FilePatch::default()
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if let Some(header) = line.strip_prefix("@@ ") {
            if let Some(hunk) = hunk_header(header) {
                state = State::Hunk {
                    old: hunk.old_lines,
                    new: hunk.new_lines,
                };
                file.hunks.push(hunk);
            }
        } else if line.starts_with("new file mode") {
            file.is_new = true;
        } else if line.starts_with("deleted file mode") {
            file.is_deleted = true;
        } else if let Some(name) = line
            .strip_prefix("rename from ")
            .or_else(|| line.strip_prefix("copy from "))
        {
            file.from = Some(unquote(name));
        } else if let Some(name) = line
            .strip_prefix("rename to ")
            .or_else(|| line.strip_prefix("copy to "))
        {
            file.path = unquote(name);
        } else if let Some(name) = line.strip_prefix("--- ") {
            if let Some(name) = strip_side(&unquote(name), "a/") {
                file.path = name;
            }
        } else if let Some(name) = line.strip_prefix("+++ ") {
            if let Some(name) = strip_side(&unquote(name), "b/") {
                file.path = name;
            }
        } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
            file.binary = true;
        }
    }
    files
}

/// `name` without its side's prefix; `None` for `/dev/null`.
fn strip_side(name: &str, prefix: &str) -> Option<String> {
    if name == "/dev/null" {
        return None;
    }
    Some(name.strip_prefix(prefix).unwrap_or(name).to_owned())
}

/// The new path named by the rest of a `diff --git a/X b/Y` line: the quoted second name, or,
/// unquoted, the second half of `a/P b/P` (the names are equal unless the file was renamed,
/// and then `rename to` names it).
fn git_line_path(rest: &str) -> Option<String> {
    if let Some(open) = rest.strip_suffix('"') {
        let start = open.rfind(" \"")? + 1;
        return strip_side(&unquote(&rest[start..]), "b/");
    }
    let half = rest.len().checked_sub(1)? / 2;
    let second = rest.get(half + 1..)?;
    strip_side(second, "b/")
}

/// A path as git prints it: plain, or in double quotes with C escapes (`\t`, `\"`, `\\`,
/// octal bytes such as `\303\251`).
pub fn unquote(name: &str) -> String {
    let Some(inner) = name
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    else {
        return name.to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(byte) = chars.next() {
        if byte != b'\\' {
            bytes.push(byte);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'a') => bytes.push(0x07),
            Some(b'b') => bytes.push(0x08),
            Some(b'f') => bytes.push(0x0c),
            Some(b'v') => bytes.push(0x0b),
            Some(digit @ b'0'..=b'7') => {
                let mut value = u32::from(digit - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(next @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(next - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `-a[,b] +c[,d] @@…` → a hunk with no lines yet (a missing count is 1).
fn hunk_header(header: &str) -> Option<DiffHunk> {
    let mut words = header.split(' ');
    let old = words.next()?.strip_prefix('-')?;
    let new = words.next()?.strip_prefix('+')?;
    let range = |text: &str| -> Option<(u32, u32)> {
        match text.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((text.parse().ok()?, 1)),
        }
    };
    let (old_start, old_lines) = range(old)?;
    let (new_start, new_lines) = range(new)?;
    Some(DiffHunk {
        old_start,
        old_lines,
        new_start,
        new_lines,
        lines: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "\
diff --git a/src/a.rs b/src/a.rs
index 1111111..2222222 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,3 +1,3 @@ fn main() {
 one
--- two
+++ two
 three
@@ -10 +10,2 @@
-ten
+ten
+eleven
\\ No newline at end of file
diff --git a/new file.txt b/new file.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new file.txt
@@ -0,0 +1 @@
+hello
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 4444444..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old.txt b/renamed.txt
similarity index 100%
rename from old.txt
rename to renamed.txt
diff --git a/logo.png b/logo.png
index 5555555..6666666 100644
Binary files a/logo.png and b/logo.png differ
diff --git \"a/tab\\there\" \"b/tab\\there\"
index 7777777..8888888 100644
--- \"a/tab\\there\"
+++ \"b/tab\\there\"
@@ -1 +1 @@
-x
+y
";

    #[test]
    fn files_hunks_and_names() {
        let files = parse_patch(PATCH, true);
        let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "src/a.rs",
                "new file.txt",
                "gone.txt",
                "renamed.txt",
                "logo.png",
                "tab\there"
            ]
        );
        let a = &files[0];
        assert_eq!(a.hunks.len(), 2);
        assert_eq!(a.hunks[0].lines, [" one", "--- two", "+++ two", " three"]);
        assert_eq!(
            (
                a.hunks[1].old_start,
                a.hunks[1].old_lines,
                a.hunks[1].new_lines
            ),
            (10, 1, 2)
        );
        assert_eq!(
            a.hunks[1].lines,
            ["-ten", "+ten", "+eleven", "\\ No newline at end of file"]
        );
        assert!(files[1].is_new && files[1].hunks[0].lines == ["+hello"]);
        assert!(files[2].is_deleted && files[2].hunks[0].lines == ["-bye"]);
        assert_eq!(files[3].from.as_deref(), Some("old.txt"));
        assert!(files[3].hunks.is_empty());
        assert!(files[4].binary && files[4].hunks.is_empty());
        assert_eq!(files[5].hunks[0].lines, ["-x", "+y"]);
    }

    #[test]
    fn a_cut_patch_keeps_its_whole_lines() {
        let cut = &PATCH[..PATCH.find("+hello").unwrap_or(0) + 3];
        let files = parse_patch(cut, false);
        assert_eq!(files.len(), 2);
        assert!(files[1].hunks[0].lines.is_empty());
    }

    #[test]
    fn quoted_names() {
        assert_eq!(unquote("plain name"), "plain name");
        assert_eq!(unquote("\"a\\\"b\\\\c\""), "a\"b\\c");
        assert_eq!(unquote("\"caf\\303\\251\""), "café");
        assert_eq!(git_line_path("a/x y b/x y").as_deref(), Some("x y"));
        assert_eq!(
            git_line_path("\"a/t\\tx\" \"b/t\\tx\"").as_deref(),
            Some("t\tx")
        );
    }
}
