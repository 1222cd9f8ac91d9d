//! Readers for programs whose arguments hold a small language or a list of settings: sed
//! scripts (`e`, `s///e`, `w`), awk programs (`system()`, pipes), ssh options
//! (`-o ProxyCommand=…`), sqlite3 dot-commands, and tar's old-style first word. Each reads
//! just enough to find what runs or writes; what it cannot read is flagged.

use super::Finding;
use super::options::{Flagged, Opt, Options, scan};

/// sed: `-i` (in place), `-f` (a script file), and in each script the `e` command, the `e`
/// and `w` flags of `s`, and the `w`/`W` commands.
pub fn sed(words: &[String]) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut scripts: Vec<(usize, &str)> = Vec::new();
    let mut operands: Vec<usize> = Vec::new();
    let next_word = |i: usize| words.get(i).map_or("", String::as_str);
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let mut next = i + 1;
        if word == "--" {
            operands.extend(i + 1..words.len());
            break;
        } else if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let end = if value.is_some() { i + 1 } else { i + 2 };
            match name {
                "in-place" => found.push(Finding::new(i, i + 1, "`--in-place` writes files")),
                "file" => {
                    found.push(Finding::new(i, end, SCRIPT_FILE));
                    next = end;
                }
                "expression" => {
                    scripts.push(match value {
                        Some(text) => (i, text),
                        None => (i + 1, next_word(i + 1)),
                    });
                    next = end;
                }
                "line-length" => next = end,
                _ => {}
            }
        } else if let Some(cluster) = word.strip_prefix('-')
            && !cluster.is_empty()
        {
            for (k, c) in cluster.char_indices() {
                let rest = &cluster[k + c.len_utf8()..];
                let end = if rest.is_empty() { i + 2 } else { i + 1 };
                match c {
                    'i' => {
                        found.push(Finding::new(i, i + 1, "`-i` writes files"));
                        break;
                    }
                    'f' => {
                        found.push(Finding::new(i, end, SCRIPT_FILE));
                        next = end;
                        break;
                    }
                    'e' => {
                        scripts.push(match rest {
                            "" => (i + 1, next_word(i + 1)),
                            text => (i, text),
                        });
                        next = end;
                        break;
                    }
                    'l' => {
                        next = end;
                        break;
                    }
                    _ => {}
                }
            }
        } else {
            operands.push(i);
        }
        i = next;
    }
    if scripts.is_empty()
        && let Some(&at) = operands.first()
    {
        scripts.push((at, next_word(at)));
    }
    found.extend(
        scripts
            .into_iter()
            .filter_map(|(at, script)| sed_script(script).map(|why| Finding::new(at, at + 1, why))),
    );
    found
}

const SCRIPT_FILE: &str = "a script read from a file can run commands or write files";

/// What in a sed script runs a command or writes a file, if anything.
fn sed_script(script: &str) -> Option<&'static str> {
    const UNREADABLE: &str = "this sed script cannot be read here, and sed scripts can run \
                              commands (`e`) or write files (`w`)";
    let s: Vec<char> = script.chars().collect();
    let mut i = 0;
    loop {
        while s.get(i).is_some_and(|c| c.is_whitespace() || *c == ';') {
            i += 1;
        }
        let &c = s.get(i)?;
        if c == '#' {
            i = to_line_end(&s, i);
            continue;
        }
        let Some(at) = skip_address(&s, i) else {
            return Some(UNREADABLE);
        };
        i = at;
        let Some(&command) = s.get(i) else {
            return Some(UNREADABLE);
        };
        i += 1;
        match command {
            'e' => return Some("the sed command `e` runs a command"),
            'w' | 'W' => return Some("the sed command `w` writes a file"),
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'q' | 'Q' | 'l' | 'L' => {
                while s.get(i).is_some_and(|c| c.is_ascii_digit() || *c == ' ') {
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' | 'v' => {
                while s.get(i).is_some_and(|c| !matches!(c, ';' | '\n' | '}')) {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' => i = to_line_end(&s, i),
            's' | 'y' => {
                let Some(&delim) = s.get(i) else {
                    return Some(UNREADABLE);
                };
                if delim == '\n' || delim == '\\' {
                    return Some(UNREADABLE);
                }
                i += 1;
                for _ in 0..2 {
                    let Some(at) = past_delimited(&s, i, delim) else {
                        return Some(UNREADABLE);
                    };
                    i = at;
                }
                if command == 's' {
                    while let Some(&flag) = s.get(i) {
                        match flag {
                            'e' => return Some("the `e` flag of `s` runs the result as a command"),
                            'w' => return Some("the `w` flag of `s` writes a file"),
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => i += 1,
                            _ => break,
                        }
                    }
                }
            }
            _ => return Some(UNREADABLE),
        }
    }
}

/// The index of the line break that ends the line at `i` (or the end).
fn to_line_end(s: &[char], mut i: usize) -> usize {
    while s.get(i).is_some_and(|c| *c != '\n') {
        if s.get(i) == Some(&'\\') {
            i += 1;
        }
        i += 1;
    }
    i
}

/// Past a sed address (`1`, `$`, `/re/I`, `\%re%`, `first~step`, `a,b`, `a,+n`) and any `!`;
/// `None` when it cannot be read.
fn skip_address(s: &[char], mut i: usize) -> Option<usize> {
    for part in 0..2 {
        match s.get(i) {
            Some('/') => i = past_delimited(s, i + 1, '/')?,
            Some('\\') => {
                let delim = *s.get(i + 1)?;
                i = past_delimited(s, i + 2, delim)?;
            }
            Some('$') => i += 1,
            Some(c) if c.is_ascii_digit() || (part == 1 && matches!(c, '+' | '~')) => {
                i += 1;
                while s.get(i).is_some_and(|c| c.is_ascii_digit() || *c == '~') {
                    i += 1;
                }
            }
            _ => break,
        }
        while s.get(i).is_some_and(|c| matches!(c, 'I' | 'M')) {
            i += 1;
        }
        if part == 0 && s.get(i) == Some(&',') {
            i += 1;
        } else {
            break;
        }
    }
    while s.get(i).is_some_and(|c| *c == '!' || *c == ' ') {
        i += 1;
    }
    Some(i)
}

/// Past the next unescaped `delim` from `i`; `None` when there is none.
fn past_delimited(s: &[char], mut i: usize, delim: char) -> Option<usize> {
    loop {
        match s.get(i)? {
            '\\' => i += 2,
            c if *c == delim => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// awk: program files and extensions (`-f`, `-E`, `-i`, `-l`), and in each program text
/// `system`, a pipe (`|`, not `||`) or `@load` outside strings and regular expressions.
pub fn awk(words: &[String]) -> Vec<Finding> {
    const FILE: &str = "a program read from a file can run commands";
    const OPTIONS: Options = Options {
        short_valued: "fFvEeilo",
        long_valued: &["assign", "field-separator", "source"],
        flagged: &[
            Flagged::value(Opt::Short('f'), FILE),
            Flagged::value(Opt::Long("file"), FILE),
            Flagged::value(Opt::Short('E'), FILE),
            Flagged::value(Opt::Long("exec"), FILE),
            Flagged::value(Opt::Short('i'), FILE),
            Flagged::value(Opt::Long("include"), FILE),
            Flagged::value(Opt::Short('l'), "`-l` loads an extension, which runs code"),
            Flagged::value(
                Opt::Long("load"),
                "`--load` loads an extension, which runs code",
            ),
        ],
    };
    let mut found = scan(words, 1, &OPTIONS);
    // The program texts: those of `-e`/`--source`, else the first operand.
    let mut programs: Vec<(usize, &str)> = Vec::new();
    let mut first_operand = None;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let mut next = i + 1;
        if word == "--" {
            first_operand = first_operand.or(Some(i + 1));
            break;
        } else if let Some(long) = word.strip_prefix("--") {
            match long.split_once('=') {
                Some(("source", text)) => programs.push((i, text)),
                Some(_) => {}
                None if long == "source" => {
                    programs.extend(words.get(i + 1).map(|w| (i + 1, w.as_str())));
                    next = i + 2;
                }
                None if OPTIONS.long_valued.contains(&long) => next = i + 2,
                None => {}
            }
        } else if let Some(cluster) = word.strip_prefix('-')
            && !cluster.is_empty()
        {
            for (k, c) in cluster.char_indices() {
                if OPTIONS.short_valued.contains(c) {
                    let rest = &cluster[k + c.len_utf8()..];
                    if rest.is_empty() {
                        next = i + 2;
                    }
                    if c == 'e' {
                        match rest {
                            "" => programs.extend(words.get(i + 1).map(|w| (i + 1, w.as_str()))),
                            text => programs.push((i, text)),
                        }
                    }
                    break;
                }
            }
        } else if first_operand.is_none() {
            first_operand = Some(i);
        }
        i = next;
    }
    if programs.is_empty() {
        programs.extend(first_operand.and_then(|at| words.get(at).map(|w| (at, w.as_str()))));
    }
    found.extend(
        programs
            .into_iter()
            .filter_map(|(at, text)| awk_program(text).map(|why| Finding::new(at, at + 1, why))),
    );
    found
}

/// What in an awk program runs a command, if anything.
fn awk_program(text: &str) -> Option<&'static str> {
    let s: Vec<char> = text.chars().collect();
    let mut i = 0;
    // The last character that is not blank, outside strings: a `/` after one of these starts
    // a regular expression, after anything else it divides.
    let mut last = None;
    while let Some(&c) = s.get(i) {
        match c {
            '"' => {
                i = past_delimited(&s, i + 1, '"').unwrap_or(s.len());
                last = Some('"');
                continue;
            }
            '/' if last.is_none_or(|l: char| "(,~!{};&|\n=".contains(l)) => {
                i = past_regex(&s, i + 1);
                last = Some('/');
                continue;
            }
            '#' => {
                i = to_line_end(&s, i);
                continue;
            }
            '|' if s.get(i + 1) == Some(&'|') => i += 1,
            '|' => return Some("a pipe in an awk program runs a command"),
            '@' => return Some("an `@` directive in an awk program loads code"),
            's' if s[i..].starts_with(&['s', 'y', 's', 't', 'e', 'm']) => {
                return Some("`system()` in an awk program runs a command");
            }
            _ => {}
        }
        if !c.is_whitespace() {
            last = Some(c);
        }
        i += 1;
    }
    None
}

/// Past a regular expression's closing `/` (a `/` inside brackets is literal).
fn past_regex(s: &[char], mut i: usize) -> usize {
    let mut in_bracket = false;
    while let Some(&c) = s.get(i) {
        match c {
            '\\' => i += 1,
            '[' => in_bracket = true,
            ']' => in_bracket = false,
            '/' if !in_bracket => return i + 1,
            '\n' => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// ssh, scp, sftp: `-o` with a key that runs or loads something, `-F` (another configuration
/// file), `-I` (a PKCS#11 library), and for scp and sftp `-S`/`-D` (a program to run).
pub fn ssh(words: &[String]) -> Vec<Finding> {
    let mut found = Vec::new();
    const VALUED: &str = "BbcDEeFIiJLlmOoPpQRSsWw";
    const KEYS: &[&str] = &[
        "proxycommand",
        "localcommand",
        "permitlocalcommand",
        "knownhostscommand",
        "match",
        "include",
        "pkcs11provider",
        "securitykeyprovider",
    ];
    let program = words
        .first()
        .map_or("", |w| w.rsplit('/').next().unwrap_or(w));
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let mut next = i + 1;
        if let Some(cluster) = word.strip_prefix('-')
            && !cluster.is_empty()
            && !word.starts_with("--")
        {
            for (k, c) in cluster.char_indices() {
                if !VALUED.contains(c) {
                    continue;
                }
                let rest = &cluster[k + c.len_utf8()..];
                let (value, end) = match rest {
                    "" => (words.get(i + 1).map_or("", String::as_str), i + 2),
                    rest => (rest, i + 1),
                };
                next = end;
                let why = match c {
                    'o' => {
                        let key = value
                            .split(|c: char| c == '=' || c.is_whitespace())
                            .next()
                            .unwrap_or("")
                            .to_ascii_lowercase();
                        KEYS.contains(&key.as_str()).then_some(
                            "this `-o` setting makes ssh run a local command or load code",
                        )
                    }
                    'F' => Some("`-F` reads another configuration file, which can name commands"),
                    'I' => Some("`-I` loads a PKCS#11 library, which runs code"),
                    'S' | 'D' if program != "ssh" => Some("this option names a program to run"),
                    _ => None,
                };
                if let Some(why) = why {
                    found.push(Finding::new(i, end, why));
                }
                break;
            }
        }
        i = next;
    }
    found
}

/// sqlite3: `-cmd` and `-init`, and in the arguments after the database dot-commands
/// (`.shell`, `.system`, `.load`, `.output`) and the shell's functions that run or write
/// (`load_extension`, `edit`, `writefile`); nothing with `-safe`.
pub fn sqlite3(words: &[String]) -> Vec<Finding> {
    const WHY: &str = "sqlite3 dot-commands and functions run commands, load extensions or \
                       write files";
    let mut found = Vec::new();
    if words.iter().any(|w| w == "-safe" || w == "--safe") {
        return found;
    }
    let mut database_seen = false;
    for (i, word) in words.iter().enumerate().skip(1) {
        if word == "-cmd" || word == "-init" || word == "--cmd" || word == "--init" {
            found.push(Finding::new(i, i + 2, WHY));
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        if !database_seen {
            database_seen = true;
            continue;
        }
        let lower = word.to_ascii_lowercase();
        let dot_command = lower.lines().any(|line| line.trim_start().starts_with('.'));
        let function = ["load_extension", "edit(", "writefile("]
            .iter()
            .any(|f| lower.contains(f));
        if dot_command || function {
            found.push(Finding::new(i, i + 1, WHY));
        }
    }
    found
}

/// tar: the options that name a program. An old-style first word (`tar xIf prog a.tar`) is
/// read as a cluster of short options.
pub fn tar(words: &[String]) -> Vec<Finding> {
    const RUNS: &str = "names a program for tar to run";
    const OPTIONS: Options = Options {
        short_valued: "bCfFgHIKLNTVX",
        long_valued: &[
            "file",
            "directory",
            "files-from",
            "exclude",
            "transform",
            "xform",
        ],
        flagged: &[
            Flagged::value(Opt::Short('I'), "`-I` names a compression program to run"),
            Flagged::value(
                Opt::Short('F'),
                "`-F` names a script to run at the end of a volume",
            ),
            Flagged::value(
                Opt::Long("to-command"),
                "`--to-command` runs a command per file",
            ),
            Flagged::value(
                Opt::Long("checkpoint-action"),
                "`--checkpoint-action` can run a command",
            ),
            Flagged::value(Opt::Long("use-compress-program"), RUNS),
            Flagged::value(Opt::Long("rsh-command"), RUNS),
            Flagged::value(Opt::Long("rmt-command"), RUNS),
            Flagged::value(Opt::Long("info-script"), RUNS),
            Flagged::value(Opt::Long("new-volume-script"), RUNS),
        ],
    };
    match words.get(1) {
        Some(first) if !first.starts_with('-') && !first.is_empty() => {
            let mut words = words.to_vec();
            words[1] = format!("-{first}");
            scan(&words, 1, &OPTIONS)
        }
        _ => scan(words, 1, &OPTIONS),
    }
}
