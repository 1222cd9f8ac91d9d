//! The table of programs that can run other programs, load other configuration or write
//! files, as data: each row names the programs, says what they can do, how their words are
//! read (`Power`), and which narrow rules to suggest instead of the bare program.

use super::options::{Flagged, Opt, Options};
use super::{Entry, Power, git, scripts};

const NO_OPTIONS: Options = Options::none();

/// Shells: `-c` takes a command; `-o`/`-O` an option name.
const SHELL_OPTIONS: Options = Options {
    short_valued: "oO",
    long_valued: &["rcfile", "init-file"],
    flagged: &[],
};

/// The table: every program here can run other programs, load other configuration, or write
/// files when its words say so. Rows are grouped by how they do it.
pub(super) const TABLE: &[Entry] = &[
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
