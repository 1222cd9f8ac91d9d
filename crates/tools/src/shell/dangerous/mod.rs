//! Which words of a command make the program run other programs, load other configuration or
//! write files where a rule would not expect it (issue #11 item 4): `git -c alias.x='!…' x`,
//! `find -exec`, `env rm …`, `python3 -c …`. Policy as data: [`TABLE`] lists the programs and
//! what in their words gives them that power (`table.rs`); the readers of the few programs
//! whose arguments are a small language (git, sed, awk, ssh, sqlite3, tar) live in `git.rs`
//! and `scripts.rs`, and options are read getopt's way in `options.rs`.
//!
//! A [`Finding`] names the words that carry the power (`start..end`). The rules
//! (`rules.rs`) turn a pre-approval into a question when a finding reaches past the words of
//! the rule that matched: the user wrote `git status`, not `git -c … status`. A rule that
//! names the words itself (`make test`, `python3 tools/lint.py`, `git -c color.ui=never log`)
//! covers them, and only them. A bare program name never covers the power of a program that
//! always has it (an interpreter, `make`, `env`): only a rule naming more than the program can.
//!
//! The table looks at the program's name (the last component of the first word, so
//! `/usr/bin/git` and `./git` are read as git; a version suffix such as `3.12` is ignored). A
//! program given by a path outside the system directories (`./git`, `/work/build.sh`) is a
//! file the model may have written: it is flagged itself, and only a rule that names that
//! path covers it.
//! It errs towards asking. It cannot see what a program reads from its files: a
//! repository's `.git/config` and hooks, a `Makefile`, `package.json`, `.cargo/config.toml`.
//! Those are bounded by the jail, not by the rules.

mod git;
mod options;
mod scripts;
mod table;

use options::{Opt, Options, scan};
use table::TABLE;

/// Words of a command that make the program do more than a rule's words say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The first word of the power (0 is the program itself).
    pub start: usize,
    /// One past the last word a rule must name to cover it.
    pub end: usize,
    /// What those words do, for the approval prompt.
    pub why: String,
}

impl Finding {
    fn new(start: usize, end: usize, why: impl Into<String>) -> Finding {
        Finding {
            start,
            end,
            why: why.into(),
        }
    }
}

/// What gives a program its power.
enum Power {
    /// It runs the command in its arguments (`env`, `sudo`, `xargs`): only a rule that names
    /// the whole command covers it.
    RunsCommand,
    /// It runs code: the code given with one of `code`'s options, else a script (the first
    /// word that is not an option), else what it reads. A rule covers it when it names the
    /// code or the script.
    Interpreter {
        /// The options whose value (or the rest of the word) is code to run, or a module or
        /// file to run.
        code: &'static [Opt],
        /// How the other options take values, so that the script word is found.
        options: Options,
    },
    /// It always runs code it finds or is asked for (a `Makefile`'s recipes, build scripts,
    /// `!` commands of a pager): a rule covers it when it names more than the program.
    Always,
    /// Only these options (or words) run, load or write something.
    Options(Options),
    /// A reader of its own.
    Reader(fn(&[String]) -> Vec<Finding>),
}

/// One row of the table.
struct Entry {
    /// The program names.
    names: &'static [&'static str],
    /// What, in general, it can do, after its name (`` `make` runs the recipes … ``): the
    /// reason shown when the whole program is flagged, and in `check`'s warning.
    what: &'static str,
    /// How its words are read; the first finding of any wins.
    powers: &'static [Power],
    /// Narrow rules to suggest instead of the bare program.
    narrow: &'static [&'static str],
}

/// The program name the table knows `word` by: its last path component, and if that is not
/// in the table, without a version suffix (`python3.12` → `python`).
fn entry(word: &str) -> Option<&'static Entry> {
    let name = word.rsplit('/').next().unwrap_or(word);
    let find = |name: &str| TABLE.iter().find(|e| e.names.contains(&name));
    find(name).or_else(|| find(name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')))
}

/// The first finding in `words` that a rule of `covered` words does not name, if any.
pub fn uncovered(words: &[String], covered: usize) -> Option<Finding> {
    let (program, _) = words.split_first()?;
    let outside = outside_system_dirs(program)
        .then(|| Finding::new(0, 1, format!("`{program}` {OUTSIDE_SYSTEM_DIRS}")));
    let table = entry(program).into_iter().flat_map(|entry| {
        entry
            .powers
            .iter()
            .flat_map(|power| find(entry, power, words))
    });
    outside
        .into_iter()
        .chain(table)
        .find(|finding| finding.end > covered)
}

/// Why a program given by a path outside the system directories is flagged.
const OUTSIDE_SYSTEM_DIRS: &str = "is a program outside the system directories (in a zone or \
                                   `/tmp`), which can be anything";

/// Whether `program` is a path (it has a `/`) outside the read-only system directories of the
/// jail: a file in a zone or in `/tmp`, which the model may have written (`./git`,
/// `/work/build.sh`). Names without a `/` are looked up in the jail's `PATH`, which holds only
/// system directories.
fn outside_system_dirs(program: &str) -> bool {
    const SYSTEM: &[&str] = &["/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"];
    let in_system = SYSTEM.iter().any(|dir| program.starts_with(dir))
        && !program.split('/').any(|part| part == "..");
    program.contains('/') && !in_system
}

/// Everything `power` flags in `words`.
fn find(entry: &Entry, power: &Power, words: &[String]) -> Vec<Finding> {
    let program = words.first().map_or("", String::as_str);
    let whole = |end: usize| {
        let why = format!("`{program}` {}", entry.what);
        vec![Finding::new(0, end.max(2), why)]
    };
    match power {
        Power::RunsCommand => whole(words.len()),
        Power::Always => whole(2),
        Power::Interpreter { code, options } => whole(options::code_end(words, code, options)),
        Power::Options(options) => scan(words, 1, options),
        Power::Reader(read) => read(words),
    }
}

/// A warning for a rule whose pattern is only the name of a program in the table (`git `,
/// `find`): such a rule pre-approves every command of a program that can run others. `None`
/// for narrow patterns and for programs the table does not know.
pub fn bare_program(pattern: &str) -> Option<String> {
    let words = shell_words::split(pattern).ok()?;
    let [program] = words.as_slice() else {
        return None;
    };
    let entry = entry(program)?;
    let whole = entry.powers.iter().any(|power| match power {
        Power::RunsCommand | Power::Always | Power::Interpreter { .. } => true,
        Power::Options(_) | Power::Reader(_) => false,
    });
    let mut warning = if whole {
        format!(
            "pre-approves every `{program}` command, but `{program}` {}: every such command \
             asks anyway unless a rule names what it runs",
            entry.what
        )
    } else {
        format!(
            "pre-approves every `{program}` command, but `{program}` {}: those commands ask \
             anyway",
            entry.what
        )
    };
    if !entry.narrow.is_empty() {
        let narrow: Vec<String> = entry.narrow.iter().map(|n| format!("`{n}`")).collect();
        warning.push_str(&format!(
            ". Prefer narrow rules such as {}",
            narrow.join(", ")
        ));
    }
    Some(warning)
}

#[cfg(test)]
mod tests;
