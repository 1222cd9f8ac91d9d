//! git's words: the options before the subcommand (`-c`, `--config-env`, `--exec-path=`),
//! the options of subcommands that name programs (`--upload-pack`, `--receive-pack`,
//! `--exec`, `--ext-diff`, `--textconv`, `clone -u`/`-c`/`--template`), the subcommands that
//! run commands (`submodule foreach`, `bisect run`, `rebase -x`, `difftool`, …), `git config`
//! writes, and `ext::` URLs. Configuration given on the command line can run anything
//! (`alias.x=!cmd`, `core.sshCommand`, `core.pager`, `core.fsmonitor`, `diff.*.textconv`,
//! `filter.*`, `credential.helper`), so every such option is flagged, whatever its key.

use super::Finding;
use super::options::{Flagged, Opt, Options, scan};

/// Why configuration matters.
const CONFIG_RUNS: &str = "configuration can make git run other programs (an `alias.*` \
                           starting with `!`, `core.sshCommand`, `core.pager`, \
                           `core.fsmonitor`, `diff.*.textconv`, `filter.*`, `credential.helper`)";

/// Why configuration on the command line matters, after the option's name.
fn sets_config(option: &str) -> String {
    format!("`{option}` sets git configuration for this command, and {CONFIG_RUNS}")
}

/// Global options that take a value in the next word (or after `=`).
const GLOBAL_VALUED: &[&str] = &[
    "git-dir",
    "work-tree",
    "namespace",
    "super-prefix",
    "attr-source",
    "config-env",
];

/// Options of every subcommand that name a program, or make git run one.
const ANY_SUBCOMMAND: &[Flagged] = &[
    Flagged::value(
        Opt::Long("upload-pack"),
        "`--upload-pack` names the program git runs to fetch",
    ),
    Flagged::value(
        Opt::Long("receive-pack"),
        "`--receive-pack` names the program git runs to push",
    ),
    Flagged::value(Opt::Long("exec"), "`--exec` names a command git runs"),
    Flagged::flag(
        Opt::Long("ext-diff"),
        "`--ext-diff` runs the external diff program of the configuration",
    ),
    Flagged::flag(
        Opt::Long("textconv"),
        "`--textconv` runs the text conversion programs of the configuration",
    ),
    Flagged::value(
        Opt::Long("template"),
        "`--template` copies hooks from another directory, and git runs hooks",
    ),
    Flagged::value(
        Opt::Long("config"),
        "`--config` sets git configuration, which can run programs",
    ),
    Flagged::value(
        Opt::Long("open-files-in-pager"),
        "`--open-files-in-pager` runs a program on the matches",
    ),
];

/// A subcommand's own options (those of every subcommand are `ANY_SUBCOMMAND`).
fn subcommand_options(name: &str) -> &'static Options {
    const FETCHES: &str = "names the program git runs to fetch";
    const CLONE: Options = Options {
        short_valued: "obucj",
        long_valued: &[],
        flagged: &[
            Flagged::value(Opt::Short('u'), FETCHES),
            Flagged::value(
                Opt::Short('c'),
                "`-c` sets configuration in the new repository, which can run programs",
            ),
        ],
    };
    const LS_REMOTE: Options = Options {
        short_valued: "u",
        long_valued: &[],
        flagged: &[Flagged::value(Opt::Short('u'), FETCHES)],
    };
    const GREP: Options = Options {
        short_valued: "efABCm",
        long_valued: &[],
        flagged: &[Flagged::flag(
            Opt::Short('O'),
            "`-O` runs a program on the matches",
        )],
    };
    const REBASE: Options = Options {
        short_valued: "xsXC",
        long_valued: &[],
        flagged: &[
            Flagged::value(Opt::Short('x'), "`-x` runs a command after each commit"),
            Flagged::flag(Opt::Short('i'), "`-i` runs the sequence editor"),
            Flagged::flag(
                Opt::Long("interactive"),
                "`--interactive` runs the sequence editor",
            ),
        ],
    };
    const OTHER: Options = Options::none();
    match name {
        "clone" => &CLONE,
        "ls-remote" => &LS_REMOTE,
        "grep" => &GREP,
        "rebase" => &REBASE,
        _ => &OTHER,
    }
}

/// git's own subcommands (those that run commands are in `RUNS`): any other word may be an
/// alias.
const BUILTIN: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "backfill",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "fmt-merge-msg",
    "for-each-ref",
    "format-patch",
    "fsck",
    "gc",
    "get-tar-commit-id",
    "grep",
    "hash-object",
    "help",
    "index-pack",
    "init",
    "init-db",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "merge",
    "merge-base",
    "merge-file",
    "merge-tree",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "pack-objects",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-pack",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Subcommands (with the word after them, when it matters) that run commands or tools.
const RUNS: &[(&str, Option<&str>, &str)] = &[
    (
        "submodule",
        Some("foreach"),
        "`git submodule foreach` runs a command",
    ),
    ("bisect", Some("run"), "`git bisect run` runs a command"),
    ("difftool", None, "`git difftool` runs a diff tool"),
    ("mergetool", None, "`git mergetool` runs a merge tool"),
    (
        "filter-branch",
        None,
        "`git filter-branch` runs its filters as commands",
    ),
    (
        "filter-repo",
        None,
        "`git filter-repo` runs its callbacks as code",
    ),
    ("instaweb", None, "`git instaweb` starts a web server"),
    ("web--browse", None, "`git web--browse` starts a browser"),
    (
        "send-email",
        None,
        "`git send-email` runs the programs of its options",
    ),
    (
        "credential",
        None,
        "`git credential` runs credential helpers",
    ),
    (
        "maintenance",
        None,
        "`git maintenance` runs and schedules commands",
    ),
    ("hook", None, "`git hook` runs hooks"),
    ("remote-ext", None, "`git remote-ext` runs a command"),
    ("shell", None, "`git shell` runs commands"),
    ("daemon", None, "`git daemon` runs a server and its hooks"),
];

/// Every finding in a git command.
pub fn read(words: &[String]) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut i = 1;
    // Global options, up to the subcommand.
    let sub = loop {
        let Some(word) = words.get(i) else {
            return found;
        };
        if word == "-c" {
            found.push(Finding::new(i, i + 2, sets_config("-c")));
            i += 2;
        } else if word.starts_with("-c") {
            found.push(Finding::new(i, i + 1, sets_config("-c")));
            i += 1;
        } else if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            let end = if attached { i + 1 } else { i + 2 };
            if name == "config-env" {
                found.push(Finding::new(i, end, sets_config("--config-env")));
            }
            if name == "exec-path" && attached {
                found.push(Finding::new(
                    i,
                    i + 1,
                    "`--exec-path=` makes git run its subcommands from another directory",
                ));
            }
            i = if GLOBAL_VALUED.contains(&name) {
                end
            } else {
                i + 1
            };
        } else if word == "-C" {
            i += 2;
        } else if word.starts_with('-') {
            i += 1;
        } else {
            break i;
        }
    };
    let name = words[sub].as_str();
    let rest = &words[sub + 1..];
    let runs = RUNS.iter().find(|(cmd, then, _)| {
        *cmd == name
            && match then {
                Some(then) => rest.iter().any(|w| w == then),
                None => true,
            }
    });
    if let Some((_, _, why)) = runs {
        found.push(Finding::new(sub, words.len(), *why));
    }
    if name.starts_with("credential-") {
        found.push(Finding::new(sub, words.len(), "a credential helper runs"));
    }
    if name == "config" && !config_reads_only(rest) {
        found.push(Finding::new(
            sub,
            words.len(),
            format!("`git config` can change settings, and {CONFIG_RUNS}"),
        ));
    }
    for (at, _) in words
        .iter()
        .enumerate()
        .skip(sub)
        .filter(|(_, w)| w.starts_with("ext::") || w.starts_with("fd::"))
    {
        found.push(Finding::new(
            at,
            at + 1,
            "an `ext::` URL runs a command as the remote",
        ));
    }
    if !BUILTIN.contains(&name) && !RUNS.iter().any(|(cmd, _, _)| *cmd == name) {
        found.push(Finding::new(
            sub,
            sub + 1,
            format!(
                "`git {name}` is not a git command this table knows: it may be an alias from \
                 the repository's configuration, and an alias starting with `!` runs a shell \
                 command"
            ),
        ));
    }
    let own = subcommand_options(name);
    found.extend(scan(words, sub + 1, own));
    found.extend(scan(
        words,
        sub + 1,
        &Options {
            short_valued: own.short_valued,
            long_valued: &[],
            flagged: ANY_SUBCOMMAND,
        },
    ));
    found
}

/// Whether `git config ARGS` only reads: it names a reading action and no writing one.
fn config_reads_only(args: &[String]) -> bool {
    const READ: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "-l",
        "--list",
        "get",
        "list",
    ];
    const WRITE: &[&str] = &[
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
        "set",
        "unset",
        "rename-section",
        "remove-section",
        "edit",
    ];
    let has = |list: &[&str]| args.iter().any(|a| list.contains(&a.as_str()));
    has(READ) && !has(WRITE)
}
