//! Tests of the git config reader: each rule of git's syntax by hand, then the reader against
//! the `git` binary on hand-picked and generated files, and path interpolation against
//! `git config --type=path`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::*;

type Row = (String, Option<String>, String, Option<String>);
/// What a reader made of a file: its entries and the bad line.
type Read = (Vec<Row>, Option<usize>);

fn rows(bytes: &[u8]) -> Vec<Row> {
    parse_config(bytes)
        .entries
        .into_iter()
        .map(|e| (e.section, e.subsection, e.key, e.value))
        .collect()
}

fn row(section: &str, subsection: Option<&str>, key: &str, value: Option<&str>) -> Row {
    let own = |s: &str| s.to_owned();
    (own(section), subsection.map(own), own(key), value.map(own))
}

/// The one value of `a.k` in `[a]` followed by `line`.
fn value(line: &str) -> Option<String> {
    let parsed = parse_config(format!("[a]\n{line}\n").as_bytes());
    assert_eq!(parsed.error_line, None, "{line:?}");
    assert_eq!(parsed.entries.len(), 1, "{line:?}");
    parsed.entries[0].value.clone()
}

fn error_line(bytes: &[u8]) -> Option<usize> {
    parse_config(bytes).error_line
}

#[test]
fn bom_comments_and_blank_lines() {
    let text = b"\xef\xbb\xbf# c\n; c\n\n \t \n[core] ; c\n\tbare\n";
    assert_eq!(rows(text), vec![row("core", None, "bare", None)]);
    assert_eq!(error_line(b"\xef\xbb[core]\n"), Some(1), "a partial BOM");
    assert_eq!(
        error_line(b"[core]\n\xef\xbb\xbfk = v\n"),
        Some(2),
        "a BOM later on"
    );
    // A comment marker after a key without `=` is a bad line for git.
    assert_eq!(error_line(b"[core]\n\tbare # c\n"), Some(2));
}

#[test]
fn section_headers() {
    assert_eq!(
        rows(b"[CoRe]\nk=1"),
        vec![row("core", None, "k", Some("1"))]
    );
    let sub = rows(b"[includeIf \"gitdir:~/W/\"]\npath = x\n");
    assert_eq!(
        sub,
        vec![row("includeif", Some("gitdir:~/W/"), "path", Some("x"))]
    );
    // Only `\"` and `\\` mean something; a backslash before anything else is dropped.
    let escaped = rows(b"[a \"x\\\"y\\\\z\\q\"]\nk\n");
    assert_eq!(escaped, vec![row("a", Some("x\"y\\zq"), "k", None)]);
    assert_eq!(
        rows(b"[a \"]\"]\nk\n"),
        vec![row("a", Some("]"), "k", None)]
    );
    // The deprecated form is lower-cased, and mixes with the quoted one.
    assert_eq!(
        rows(b"[a.B.c]\nk\n"),
        vec![row("a", Some("b.c"), "k", None)]
    );
    assert_eq!(
        rows(b"[A.b \"C\"]\nk\n"),
        vec![row("a", Some("b.C"), "k", None)]
    );
    assert_eq!(rows(b"[a-1]\nk\n"), vec![row("a-1", None, "k", None)]);
    // Entries may follow the header on its line.
    let inline = rows(b"[core] hooksPath = x\n");
    assert_eq!(inline, vec![row("core", None, "hookspath", Some("x"))]);
    for bad in [
        &b"[]\n"[..],
        b"[a_b]\n",
        b"[a x]\n",
        b"[a \"x\" ]\n",
        b"[a \"x\nk\n",
        b"[a \"x\\\n\"]\n",
        b"[a\n]",
    ] {
        assert_eq!(
            error_line(bad),
            Some(1),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    // git counts the line feed (or end of file) read where it wanted the `]`.
    assert_eq!(error_line(b"[a \"x\"\n"), Some(2));
    assert_eq!(error_line(b"[a"), Some(2));
}

#[test]
fn variable_names() {
    let names = rows(b"[a]\nhooksPath\nA-9 = 1\n");
    assert_eq!(
        names,
        vec![
            row("a", None, "hookspath", None),
            row("a", None, "a-9", Some("1"))
        ]
    );
    for bad in [
        "9a = 1",
        "-a = 1",
        "a_b = 1",
        "a.b = 1",
        "k x = 1",
        "k\u{e9} = 1",
    ] {
        assert_eq!(
            error_line(format!("[a]\n{bad}\n").as_bytes()),
            Some(2),
            "{bad}"
        );
    }
    // git reads a key before any section header, under its own name.
    let outside = rows(b"k = v\n[core]\nhooksPath = h\n");
    let expect = vec![
        row("", None, "k", Some("v")),
        row("core", None, "hookspath", Some("h")),
    ];
    assert_eq!(outside, expect);
}

#[test]
fn values() {
    assert_eq!(value("k"), None);
    assert_eq!(value("k ="), Some(String::new()));
    assert_eq!(value("k = \t a  b \t "), Some("a  b".into()));
    assert_eq!(value("k = a  \"  b  \"  c  "), Some("a    b    c".into()));
    assert_eq!(value("k = \"a # b\" # c"), Some("a # b".into()));
    assert_eq!(value("k = a;b"), Some("a".into()));
    assert_eq!(
        value("k = \\\\ \\\" \\n \\t \\b"),
        Some("\\ \" \n \t \u{8}".into())
    );
    assert_eq!(value("k = a\\\nb"), Some("ab".into()));
    assert_eq!(value("k = \"a\\\n b\""), Some("a b".into()));
    // The backslash stops the trimming: the space before it stays.
    assert_eq!(value("k = a \\\n"), Some("a ".into()));
    assert_eq!(value("k = a\rb"), Some("a\rb".into()));
    assert_eq!(error_line(b"[a]\nk = \\x\n"), Some(2), "unknown escape");
    assert_eq!(error_line(b"[a]\nk = \"x\n"), Some(2), "newline in quotes");
    assert_eq!(
        error_line(b"[a]\nk = \"x\\\ny\n"),
        Some(3),
        "continued into quotes"
    );
    assert_eq!(
        error_line(b"[a]\nk = \"x"),
        Some(2),
        "end of file in quotes"
    );
}

#[test]
fn lines_and_line_endings() {
    let parsed = parse_config(b"[a]\r\nk = v\r\n\r\nm = x\\\r\ny\r\nn = z\r\n");
    let lines: Vec<_> = parsed
        .entries
        .iter()
        .map(|e| (e.line, e.value.clone()))
        .collect();
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(lines, vec![(2, some("v")), (4, some("xy")), (6, some("z"))]);
    assert_eq!(parsed.error_line, None);
    let bad = parse_config(b"[a]\nk = 1\n[b]\n@\nm = 2\n");
    assert_eq!(
        bad.entries.len(),
        1,
        "what comes before the bad line is kept"
    );
    assert_eq!(bad.error_line, Some(4));
}

#[test]
fn a_nul_ends_names_and_values_as_in_git() {
    assert_eq!(value("k = a\0b"), Some("a".into()));
    let cut = rows(b"[core \"hookspath\0x\"]\n\ty = /d\n");
    assert_eq!(cut, vec![row("core", None, "hookspath", Some("/d"))]);
    let dotted = rows(b"[includeIf \"gitdir:/w/.path\0\"]\n\ty = /d\n");
    assert_eq!(
        dotted,
        vec![row("includeif", Some("gitdir:/w/"), "path", Some("/d"))]
    );
}

#[test]
fn values_of_a_key_in_every_subsection() {
    let parsed =
        parse_config(b"[Core]\nhooksPath = 1\n[core \"x\"]\nhookspath = 2\n[b]\nhookspath");
    let found: Vec<_> = parsed.values("CORE", "HooksPath").map(|e| e.line).collect();
    assert_eq!(found, vec![2, 4]);
}

#[test]
fn interpolating_paths() {
    let (base, home) = (Path::new("/w/t"), Some(Path::new("/h/me")));
    let at = |value: &str| interpolate_path(value, base, home);
    assert_eq!(at("~/a/./b"), Some(PathBuf::from("/h/me/a/b")));
    assert_eq!(at("~"), Some(PathBuf::from("/h/me")));
    assert_eq!(interpolate_path("~/a", base, None), None);
    assert_eq!(at("~no-such-user-golem/a"), None);
    assert_eq!(at("%(prefix)/etc"), None);
    assert_eq!(at("%(prefix)etc"), Some(PathBuf::from("/w/t/%(prefix)etc")));
    assert_eq!(at("/abs/./c/../d"), Some(PathBuf::from("/abs/d")));
    assert_eq!(at("a/../b"), Some(PathBuf::from("/w/t/b")));
    assert_eq!(at("../../../../x"), Some(PathBuf::from("/x")));
    assert_eq!(at(""), None);
    let relative = join_normalised(Path::new("a"), Path::new("../../b/./c"));
    assert_eq!(relative, PathBuf::from("../b/c"));
    let passwd = b"root:x:0:0:root:/root:/bin/sh\nme:x:1000:1000:Me,,,:/home/me:/bin/sh\n";
    assert_eq!(
        home_in_passwd(passwd, "me"),
        Some(PathBuf::from("/home/me"))
    );
    assert_eq!(home_in_passwd(passwd, "m"), None);
    assert_eq!(home_in_passwd(passwd, "x"), None);
}

// --- against the git binary ---

/// `git` run only on what it is given: no system or global configuration, `HOME` in `dir`,
/// messages untranslated.
fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", dir)
        .env("LC_ALL", "C")
        .env_remove("LANGUAGE")
        .env_remove("GIT_CONFIG")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .env_remove("GIT_DIR")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run git ({e}): these tests compare with it; apt-get install git")
        })
}

/// What git reads of `bytes` (entries as `parse_config` gives them, the bad line), and the same
/// from `parse_config`.
fn both(dir: &Path, bytes: &[u8]) -> (Read, Read) {
    let file = dir.join("config");
    std::fs::write(&file, bytes).unwrap();
    let out = git(
        dir,
        &[
            "config",
            "--file",
            "config",
            "--list",
            "--null",
            "--no-includes",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let bad_line = (!out.status.success()).then(|| {
        let at = stderr
            .find("bad config line ")
            .unwrap_or_else(|| panic!("git: {stderr}"));
        let digits: String = stderr[at + 16..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<usize>().unwrap()
    });
    let records = out.stdout.strip_suffix(b"\0").unwrap_or(&[]);
    let listed = records
        .split(|&b| b == 0)
        .filter(|_| !out.stdout.is_empty())
        .map(|record| {
            let newline = record.iter().position(|&b| b == b'\n');
            let name = &record[..newline.unwrap_or(record.len())];
            let value = newline.map(|at| text(&record[at + 1..]));
            let (section, subsection, key) = split_name(name);
            (text(section), subsection.map(text), text(key), value)
        })
        .collect();
    let ours = parse_config(bytes);
    ((listed, bad_line), (rows(bytes), ours.error_line))
}

const HAND_PICKED: &[&[u8]] = &[
    b"",
    b"\n\n",
    b"\xef\xbb\xbf",
    b"\xef\xbb\xbf[a]k",
    b"\xef\xbb[a]\n",
    b"[core]\n\tbare # c\n",
    b"[core] ; c\n\tbare\n",
    b"[includeIf \"gitdir:~/w/\"]\n\tpath = ~/x\n",
    b"[a \"x\\\"y\\\\z\\q\"]\nk\n",
    b"[a \"]\"]k\n",
    b"[a.B.c]\nk\n[A.b \"C\"]\nk\n[.]\nk\n[ \"x\"]\nk\n[a.]\nk\n",
    b"[]\n",
    b"[a x]\n",
    b"[a \"x\" ]\n",
    b"[a \"x\"\n",
    b"[a \"x\\\n\"]\n",
    b"[a\n]\n",
    b"[a",
    b"[a\t\"t\"]\nk = 1\n",
    b"[a]\n9a = 1\n",
    b"[a]\nk x = 1\n",
    b"[a]\nk\t=\t1\n",
    b"[a]\nk\n= 1\n",
    b"k = v\n[core]\nhooksPath = h\n",
    b"[a]\nk = \t a  b \t \n",
    b"[a]\nk = a  \"  b  \"  c  \n",
    b"[a]\nk = \"a # b\" # c\nm = a;b\n",
    b"[a]\nk = \\\\ \\\" \\n \\t \\b\n",
    b"[a]\nk = \\x\n",
    b"[a]\nk = a\\\nb\n",
    b"[a]\nk = a \\\n\n",
    b"[a]\nk = \"a\\\n b\"\n",
    b"[a]\nk = \"x\n",
    b"[a]\nk = \"x\\\ny\n",
    b"[a]\nk = \"x",
    b"[a]\nk = x\\",
    b"[a]\nk = \\",
    b"[a]\nk = \\\n\\\n",
    b"[a]\r\nk = v\r\n\r\nm = x\\\r\ny\r\n",
    b"[a]\rk = v\n",
    b"[a]\nk = a\rb\r\n",
    b"[a]\nk = a\x0bb\x0c\n",
    b"[a]\n\x0bk = 1\n",
    b"[a]\nk = a\0b\n",
    b"[core \"hookspath\0x\"]\n\ty = /d\n",
    b"[core \"\0\"]\n\ty = /d\n",
    b"[ \"\0\"]\n\ty = /d\n",
    b"[a]\nk = \xff\xfe\n[b \"\xe9\"]\nk\n",
];

#[test]
fn git_agrees_on_hand_picked_files() {
    let dir = tempfile::tempdir().unwrap();
    for &bytes in HAND_PICKED {
        let (git, ours) = both(dir.path(), bytes);
        assert_eq!(ours, git, "{:?}", String::from_utf8_lossy(bytes));
    }
}

/// Pieces of config files, put together in any order.
const PIECES: &[&[u8]] = &[
    b"[core]",
    b"[Core]",
    b"[include]",
    b"[includeIf \"gitdir:~/w/\"]",
    b"[a \"b\\\"c\\\\d\\e\"]",
    b"[a.B]",
    b"[a.b \"C\"]",
    b"[.]",
    b"[]",
    b"[ \"x\"]",
    b"[a \"x\" ]",
    b"[a x]",
    b"[a \"x",
    b"[a",
    b"[a-1.b-2]",
    b"[a \"\0x\"]",
    b"[core \"hookspath\0y\"]",
    b"[a \"]\"]",
    b"[a_b]",
    b"[a\t\"t\"]",
    b"k",
    b"hooksPath",
    b"a-b",
    b"K9",
    b"-x",
    b"9a",
    b"path",
    b"\xc3\xa9",
    b"=",
    b" = ",
    b"\t=\t",
    b" ",
    b"  ",
    b"\t",
    b"v",
    b"a b",
    b"\"q u\"",
    b"\"",
    b"\\",
    b"\\n",
    b"\\t",
    b"\\b",
    b"\\x",
    b"\\\\",
    b"\\\"",
    b"#c",
    b";c",
    b"\0",
    b"\r",
    b"\x0b",
    b"\x0c",
    b"\xff",
    b"~/x",
    b"\\\n",
    b"\\\r\n",
    b"\n",
    b"\n",
    b"\n",
    b"\r\n",
    b"\xef\xbb\xbf",
    b"\xef\xbb",
    b"[",
    b"]",
    b".",
];
const HEADERS: &[&[u8]] = &[
    b"[core]",
    b"[Core]",
    b"[includeIf \"gitdir:~/w/\"]",
    b"[a \"b\\\"c\\\\d\\e\"]",
    b"[a.B]",
    b"[a.b \"C\"]",
    b"[.]",
    b"[ \"x\"]",
    b"[a-1.b-2]",
    b"[a \"\0x\"]",
    b"[a \"]\"]",
    b"[a] k=1",
    b"[a\t\"t\"]",
];
const BAD_HEADERS: &[&[u8]] = &[b"[a \"x\" ]", b"[a x]", b"[]", b"[a_b]", b"[a \"x", b"[a"];
const KEYS: &[&[u8]] = &[b"k", b"hooksPath", b"a-b", b"K9", b"path"];
const BAD_KEYS: &[&[u8]] = &[b"-x", b"k_x", b"k\0", b"9"];
const SEPARATORS: &[&[u8]] = &[b"", b"=", b" = ", b"\t=\t", b" =", b"= ", b"=="];
const VALUE_BITS: &[&[u8]] = &[
    b"v",
    b"a b",
    b"\"q u\"",
    b"\"",
    b"\\\\",
    b"\\n",
    b"\\t",
    b"\\b",
    b"\\\"",
    b" ",
    b"  ",
    b"\t",
    b"#c",
    b";c",
    b"\0",
    b"\r",
    b"\x0b",
    b"\xc3\xa9",
    b"\xff",
    b"~/x",
    b"\\\n",
];
const BAD_VALUE_BITS: &[&[u8]] = &[b"\\x", b"\\", b"\"\n"];
const OTHER_LINES: &[&[u8]] = &[
    b"# c",
    b"; c",
    b"",
    b"  ",
    b"\t",
    b"\xef\xbb\xbf",
    b"\r",
    b"=",
];
const LINE_ENDS: &[&[u8]] = &[b"\n", b"\n", b"\n", b"\r\n", b"", b"\n\n"];

fn pieces(from: &'static [&'static [u8]]) -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(from).prop_map(<[u8]>::to_vec)
}

/// Mostly `good`, now and then `bad`.
fn mostly(good: &'static [&'static [u8]], bad: &'static [&'static [u8]]) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![12 => pieces(good), 1 => pieces(bad)].boxed()
}

/// Files made of lines that are mostly well-formed, so the parser gets past the first line.
fn line_files() -> impl Strategy<Value = Vec<u8>> {
    let bits = prop::collection::vec(mostly(VALUE_BITS, BAD_VALUE_BITS), 0..5);
    let entry = (mostly(KEYS, BAD_KEYS), pieces(SEPARATORS), bits)
        .prop_map(|(key, separator, bits)| [key, separator, bits.concat()].concat());
    let header = mostly(HEADERS, BAD_HEADERS);
    let line = prop_oneof![2 => header.clone(), 8 => entry, 1 => pieces(OTHER_LINES)];
    let lines = prop::collection::vec((line, pieces(LINE_ENDS)), 0..12);
    (header, lines).prop_map(|(header, lines)| {
        let lines = lines.into_iter().flat_map(|(line, end)| [line, end]);
        [header, b"\n".to_vec()]
            .into_iter()
            .chain(lines)
            .collect::<Vec<_>>()
            .concat()
    })
}

#[test]
fn git_agrees_on_generated_files() {
    let dir = tempfile::tempdir().unwrap();
    let any_pieces =
        prop::collection::vec(pieces(PIECES), 0..24).prop_map(|pieces| pieces.concat());
    let after_a_header = (
        pieces(HEADERS),
        prop::collection::vec(pieces(PIECES), 0..24),
    )
        .prop_map(|(header, pieces)| [header, pieces.concat()].concat());
    let strategies = [
        (any_pieces.boxed(), 400),
        (after_a_header.boxed(), 400),
        (line_files().boxed(), 1200),
    ];
    for (strategy, cases) in strategies {
        let config = Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&strategy, |bytes| {
            let (git, ours) = both(dir.path(), &bytes);
            prop_assert_eq!(ours, git, "{:?}", String::from_utf8_lossy(&bytes));
            Ok(())
        });
        if let Err(failure) = result {
            panic!("{failure}");
        }
    }
}

#[test]
fn interpolate_path_agrees_with_git() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let base = Path::new("/work/tree");
    let mut values = vec!["~/a", "~", "a/../b", "/abs", "/abs/./c/../d", "~/"];
    let passwd = std::fs::read("/etc/passwd").unwrap_or_default();
    if home_in_passwd(&passwd, "root").is_some() {
        values.push("~root/x");
    }
    for value in values {
        std::fs::write(home.join("config"), format!("[x]\n\ty = {value}\n")).unwrap();
        let out = git(
            home,
            &["config", "--file", "config", "--type=path", "--get", "x.y"],
        );
        assert!(
            out.status.success(),
            "{value}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = String::from_utf8(out.stdout).unwrap();
        let gits = join_normalised(base, Path::new(printed.trim_end_matches('\n')));
        assert_eq!(
            interpolate_path(value, base, Some(home)),
            Some(gits),
            "{value}"
        );
    }
    let expected = |value: &str| interpolate_path(value, base, Some(home));
    assert_eq!(expected("~/a"), Some(home.join("a")));
    assert_eq!(expected("a/../b"), Some(base.join("b")));
    // A user git cannot find is an error for git, unknown for us.
    std::fs::write(home.join("config"), "[x]\n\ty = ~no-such-user-golem/x\n").unwrap();
    let out = git(
        home,
        &["config", "--file", "config", "--type=path", "--get", "x.y"],
    );
    assert!(!out.status.success());
    assert_eq!(expected("~no-such-user-golem/x"), None);
}
