//! The table's readers: which words a finding spans, names by path and version, and the
//! warning for bare program rules. The decisions these lead to are tested with the rules
//! (`rules.rs`).

use super::*;
use crate::shell::words::split_command;

fn words(command: &str) -> Vec<String> {
    split_command(command).unwrap_or_else(|e| panic!("{command}: {e}"))
}

/// The span `start..end` of the first finding, with nothing covered.
fn span(command: &str) -> Option<(usize, usize)> {
    uncovered(&words(command), 0).map(|f| (f.start, f.end))
}

#[test]
fn spans_reach_the_words_a_rule_must_name() {
    for (command, expected) in [
        // An option and its separate value; an attached value; a flag.
        ("git -c a=b log", Some((1, 3))),
        ("git -ca=b log", Some((1, 2))),
        ("git --config-env=a=B log", Some((1, 2))),
        ("git --no-pager -c a=b log", Some((2, 4))),
        ("git -C dir -c a=b log", Some((3, 5))),
        ("git log --ext-diff", Some((2, 3))),
        ("git fetch --upload-pack x", Some((2, 4))),
        ("git clone -qu x h:r", Some((2, 4))),
        ("git clone -qux h:r", Some((2, 3))),
        // Subcommands that run commands reach to the end.
        ("git submodule foreach rm x", Some((1, 5))),
        ("git config alias.x y", Some((1, 4))),
        ("find . -exec rm {} \\;", Some((2, 4))),
        ("find . -delete", Some((2, 3))),
        // The whole program: prefixes to the end, others past their first argument.
        ("env a b c", Some((0, 4))),
        ("env", Some((0, 2))),
        ("make", Some((0, 2))),
        ("make test", Some((0, 2))),
        ("python3 x.py a b", Some((0, 2))),
        ("python3 -u x.py", Some((0, 3))),
        ("python3 -W error x.py", Some((0, 4))),
        ("python3 -c code", Some((0, 3))),
        ("python3 -ccode", Some((0, 2))),
        ("bash -- x.sh", Some((0, 3))),
        ("python3", Some((0, 2))),
        ("sed -n -e p -e 1e f", Some((5, 6))),
        ("sed --expression=1e f", Some((1, 2))),
        ("tar -xf a.tar --to-command=x", Some((3, 4))),
        // Nothing to find.
        ("git status", None),
        ("git", None),
        ("ls -la", None),
        ("find . -name x", None),
    ] {
        assert_eq!(span(command), expected, "{command}");
    }
}

#[test]
fn programs_are_known_by_their_last_path_component_and_without_a_version() {
    for command in [
        "/usr/bin/git -c a=b x",
        "./git -c a=b x",
        "python3.12 x.py",
        "/usr/local/bin/python3.11 -c x",
        "perl5.36 -e x",
        "lua5.4 -e x",
        "/bin/sh -c x",
    ] {
        assert!(span(command).is_some(), "{command}");
    }
    for command in [
        "gitx -c a=b",
        "shx -c x",
        "mysed 1e f",
        "/usr/bin/mygit -c a=b x",
    ] {
        assert_eq!(span(command), None, "{command}");
    }
    // A program outside the system directories is flagged itself, whatever its name.
    for command in [
        "./mygit -c a=b x",
        "/work/ls",
        "../x",
        "/usr/../work/ls",
        "/tmp/x",
    ] {
        assert_eq!(span(command), Some((0, 1)), "{command}");
    }
}

#[test]
fn sed_scripts_are_read_command_by_command() {
    for (script, runs) in [
        ("p", false),
        ("s/a/b/g", false),
        ("s|e|w|g", false),
        ("s/a/b/3p", false),
        ("/e/,/w/d", false),
        ("\\%e%d", false),
        ("1~2d;$!N", false),
        ("/x/{s/a/b/;p}", false),
        ("a\\\ne text", false),
        (":top\nb top", false),
        ("y/ew/we/", false),
        ("e", true),
        ("1e id", true),
        ("$e", true),
        ("/x/!e id", true),
        ("s/a/b/e", true),
        ("s/a/b/gw out", true),
        ("/x/w out", true),
        ("2W out", true),
        ("{e\n}", true),
        ("s/a/b", true),
        ("k", true),
    ] {
        assert_eq!(scripts_sed(script), runs, "{script:?}");
    }
}

fn scripts_sed(script: &str) -> bool {
    !scripts::sed(&["sed".to_owned(), script.to_owned()]).is_empty()
}

#[test]
fn awk_programs_are_read_outside_strings_and_regular_expressions() {
    for (program, runs) in [
        ("{ print $1 }", false),
        ("/a|b/ { n++ }", false),
        ("$0 ~ /x|y/", false),
        ("{ split($0, a, /,|;/) }", false),
        ("{ print \"a|b\" }", false),
        ("{ print \"system\" }", false),
        ("$1 || $2", false),
        ("# a | comment\n{ print }", false),
        ("BEGIN { system(\"id\") }", true),
        ("{ print | \"sort\" }", true),
        ("{ print $1 / 2 | \"sh\" }", true),
        ("BEGIN { \"id\" | getline x }", true),
        ("@load \"filefuncs\"", true),
    ] {
        let found = !scripts::awk(&["awk".to_owned(), program.to_owned()]).is_empty();
        assert_eq!(found, runs, "{program:?}");
    }
}

#[test]
fn bare_program_rules_get_a_warning_with_narrow_rules() {
    let git = bare_program("git ").unwrap_or_default();
    assert!(git.starts_with("pre-approves every `git` command"), "{git}");
    assert!(
        git.ends_with("Prefer narrow rules such as `git status`, `git diff`, `git log`"),
        "{git}"
    );
    let python = bare_program("python3").unwrap_or_default();
    assert!(
        python.contains("every such command asks anyway"),
        "{python}"
    );
    for pattern in [
        "git status",
        "find . -name",
        "ls",
        "wc ",
        "'git",
        "make test",
    ] {
        assert_eq!(bare_program(pattern), None, "{pattern}");
    }
    for pattern in ["find", "make", "env", "bash", "sed", "/usr/bin/git"] {
        assert!(bare_program(pattern).is_some(), "{pattern}");
    }
}
