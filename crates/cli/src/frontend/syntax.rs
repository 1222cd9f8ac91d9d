//! The syntect data both highlighters use (tool results in `render/`, code blocks in the
//! assistant's markdown in `markdown/`): the default syntaxes and one theme, loaded once, and
//! the lookup of a syntax from a language name, a path or a first line.

use std::sync::LazyLock;

use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

/// The theme used for code (a dark base16 theme, as most terminals are dark).
const THEME: &str = "base16-ocean.dark";

struct Assets {
    syntaxes: SyntaxSet,
    theme: Option<Theme>,
}

static ASSETS: LazyLock<Assets> = LazyLock::new(|| Assets {
    syntaxes: SyntaxSet::load_defaults_newlines(),
    theme: ThemeSet::load_defaults().themes.remove(THEME),
});

/// Language names people and models write that the default syntaxes know under another token.
const ALIASES: &[(&str, &str)] = &[
    ("typescript", "js"),
    ("ts", "js"),
    ("tsx", "js"),
    ("jsx", "js"),
    ("jsonc", "json"),
    ("shell", "bash"),
    ("sh", "bash"),
    ("zsh", "bash"),
    ("console", "bash"),
    ("yml", "yaml"),
    ("golang", "go"),
    ("py", "python"),
    ("rs", "rust"),
];

/// Loads the syntaxes and the theme now (they take tens of milliseconds to load).
pub fn preload() {
    LazyLock::force(&ASSETS);
}

/// The syntaxes.
pub fn syntaxes() -> &'static SyntaxSet {
    &ASSETS.syntaxes
}

/// The theme, when it could be loaded.
pub fn theme() -> Option<&'static Theme> {
    ASSETS.theme.as_ref()
}

/// The syntax for a language name or extension (`rust`, `py`, `ts`).
pub fn by_language(name: &str) -> Option<&'static SyntaxReference> {
    let lower = name.trim().to_ascii_lowercase();
    let token = ALIASES
        .iter()
        .find(|(alias, _)| *alias == lower)
        .map_or(lower.as_str(), |(_, token)| token);
    ASSETS.syntaxes.find_syntax_by_token(token)
}

/// The syntax for a language name (`rust`, `py`), else a path's extension, else a first line
/// (`#!/bin/sh`); `None` for plain text.
pub fn find(
    language: Option<&str>,
    path: Option<&str>,
    first_line: &str,
) -> Option<&'static SyntaxReference> {
    let set = &ASSETS.syntaxes;
    let found = language
        .filter(|l| !l.trim().is_empty())
        .and_then(by_language)
        .or_else(|| {
            let name = path?.rsplit('/').next()?;
            match name.rsplit_once('.') {
                Some((_, extension)) => set
                    .find_syntax_by_extension(extension)
                    .or_else(|| by_language(extension)),
                None => set.find_syntax_by_extension(name),
            }
        })
        .or_else(|| set.find_syntax_by_first_line(first_line))?;
    (found.name != set.find_syntax_plain_text().name).then_some(found)
}
