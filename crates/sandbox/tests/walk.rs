//! The walk against a plain reference (std, sequential, sorted depth-first) on trees big enough
//! to be spread over threads, at every interesting limit: the output must be identical.

use std::path::Path;

use golem_sandbox::{EntryKind, Sandbox, ZoneConfig, ZoneMode};

use crate::common::symlink;

/// Sorted depth-first listing with std: (relative path, kind).
fn reference(dir: &Path, prefix: &str, hidden: bool, out: &mut Vec<(String, EntryKind)>) {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| hidden || !name.starts_with('.'))
        .collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let kind = if meta.is_symlink() {
            EntryKind::Symlink
        } else if meta.is_dir() {
            EntryKind::Directory
        } else {
            EntryKind::File
        };
        let rel = format!("{prefix}{name}");
        out.push((rel.clone(), kind));
        if kind == EntryKind::Directory {
            reference(&path, &format!("{rel}/"), hidden, out);
        }
    }
}

/// A tree of nested directories of uneven sizes, with hidden entries and links.
fn build(root: &Path) {
    for a in 0..7 {
        for b in 0..(a % 4 + 1) {
            let dir = root.join(format!("dir{a}/sub{b}"));
            std::fs::create_dir_all(dir.join("deep/er")).unwrap();
            for f in 0..(a * 3 + b) {
                std::fs::write(dir.join(format!("f{f:02}.txt")), b"x").unwrap();
            }
            std::fs::write(dir.join("deep/er/leaf"), b"x").unwrap();
            std::fs::write(dir.join(".hidden"), b"x").unwrap();
        }
        std::fs::create_dir_all(root.join(format!(".hid{a}/x"))).unwrap();
        symlink("..", root.join(format!("dir{a}/up")));
    }
    std::fs::write(root.join("top.txt"), b"x").unwrap();
    std::fs::write(root.join("ünïcode.txt"), b"x").unwrap();
}

#[test]
fn parallel_walk_matches_the_sequential_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(tmp.path(), &[ZoneConfig::new("z", ZoneMode::Rw)]).unwrap();
    let root = tmp.path().join("z");
    build(&root);
    let start = sandbox.resolve("/z").unwrap();
    for hidden in [false, true] {
        let mut expected = Vec::new();
        reference(&root, "", hidden, &mut expected);
        let total = expected.len();
        assert!(total > 100, "{total}");
        for limit in [
            0,
            1,
            2,
            7,
            50,
            total / 2,
            total - 1,
            total,
            total + 1,
            usize::MAX,
        ] {
            let (entries, truncated) = sandbox.walk(&start, hidden, limit).unwrap();
            let got: Vec<_> = entries.into_iter().map(|(p, i)| (p, i.kind)).collect();
            let want: Vec<_> = expected.iter().take(limit).cloned().collect();
            assert_eq!(got, want, "hidden={hidden} limit={limit}");
            assert_eq!(truncated, limit < total, "hidden={hidden} limit={limit}");
        }
    }
}

#[test]
fn walking_the_root_prefixes_zone_names() {
    let tmp = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("b", ZoneMode::Rw),
            ZoneConfig::new("a", ZoneMode::Rw),
        ],
    )
    .unwrap();
    build(&tmp.path().join("b"));
    std::fs::write(tmp.path().join("a/one.txt"), b"1").unwrap();
    let mut expected = vec![("b".to_owned(), EntryKind::Directory)];
    reference(&tmp.path().join("b"), "b/", false, &mut expected);
    expected.push(("a".to_owned(), EntryKind::Directory));
    expected.push(("a/one.txt".to_owned(), EntryKind::File));
    let root = sandbox.resolve("/").unwrap();
    for limit in [
        0,
        1,
        5,
        expected.len() - 2,
        expected.len() - 1,
        expected.len(),
    ] {
        let (entries, truncated) = sandbox.walk(&root, false, limit).unwrap();
        let got: Vec<_> = entries.into_iter().map(|(p, i)| (p, i.kind)).collect();
        assert_eq!(got, expected[..limit], "limit={limit}");
        assert_eq!(truncated, limit < expected.len(), "limit={limit}");
    }
}
