//! The `git.status` view (a custom kind, docs/tools.md, from `git_status` and `git_stage`): a tree
//! under the branch line — the branch (bold), its upstream and how far ahead (green) and behind
//! (yellow) it is — with a branch per non-empty group: staged changes green, changes not staged
//! red, conflicts bold red, untracked files yellow, each path with what happened to it.
//!
//! Read leniently, so other producers of the kind render too: each group may list objects (`{path,
//! change, from?}`, as the git toolset writes) or plain path strings (the lenient form of
//! docs/tools.md, Result kinds). Data with none of the status fields is not status data (`None`:
//! the caller says so and shows it as JSON).

use crossterm::style::ContentStyle;
use serde_json::Value;

use super::Ctx;
use super::canvas::{Line, palette};
use super::layout::{fold_lines, truncate};

/// The keys a status has; data with none of them is not one.
const KEYS: [&str; 6] = [
    "branch",
    "staged",
    "modified",
    "untracked",
    "conflicts",
    "upstream",
];

/// The widest change label kept in the label column; longer ones are followed by one space.
const MAX_LABEL: usize = 14;

/// One path of a group.
struct Entry<'a> {
    path: &'a str,
    change: Option<&'a str>,
    from: Option<&'a str>,
}

/// A `git.status` result, or `None` when `data` is not one.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let map = data.as_object()?;
    if !KEYS.iter().any(|key| map.contains_key(*key)) {
        return None;
    }
    let mut lines = vec![branch_line(data)];
    let groups = [
        ("staged", palette::added()),
        ("modified", palette::removed()),
        ("conflicts", palette::error()),
        ("untracked", palette::warning()),
    ];
    let groups: Vec<(&str, ContentStyle, Vec<Entry>)> = groups
        .into_iter()
        .map(|(key, style)| (key, style, entries(data.get(key))))
        .filter(|(_, _, entries)| !entries.is_empty())
        .collect();
    if groups.is_empty() {
        lines.push(Line::styled(palette::added(), "✓ working tree clean"));
    }
    let last_group = groups.len().saturating_sub(1);
    for (index, (key, style, entries)) in groups.iter().enumerate() {
        let last = index == last_group;
        let mut title = Line::styled(palette::dim(), if last { "└─ " } else { "├─ " });
        title
            .push(palette::bold(), key)
            .push(palette::dim(), &format!(" ({})", entries.len()));
        lines.push(title);
        let stem = if last { "   " } else { "│  " };
        let width = entries
            .iter()
            .filter_map(|e| e.change)
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
            .min(MAX_LABEL);
        for (i, entry) in entries.iter().enumerate() {
            let twig = if i + 1 == entries.len() {
                "└─ "
            } else {
                "├─ "
            };
            let mut line = Line::styled(palette::dim(), &format!("{stem}{twig}"));
            if let Some(change) = entry.change {
                let pad = width.saturating_sub(change.chars().count()) + 1;
                line.push(*style, change)
                    .push(palette::plain(), &" ".repeat(pad));
            }
            line.push(*style, entry.path);
            if let Some(from) = entry.from {
                line.push(palette::dim(), " ← ")
                    .push(palette::plain(), from);
            }
            lines.push(line);
        }
    }
    let lines = lines
        .into_iter()
        .map(|line| truncate(&line, ctx.width))
        .collect();
    Some(fold_lines(lines, ctx.max_height))
}

/// `⎇ main → origin/main ↑2 ↓1`, `⎇ HEAD detached at abc1234`, `⎇ main (no commits yet)`.
fn branch_line(data: &Value) -> Line {
    let text = |key: &str| data.get(key).and_then(Value::as_str);
    let count = |key: &str| data.get(key).and_then(Value::as_u64).unwrap_or(0);
    let mut line = Line::styled(palette::dim(), "⎇ ");
    match (text("branch"), text("commit")) {
        (Some(branch), _) => {
            line.push(palette::bold(), branch);
        }
        (None, Some(commit)) => {
            line.push(palette::warning(), "HEAD detached at ")
                .push(palette::bold(), commit);
        }
        (None, None) => {
            line.push(palette::warning(), "HEAD detached");
        }
    }
    if text("branch").is_some() && data.get("commit").is_some_and(Value::is_null) {
        line.push(palette::dim(), " (no commits yet)");
    }
    if let Some(upstream) = text("upstream") {
        line.push(palette::dim(), " → ")
            .push(palette::plain(), upstream);
    }
    let (ahead, behind) = (count("ahead"), count("behind"));
    if ahead > 0 {
        line.push(palette::added(), &format!(" ↑{ahead}"));
    }
    if behind > 0 {
        line.push(palette::warning(), &format!(" ↓{behind}"));
    }
    line
}

/// The paths of a group: objects with a `path` (and maybe `change` and `from`), or strings.
fn entries(group: Option<&Value>) -> Vec<Entry<'_>> {
    let Some(items) = group.and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item {
            Value::String(path) => Some(Entry {
                path,
                change: None,
                from: None,
            }),
            Value::Object(map) => Some(Entry {
                path: map.get("path")?.as_str()?,
                change: map.get("change").and_then(Value::as_str),
                from: map.get("from").and_then(Value::as_str),
            }),
            _ => None,
        })
        .collect()
}
