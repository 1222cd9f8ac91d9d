//! A reader of git configuration files that reads them as git does (issue 45), so protection
//! can follow `core.hooksPath`, `include.path`, `includeIf.<cond>.path` and `core.worktree`.
//!
//! The parser is a port of git's own (`config.c`: `get_next_char`, `parse_value`,
//! `get_value`, `get_base_var`, `get_extended_base_var`, `git_parse_source`), byte for byte,
//! so what it accepts, what it rejects and the line git names in "bad config line N" agree
//! with git; the tests compare it with the `git` binary. Two of git's quirks matter for
//! protection and are kept on purpose:
//! - a key before any section header is read, not refused (its name is the key alone);
//! - git keeps names and values as C strings, so a NUL byte ends them: a value stops at its
//!   first NUL, and a NUL in a subsection cuts the whole name there, so
//!   `[core "hookspath\0x"] y = /d` is git's `core.hookspath = /d` — and ours.
//!
//! Names and values are made strings with invalid UTF-8 replaced (U+FFFD).

use std::path::{Component, Path, PathBuf};

/// One `key = value` of a config file, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigEntry {
    /// Section name, lower-cased (`core`, `include`, `includeIf` -> "includeif"); `""` for a
    /// key before any section header, which git reads under the key's name alone.
    pub section: String,
    /// Subsection as git keeps it: case-sensitive, escapes resolved
    /// (`[includeIf "gitdir:~/w/"]` -> `Some("gitdir:~/w/")`); the deprecated
    /// `[section.sub]` form lower-cases it as git does.
    pub subsection: Option<String>,
    /// Variable name, lower-cased (`hooksPath` -> "hookspath").
    pub key: String,
    /// The value with git's quoting, escapes, comments and continuation lines resolved; `None`
    /// for a key with no `=` (git's implicit true).
    pub value: Option<String>,
    /// 1-based line where the key starts.
    pub line: usize,
}

/// What [`parse_config`] read of a file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ParsedConfig {
    /// The entries before the first bad line (all of them when there is none).
    pub entries: Vec<ConfigEntry>,
    /// The line git names in "fatal: bad config line N", when git refuses the file.
    pub error_line: Option<usize>,
}

impl ParsedConfig {
    /// Every entry of `section.key`, in file order, whatever its subsection (section and key
    /// compared lower-case; check [`ConfigEntry::subsection`] for exactly `section.key`).
    pub(crate) fn values<'a>(
        &'a self,
        section: &str,
        key: &str,
    ) -> impl Iterator<Item = &'a ConfigEntry> + use<'a> {
        let (section, key) = (section.to_ascii_lowercase(), key.to_ascii_lowercase());
        self.entries
            .iter()
            .filter(move |entry| entry.section == section && entry.key == key)
    }
}

/// The entries of a config file's bytes as git reads them. Git refuses the whole file at the
/// first bad line ("fatal: bad config line N"); for protection we keep what came before it and
/// report where it stopped, so the caller can still protect what the readable part names.
pub(crate) fn parse_config(bytes: &[u8]) -> ParsedConfig {
    const BOM: &[u8] = b"\xef\xbb\xbf";
    let mut src = Source {
        bytes,
        pos: 0,
        linenr: 1,
        eof: false,
        total_len: 0,
    };
    let mut entries = Vec::new();
    let mut var: Vec<u8> = Vec::new();
    let mut baselen = 0;
    let mut comment = false;
    // How much of a BOM the file started with; `None` once past the start.
    let mut bom = Some(0);
    loop {
        let c = src.next_char();
        if let Some(matched) = bom.filter(|&matched| matched < BOM.len()) {
            if BOM.get(matched) == Some(&c) {
                bom = Some(matched + 1);
                continue;
            }
            if matched != 0 {
                break; // git does not tolerate a partial BOM
            }
            bom = None;
        }
        if c == b'\n' {
            if src.eof {
                return ParsedConfig {
                    entries,
                    error_line: None,
                };
            }
            comment = false;
            continue;
        }
        if comment || is_space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        if c == b'[' {
            var.clear();
            if get_base_var(&mut src, &mut var).is_none() || var.is_empty() {
                break;
            }
            var.push(b'.');
            baselen = var.len();
            continue;
        }
        if !c.is_ascii_alphabetic() {
            break;
        }
        let line = src.linenr;
        var.truncate(baselen);
        var.push(c.to_ascii_lowercase());
        let Some(value) = get_value(&mut src, &mut var) else {
            break;
        };
        entries.push(entry(&var, value, line));
    }
    ParsedConfig {
        entries,
        error_line: Some(src.linenr),
    }
}

/// git's reading position (`struct config_source`).
struct Source<'a> {
    bytes: &'a [u8],
    pos: usize,
    linenr: usize,
    eof: bool,
    total_len: usize,
}

impl Source<'_> {
    fn fgetc(&mut self) -> Option<u8> {
        let c = self.bytes.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    /// git's `get_next_char`: `\r\n` reads as `\n`, the end of the file as a `\n` (counting
    /// a line each time it is read).
    fn next_char(&mut self) -> u8 {
        let mut c = self.fgetc();
        if c == Some(b'\r') {
            c = self.fgetc();
            if c != Some(b'\n') {
                if c.is_some() {
                    self.pos -= 1;
                }
                c = Some(b'\r');
            }
        }
        let Some(c) = c else {
            self.eof = true;
            self.linenr += 1;
            return b'\n';
        };
        self.total_len += 1;
        if self.total_len > i32::MAX as usize {
            // git stops an absurdly long file here, which ends in a parse error.
            self.eof = true;
            return 0;
        }
        if c == b'\n' {
            self.linenr += 1;
        }
        c
    }

    /// The line count goes back when git reports an error on the line a `\n` ended.
    fn back_a_line(&mut self) {
        self.linenr = self.linenr.saturating_sub(1);
    }
}

/// git's `isspace` (`sane_ctype`): space, tab, line feed and carriage return only.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// git's `iskeychar`.
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// git's `get_value`: the rest of a variable's name, then its value (`Some(None)` for a key
/// without `=`); `None` when the line is bad.
fn get_value(src: &mut Source<'_>, name: &mut Vec<u8>) -> Option<Option<Vec<u8>>> {
    let mut c;
    loop {
        c = src.next_char();
        if src.eof || !is_key_char(c) {
            break;
        }
        name.push(c.to_ascii_lowercase());
    }
    while c == b' ' || c == b'\t' {
        c = src.next_char();
    }
    if c == b'\n' {
        return Some(None);
    }
    if c != b'=' {
        return None;
    }
    parse_value(src).map(Some)
}

/// git's `parse_value`: after the `=`, up to the end of the (last continued) line.
fn parse_value(src: &mut Source<'_>) -> Option<Vec<u8>> {
    let (mut quote, mut comment) = (false, false);
    let mut trim_len = 0;
    let mut value = Vec::new();
    loop {
        let mut c = src.next_char();
        if c == b'\n' {
            if quote {
                src.back_a_line();
                return None;
            }
            if trim_len != 0 {
                value.truncate(trim_len);
            }
            return Some(value);
        }
        if comment {
            continue;
        }
        if is_space(c) && !quote {
            if trim_len == 0 {
                trim_len = value.len();
            }
            if !value.is_empty() {
                value.push(c);
            }
            continue;
        }
        if !quote && (c == b';' || c == b'#') {
            comment = true;
            continue;
        }
        trim_len = 0;
        if c == b'\\' {
            c = match src.next_char() {
                b'\n' => continue,
                b't' => b'\t',
                b'b' => 0x08,
                b'n' => b'\n',
                c @ (b'\\' | b'"') => c,
                _ => return None,
            };
            value.push(c);
            continue;
        }
        if c == b'"' {
            quote = !quote;
            continue;
        }
        value.push(c);
    }
}

/// git's `get_base_var`: a section header after its `[`, into `name`; `None` when bad.
fn get_base_var(src: &mut Source<'_>, name: &mut Vec<u8>) -> Option<()> {
    loop {
        let c = src.next_char();
        if src.eof {
            return None;
        }
        if c == b']' {
            return Some(());
        }
        if is_space(c) {
            return get_extended_base_var(src, name, c);
        }
        if !is_key_char(c) && c != b'.' {
            return None;
        }
        name.push(c.to_ascii_lowercase());
    }
}

/// git's `get_extended_base_var`: the `"subsection"]` of `[section "subsection"]`, where a
/// backslash keeps the character after it, whatever it is.
fn get_extended_base_var(src: &mut Source<'_>, name: &mut Vec<u8>, mut c: u8) -> Option<()> {
    loop {
        if c == b'\n' {
            src.back_a_line();
            return None;
        }
        c = src.next_char();
        if !is_space(c) {
            break;
        }
    }
    if c != b'"' {
        return None;
    }
    name.push(b'.');
    loop {
        let mut c = src.next_char();
        if c == b'\n' {
            src.back_a_line();
            return None;
        }
        if c == b'"' {
            break;
        }
        if c == b'\\' {
            c = src.next_char();
            if c == b'\n' {
                src.back_a_line();
                return None;
            }
        }
        name.push(c);
    }
    (src.next_char() == b']').then_some(())
}

/// The entry git hands on for the full name `var` (`section[.subsection].key`, as bytes).
fn entry(var: &[u8], value: Option<Vec<u8>>, line: usize) -> ConfigEntry {
    let (section, subsection, key) = split_name(until_nul(var));
    ConfigEntry {
        section: text(section),
        subsection: subsection.map(text),
        key: text(key),
        value: value.as_deref().map(|value| text(until_nul(value))),
        line,
    }
}

/// A name as git's `parse_config_key` splits it: the section up to the first dot, the key
/// after the last, the subsection between (none when both dots are one); no dot at all is a
/// key outside any section.
fn split_name(name: &[u8]) -> (&[u8], Option<&[u8]>, &[u8]) {
    let first = name.iter().position(|&b| b == b'.');
    let last = name.iter().rposition(|&b| b == b'.');
    match (first, last) {
        (Some(first), Some(last)) => (
            &name[..first],
            (last > first).then(|| &name[first + 1..last]),
            &name[last + 1..],
        ),
        _ => (&[], None, name),
    }
}

/// What a C string made of `bytes` holds: everything before the first NUL.
fn until_nul(bytes: &[u8]) -> &[u8] {
    bytes.split(|&b| b == 0).next().unwrap_or(bytes)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A path-valued setting (`core.hooksPath`, `include.path`) made absolute as git does (git's
/// `interpolate_path`, then joined): `~/x` and `~` -> `home` joined, `~user/x` -> that user's
/// home from `/etc/passwd` (`None` when unknown, or for `~` without `home`); `%(prefix)/x` ->
/// `None` (git's runtime prefix, which cannot be told); an absolute path as is; a relative one
/// joined to `base` (the including file's directory for `include.path`, the work tree root or
/// git dir for `core.hooksPath`). Normalised by [`join_normalised`]. `None` for an empty value.
///
/// Not for `core.worktree`, which git takes as written (no `~`): use [`join_normalised`]. Nor
/// does it strip the `:(optional)` prefix newer git (2.52) allows on `core.hooksPath`.
pub(crate) fn interpolate_path(value: &str, base: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if value.is_empty() || value.starts_with("%(prefix)/") {
        return None;
    }
    let path = match value.strip_prefix('~') {
        None => PathBuf::from(value),
        Some(rest) => {
            let (user, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let mut path = if user.is_empty() {
                home?.as_os_str().to_owned()
            } else {
                user_home(user)?.into_os_string()
            };
            // git appends the rest to the home directory as text.
            path.push(tail);
            PathBuf::from(path)
        }
    };
    Some(join_normalised(base, &path))
}

/// `path` joined to `base` (unless absolute) and lexically normalised: `.` removed, `..`
/// taking off the name before it (at the root, nothing), the file system untouched. Where a
/// name before a `..` is a symbolic link, the system would resolve it differently.
pub(crate) fn join_normalised(base: &Path, path: &Path) -> PathBuf {
    let mut parts: Vec<Component<'_>> = Vec::new();
    let joined = base.join(path);
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(Component::Normal(_)) => {
                    parts.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => parts.push(component),
            },
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                parts.push(component);
            }
        }
    }
    parts.iter().collect()
}

/// The home directory of `user` in `/etc/passwd` (`name:password:uid:gid:gecos:home:shell`).
fn user_home(user: &str) -> Option<PathBuf> {
    let passwd = std::fs::read("/etc/passwd").ok()?;
    home_in_passwd(&passwd, user)
}

fn home_in_passwd(passwd: &[u8], user: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    passwd.split(|&b| b == b'\n').find_map(|line| {
        let mut fields = line.split(|&b| b == b':');
        (fields.next() == Some(user.as_bytes()))
            .then(|| fields.nth(4))
            .flatten()
            .map(|home| PathBuf::from(std::ffi::OsStr::from_bytes(home)))
    })
}

#[cfg(test)]
mod tests;
