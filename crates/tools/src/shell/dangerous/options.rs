//! Reading a program's options the way getopt does, enough to find the flagged ones: short
//! options alone or in clusters (`-avze ssh`: `e` takes the next word), a value attached to a
//! short option (`-calias.x=…`), long options with `=` or a separate value and their
//! abbreviations (`--upload-pac=…`), and whole words for programs whose options are words
//! (`find -exec`).

use super::Finding;

/// How an option is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opt {
    /// A short option letter, alone (`-e`) or in a cluster (`-avze`).
    Short(char),
    /// A long option: `--name`, or `--name=value`.
    Long(&'static str),
    /// A whole word (`-exec` of find, `-TT` of zip).
    Word(&'static str),
    /// Every word that starts with this (`-fprint`, `-fprint0`, `-fprintf`).
    Prefix(&'static str),
    /// An argument `NAME=value` (make's variables).
    Assignment,
}

/// A flagged option and why.
#[derive(Debug, Clone, Copy)]
pub struct Flagged {
    opt: Opt,
    /// Whether it takes a value (in the next word unless attached).
    value: bool,
    why: &'static str,
}

impl Flagged {
    /// An option that takes a value.
    pub const fn value(opt: Opt, why: &'static str) -> Flagged {
        Flagged {
            opt,
            value: true,
            why,
        }
    }

    /// An option without a value.
    pub const fn flag(opt: Opt, why: &'static str) -> Flagged {
        Flagged {
            opt,
            value: false,
            why,
        }
    }
}

/// A program's options, as far as the table needs them.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Short letters that take a value (getopt's `x:`), so that clusters and the words after
    /// them are read as the program reads them.
    pub short_valued: &'static str,
    /// Long options (without `--`) that take a value in the next word when there is no `=`.
    pub long_valued: &'static [&'static str],
    /// The options that run, load or write something.
    pub flagged: &'static [Flagged],
}

impl Options {
    /// No options known.
    pub const fn none() -> Options {
        Options {
            short_valued: "",
            long_valued: &[],
            flagged: &[],
        }
    }

    /// Only long options, all flagged.
    pub const fn long(flagged: &'static [Flagged]) -> Options {
        Options {
            short_valued: "",
            long_valued: &[],
            flagged,
        }
    }

    fn takes_short_value(&self, c: char) -> bool {
        self.short_valued.contains(c)
            || self
                .flagged
                .iter()
                .any(|f| f.value && f.opt == Opt::Short(c))
    }
}

/// Real options that are prefixes of flagged ones (`git diff --text`, `tar --checkpoint`):
/// written in full they mean themselves, not an abbreviation.
const NOT_ABBREVIATIONS: &[&str] = &["text", "checkpoint"];

/// Whether `name` is the long option of `flagged`, in full or abbreviated (getopt_long and
/// git's parse-options accept any unambiguous prefix: `--upload-pac=…`, `--compress-prog=…`);
/// prefixes of three characters or more count, except real options of their own.
fn long_is(flagged: &Flagged, name: &str) -> bool {
    matches!(flagged.opt, Opt::Long(long) if long == name
        || (name.len() >= 3 && long.starts_with(name) && !NOT_ABBREVIATIONS.contains(&name)))
}

/// One word as options: what it is, and how many words it takes.
enum Read<'w> {
    /// `--name` or `--name=value`.
    Long { name: &'w str, attached: bool },
    /// `-abc`: letters, one of which may take the rest of the word or the next word.
    Short(&'w str),
    /// `--`: only operands follow.
    End,
    /// Not an option (an operand, or `-` alone).
    Operand,
}

fn read(word: &str) -> Read<'_> {
    if word == "--" {
        Read::End
    } else if let Some(long) = word.strip_prefix("--") {
        match long.split_once('=') {
            Some((name, _)) => Read::Long {
                name,
                attached: true,
            },
            None => Read::Long {
                name: long,
                attached: false,
            },
        }
    } else if let Some(short) = word.strip_prefix('-')
        && !short.is_empty()
    {
        Read::Short(short)
    } else {
        Read::Operand
    }
}

/// Every flagged option in `words[from..]`.
pub fn scan(words: &[String], from: usize, options: &Options) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut i = from;
    while let Some(word) = words.get(i) {
        let mut next = i + 1;
        let whole = options.flagged.iter().find(|f| match f.opt {
            Opt::Word(w) => word == w,
            Opt::Prefix(p) => word.starts_with(p),
            Opt::Assignment => is_assignment(word),
            Opt::Short(_) | Opt::Long(_) => false,
        });
        if let Some(f) = whole {
            let end = if f.value { i + 2 } else { i + 1 };
            found.push(Finding::new(i, end, f.why));
            i += 1;
            continue;
        }
        match read(word) {
            Read::Long { name, attached } => {
                let takes = options.long_valued.contains(&name)
                    || options.flagged.iter().any(|f| f.value && long_is(f, name));
                let end = if takes && !attached { i + 2 } else { i + 1 };
                if let Some(f) = options.flagged.iter().find(|f| long_is(f, name)) {
                    found.push(Finding::new(i, end, f.why));
                }
                next = end;
            }
            Read::Short(cluster) => {
                for (k, c) in cluster.char_indices() {
                    let takes = options.takes_short_value(c);
                    let attached = k + c.len_utf8() < cluster.len();
                    let end = if takes && !attached { i + 2 } else { i + 1 };
                    let hit = options
                        .flagged
                        .iter()
                        .find(|f| matches!(f.opt, Opt::Short(s) if s == c));
                    if let Some(f) = hit {
                        found.push(Finding::new(i, end, f.why));
                    }
                    if takes {
                        next = end;
                        break;
                    }
                }
            }
            Read::End | Read::Operand => {}
        }
        i = next;
    }
    found
}

/// `NAME=value` with a name of letters, digits and `_`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// For an interpreter: one past the word that holds the code to run — the value of a `code`
/// option, else the script (the first operand) — or the number of words when it reads its
/// input.
pub fn code_end(words: &[String], code: &[Opt], options: &Options) -> usize {
    let mut i = 1;
    while let Some(word) = words.get(i) {
        match read(word) {
            Read::End => return i + 2,
            Read::Operand => return i + 1,
            Read::Long { name, attached } => {
                if code.iter().any(|o| matches!(o, Opt::Long(l) if *l == name)) {
                    return if attached { i + 1 } else { i + 2 };
                }
                let takes = options.long_valued.contains(&name);
                i += if takes && !attached { 2 } else { 1 };
            }
            Read::Short(cluster) => {
                let mut next = i + 1;
                for (k, c) in cluster.char_indices() {
                    let attached = k + c.len_utf8() < cluster.len();
                    if code.contains(&Opt::Short(c)) {
                        return if attached { i + 1 } else { i + 2 };
                    }
                    if options.takes_short_value(c) {
                        if !attached {
                            next = i + 2;
                        }
                        break;
                    }
                }
                i = next;
            }
        }
    }
    words.len()
}
