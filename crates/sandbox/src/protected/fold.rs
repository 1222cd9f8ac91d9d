//! The key under which protected names are compared: what a case-insensitive file system
//! would take for the same name (issue 45).
//!
//! Case-insensitive directories do not stop at ASCII: ext4 and f2fs `casefold` directories
//! compare names after canonical decomposition (NFD) and full Unicode case folding, FAT, exFAT
//! and NTFS after their own (simple) upper-case tables, HFS+ after folding and skipping a few
//! invisible code points. On such a directory `hoo\u{212A}s` (KELVIN SIGN), `.v\u{017F}code`
//! (LONG S) or `con\u{FB01}g` (the `fi` ligature) name `hooks`, `.vscode` and `config`.
//!
//! The key is Unicode's canonical caseless form — NFD, full case folding, NFD again (the
//! Unicode standard's canonical caseless match) — of the name without the code points HFS+
//! ignores. Full folding is coarser than simple folding (two names equal under simple folding
//! are equal under full folding too, and `ß`/`ss`, ligatures are equal only under full), so
//! a name any of those file systems would take for a protected one has the protected name's
//! key. Comparing keys may refuse a little more than one particular file system would; it
//! never refuses less.

use std::borrow::Cow;

use icu_casemap::CaseMapper;
use icu_normalizer::DecomposingNormalizerBorrowed;

/// The key of the file name (or pattern) `name`: equal for every spelling a case-insensitive
/// file system takes for the same name. Plain ASCII is only lower-cased; characters that are
/// no letters (`/`, `*`, `{`, `,`) are left as they are, so a glob keeps its meaning.
pub(crate) fn name_key(name: &str) -> String {
    if name.is_ascii() {
        return name.to_ascii_lowercase();
    }
    let visible: Cow<'_, str> = if name.chars().any(hfs_ignorable) {
        Cow::Owned(name.chars().filter(|c| !hfs_ignorable(*c)).collect())
    } else {
        Cow::Borrowed(name)
    };
    let nfd = DecomposingNormalizerBorrowed::new_nfd();
    let decomposed = nfd.normalize(&visible);
    let folded = CaseMapper::new().fold_string(&decomposed);
    nfd.normalize(&folded).into_owned()
}

/// The code points HFS+ leaves out when it compares names (zero-width joiners and
/// direction marks, the byte order mark), as git also skips them when it looks for `.git`.
fn hfs_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::name_key;

    #[test]
    fn spellings_of_one_name_share_a_key() {
        for (spelling, name) in [
            ("HOOKS", "hooks"),
            ("hoo\u{212a}s", "hooks"),
            (".v\u{017f}code", ".vscode"),
            (".V\u{017f}CODE", ".vscode"),
            ("con\u{fb01}g", "config"),
            ("\u{fb00}", "ff"),
            ("STRA\u{1e9e}E", "strasse"),
            ("stra\u{df}e", "strasse"),
            (".g\u{200c}it", ".git"),
            ("\u{feff}.envrc", ".envrc"),
            ("GOLEM-FORGE.CONFIG.YAML", "golem-forge.config.yaml"),
            // Precomposed and decomposed, any case.
            ("caf\u{e9}", "cafe\u{301}"),
            ("CAF\u{c9}", "cafe\u{301}"),
            // Greek final sigma folds like sigma.
            ("\u{3a3}\u{3c2}", "\u{3c3}\u{3c3}"),
        ] {
            assert_eq!(name_key(spelling), name_key(name), "{spelling:?}");
        }
    }

    #[test]
    fn other_names_keep_their_own_key() {
        for (one, other) in [
            ("caf\u{e9}", "cafe"),
            ("h\u{f6}oks", "hooks"),
            (".v\u{15b}code", ".vscode"),
            ("\u{433}it", "git"),
            ("con\u{131}g", "config"),
        ] {
            assert_ne!(name_key(one), name_key(other), "{one:?}");
        }
        // Glob syntax is left alone.
        assert_eq!(
            name_key("/**/S\u{e9}crets/{A,B}*"),
            "/**/se\u{301}crets/{a,b}*"
        );
    }
}
