//! A tiny generator of strings matching a subset of ECMA-262 regular expressions.
//!
//! Supported: literals, escapes (`\d`, `\w`, `\s` and their negations, control
//! and hexadecimal/Unicode escapes), character classes, `.`, plain, `(?:...)`
//! and named groups, alternation (only the first branch is rendered), greedy
//! and lazy quantifiers, and `^`/`$`. Anything else (lookaround,
//! backreferences, word boundaries, Unicode property classes) makes the
//! pattern unsupported and `generate` returns `None`.

use super::MAX_STRING_CHARS;

/// Deepest group nesting accepted.
const MAX_NESTING: usize = 32;

/// Characters tried, in order, as the representative of a character set.
const PREFERRED: &str = "a1bcxyz0ABCZ_-. /:@#+=~!,;%&*()[]{}<>?'\"\\|^$`\t";

const DIGITS: &[(char, char)] = &[('0', '9')];
const WORD: &[(char, char)] = &[('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
const SPACE: &[(char, char)] = &[
    (' ', ' '),
    ('\t', '\r'),
    ('\u{a0}', '\u{a0}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{feff}', '\u{feff}'),
];

/// One parsed element of a pattern.
enum Node {
    Literal(char),
    Set {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
    Any,
    /// A group, reduced to its first alternative (the one rendered).
    Group(Vec<Item>),
    /// `^` or `$`: matches no characters.
    Anchor,
}

/// A node with its quantifier bounds.
struct Item {
    node: Node,
    min: usize,
    max: Option<usize>,
}

/// A string matching `pattern` within `min..=max` chars, or `None` when the
/// pattern is outside the supported subset or the lengths cannot be met.
pub(super) fn generate(pattern: &str, min: usize, max: usize) -> Option<String> {
    let mut parser = Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        nesting: 0,
        has_start: false,
        has_end: false,
    };
    let items = parser.alternation()?;
    if parser.pos != parser.chars.len() {
        return None;
    }
    let mut out = String::new();
    render(&items, &mut 0, &mut out)?;
    let mut len = out.chars().count();
    if len < min {
        out.clear();
        render(&items, &mut (min - len), &mut out)?;
        len = out.chars().count();
    }
    if len < min {
        let padding: String = "a".repeat(min - len);
        if !parser.has_end {
            out.push_str(&padding);
        } else if !parser.has_start {
            out.insert_str(0, &padding);
        }
        len = out.chars().count();
    }
    (min..=max).contains(&len).then_some(out)
}

/// Appends the shortest rendering of `items` to `out`, spending up to `extra`
/// additional repetitions on open-ended quantifiers to lengthen it.
fn render(items: &[Item], extra: &mut usize, out: &mut String) -> Option<()> {
    for item in items {
        match &item.node {
            Node::Anchor => {}
            Node::Group(inner) => {
                for _ in 0..item.min {
                    let before = out.len();
                    render(inner, extra, out)?;
                    if out.len() > MAX_STRING_CHARS {
                        return None;
                    }
                    if out.len() == before {
                        break;
                    }
                }
            }
            single => {
                let c = representative(single)?;
                let room = item.max.map_or(usize::MAX, |m| m.saturating_sub(item.min));
                let added = room.min(*extra);
                *extra -= added;
                let count = item.min.saturating_add(added);
                if count > MAX_STRING_CHARS || out.len() + count > MAX_STRING_CHARS * 4 {
                    return None;
                }
                out.extend(std::iter::repeat_n(c, count));
            }
        }
    }
    Some(())
}

/// The character used for a single-character node.
fn representative(node: &Node) -> Option<char> {
    match node {
        Node::Literal(c) => Some(*c),
        Node::Any => Some('a'),
        Node::Set { ranges, negated } => {
            let inside = |c: char| ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
            if *negated {
                PREFERRED.chars().find(|c| !inside(*c))
            } else {
                PREFERRED
                    .chars()
                    .find(|c| inside(*c))
                    .or_else(|| ranges.first().map(|r| r.0))
            }
        }
        Node::Group(_) | Node::Anchor => None,
    }
}

/// What a backslash escape stands for.
enum Escape {
    Char(char),
    Set(&'static [(char, char)], bool),
}

/// Recursive-descent parser; every method returns `None` on unsupported syntax.
struct Parser {
    chars: Vec<char>,
    pos: usize,
    nesting: usize,
    has_start: bool,
    has_end: bool,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    /// Consumes `c` if it comes next.
    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.pos += 1;
        }
        found
    }

    /// `a|b|...`, reduced to its first branch (the others are only checked).
    fn alternation(&mut self) -> Option<Vec<Item>> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return None;
        }
        let first = self.sequence()?;
        while self.eat('|') {
            self.sequence()?;
        }
        self.nesting -= 1;
        Some(first)
    }

    fn sequence(&mut self) -> Option<Vec<Item>> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            self.pos += 1;
            let node = match c {
                '^' => {
                    self.has_start = true;
                    Node::Anchor
                }
                '$' => {
                    self.has_end = true;
                    Node::Anchor
                }
                '.' => Node::Any,
                '[' => self.class()?,
                '(' => self.group()?,
                '\\' => match self.escape(false)? {
                    Escape::Char(c) => Node::Literal(c),
                    Escape::Set(ranges, negated) => Node::Set {
                        ranges: ranges.to_vec(),
                        negated,
                    },
                },
                '*' | '+' | '?' | '{' => return None,
                other => Node::Literal(other),
            };
            let (min, max) = self.quantifier()?;
            if matches!(node, Node::Anchor) && (min, max) != (1, Some(1)) {
                return None;
            }
            items.push(Item { node, min, max });
        }
        Some(items)
    }

    fn quantifier(&mut self) -> Option<(usize, Option<usize>)> {
        let bounds = if self.eat('*') {
            (0, None)
        } else if self.eat('+') {
            (1, None)
        } else if self.eat('?') {
            (0, Some(1))
        } else if self.eat('{') {
            self.braces()?
        } else {
            return Some((1, Some(1)));
        };
        // A lazy quantifier renders the same; a second quantifier is an error.
        self.eat('?');
        if matches!(self.peek(), Some('*' | '+' | '?' | '{')) {
            return None;
        }
        Some(bounds)
    }

    /// `n}`, `n,}` or `n,m}` after a `{`.
    fn braces(&mut self) -> Option<(usize, Option<usize>)> {
        let low = self.number()?;
        let high = if !self.eat(',') {
            Some(low)
        } else if self.peek() == Some('}') {
            None
        } else {
            Some(self.number().filter(|high| *high >= low)?)
        };
        self.eat('}').then_some((low, high))
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.pos;
        let mut value: usize = 0;
        while let Some(digit) = self.peek().and_then(|c| c.to_digit(10)) {
            value = value
                .checked_mul(10)?
                .checked_add(usize::try_from(digit).ok()?)?;
            self.pos += 1;
        }
        (self.pos > start).then_some(value)
    }

    /// A group after its `(`: plain, `(?:...)` or named (`(?<name>...)`, `(?P<name>...)`).
    fn group(&mut self) -> Option<Node> {
        if self.eat('?') {
            match self.next()? {
                ':' => {}
                '<' | 'P' => {
                    self.eat('<');
                    let first = self.next()?;
                    if !(first.is_alphabetic() || first == '_') {
                        return None;
                    }
                    loop {
                        let c = self.next()?;
                        if c == '>' {
                            break;
                        }
                        if !(c.is_alphanumeric() || c == '_') {
                            return None;
                        }
                    }
                }
                _ => return None,
            }
        }
        let items = self.alternation()?;
        self.eat(')').then_some(Node::Group(items))
    }

    /// A character class after its `[`.
    fn class(&mut self) -> Option<Node> {
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        loop {
            let c = self.next()?;
            if c == ']' {
                break;
            }
            let low = match self.class_atom(c)? {
                Escape::Char(c) => c,
                Escape::Set(set, false) => {
                    ranges.extend_from_slice(set);
                    continue;
                }
                Escape::Set(_, true) => return None,
            };
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|c| *c != ']') {
                self.pos += 1;
                let c = self.next()?;
                let Escape::Char(high) = self.class_atom(c)? else {
                    return None;
                };
                if high < low {
                    return None;
                }
                ranges.push((low, high));
            } else {
                ranges.push((low, low));
            }
        }
        Some(Node::Set { ranges, negated })
    }

    /// A class member starting with `c`: `c` itself, or the escape it opens.
    fn class_atom(&mut self, c: char) -> Option<Escape> {
        if c == '\\' {
            self.escape(true)
        } else {
            Some(Escape::Char(c))
        }
    }

    /// An escape after its backslash.
    fn escape(&mut self, in_class: bool) -> Option<Escape> {
        let c = self.next()?;
        Some(match c {
            'd' => Escape::Set(DIGITS, false),
            'D' => Escape::Set(DIGITS, true),
            'w' => Escape::Set(WORD, false),
            'W' => Escape::Set(WORD, true),
            's' => Escape::Set(SPACE, false),
            'S' => Escape::Set(SPACE, true),
            'n' => Escape::Char('\n'),
            't' => Escape::Char('\t'),
            'r' => Escape::Char('\r'),
            'f' => Escape::Char('\u{c}'),
            'v' => Escape::Char('\u{b}'),
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => Escape::Char('\0'),
            'b' if in_class => Escape::Char('\u{8}'),
            'x' => Escape::Char(self.hex(2)?),
            'u' if self.eat('{') => Escape::Char(self.braced_hex()?),
            'u' => Escape::Char(self.hex(4)?),
            c if c.is_ascii_alphanumeric() => return None,
            other => Escape::Char(other),
        })
    }

    /// Exactly `digits` hexadecimal digits, as a character.
    fn hex(&mut self, digits: usize) -> Option<char> {
        let mut code: u32 = 0;
        for _ in 0..digits {
            code = code * 16 + self.next()?.to_digit(16)?;
        }
        char::from_u32(code)
    }

    /// One or more hexadecimal digits closed by `}` (after `\u{`), as a character.
    fn braced_hex(&mut self) -> Option<char> {
        let start = self.pos;
        let mut code: u32 = 0;
        while !self.eat('}') {
            code = code
                .checked_mul(16)?
                .checked_add(self.next()?.to_digit(16)?)?;
        }
        (self.pos > start + 1)
            .then_some(char::from_u32(code))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::schema_args::generate_args;
    use crate::schema_args::tests::{with_prop, x_of};

    #[test]
    fn patterns() {
        assert_eq!(x_of(json!({"type": "string", "pattern": "^[a-z]+$"})), "a");
        assert_eq!(x_of(json!({"type": "string", "pattern": "^[0-9]+$"})), "1");
        assert_eq!(
            x_of(json!({"type": "string", "pattern": "^[a-z][a-z0-9_]*$"})),
            "a"
        );
        assert_eq!(
            x_of(json!({"type": "string", "pattern": "^[a-z]+$", "minLength": 4})),
            "aaaa"
        );
        for pattern in [
            "^[A-Z]{3}-\\d{4}$",
            "^\\w+@\\w+\\.com$",
            "^(foo|bar)-[0-9a-f]{8}$",
            "^(?:[a-z]+/)*[a-z]+\\.txt$",
            "^v\\d+\\.\\d+\\.\\d+(-[a-z0-9.]+)?$",
            "[^abc]+",
            "^\\S+$",
            "^[^\\s]+$",
            "^\\D\\W\\s$",
            "^[\\w.-]+$",
            "^\\x41\\u0042\\u{43}$",
            "^(?<name>[a-z]{2,})$",
            "abc",
            "x$",
            "^$",
            "^a{0}b?c*$",
            "^[-a]+$",
            "^[a-]+$",
            "^\\$\\^\\.\\*$",
            "^(((a)))b+?$",
        ] {
            x_of(json!({"type": "string", "pattern": pattern}));
        }
        for pattern in [
            "^[A-Z]{3}-\\d{4}$",
            "^\\w+@\\w+\\.com$",
            "^(foo|bar)-[0-9a-f]{8}$",
            "^(?:[a-z]+/)*[a-z]+\\.txt$",
            "^v\\d+\\.\\d+\\.\\d+(-[a-z0-9.]+)?$",
            "[^abc]+",
            "abc",
            "x$",
            "^a{0}b?c*$",
            "^(((a)))b+?$",
        ] {
            x_of(json!({"type": "string", "pattern": pattern, "minLength": 6}));
        }
        x_of(json!({"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 5}));
        x_of(json!({"type": "string", "pattern": "[0-9]", "minLength": 12}));
        x_of(json!({"type": "string", "pattern": "^[0-9]", "minLength": 12}));
        x_of(json!({"type": "string", "pattern": "[0-9]$", "minLength": 12}));
    }

    #[test]
    fn unsupported_patterns_do_not_panic() {
        for pattern in [
            "(?=a)a",
            "\\bword\\b",
            "(a)\\1",
            "\\p{L}+",
            "[",
            "(",
            ")",
            "a{2,1}",
            "a**",
            "*",
            "[]",
            "(){99999999999999999999}",
            "((((((((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))))))))",
            "(a{1000}){1000}",
            "\\",
            "[\\",
            "\\u{110000}",
        ] {
            let value = generate_args(&with_prop(json!({"type": "string", "pattern": pattern})), 3);
            assert!(value["x"].is_string(), "{pattern}: {value}");
        }
    }
}
