//! Worker names: the rule `[a-z][a-z0-9_]*` and what to tell someone whose name breaks it. It
//! depends on nothing else of the worker file, so that the workers toolset, which lists names,
//! can check them without reaching the definition that lists the toolsets.

/// Whether `name` is a valid worker name: `[a-z][a-z0-9_]*`.
pub fn is_valid_worker_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if first.is_ascii_lowercase() => {}
        Some(_) | None => return false,
    }
    chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// What is wrong with an invalid worker name, to follow "must match" in a message: the
/// pattern, the name found and a corrected spelling when one is obvious.
pub(crate) fn name_problem(name: &str) -> String {
    let mut message = format!(
        "`[a-z][a-z0-9_]*` (lowercase letters, digits and `_`, starting with a letter), \
         found \"{}\"",
        name.escape_debug()
    );
    if let Some(fixed) = corrected_name(name) {
        message.push_str(&format!(" (try `{fixed}`)"));
    }
    message
}

/// `My-Worker` → `my_worker`, when that makes a valid name.
pub(crate) fn corrected_name(name: &str) -> Option<String> {
    let fixed: String = name
        .trim()
        .chars()
        .map(|c| match c {
            '-' | ' ' | '.' => '_',
            other => other.to_ascii_lowercase(),
        })
        .collect();
    (fixed != name && is_valid_worker_name(&fixed)).then_some(fixed)
}
