//! Turning a `shell` command line into the words of one program call: POSIX shell-word
//! splitting (quotes and backslashes, via `shell-words`), after a scan that refuses the shell
//! syntax a real shell would act on and we cannot, because commands run without a shell.
//!
//! # What is refused, and what is not
//!
//! The scan follows the same quoting states as the splitter and refuses, *where a shell would
//! give them meaning*:
//!
//! - unquoted: `|` and `||`, `&` and `&&`, `;`, `<`, `>`, `(`, `)`, a backtick, a line break
//!   (it would start a second command), and every `$` expansion below;
//! - inside double quotes, where a shell still expands them: a backtick, `$(`, `${`, `$[`,
//!   `$NAME`, `$1`, and the special parameters `$? $$ $! $@ $* $# $-`;
//! - unquoted `$'…'` and `$"…"` (bash quoting forms).
//!
//! Quoted metacharacters are allowed: `git commit -m "a; b"` passes `a; b` as one argument,
//! exactly what a shell would pass, and without a shell it is inert text. Single quotes make
//! everything literal (`'$HOME'` is the five characters), as in a shell; so does a backslash
//! (`\|`, `\$HOME`). A line break inside quotes is part of the argument. A `$` that starts no
//! expansion (`cost$`, `"$"`) is literal, as in a shell.
//!
//! Also refused: a NUL character (it cannot be in an argument), other control characters
//! except tab (they can hide text in an approval prompt), unterminated quotes, an empty
//! command, an empty program name, and a first word that is a variable assignment
//! (`LANG=C sort`: a shell would set a variable, we would run a program called `LANG=C`).
//!
//! Not refused, and passed literally: globs (`*.rs`), `~`, braces. A shell would expand them
//! (when they match); here the program receives them as written. `#` at the start of a word
//! begins a comment, as in a shell: the rest of the line is dropped, and the rules are decided
//! on the words that remain, which are exactly the words that run.

use std::fmt;

/// Why a command line cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// Nothing to run (blank, or only a comment).
    #[error("the command is empty")]
    Empty,
    /// The first word is the empty string (`"" x`).
    #[error("the program name is empty")]
    EmptyProgram,
    /// A quote was opened and never closed.
    #[error("the {0} quote at character {1} is never closed")]
    Unterminated(Quote, usize),
    /// Shell syntax that would need a shell.
    #[error(
        "found {found} ({what}) at character {column}; commands run without a shell, so pipes, \
         redirection, chaining, background jobs, command substitution and variable expansion \
         are not available. Run one program per call, and put the character in single quotes \
         if it is meant literally"
    )]
    Shell {
        /// The text found, e.g. `` `&&` `` or `` `$HOME` ``.
        found: String,
        /// What a shell would do with it.
        what: &'static str,
        /// Where it starts, counting characters from 1.
        column: usize,
    },
    /// A character that cannot, or should not, be in an argument.
    #[error("found the control character {0} at character {1}; remove it")]
    Control(Codepoint, usize),
    /// `NAME=value` as the first word.
    #[error(
        "`{0}` is a variable assignment, which needs a shell; commands run without one, so the \
         variable would not be set. Pass the value as an argument or an option instead"
    )]
    Assignment(String),
}

/// A kind of quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    /// `'…'`.
    Single,
    /// `"…"`.
    Double,
}

impl fmt::Display for Quote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Quote::Single => "single",
            Quote::Double => "double",
        })
    }
}

/// A character shown by its code point (`U+000D`), for characters that do not print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codepoint(pub char);

impl fmt::Display for Codepoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "U+{:04X}", u32::from(self.0))
    }
}

/// The words of `command`: the program first, then its arguments.
pub fn split_command(command: &str) -> Result<Vec<String>, CommandError> {
    scan(command)?;
    let words = shell_words::split(command)
        // The scan has already found every unterminated quote; keep a safe answer anyway.
        .map_err(|_| CommandError::Unterminated(Quote::Double, 1))?;
    let Some(program) = words.first() else {
        return Err(CommandError::Empty);
    };
    if program.is_empty() {
        return Err(CommandError::EmptyProgram);
    }
    if is_assignment(program) {
        return Err(CommandError::Assignment(program.clone()));
    }
    Ok(words)
}

/// `NAME=…` where `NAME` is a valid variable name.
fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => is_name(name),
        None => false,
    }
}

/// Whether `name` is a valid shell variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Where the scanner is, mirroring the splitter's states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between words, or inside an unquoted word (`at_start` when a `#` would begin a comment).
    Unquoted { at_start: bool },
    /// Inside `'…'`, opened at this column.
    Single(usize),
    /// Inside `"…"`, opened at this column.
    Double(usize),
    /// After an unquoted `#` at the start of a word, until the end of the line.
    Comment,
}

/// Refuses everything a shell would interpret and we cannot (see the module header).
fn scan(command: &str) -> Result<(), CommandError> {
    let chars: Vec<char> = command.chars().collect();
    // Control characters first, wherever they are (even escaped or quoted).
    if let Some((i, c)) =
        (chars.iter().enumerate()).find(|(_, c)| c.is_control() && **c != '\t' && **c != '\n')
    {
        return Err(CommandError::Control(Codepoint(*c), i + 1));
    }
    let mut state = State::Unquoted { at_start: true };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        let next = chars.get(i + 1).copied();
        state = match state {
            State::Single(open) => match c {
                '\'' => State::Unquoted { at_start: false },
                _ => State::Single(open),
            },
            State::Double(open) => match c {
                '"' => State::Unquoted { at_start: false },
                '\\' => {
                    // `\$`, `\``, `\"`, `\\` and a line continuation are escapes; any other
                    // character after a backslash is literal anyway.
                    i += 1;
                    State::Double(open)
                }
                '`' => return Err(shell("`` ` ``".to_owned(), SUBSTITUTION, column)),
                '$' => {
                    if let Some((found, what)) = expansion(&chars, i, false) {
                        return Err(shell(found, what, column));
                    }
                    State::Double(open)
                }
                _ => State::Double(open),
            },
            State::Comment => match c {
                '\n' => return Err(shell("a line break".to_owned(), NEWLINE, column)),
                _ => State::Comment,
            },
            State::Unquoted { at_start } => match c {
                '\'' => State::Single(column),
                '"' => State::Double(column),
                '\\' => {
                    i += 1;
                    State::Unquoted { at_start: false }
                }
                ' ' | '\t' => State::Unquoted { at_start: true },
                '#' if at_start => State::Comment,
                '\n' => return Err(shell("a line break".to_owned(), NEWLINE, column)),
                '|' if next == Some('|') => return Err(shell(code("||"), CHAIN, column)),
                '|' => return Err(shell(code("|"), "a pipe", column)),
                '&' if next == Some('&') => return Err(shell(code("&&"), CHAIN, column)),
                '&' => return Err(shell(code("&"), "a background job", column)),
                ';' => return Err(shell(code(";"), CHAIN, column)),
                '<' | '>' => return Err(shell(code(&c.to_string()), "redirection", column)),
                '(' | ')' => {
                    return Err(shell(code(&c.to_string()), "a subshell or group", column));
                }
                '`' => return Err(shell("`` ` ``".to_owned(), SUBSTITUTION, column)),
                '$' => {
                    if let Some((found, what)) = expansion(&chars, i, true) {
                        return Err(shell(found, what, column));
                    }
                    State::Unquoted { at_start: false }
                }
                _ => State::Unquoted { at_start: false },
            },
        };
        i += 1;
    }
    match state {
        State::Single(open) => Err(CommandError::Unterminated(Quote::Single, open)),
        State::Double(open) => Err(CommandError::Unterminated(Quote::Double, open)),
        State::Unquoted { .. } | State::Comment => Ok(()),
    }
}

const SUBSTITUTION: &str = "command substitution";
const CHAIN: &str = "command chaining";
const NEWLINE: &str = "it would start a second command";

fn code(text: &str) -> String {
    format!("`{text}`")
}

fn shell(found: String, what: &'static str, column: usize) -> CommandError {
    CommandError::Shell {
        found,
        what,
        column,
    }
}

/// The expansion a `$` at `chars[at]` starts, if any: the text to name and what it is.
/// `unquoted` adds the bash quoting forms `$'…'` and `$"…"`.
fn expansion(chars: &[char], at: usize, unquoted: bool) -> Option<(String, &'static str)> {
    let next = *chars.get(at + 1)?;
    match next {
        '(' => Some((code("$("), SUBSTITUTION)),
        '{' => Some((code("${"), "variable expansion")),
        '[' => Some((code("$["), "arithmetic expansion")),
        '?' | '$' | '!' | '@' | '*' | '#' | '-' => {
            Some((code(&format!("${next}")), "variable expansion"))
        }
        c if c.is_ascii_digit() => Some((code(&format!("${c}")), "variable expansion")),
        c if c.is_ascii_alphabetic() || c == '_' => {
            let name: String = chars[at + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                .collect();
            Some((code(&format!("${name}")), "variable expansion"))
        }
        '\'' | '"' if unquoted => Some((code(&format!("${next}")), "bash quoting")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn words(command: &str) -> Vec<String> {
        match split_command(command) {
            Ok(words) => words,
            Err(err) => panic!("{command:?} was refused: {err}"),
        }
    }

    fn refused(command: &str) -> CommandError {
        match split_command(command) {
            Ok(words) => panic!("{command:?} was accepted as {words:?}"),
            Err(err) => err,
        }
    }

    /// The text found by a `Shell` refusal.
    fn found(command: &str) -> String {
        match refused(command) {
            CommandError::Shell { found, .. } => found,
            other => panic!("{command:?}: expected a shell-syntax refusal, got {other:?}"),
        }
    }

    #[test]
    fn plain_commands_split_into_words() {
        assert_eq!(words("git status"), ["git", "status"]);
        assert_eq!(words("  ls\t-la   /work "), ["ls", "-la", "/work"]);
        assert_eq!(words("rm file.txt"), ["rm", "file.txt"]);
        assert_eq!(
            words("echo 'a b' \"c d\" e\\ f"),
            ["echo", "a b", "c d", "e f"]
        );
        assert_eq!(words("echo a'b'\"c\"d"), ["echo", "abcd"]);
        assert_eq!(words("echo ''"), ["echo", ""]);
    }

    #[test]
    fn the_refusals_the_issue_names() {
        for (command, expected) in [
            ("echo ${HOME}", "`${`"),
            ("echo `whoami`", "`` ` ``"),
            ("a && b", "`&&`"),
            ("a || b", "`||`"),
            ("ls | wc", "`|`"),
            ("cat < x", "`<`"),
            ("echo hi > f", "`>`"),
            ("echo hi >> f", "`>`"),
            ("a; b", "`;`"),
            ("sleep 1 &", "`&`"),
            ("echo $(id)", "`$(`"),
            ("echo $((1+2))", "`$(`"),
            ("echo $HOME", "`$HOME`"),
            ("echo $PATH_2x", "`$PATH_2x`"),
            ("echo $1", "`$1`"),
            ("echo $?", "`$?`"),
            ("echo $$", "`$$`"),
            ("echo $@", "`$@`"),
            ("echo $[1+1]", "`$[`"),
            ("echo $'\\n'", "`$'`"),
            ("echo $\"x\"", "`$\"`"),
            ("(ls)", "`(`"),
            ("diff <(ls) x", "`<`"),
            ("ls\nrm -rf /", "a line break"),
            ("ls &>/dev/null", "`&`"),
            ("a|b", "`|`"),
            ("a&&b", "`&&`"),
            ("x=1;y", "`;`"),
        ] {
            assert_eq!(found(command), expected, "{command:?}");
        }
    }

    #[test]
    fn expansions_inside_double_quotes_are_refused() {
        // A shell expands these inside double quotes, so without one they would surprise.
        assert_eq!(found("echo \"$HOME\""), "`$HOME`");
        assert_eq!(found("echo \"${HOME}\""), "`${`");
        assert_eq!(found("echo \"`id`\""), "`` ` ``");
        assert_eq!(found("echo \"$(id)\""), "`$(`");
        assert_eq!(found("echo \"a \\x $1\""), "`$1`");
    }

    #[test]
    fn quoted_and_escaped_metacharacters_are_literal_text() {
        assert_eq!(
            words("git commit -m \"a; b && c | d > e < f & g (h)\""),
            ["git", "commit", "-m", "a; b && c | d > e < f & g (h)"]
        );
        assert_eq!(
            words("echo '${HOME} `whoami` $(id) $x'"),
            ["echo", "${HOME} `whoami` $(id) $x"]
        );
        assert_eq!(
            words("echo \\$HOME \\| \\; \\&\\&"),
            ["echo", "$HOME", "|", ";", "&&"]
        );
        assert_eq!(words("echo \"\\$HOME \\`x\\`\""), ["echo", "$HOME `x`"]);
        assert_eq!(
            words("grep -e 'a|b' -e \"c;d\""),
            ["grep", "-e", "a|b", "-e", "c;d"]
        );
        assert_eq!(words("printf 'a\nb'"), ["printf", "a\nb"]);
        assert_eq!(words("echo \"a\nb\""), ["echo", "a\nb"]);
    }

    #[test]
    fn a_dollar_that_starts_no_expansion_is_literal() {
        assert_eq!(words("echo cost$"), ["echo", "cost$"]);
        assert_eq!(words("echo $ x"), ["echo", "$", "x"]);
        assert_eq!(words("echo \"a$\""), ["echo", "a$"]);
        assert_eq!(words("echo \"$'x\""), ["echo", "$'x"]);
        assert_eq!(words("echo $%"), ["echo", "$%"]);
    }

    #[test]
    fn globs_tildes_and_braces_pass_literally() {
        assert_eq!(words("ls *.rs ~/x a{b,c}"), ["ls", "*.rs", "~/x", "a{b,c}"]);
        assert_eq!(words("git log HEAD@{1}"), ["git", "log", "HEAD@{1}"]);
    }

    #[test]
    fn comments_are_dropped_as_a_shell_would() {
        assert_eq!(words("ls # list; rm -rf / | x"), ["ls"]);
        assert_eq!(words("echo a#b"), ["echo", "a#b"]);
        assert_eq!(words("echo '#' \\#x"), ["echo", "#", "#x"]);
        assert_eq!(refused("# only a comment"), CommandError::Empty);
        assert_eq!(found("ls # note\nrm x"), "a line break");
    }

    #[test]
    fn broken_or_empty_commands() {
        assert_eq!(refused(""), CommandError::Empty);
        assert_eq!(refused("   \t "), CommandError::Empty);
        assert_eq!(refused("\"\" x"), CommandError::EmptyProgram);
        assert_eq!(
            refused("echo 'abc"),
            CommandError::Unterminated(Quote::Single, 6)
        );
        assert_eq!(
            refused("echo \"abc"),
            CommandError::Unterminated(Quote::Double, 6)
        );
        assert_eq!(
            refused("echo \"abc\\\""),
            CommandError::Unterminated(Quote::Double, 6)
        );
        assert_eq!(
            refused("echo \"it's"),
            CommandError::Unterminated(Quote::Double, 6)
        );
        // A trailing backslash is a literal backslash.
        assert_eq!(words("echo a\\"), ["echo", "a\\"]);
    }

    #[test]
    fn control_characters_are_refused_even_quoted() {
        assert_eq!(
            refused("git status\rrm -rf /"),
            CommandError::Control(Codepoint('\r'), 11)
        );
        assert_eq!(
            refused("echo 'a\0b'"),
            CommandError::Control(Codepoint('\0'), 8)
        );
        assert_eq!(
            refused("echo \\\u{1b}"),
            CommandError::Control(Codepoint('\u{1b}'), 7)
        );
        assert_eq!(
            refused("echo \u{7f}"),
            CommandError::Control(Codepoint('\u{7f}'), 6)
        );
        assert_eq!(words("echo\tx"), ["echo", "x"]);
    }

    #[test]
    fn assignments_as_the_first_word_are_refused() {
        assert_eq!(
            refused("LANG=C sort x"),
            CommandError::Assignment("LANG=C".into())
        );
        assert_eq!(refused("_x= ls"), CommandError::Assignment("_x=".into()));
        assert_eq!(words("ls A=b"), ["ls", "A=b"]);
        assert_eq!(words("./a=b"), ["./a=b"]);
        assert_eq!(words("1A=b"), ["1A=b"]);
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        assert!(matches!(
            refused("echo é | x"),
            CommandError::Shell { column: 8, .. }
        ));
    }

    #[test]
    fn refusal_messages() {
        let mut out = String::new();
        for command in [
            "ls | wc",
            "a && b",
            "echo \"$HOME\"",
            "ls\nrm x",
            "echo 'abc",
            "",
            "\"\"",
            "LANG=C sort",
            "echo \u{1b}[2J",
        ] {
            out.push_str(&format!("{command:?}\n  {}\n", refused(command)));
        }
        insta::assert_snapshot!(out);
    }

    #[test]
    fn names() {
        for ok in ["A", "_", "a_1", "PATH"] {
            assert!(is_name(ok), "{ok}");
        }
        for bad in ["", "1a", "a-b", "a b", "é", "a="] {
            assert!(!is_name(bad), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn splitting_never_panics(command in any::<String>()) {
            let _ = split_command(&command);
        }

        #[test]
        fn accepted_commands_hold_no_live_shell_syntax(
            command in "[a-z $'\"`\\\\|;&<>(){}#\n\t=*~-]{0,40}"
        ) {
            if let Ok(words) = split_command(&command) {
                prop_assert!(!words.is_empty() && !words[0].is_empty());
                // Without quotes, escapes or comments, nothing a shell acts on got through.
                if !command.contains(['\'', '"', '\\', '#']) {
                    prop_assert!(!command.contains(['|', ';', '&', '<', '>', '(', ')', '`', '\n']));
                    prop_assert!(!command.contains("$("));
                }
                // The words, quoted again, split back to themselves.
                prop_assert_eq!(split_command(&shell_words::join(&words)).ok(), Some(words));
            }
        }
    }
}
