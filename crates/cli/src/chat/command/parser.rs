//! Parsing of slash-command lines such as `/tool git_push --branch main` into a [`ParsedCommand`].
//!
//! The rules, in the order they apply:
//!
//! - The line (after trimming) starts with `/` and a command name: a letter, digit or `_`, then
//!   letters, digits, `_`, `-`, `.` or `:` up to the first whitespace. Names are kept as typed.
//! - The rest is split into words the way a shell does: whitespace separates words; inside single
//!   quotes everything is literal; inside double quotes `\"`, `\\`, `\n` and `\t` are escapes (any
//!   other backslash is kept); outside quotes a backslash makes the next character literal.
//! - A word is only read as an option when its first character was neither quoted nor escaped, so
//!   `"--x"` or `\-x` pass a literal `--x` / `-x`.
//! - `--key value`, `--key=value` (the value may be empty) and `--flag` (followed by nothing, or by
//!   another option, becomes `true`). `-abc` sets the flags `a`, `b` and `c`. A single-letter `-k`
//!   followed by a word that is not an option takes that word as its value (`-k value`), and
//!   `-k=value` is accepted too.
//! - A word that reads as a negative number (`-5`, `-0.5`, `-1e3`) is a value, never an option; so
//!   is a lone `-`. `--` ends the options: every later word is a positional argument.
//! - Option values stay strings (`Value::String`) and flags are `Value::Bool(true)`; typing them
//!   against a tool's schema is [`golem_core::coerce::options_to_args`]'s job. When an option is repeated, the
//!   later value wins (keeping the position of the first).
//!
//! Error positions are 0-based character (not byte) offsets into the line as given.

use std::fmt;

use serde_json::{Map, Value};

/// A slash-command line split into its name, positional arguments and options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedCommand {
    /// The command name as typed, without the `/` (`tool` for `/tool git_push`).
    pub name: String,
    /// Positional words, in order.
    pub args: Vec<String>,
    /// Options in the order first given: strings for values, `true` for flags.
    pub options: Map<String, Value>,
}

/// Why a line could not be parsed as a slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The line does not start with `/` followed by a command name.
    NotACommand,
    /// The command name contains a character names cannot have.
    InvalidName {
        /// The offending character.
        ch: char,
        /// Its 0-based character position in the line.
        position: usize,
    },
    /// A quote was opened and never closed.
    UnclosedQuote {
        /// The quote character, `'` or `"`.
        quote: char,
        /// The 0-based character position of the opening quote.
        position: usize,
    },
    /// The line ends with a backslash that has nothing to escape.
    TrailingBackslash {
        /// The 0-based character position of the backslash.
        position: usize,
    },
    /// A word starting with `-` is not a well-formed option.
    InvalidOption {
        /// The word as parsed.
        word: String,
        /// The 0-based character position where the word starts.
        position: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::NotACommand => write!(
                f,
                "not a command: commands start with '/' followed by a name, as in /help"
            ),
            ParseError::InvalidName { ch, position } => write!(
                f,
                "invalid character '{ch}' in command name at position {position} \
                 (names use letters, digits, '_', '-', '.' and ':')"
            ),
            ParseError::UnclosedQuote { quote, position } => {
                write!(f, "unclosed {quote} quote starting at position {position}")
            }
            ParseError::TrailingBackslash { position } => write!(
                f,
                "trailing backslash at position {position} has nothing to escape"
            ),
            ParseError::InvalidOption {
                word,
                position,
                reason,
            } => write!(
                f,
                "invalid option '{word}' at position {position}: {reason}"
            ),
        }
    }
}

impl std::error::Error for ParseError {}

/// Whether `input` is a slash command: after trimming, a `/` directly followed by a name character.
///
/// `/help` and `  /tool x` are commands; ``, `/`, `/  `, `/ help` and `hello` are not.
pub fn is_command(input: &str) -> bool {
    let mut chars = input.trim_start().chars();
    chars.next() == Some('/') && chars.next().is_some_and(is_name_start)
}

/// Parses a slash-command line; see the module documentation for the rules.
pub fn parse_command(input: &str) -> Result<ParsedCommand, ParseError> {
    let mut chars = input
        .chars()
        .enumerate()
        .skip_while(|(_, c)| c.is_whitespace())
        .peekable();
    if !matches!(chars.next(), Some((_, '/'))) {
        return Err(ParseError::NotACommand);
    }
    if !chars.peek().is_some_and(|&(_, c)| is_name_start(c)) {
        return Err(ParseError::NotACommand);
    }
    let mut name = String::new();
    while let Some(&(position, ch)) = chars.peek() {
        if ch.is_whitespace() {
            break;
        }
        if !is_name_char(ch) {
            return Err(ParseError::InvalidName { ch, position });
        }
        name.push(ch);
        chars.next();
    }
    let words = split_words(chars)?;
    let (args, options) = interpret(words)?;
    Ok(ParsedCommand {
        name,
        args,
        options,
    })
}

/// Whether `c` may start a command name.
fn is_name_start(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `c` may appear in a command name after its first character.
fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// One shell-like word of the line.
#[derive(Debug)]
struct Word {
    /// The text with quotes and escapes removed.
    text: String,
    /// Character position where the word starts.
    start: usize,
    /// Whether the first character was neither quoted nor escaped (only such words are options).
    plain: bool,
}

impl Word {
    /// Whether this word is read as an option (or as the `--` terminator).
    fn is_option(&self) -> bool {
        self.plain
            && self.text.starts_with('-')
            && self.text != "-"
            && !is_negative_number(&self.text)
    }
}

/// Splits characters (with their positions) into shell-like words.
fn split_words(chars: impl Iterator<Item = (usize, char)>) -> Result<Vec<Word>, ParseError> {
    let mut words = Vec::new();
    let mut current: Option<Word> = None;
    let mut chars = chars.peekable();
    while let Some((pos, c)) = chars.next() {
        if c.is_whitespace() {
            words.extend(current.take());
            continue;
        }
        let word = current.get_or_insert_with(|| Word {
            text: String::new(),
            start: pos,
            plain: true,
        });
        let first = word.start == pos;
        match c {
            '\'' => {
                word.plain &= !first;
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, ch)) => word.text.push(ch),
                        None => {
                            return Err(ParseError::UnclosedQuote {
                                quote: '\'',
                                position: pos,
                            });
                        }
                    }
                }
            }
            '"' => {
                word.plain &= !first;
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, 'n')) => word.text.push('\n'),
                            Some((_, 't')) => word.text.push('\t'),
                            Some((_, ch @ ('"' | '\\'))) => word.text.push(ch),
                            Some((_, ch)) => {
                                word.text.push('\\');
                                word.text.push(ch);
                            }
                            None => {
                                return Err(ParseError::UnclosedQuote {
                                    quote: '"',
                                    position: pos,
                                });
                            }
                        },
                        Some((_, ch)) => word.text.push(ch),
                        None => {
                            return Err(ParseError::UnclosedQuote {
                                quote: '"',
                                position: pos,
                            });
                        }
                    }
                }
            }
            '\\' => {
                word.plain &= !first;
                match chars.next() {
                    Some((_, ch)) => word.text.push(ch),
                    None => return Err(ParseError::TrailingBackslash { position: pos }),
                }
            }
            _ => word.text.push(c),
        }
    }
    words.extend(current);
    Ok(words)
}

/// Whether `word` reads as a negative number such as `-5`, `-0.5`, `-.5` or `-1e3`.
fn is_negative_number(word: &str) -> bool {
    let Some(rest) = word.strip_prefix('-') else {
        return false;
    };
    let mut chars = rest.chars();
    let starts_numeric = match chars.next() {
        Some(c) if c.is_ascii_digit() => true,
        Some('.') => chars.next().is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    };
    starts_numeric && rest.parse::<f64>().is_ok()
}

/// Sorts words into positional arguments and options.
fn interpret(words: Vec<Word>) -> Result<(Vec<String>, Map<String, Value>), ParseError> {
    let mut args = Vec::new();
    let mut options = Map::new();
    let mut words = words.into_iter().peekable();
    while let Some(word) = words.next() {
        if !word.is_option() {
            args.push(word.text);
            continue;
        }
        if word.text == "--" {
            args.extend(words.map(|w| w.text));
            break;
        }
        if let Some(body) = word.text.strip_prefix("--") {
            let (key, value) = match body.split_once('=') {
                Some((key, value)) => (key, Value::String(value.to_owned())),
                None => (body, Value::Bool(true)),
            };
            check_long_name(key, &word)?;
            let value = match value {
                Value::Bool(_) => take_value(&mut words),
                given => given,
            };
            options.insert(key.to_owned(), value);
        } else if let Some(body) = word.text.strip_prefix('-') {
            if let Some((key, value)) = body.split_once('=') {
                let mut key_chars = key.chars();
                let single = matches!((key_chars.next(), key_chars.next()), (Some(c), None) if c.is_alphanumeric());
                if !single {
                    return Err(invalid(
                        &word,
                        "only a single-letter short option takes a value, as in -k=value",
                    ));
                }
                options.insert(key.to_owned(), Value::String(value.to_owned()));
            } else if body.chars().any(|c| !c.is_alphanumeric()) {
                return Err(invalid(
                    &word,
                    "short options are letters or digits, combined as in -abc",
                ));
            } else if body.chars().count() == 1 {
                let value = take_value(&mut words);
                options.insert(body.to_owned(), value);
            } else {
                for flag in body.chars() {
                    options.insert(flag.to_string(), Value::Bool(true));
                }
            }
        }
    }
    Ok((args, options))
}

/// The value of an option given without `=`: the next word unless it is an option, else `true`.
fn take_value(words: &mut std::iter::Peekable<impl Iterator<Item = Word>>) -> Value {
    match words.next_if(|next| !next.is_option()) {
        Some(next) => Value::String(next.text),
        None => Value::Bool(true),
    }
}

/// Checks the name of a `--long` option.
fn check_long_name(key: &str, word: &Word) -> Result<(), ParseError> {
    let mut chars = key.chars();
    match chars.next() {
        None => Err(invalid(word, "the option has no name")),
        Some(c) if !c.is_alphanumeric() => {
            Err(invalid(word, "option names start with a letter or digit"))
        }
        Some(_) if chars.any(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))) => {
            Err(invalid(
                word,
                "option names use only letters, digits, '-', '_' and '.'",
            ))
        }
        Some(_) => Ok(()),
    }
}

/// An [`ParseError::InvalidOption`] for `word`.
fn invalid(word: &Word, reason: &'static str) -> ParseError {
    ParseError::InvalidOption {
        word: word.text.clone(),
        position: word.start,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(input: &str) -> ParsedCommand {
        match parse_command(input) {
            Ok(parsed) => parsed,
            Err(e) => panic!("{input:?} failed to parse: {e}"),
        }
    }

    fn opts(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn err(input: &str) -> ParseError {
        match parse_command(input) {
            Ok(parsed) => panic!("{input:?} parsed unexpectedly: {parsed:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn is_command_accepts_slash_and_name() {
        assert!(is_command("/help"));
        assert!(is_command("  /tool x"));
        assert!(is_command("\t/x\n"));
        assert!(is_command("/_private"));
        assert!(is_command("/héllo"));
        assert!(is_command("/9lives"));
    }

    #[test]
    fn is_command_rejects_non_commands() {
        for input in [
            "", "   ", "/", "/  ", "/ help", "hello", "help/", "//x", "/-x", "/\"x\"", "/\t",
        ] {
            assert!(!is_command(input), "{input:?}");
        }
    }

    #[test]
    fn not_a_command_is_an_error() {
        for input in ["", "/", "/  ", "hello", "/ help", "   "] {
            assert_eq!(err(input), ParseError::NotACommand, "{input:?}");
        }
    }

    #[test]
    fn seed_example_tool_with_option() {
        let p = parse("/tool git_push --branch main");
        assert_eq!(p.name, "tool");
        assert_eq!(p.args, vec!["git_push"]);
        assert_eq!(p.options, opts(json!({"branch": "main"})));
    }

    #[test]
    fn equals_form_and_trailing_flag() {
        let p = parse("/tool git_push --branch=main --force");
        assert_eq!(p.args, vec!["git_push"]);
        assert_eq!(p.options, opts(json!({"branch": "main", "force": true})));
    }

    #[test]
    fn equals_form_with_empty_value() {
        let p = parse("/x --message= next");
        assert_eq!(p.options, opts(json!({"message": ""})));
        assert_eq!(p.args, vec!["next"]);
    }

    #[test]
    fn equals_form_keeps_later_equals_signs() {
        assert_eq!(parse("/x --expr=a=b").options, opts(json!({"expr": "a=b"})));
    }

    #[test]
    fn flag_followed_by_option_is_true() {
        let p = parse("/x --force --branch main");
        assert_eq!(p.options, opts(json!({"force": true, "branch": "main"})));
    }

    #[test]
    fn combined_short_flags() {
        assert_eq!(
            parse("/x -abc").options,
            opts(json!({"a": true, "b": true, "c": true}))
        );
    }

    #[test]
    fn combined_short_flags_never_take_a_value() {
        let p = parse("/x -ab value");
        assert_eq!(p.options, opts(json!({"a": true, "b": true})));
        assert_eq!(p.args, vec!["value"]);
    }

    #[test]
    fn single_short_option_takes_next_word() {
        assert_eq!(parse("/x -k value").options, opts(json!({"k": "value"})));
        assert_eq!(parse("/x -k=value").options, opts(json!({"k": "value"})));
        assert_eq!(parse("/x -k").options, opts(json!({"k": true})));
        assert_eq!(
            parse("/x -k -j").options,
            opts(json!({"k": true, "j": true}))
        );
        assert_eq!(parse("/x -k -5").options, opts(json!({"k": "-5"})));
    }

    #[test]
    fn negative_numbers_are_values() {
        assert_eq!(parse("/x --count -5").options, opts(json!({"count": "-5"})));
        assert_eq!(
            parse("/x --ratio -0.5").options,
            opts(json!({"ratio": "-0.5"}))
        );
        assert_eq!(parse("/x --big -1e3").options, opts(json!({"big": "-1e3"})));
        assert_eq!(parse("/x --frac -.5").options, opts(json!({"frac": "-.5"})));
        let p = parse("/x -5 -0.5");
        assert_eq!(p.args, vec!["-5", "-0.5"]);
        assert!(p.options.is_empty());
    }

    #[test]
    fn words_that_only_look_numeric_are_options() {
        assert_eq!(
            parse("/x -inf").options,
            opts(json!({"i": true, "n": true, "f": true}))
        );
        assert!(matches!(err("/x -.x"), ParseError::InvalidOption { .. }));
    }

    #[test]
    fn lone_dash_is_a_value() {
        let p = parse("/x - --out -");
        assert_eq!(p.args, vec!["-"]);
        assert_eq!(p.options, opts(json!({"out": "-"})));
    }

    #[test]
    fn double_dash_ends_options() {
        let p = parse("/x --a 1 -- --b -c 'd e'");
        assert_eq!(p.options, opts(json!({"a": "1"})));
        assert_eq!(p.args, vec!["--b", "-c", "d e"]);
    }

    #[test]
    fn flag_before_double_dash_is_true() {
        let p = parse("/x --force -- value");
        assert_eq!(p.options, opts(json!({"force": true})));
        assert_eq!(p.args, vec!["value"]);
    }

    #[test]
    fn repeated_option_later_wins_first_position_kept() {
        let p = parse("/x --a 1 --b 2 --a 3");
        assert_eq!(p.options, opts(json!({"a": "3", "b": "2"})));
        assert_eq!(p.options.keys().collect::<Vec<_>>(), vec!["a", "b"]);
    }

    #[test]
    fn options_keep_insertion_order() {
        let p = parse("/x --zeta 1 --alpha 2 --mid 3");
        assert_eq!(
            p.options.keys().collect::<Vec<_>>(),
            vec!["zeta", "alpha", "mid"]
        );
    }

    #[test]
    fn names_are_kept_as_typed() {
        assert_eq!(parse("/Help").name, "Help");
        assert_eq!(parse("/git-push.v2:x").name, "git-push.v2:x");
    }

    #[test]
    fn invalid_name_character_is_reported() {
        assert_eq!(
            err("/usr/bin"),
            ParseError::InvalidName {
                ch: '/',
                position: 4
            }
        );
        assert_eq!(
            err("/tool\"x\""),
            ParseError::InvalidName {
                ch: '"',
                position: 5
            }
        );
    }

    #[test]
    fn unclosed_double_quote_names_position() {
        let e = err("/tool \"unclosed");
        assert_eq!(
            e,
            ParseError::UnclosedQuote {
                quote: '"',
                position: 6
            }
        );
        assert_eq!(e.to_string(), "unclosed \" quote starting at position 6");
    }

    #[test]
    fn unclosed_single_quote_names_position() {
        assert_eq!(
            err("/x a 'b c"),
            ParseError::UnclosedQuote {
                quote: '\'',
                position: 5
            }
        );
    }

    #[test]
    fn positions_count_characters_not_bytes() {
        assert_eq!(
            err("  /x é \"oops"),
            ParseError::UnclosedQuote {
                quote: '"',
                position: 7
            }
        );
    }

    #[test]
    fn escaped_quote_at_end_of_double_quotes_is_unclosed() {
        assert_eq!(
            err("/x \"abc\\\""),
            ParseError::UnclosedQuote {
                quote: '"',
                position: 3
            }
        );
        assert_eq!(
            err("/x \"abc\\"),
            ParseError::UnclosedQuote {
                quote: '"',
                position: 3
            }
        );
    }

    #[test]
    fn trailing_backslash_names_position() {
        let e = err("/x abc\\");
        assert_eq!(e, ParseError::TrailingBackslash { position: 6 });
        assert_eq!(
            e.to_string(),
            "trailing backslash at position 6 has nothing to escape"
        );
    }

    #[test]
    fn single_quotes_are_literal() {
        assert_eq!(parse(r#"/x 'a \n "b"'"#).args, vec![r#"a \n "b""#]);
    }

    #[test]
    fn double_quote_escapes() {
        assert_eq!(
            parse(r#"/x "a\"b\\c\nd\te\$""#).args,
            vec!["a\"b\\c\nd\te\\$"]
        );
    }

    #[test]
    fn backslash_outside_quotes_escapes_next_char() {
        assert_eq!(parse(r"/x a\ b c\'d \n").args, vec!["a b", "c'd", "n"]);
    }

    #[test]
    fn adjacent_quoted_parts_join_one_word() {
        assert_eq!(parse(r#"/x ab"c d"'e f'g"#).args, vec!["abc de fg"]);
    }

    #[test]
    fn only_quotes_give_empty_words() {
        let p = parse("/x \"\" ''");
        assert_eq!(p.args, vec!["", ""]);
        assert_eq!(parse("/x --msg \"\"").options, opts(json!({"msg": ""})));
    }

    #[test]
    fn quoted_or_escaped_dash_words_are_values() {
        let p = parse(r#"/x --text "-abc" '--lit' \-e"#);
        assert_eq!(p.options, opts(json!({"text": "-abc"})));
        assert_eq!(p.args, vec!["--lit", "-e"]);
    }

    #[test]
    fn quoted_value_inside_equals_option() {
        assert_eq!(
            parse(r#"/x --msg="hello world""#).options,
            opts(json!({"msg": "hello world"}))
        );
    }

    #[test]
    fn tabs_and_newlines_separate_words() {
        let p = parse("/x\ta\t\tb\n--c\td");
        assert_eq!(p.name, "x");
        assert_eq!(p.args, vec!["a", "b"]);
        assert_eq!(p.options, opts(json!({"c": "d"})));
    }

    #[test]
    fn unicode_words_and_options() {
        let p = parse("/x 日本 --名前 値 -é");
        assert_eq!(p.args, vec!["日本"]);
        assert_eq!(p.options, opts(json!({"名前": "値", "é": true})));
    }

    #[test]
    fn empty_option_name_is_an_error() {
        let e = err("/x --=x");
        assert_eq!(
            e,
            ParseError::InvalidOption {
                word: "--=x".into(),
                position: 3,
                reason: "the option has no name"
            }
        );
        assert!(e.to_string().contains("'--=x' at position 3"));
    }

    #[test]
    fn triple_dash_is_an_error() {
        assert!(matches!(
            err("/x ---x"),
            ParseError::InvalidOption { position: 3, .. }
        ));
        assert!(matches!(err("/x --a!b"), ParseError::InvalidOption { .. }));
    }

    #[test]
    fn bad_short_options_are_errors() {
        assert!(matches!(err("/x -ab=c"), ParseError::InvalidOption { .. }));
        assert!(matches!(err("/x -a-b"), ParseError::InvalidOption { .. }));
        assert!(matches!(err("/x -=c"), ParseError::InvalidOption { .. }));
    }

    #[test]
    fn long_option_names_may_have_inner_dashes_and_dots() {
        let p = parse("/x --create-dirs --a_b.c 1");
        assert_eq!(p.options, opts(json!({"create-dirs": true, "a_b.c": "1"})));
    }

    #[test]
    fn surrounding_whitespace_is_ignored() {
        let p = parse("   /status   ");
        assert_eq!(
            p,
            ParsedCommand {
                name: "status".into(),
                ..ParsedCommand::default()
            }
        );
    }

    #[test]
    fn very_long_input_parses() {
        let long = "a".repeat(200_000);
        let p = parse(&format!("/x {long} --k {long}"));
        assert_eq!(p.args.len(), 1);
        assert_eq!(p.args[0].len(), 200_000);
        let many: String = (0..10_000).map(|i| format!(" --o{i} v{i}")).collect();
        assert_eq!(parse(&format!("/x{many}")).options.len(), 10_000);
    }
}
