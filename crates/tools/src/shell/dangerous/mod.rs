//! Which words of a command make the program run other programs, load other configuration or
//! write files where a rule would not expect it (issue #11 item 4): `git -c alias.x='!…' x`,
//! `find -exec`, `env rm …`, `python3 -c …`. Policy as data: [`TABLE`] lists the programs and
//! what in their words gives them that power; the readers of the few programs whose arguments
//! are a small language (git, sed, awk, ssh, sqlite3) live in `git.rs` and `scripts.rs`.
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

use options::{Flagged, Opt, Options, scan};

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

const NO_OPTIONS: Options = Options::none();

/// Shells: `-c` takes a command; `-o`/`-O` an option name.
const SHELL_OPTIONS: Options = Options {
    short_valued: "oO",
    long_valued: &["rcfile", "init-file"],
    flagged: &[],
};

/// The table: every program here can run other programs, load other configuration, or write
/// files when its words say so. Rows are grouped by how they do it.
const TABLE: &[Entry] = &[
    // Programs whose arguments are a small language of their own.
    Entry {
        names: &["git"],
        what: "runs other programs when configuration or options tell it to (`-c`, \
               `--config-env`, `--upload-pack`, `--ext-diff`, `git config` writes, …)",
        powers: &[Power::Reader(git::read)],
        narrow: &["git status", "git diff", "git log"],
    },
    Entry {
        names: &["sed", "gsed"],
        what: "runs commands with the `e` command or the `e` flag of `s///`, and writes \
               files with `-i`, `w` and `W`",
        powers: &[Power::Reader(scripts::sed)],
        narrow: &["sed -n"],
    },
    Entry {
        names: &["awk", "gawk", "mawk", "nawk"],
        what: "runs commands with `system()` and pipes (`print | \"cmd\"`, \
               `\"cmd\" | getline`), and runs program files (`-f`)",
        powers: &[Power::Reader(scripts::awk)],
        narrow: &[],
    },
    Entry {
        names: &["ssh", "scp", "sftp"],
        what: "runs local commands named by options (`-o ProxyCommand=…`, \
               `LocalCommand`) and reads other configuration (`-F`)",
        powers: &[Power::Reader(scripts::ssh)],
        narrow: &[],
    },
    Entry {
        names: &["sqlite3"],
        what: "runs commands with dot-commands (`.shell`, `.system`) and loads \
               extensions",
        powers: &[Power::Reader(scripts::sqlite3)],
        narrow: &[],
    },
    // Options that run a program.
    Entry {
        names: &["find"],
        what: "runs commands (`-exec`, `-execdir`, `-ok`, `-okdir`), deletes (`-delete`) \
               and writes files (`-fprint`, `-fprintf`, `-fls`)",
        powers: &[Power::Options(Options {
            short_valued: "",
            long_valued: &[],
            flagged: &[
                Flagged::value(Opt::Word("-exec"), "`-exec` runs a command"),
                Flagged::value(Opt::Word("-execdir"), "`-execdir` runs a command"),
                Flagged::value(Opt::Word("-ok"), "`-ok` runs a command"),
                Flagged::value(Opt::Word("-okdir"), "`-okdir` runs a command"),
                Flagged::flag(Opt::Word("-delete"), "`-delete` deletes files"),
                Flagged::value(Opt::Prefix("-fprint"), "`-fprint…` writes a file"),
                Flagged::value(Opt::Word("-fls"), "`-fls` writes a file"),
            ],
        })],
        narrow: &["find . -name", "find . -type"],
    },
    Entry {
        names: &["tar", "gtar", "bsdtar"],
        what: "runs programs named by options (`--to-command`, `--checkpoint-action`, \
               `-I`/`--use-compress-program`, `--rsh-command`, `-F`)",
        powers: &[Power::Reader(scripts::tar)],
        narrow: &["tar -tf", "tar -xf"],
    },
    Entry {
        names: &["rsync"],
        what: "runs the programs named by `-e`/`--rsh` and `--rsync-path`",
        powers: &[Power::Options(Options {
            short_valued: "eBfTM",
            long_valued: &[
                "rsh",
                "rsync-path",
                "filter",
                "exclude",
                "include",
                "temp-dir",
            ],
            flagged: &[
                Flagged::value(Opt::Short('e'), "`-e` names the remote shell to run"),
                Flagged::value(Opt::Long("rsh"), "`--rsh` names the remote shell to run"),
                Flagged::value(
                    Opt::Long("rsync-path"),
                    "`--rsync-path` names the program to run",
                ),
            ],
        })],
        narrow: &[],
    },
    Entry {
        names: &["sort"],
        what: "runs the program named by `--compress-program`",
        powers: &[Power::Options(Options::long(&[Flagged::value(
            Opt::Long("compress-program"),
            "`--compress-program` names a program to run",
        )]))],
        narrow: &[],
    },
    Entry {
        names: &["rg"],
        what: "runs the program named by `--pre` on every file",
        powers: &[Power::Options(Options::long(&[Flagged::value(
            Opt::Long("pre"),
            "`--pre` names a program to run on every file",
        )]))],
        narrow: &[],
    },
    Entry {
        names: &["fd", "fdfind"],
        what: "runs commands with `-x`/`--exec` and `-X`/`--exec-batch`",
        powers: &[Power::Options(Options {
            short_valued: "xXeEtdSc",
            long_valued: &[],
            flagged: &[
                Flagged::value(Opt::Short('x'), "`-x` runs a command"),
                Flagged::value(Opt::Short('X'), "`-X` runs a command"),
                Flagged::value(Opt::Long("exec"), "`--exec` runs a command"),
                Flagged::value(Opt::Long("exec-batch"), "`--exec-batch` runs a command"),
            ],
        })],
        narrow: &[],
    },
    Entry {
        names: &["split"],
        what: "runs a shell command with `--filter`",
        powers: &[Power::Options(Options::long(&[Flagged::value(
            Opt::Long("filter"),
            "`--filter` runs a shell command",
        )]))],
        narrow: &[],
    },
    Entry {
        names: &["zip"],
        what: "runs the program named by `-TT`/`--unzip-command`",
        powers: &[Power::Options(Options {
            short_valued: "",
            long_valued: &[],
            flagged: &[
                Flagged::value(Opt::Word("-TT"), "`-TT` names a program to run"),
                Flagged::value(
                    Opt::Long("unzip-command"),
                    "`--unzip-command` names a program to run",
                ),
            ],
        })],
        narrow: &[],
    },
    // Prefixes: they run the command in their arguments.
    Entry {
        names: &[
            "env",
            "xargs",
            "sudo",
            "doas",
            "su",
            "runuser",
            "pkexec",
            "nice",
            "ionice",
            "timeout",
            "nohup",
            "stdbuf",
            "setsid",
            "chroot",
            "flock",
            "watch",
            "time",
            "command",
            "exec",
            "builtin",
            "strace",
            "ltrace",
            "taskset",
            "unshare",
            "nsenter",
            "busybox",
            "script",
            "chrt",
            "prlimit",
            "setpriv",
            "firejail",
            "fakeroot",
            "eatmydata",
            "valgrind",
            "gdb",
            "lldb",
            "parallel",
            "entr",
            "run-parts",
            "systemd-run",
            "xdg-open",
            "expect",
        ],
        what: "runs the command given in its arguments",
        powers: &[Power::RunsCommand],
        narrow: &[],
    },
    // Interpreters: they run the code or script they are given.
    Entry {
        names: &[
            "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
        ],
        what: "runs the commands it is given (`-c`, a script, its input)",
        powers: &[Power::Interpreter {
            code: &[Opt::Short('c'), Opt::Long("command")],
            options: SHELL_OPTIONS,
        }],
        narrow: &[],
    },
    Entry {
        names: &["python", "pypy", "ipython"],
        what: "runs the code it is given (`-c`, `-m`, a script, its input)",
        powers: &[Power::Interpreter {
            code: &[Opt::Short('c'), Opt::Short('m')],
            options: Options {
                short_valued: "WX",
                long_valued: &["check-hash-based-pycs"],
                flagged: &[],
            },
        }],
        narrow: &[],
    },
    Entry {
        names: &["perl"],
        what: "runs the code it is given (`-e`, `-E`, a script, its input)",
        powers: &[Power::Interpreter {
            code: &[Opt::Short('e'), Opt::Short('E')],
            options: NO_OPTIONS,
        }],
        narrow: &[],
    },
    Entry {
        names: &["ruby", "irb"],
        what: "runs the code it is given (`-e`, a script, its input)",
        powers: &[Power::Interpreter {
            code: &[Opt::Short('e')],
            options: Options {
                short_valued: "ICEFr",
                long_valued: &[],
                flagged: &[],
            },
        }],
        narrow: &[],
    },
    Entry {
        names: &["node", "nodejs"],
        what: "runs the code it is given (`-e`, `-p`, `--eval`, a script, its input)",
        powers: &[Power::Interpreter {
            code: &[
                Opt::Short('e'),
                Opt::Short('p'),
                Opt::Long("eval"),
                Opt::Long("print"),
            ],
            options: Options {
                short_valued: "r",
                long_valued: &["require", "import", "loader", "experimental-loader"],
                flagged: &[],
            },
        }],
        narrow: &[],
    },
    Entry {
        names: &["php"],
        what: "runs the code it is given (`-r`, `-f`, a script, its input)",
        powers: &[Power::Interpreter {
            code: &[
                Opt::Short('r'),
                Opt::Short('f'),
                Opt::Short('B'),
                Opt::Short('R'),
                Opt::Short('F'),
                Opt::Short('E'),
            ],
            options: Options {
                short_valued: "cdz",
                long_valued: &[],
                flagged: &[],
            },
        }],
        narrow: &[],
    },
    Entry {
        names: &["lua", "luajit"],
        what: "runs the code it is given (`-e`, `-l`, a script, its input)",
        powers: &[Power::Interpreter {
            code: &[Opt::Short('e'), Opt::Short('l')],
            options: NO_OPTIONS,
        }],
        narrow: &[],
    },
    Entry {
        names: &["Rscript", "R"],
        what: "runs the code it is given (`-e`, `-f`, a script, its input)",
        powers: &[Power::Interpreter {
            code: &[Opt::Short('e'), Opt::Short('f')],
            options: NO_OPTIONS,
        }],
        narrow: &[],
    },
    Entry {
        names: &[
            "tclsh",
            "wish",
            "guile",
            "julia",
            "java",
            "jshell",
            "osascript",
            "pwsh",
            "m4",
            "dc",
            "ed",
            "ex",
        ],
        what: "runs the code or script it is given",
        powers: &[Power::Interpreter {
            code: &[Opt::Short('e'), Opt::Short('c')],
            options: NO_OPTIONS,
        }],
        narrow: &[],
    },
    // Build and project tools: they run the project's own code.
    Entry {
        names: &["make", "gmake", "bmake"],
        what: "runs the recipes of a Makefile, which can be anything",
        powers: &[
            Power::Always,
            Power::Options(Options {
                short_valued: "fCIoWEjl",
                long_valued: &["file", "makefile", "directory", "eval", "include-dir"],
                flagged: &[
                    Flagged::value(Opt::Short('f'), "`-f` reads another Makefile"),
                    Flagged::value(Opt::Long("file"), "`--file` reads another Makefile"),
                    Flagged::value(Opt::Long("makefile"), "`--makefile` reads another Makefile"),
                    Flagged::value(
                        Opt::Short('C'),
                        "`-C` runs the Makefile of another directory",
                    ),
                    Flagged::value(
                        Opt::Long("directory"),
                        "`--directory` runs the Makefile of another directory",
                    ),
                    Flagged::value(Opt::Short('E'), "`-E` evaluates make code"),
                    Flagged::value(Opt::Long("eval"), "`--eval` evaluates make code"),
                    Flagged::value(Opt::Short('I'), "`-I` reads other Makefiles"),
                    Flagged::value(
                        Opt::Long("include-dir"),
                        "`--include-dir` reads other Makefiles",
                    ),
                    Flagged::flag(
                        Opt::Assignment,
                        "a variable set on the command line (`SHELL=…`, `MAKEFLAGS=…`) changes \
                         what make runs",
                    ),
                ],
            }),
        ],
        narrow: &["make test"],
    },
    Entry {
        names: &["cargo"],
        what: "runs the project's code (build scripts, tests, `cargo run`) and reads \
               configuration that names programs",
        powers: &[
            Power::Always,
            Power::Options(Options {
                short_valued: "pjZ",
                long_valued: &["config", "package", "manifest-path"],
                flagged: &[
                    Flagged::value(
                        Opt::Long("config"),
                        "`--config` sets configuration that can name programs to run",
                    ),
                    Flagged::value(Opt::Short('Z'), "`-Z` turns on unstable behaviour"),
                ],
            }),
        ],
        narrow: &["cargo test", "cargo check"],
    },
    Entry {
        names: &["npm", "pnpm", "yarn"],
        what: "runs the package's scripts, and packages' install scripts",
        powers: &[
            Power::Always,
            Power::Options(Options::long(&[
                Flagged::value(
                    Opt::Long("script-shell"),
                    "`--script-shell` names a shell to run",
                ),
                Flagged::value(
                    Opt::Long("userconfig"),
                    "`--userconfig` reads other configuration",
                ),
            ])),
        ],
        narrow: &["npm test"],
    },
    Entry {
        names: &[
            "cmake", "ninja", "meson", "scons", "go", "npx", "bun", "deno", "pip", "pipx", "uv",
            "uvx", "poetry", "pytest", "tox", "nox", "gradle", "gradlew", "mvn", "ant", "rake",
            "bundle", "composer", "dotnet", "bazel", "just", "jest",
        ],
        what: "runs the project's own code (build files, scripts, tests, packages)",
        powers: &[Power::Always],
        narrow: &[],
    },
    // Pagers, editors and terminals: they can start a shell.
    Entry {
        names: &[
            "less", "more", "most", "pg", "man", "info", "vi", "vim", "nvim", "view", "emacs",
            "nano", "tmux", "screen",
        ],
        what: "can start a shell or other programs from inside (`!` commands, an editor)",
        powers: &[Power::Always],
        narrow: &[],
    },
    Entry {
        names: &["docker", "podman", "kubectl", "at", "batch", "crontab"],
        what: "runs commands in containers, or schedules them",
        powers: &[Power::Always],
        narrow: &[],
    },
];

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
