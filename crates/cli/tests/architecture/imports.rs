//! No import cycle through the files of the subcommands, the protocol, the core or the runtime,
//! and the scanner that finds a crate's imports (`use` declarations and paths in code, not
//! comments or strings) and the cycles among them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{rust_files, workspace_root};

/// The source trees none of whose files may be on an import cycle, each with its crate's `src`
/// (a cycle may pass through other files of the crate) and the folders of the tree whose files
/// may still import each other (a cycle among them alone is not reported).
const ACYCLIC_TREES: &[(&str, &str, &[&str])] = &[
    ("crates/cli/src", "crates/cli/src/commands/", &[]),
    ("crates/protocol/src", "crates/protocol/src/", &[]),
    ("crates/core/src", "crates/core/src/", &[]),
    // The launcher, the toolsets' list and delegation among them; the agent loop's files still
    // import their module's `mod.rs`, which imports them.
    (
        "crates/runtime/src",
        "crates/runtime/src/",
        &["crates/runtime/src/runner/"],
    ),
];

#[test]
fn no_import_cycle_runs_through_the_commands_the_protocol_the_core_or_the_runtime() {
    let root = workspace_root();
    let mut cycles = Vec::new();
    for (src, tree, excepted) in ACYCLIC_TREES {
        let graph = import_graph(&root.join(src));
        assert!(
            graph.values().map(BTreeSet::len).sum::<usize>() > 10,
            "found almost no imports in {src}: {graph:#?}"
        );
        let shown = |file: &PathBuf| file.strip_prefix(&root).unwrap().display().to_string();
        let excepted = |file: &PathBuf| excepted.iter().any(|dir| file.starts_with(root.join(dir)));
        for cycle in cycles_through(&graph, &root.join(tree)) {
            if cycle.iter().all(excepted) {
                continue;
            }
            let names: Vec<String> = cycle.iter().map(shown).collect();
            cycles.push(names.join(" → "));
        }
    }
    assert!(
        cycles.is_empty(),
        "files that import each other, directly or through others (move what both need into \
         one of them, or into a third file): {cycles:#?}"
    );
}

#[test]
fn the_import_scan_follows_uses_and_paths_but_not_comments_or_strings() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "//! Root.\nmod a;\nmod b;\nmod c;\nmod d;\n");
    write(
        "a.rs",
        "//! See [`x`](crate::d::X).\nuse crate::{b::{self, Thing as Other}, c::*};\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    write(
        "b/mod.rs",
        "//! B.\nmod inner;\nconst S: &str = \"crate::d::X\";\nconst C: char = '\"';\n\
         fn f<'a>(x: &'a str) -> &'a str { x }\n",
    );
    write(
        "b/inner.rs",
        "//! Inner.\npub fn g() { super::super::a::h(); }\n",
    );
    write("c.rs", "//! C.\n/* crate::d::X /* nested */ */\n");
    write("d.rs", "//! D.\n#[path = \"d_tests.rs\"]\nmod tests;\n");
    write("d_tests.rs", "//! D's tests.\nuse super::*;\n");
    let graph = import_graph(src);
    let edges = |file: &str| -> Vec<String> {
        graph[&src.join(file)]
            .iter()
            .map(|to| to.strip_prefix(src).unwrap().display().to_string())
            .collect()
    };
    assert_eq!(edges("a.rs"), ["b/mod.rs", "c.rs"]);
    assert!(edges("b/mod.rs").is_empty());
    assert_eq!(edges("b/inner.rs"), ["a.rs"]);
    assert!(edges("c.rs").is_empty());
    assert!(edges("d_tests.rs").contains(&"d.rs".to_owned()));
    assert!(cycles_through(&graph, src).is_empty());
    write("c.rs", "//! C.\nfn k() { crate::b::inner::g() }\n");
    let graph = import_graph(src);
    let cycles = cycles_through(&graph, &src.join("b"));
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let names: Vec<String> = cycles[0]
        .iter()
        .map(|file| file.strip_prefix(src).unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["b/inner.rs", "a.rs", "c.rs", "b/inner.rs"]);
}

/// Each source file of the crate whose sources are in `src` (its library: no `main.rs`, no
/// `bin/`), and the files it imports: the modules its `crate::`, `super::` and `self::` paths
/// name (in `use` declarations or in code; comments and strings do not count), resolved to the
/// file that holds the module (`a/b.rs` or `a/b/mod.rs`, or a `#[path]`) or, for an item, its
/// module's file. A module's own `mod` declarations are not imports.
pub(super) fn import_graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.retain(|file| file != &src.join("main.rs") && !file.starts_with(src.join("bin")));
    let mut modules: BTreeMap<PathBuf, Vec<String>> = files
        .iter()
        .map(|file| (file.clone(), module_path(src, file)))
        .collect();
    // `#[path = "x.rs"] mod name;` puts `x.rs` (beside the declaring file) at `…::name`.
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (target, name) in path_attributes(&text) {
            let target = file.parent().unwrap().join(target);
            let mut path = modules[file].clone();
            path.push(name);
            modules.insert(target, path);
        }
    }
    let by_path: BTreeMap<&Vec<String>, &PathBuf> =
        modules.iter().map(|(file, path)| (path, file)).collect();
    let file_of = |path: &[String]| -> PathBuf {
        (0..=path.len())
            .rev()
            .find_map(|len| by_path.get(&path[..len].to_vec()).copied())
            .unwrap_or_else(|| panic!("no file for the crate root in {}", src.display()))
            .clone()
    };
    let mut graph = BTreeMap::new();
    for file in &files {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        let mut imports = BTreeSet::new();
        for (inline, path) in crate_paths(&tokens(&code)) {
            let mut module = modules[file].clone();
            module.extend(inline);
            let mut words = path.iter().map(String::as_str).peekable();
            let mut target = match words.peek() {
                Some(&"crate") => {
                    words.next();
                    Vec::new()
                }
                _ => module,
            };
            for word in words {
                match word {
                    "super" => {
                        target.pop();
                    }
                    "self" => {}
                    name => target.push(name.to_owned()),
                }
            }
            let to = file_of(&target);
            if &to != file {
                imports.insert(to);
            }
        }
        graph.insert(file.clone(), imports);
    }
    graph
}

/// The module path of `file` below `src` from where it lies (`a/b.rs` and `a/b/mod.rs` are
/// `a::b`; `lib.rs` is the crate root).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path == ["lib"] || path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// The `#[path = "…"] mod name;` declarations of a file: the path and the module's name.
fn path_attributes(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for piece in text.split("#[path = \"").skip(1) {
        let Some((target, rest)) = piece.split_once('"') else {
            continue;
        };
        let rest = rest.trim_start_matches([']', ' ', '\n']);
        if let Some(name) = rest
            .strip_prefix("mod ")
            .and_then(|rest| rest.split([';', ' ', '{']).next())
        {
            found.push((target.to_owned(), name.to_owned()));
        }
    }
    found
}

/// `text` without its comments, string literals and character literals (lifetimes stay).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i..].starts_with(&['/', '*']) {
                    depth += 1;
                    i += 2;
                } else if chars[i..].starts_with(&['*', '/']) {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if (rest[0] == 'r' || rest.starts_with(&['b', 'r']))
            && (i == 0 || !ident(chars[i - 1]))
            && raw_string_start(rest).is_some()
        {
            let (open, hashes) = raw_string_start(rest).unwrap();
            i += open;
            while i < chars.len()
                && !(chars[i] == '"'
                    && chars[i + 1..].iter().take_while(|c| **c == '#').count() >= hashes)
            {
                i += 1;
            }
            i += 1 + hashes;
            out.push_str("\"\"");
        } else if rest[0] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if rest[0] == '\'' && rest.get(1) == Some(&'\\') {
            // An escaped character: `'\n'`, `'\''`, `'\u{1F600}'`.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if rest[0] == '\'' && rest.get(2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    out
}

/// For a raw string starting `r"`, `r#"`, `br##"`…: the length of its opening and its number of
/// `#`.
fn raw_string_start(chars: &[char]) -> Option<(usize, usize)> {
    let after_r = if chars.first() == Some(&'b') { 2 } else { 1 };
    let hashes = chars[after_r..].iter().take_while(|c| **c == '#').count();
    (chars.get(after_r + hashes) == Some(&'"')).then_some((after_r + hashes + 1, hashes))
}

/// A token of code: a word, `::`, or another character.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    PathSep,
    Punct(char),
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token::PathSep);
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            i += 1;
        }
    }
    out
}

/// The paths starting with `crate`, `super` or `self` in `tokens` (use trees expanded), each with
/// the inline modules (`mod tests { … }`) it is written in.
fn crate_paths(tokens: &[Token]) -> Vec<(Vec<String>, Vec<String>)> {
    let word = |at: usize| match tokens.get(at) {
        Some(Token::Word(word)) => Some(word.as_str()),
        _ => None,
    };
    let mut found = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod = None;
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => {
                depth += 1;
                if let Some(name) = pending_mod.take() {
                    inline.push((name, depth));
                }
            }
            Token::Punct('}') => {
                if inline.last().is_some_and(|(_, at)| *at == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            Token::Word(w) if w == "mod" => {
                if let (Some(name), Some(Token::Punct('{'))) = (word(i + 1), tokens.get(i + 2)) {
                    pending_mod = Some(name.to_owned());
                }
            }
            Token::Word(w)
                if matches!(w.as_str(), "crate" | "super" | "self")
                    && tokens.get(i + 1) == Some(&Token::PathSep)
                    && !matches!(
                        i.checked_sub(1).map(|at| &tokens[at]),
                        Some(Token::Punct('$') | Token::PathSep)
                    )
                    && i.checked_sub(1).and_then(word) != Some("in") =>
            {
                let modules: Vec<String> = inline.iter().map(|(name, _)| name.clone()).collect();
                let mut paths = Vec::new();
                i = use_tree(tokens, i, Vec::new(), &mut paths);
                found.extend(paths.into_iter().map(|path| (modules.clone(), path)));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Reads the path (or use tree) at `at` below `prefix` into `out`; returns where it ends.
fn use_tree(
    tokens: &[Token],
    mut at: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix;
    loop {
        match tokens.get(at) {
            Some(Token::Word(word)) => {
                path.push(word.clone());
                at += 1;
                if tokens.get(at) != Some(&Token::PathSep) {
                    out.push(path);
                    return at;
                }
                at += 1;
            }
            Some(Token::Punct('{')) => {
                at += 1;
                while at < tokens.len() && tokens[at] != Token::Punct('}') {
                    match &tokens[at] {
                        Token::Punct(',') => at += 1,
                        Token::Word(word) if word == "as" => at += 2,
                        _ => at = use_tree(tokens, at, path.clone(), out),
                    }
                }
                return at + 1;
            }
            // A glob, or a path cut short: the module so far.
            _ => {
                out.push(path);
                return at + 1;
            }
        }
    }
}

/// Import cycles through files of `tree` (a directory): each once, as the files from one of
/// them back to it, starting from the first in order.
pub(super) fn cycles_through(
    graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    tree: &Path,
) -> Vec<Vec<PathBuf>> {
    let mut cycles: Vec<Vec<PathBuf>> = Vec::new();
    let mut seen: BTreeSet<BTreeSet<PathBuf>> = BTreeSet::new();
    for start in graph.keys().filter(|file| file.starts_with(tree)) {
        // Breadth first from `start`'s imports back to `start`: a shortest cycle through it.
        let mut came_from: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closed = false;
        while let Some(file) = queue.pop_front() {
            for next in graph.get(file).into_iter().flatten() {
                if next == start {
                    came_from.insert(next, file);
                    closed = true;
                    break;
                }
                if !came_from.contains_key(next) {
                    came_from.insert(next, file);
                    queue.push_back(next);
                }
            }
            if closed {
                break;
            }
        }
        if !closed {
            continue;
        }
        let mut cycle = vec![start.clone()];
        let mut at = came_from[start];
        while at != start {
            cycle.push(at.clone());
            at = came_from[at];
        }
        cycle.push(start.clone());
        // Walked backwards: `start`, its importers, …, `start`.
        cycle.reverse();
        let members: BTreeSet<PathBuf> = cycle.iter().cloned().collect();
        if seen.insert(members) {
            cycles.push(cycle);
        }
    }
    cycles
}
