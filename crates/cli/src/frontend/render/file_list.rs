//! The `file_list` view: a header with the listed path and the count, then a tree when the
//! listing is recursive (entry names with `/`), a table of name, size and modification time
//! otherwise. Sizes are human-readable; output is folded past the height limit.

use std::collections::HashMap;

use golem_protocol::result::{FileEntry, FileEntryType, FileListData};
use serde::Deserialize;
use serde_json::Value;

use super::Ctx;
use super::canvas::{Line, palette};
use super::layout::{Align, fold_lines, fold_marker, fold_slice, human_size, truncate};
use super::table::grid;

/// A `file_list` result, or `None` when `data` is not a listing.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let list = FileListData::deserialize(data).ok()?;
    let n = list.entries.len();
    let mut header = Line::styled(palette::bold(), &list.path);
    let noun = if n == 1 { "entry" } else { "entries" };
    header.push(palette::dim(), &format!(" · {n} {noun}"));
    let mut out = vec![truncate(&header, ctx.width)];
    if list.entries.is_empty() {
        out.push(Line::styled(palette::dim(), "(empty)"));
    } else if list.entries.iter().any(|e| e.name.contains('/')) {
        out.extend(fold_lines(tree(&list.entries, ctx.width), ctx.max_height));
    } else {
        out.extend(table(&list.entries, ctx));
    }
    if list.truncated == Some(true) {
        out.push(Line::styled(palette::dim(), "… listing truncated"));
    }
    Some(out)
}

/// An entry's name drawn by its type: directories bold blue with `/`, links cyan with `@`,
/// FIFOs with `|` and sockets with `=` (as `ls -F` marks them).
fn name_cell(name: &str, entry_type: Option<FileEntryType>) -> Line {
    match entry_type {
        Some(FileEntryType::Directory) | None => {
            Line::styled(palette::directory(), &format!("{name}/"))
        }
        Some(FileEntryType::Symlink) => Line::styled(palette::symlink(), &format!("{name}@")),
        Some(FileEntryType::Fifo) => Line::plain(&format!("{name}|")),
        Some(FileEntryType::Socket) => Line::plain(&format!("{name}=")),
        Some(FileEntryType::File | FileEntryType::Device) => Line::plain(name),
    }
}

fn table(entries: &[FileEntry], ctx: &Ctx) -> Vec<Line> {
    let (head, hidden, tail) = fold_slice(entries, ctx.max_height);
    // Size and time columns only when some entry has one.
    let sizes = entries.iter().any(|e| e.size.is_some());
    let times = entries.iter().any(|e| e.modified.is_some());
    let rows: Vec<Vec<Line>> = head
        .iter()
        .chain(tail)
        .map(|e| {
            let mut row = vec![name_cell(&e.name, Some(e.entry_type))];
            if sizes {
                let size = match (e.entry_type, e.size) {
                    (FileEntryType::File, Some(size)) => human_size(size),
                    _ => String::new(),
                };
                row.push(Line::styled(palette::number(), &size));
            }
            if times {
                let time = short_time(e.modified.as_deref());
                row.push(Line::styled(palette::dim(), &time));
            }
            row
        })
        .collect();
    let mut header = vec![("name".to_owned(), Align::Left)];
    if sizes {
        header.push(("size".to_owned(), Align::Right));
    }
    if times {
        header.push(("modified".to_owned(), Align::Left));
    }
    let mut lines = grid(&header, rows, ctx.width);
    if hidden > 0 {
        lines.insert(2 + head.len(), fold_marker(hidden, "entry"));
    }
    lines
}

/// `2024-05-01T12:30:00Z` as `2024-05-01 12:30`; other text unchanged.
fn short_time(time: Option<&str>) -> String {
    let Some(time) = time else {
        return String::new();
    };
    let bytes = time.as_bytes();
    if bytes.len() >= 16 && bytes.get(10) == Some(&b'T') && time.is_char_boundary(16) {
        format!("{} {}", &time[..10], &time[11..16])
    } else {
        time.to_owned()
    }
}

/// Levels drawn as a tree; deeper paths are shown whole on the last level.
const MAX_DEPTH: usize = 16;

/// A directory in the tree: entries keep the order of the listing.
#[derive(Default)]
struct Node<'a> {
    entry: Option<&'a FileEntry>,
    children: Vec<(&'a str, Node<'a>)>,
    index: HashMap<&'a str, usize>,
}

impl<'a> Node<'a> {
    fn insert(&mut self, entry: &'a FileEntry) {
        let mut node = self;
        let parts = entry.name.splitn(MAX_DEPTH, '/');
        for part in parts
            .map(|p| p.trim_end_matches('/'))
            .filter(|p| !p.is_empty())
        {
            let i = match node.index.get(part) {
                Some(i) => *i,
                None => {
                    node.children.push((part, Node::default()));
                    node.index.insert(part, node.children.len() - 1);
                    node.children.len() - 1
                }
            };
            node = &mut node.children[i].1;
        }
        node.entry = Some(entry);
    }
}

/// The listing as a tree with `├──`/`└──` connectors, each row cut to `width`. Walks with an
/// explicit stack and stops nesting at [`MAX_DEPTH`], so deep paths cost neither stack nor
/// quadratic indentation.
fn tree(entries: &[FileEntry], width: usize) -> Vec<Line> {
    let mut root = Node::default();
    for entry in entries {
        root.insert(entry);
    }
    let mut out = Vec::with_capacity(entries.len());
    // (node name, node, prefix of its children, connector for itself)
    let mut stack: Vec<(&str, &Node, String, &str)> = Vec::new();
    for (i, (name, child)) in root.children.iter().enumerate().rev() {
        let last = i + 1 == root.children.len();
        stack.push((
            name,
            child,
            String::new(),
            if last { "└── " } else { "├── " },
        ));
    }
    while let Some((name, node, prefix, connector)) = stack.pop() {
        let mut line = Line::styled(palette::dim(), &format!("{prefix}{connector}"));
        let entry_type = match node.entry {
            Some(entry) => Some(entry.entry_type),
            None if node.children.is_empty() => Some(FileEntryType::File),
            None => None,
        };
        line.append(name_cell(name, entry_type));
        if let Some(FileEntry {
            entry_type: FileEntryType::File,
            size: Some(size),
            ..
        }) = node.entry
        {
            line.push(palette::dim(), &format!("  {}", human_size(*size)));
        }
        out.push(truncate(&line, width));
        let child_prefix = format!(
            "{prefix}{}",
            if connector == "└── " {
                "    "
            } else {
                "│   "
            }
        );
        let n = node.children.len();
        for (i, (child_name, child)) in node.children.iter().enumerate().rev() {
            let connector = if i + 1 == n {
                "└── "
            } else {
                "├── "
            };
            stack.push((child_name, child, child_prefix.clone(), connector));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, entry_type: FileEntryType, size: Option<u64>) -> FileEntry {
        FileEntry {
            name: name.to_owned(),
            entry_type,
            size,
            modified: None,
        }
    }

    #[test]
    fn tree_implies_missing_directories_and_keeps_order() {
        let entries = [
            entry("src/", FileEntryType::Directory, None),
            entry("src/b.rs", FileEntryType::File, Some(10)),
            entry("src/a/x.rs", FileEntryType::File, Some(2048)),
            entry("README", FileEntryType::File, Some(1)),
        ];
        let rows: Vec<String> = tree(&entries, 80).iter().map(Line::text).collect();
        assert_eq!(
            rows,
            vec![
                "├── src/",
                "│   ├── b.rs  10 B",
                "│   └── a/",
                "│       └── x.rs  2.0 KiB",
                "└── README  1 B",
            ]
        );
    }

    #[test]
    fn very_deep_paths_do_not_overflow() {
        let name = vec!["d"; 20_000].join("/");
        let entries = [entry(&name, FileEntryType::File, None)];
        let rows = tree(&entries, 40);
        assert_eq!(rows.len(), MAX_DEPTH);
        assert!(rows.iter().all(|r| r.width() <= 40));
    }

    #[test]
    fn times_are_shortened() {
        assert_eq!(short_time(Some("2024-05-01T12:30:59Z")), "2024-05-01 12:30");
        assert_eq!(short_time(Some("yesterday")), "yesterday");
        assert_eq!(short_time(None), "");
    }
}
