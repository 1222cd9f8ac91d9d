//! Property tests: random mixes of `..`, `.`, empty components, names and symbolic links
//! (inside, outside, dangling, loops) never lead an operation outside its zone. Every operation
//! either fails or touches only entries under the zone root (checked with the host's
//! `canonicalize`), never returns a byte of the outside sentinel, and leaves the outside
//! directory exactly as it was.

use std::path::{Path, PathBuf};

use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode, ZonePath};
use proptest::prelude::*;
use tempfile::TempDir;

use crate::common::{SECRET, assert_no_secret, snapshot, symlink};

const TOKENS: &[&str] = &[
    "..",
    ".",
    "",
    "a",
    "b",
    "f.txt",
    "g.txt",
    "in_link",
    "up_link",
    "out_abs",
    "out_rel",
    "deep_up",
    "self",
    "dangling",
    "loop",
    "secret.txt",
    "sub",
    "new.txt",
    "%2e%2e",
    "‥",
];

#[derive(Debug, Clone)]
enum Action {
    Read(String),
    List(String),
    Stat(String),
    Walk(String),
    Write(String, bool),
    WriteNew(String),
    Mkdir(String),
    Remove(String),
    RemoveAll(String),
    Move(String, String, bool),
}

fn path_strategy() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["/zone", "/ro", "/", "/zone/a", "/ro/a"]),
        prop::collection::vec(prop::sample::select(TOKENS), 0..7),
    )
        .prop_map(|(start, parts)| format!("{start}/{}", parts.join("/")))
}

fn action_strategy() -> impl Strategy<Value = Action> {
    prop_oneof![
        path_strategy().prop_map(Action::Read),
        path_strategy().prop_map(Action::List),
        path_strategy().prop_map(Action::Stat),
        path_strategy().prop_map(Action::Walk),
        (path_strategy(), any::<bool>()).prop_map(|(p, c)| Action::Write(p, c)),
        path_strategy().prop_map(Action::WriteNew),
        path_strategy().prop_map(Action::Mkdir),
        path_strategy().prop_map(Action::Remove),
        path_strategy().prop_map(Action::RemoveAll),
        (path_strategy(), path_strategy(), any::<bool>())
            .prop_map(|(a, b, o)| Action::Move(a, b, o)),
    ]
}

struct Fixture {
    tmp: TempDir,
    sandbox: Sandbox,
    roots: Vec<PathBuf>,
}

/// Fills a zone directory with files, directories and every kind of link.
fn populate(dir: &Path, outside: &Path) {
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    std::fs::write(dir.join("f.txt"), b"inside:f").unwrap();
    std::fs::write(dir.join("a/g.txt"), b"inside:g").unwrap();
    symlink("a", dir.join("in_link"));
    symlink("..", dir.join("up_link"));
    symlink(outside, dir.join("out_abs"));
    symlink("../../outside", dir.join("out_rel"));
    symlink("../../..", dir.join("a/b/deep_up"));
    symlink(".", dir.join("a/self"));
    symlink("../../outside/new.txt", dir.join("dangling"));
    symlink("loop", dir.join("a/loop"));
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::write(outside.join("sub/secret.txt"), SECRET).unwrap();
    let work = tmp.path().join("work");
    for zone in ["zone", "ro"] {
        populate(&work.join(zone), &outside);
    }
    let sandbox = Sandbox::open(
        &work,
        &[
            ZoneConfig::new("zone", ZoneMode::Rw),
            ZoneConfig::new("ro", ZoneMode::Ro),
        ],
    )
    .unwrap();
    let roots = ["zone", "ro"]
        .iter()
        .map(|zone| std::fs::canonicalize(work.join(zone)).unwrap())
        .collect();
    Fixture {
        tmp,
        sandbox,
        roots,
    }
}

impl Fixture {
    /// The host path of `p` with its parent canonicalized (the last component is not followed),
    /// asserted to be under its zone root.
    fn assert_inside(&self, p: &ZonePath, follow_last: bool) {
        let Some(zone) = p.zone_name() else { return };
        if p.is_zone_root() {
            return;
        }
        let root = &self.roots[if zone == "zone" { 0 } else { 1 }];
        let host = root.join(p.relative());
        let checked = if follow_last {
            std::fs::canonicalize(&host).ok()
        } else {
            host.parent()
                .and_then(|parent| std::fs::canonicalize(parent).ok())
        };
        if let Some(checked) = checked {
            assert!(
                checked.starts_with(root),
                "{p} resolved to {} outside {}",
                checked.display(),
                root.display()
            );
        }
    }
}

fn allowed_failure(err: &ToolError) {
    assert!(
        matches!(
            err.code,
            ToolErrorCode::InvalidPath
                | ToolErrorCode::FileNotFound
                | ToolErrorCode::PermissionDenied
                | ToolErrorCode::ExecutionError
        ),
        "{err}"
    );
    assert!(
        !err.message.contains("/tmp/") && !err.message.contains("outside/"),
        "{err}"
    );
}

fn run(fx: &Fixture, action: &Action) {
    let s = &fx.sandbox;
    let resolve = |path: &str| s.resolve(path);
    match action {
        Action::Read(path) => match resolve(path).and_then(|p| s.read(&p).map(|b| (p, b))) {
            Ok((p, bytes)) => {
                assert_no_secret(&bytes);
                fx.assert_inside(&p, true);
            }
            Err(err) => allowed_failure(&err),
        },
        Action::List(path) => match resolve(path).and_then(|p| s.read_dir(&p).map(|e| (p, e))) {
            Ok((p, _)) => fx.assert_inside(&p, true),
            Err(err) => allowed_failure(&err),
        },
        Action::Stat(path) => match resolve(path).and_then(|p| s.metadata(&p).map(|_| p)) {
            Ok(p) => fx.assert_inside(&p, false),
            Err(err) => allowed_failure(&err),
        },
        Action::Walk(path) => {
            match resolve(path).and_then(|p| s.walk(&p, true, 500).map(|e| (p, e))) {
                Ok((p, _)) => fx.assert_inside(&p, true),
                Err(err) => allowed_failure(&err),
            }
        }
        Action::Write(path, create_dirs) => {
            match resolve(path).and_then(|p| s.write_atomic(&p, b"W", *create_dirs).map(|()| p)) {
                Ok(p) => {
                    assert_eq!(p.zone_name(), Some("zone"));
                    fx.assert_inside(&p, true);
                }
                Err(err) => allowed_failure(&err),
            }
        }
        Action::WriteNew(path) => {
            match resolve(path).and_then(|p| s.write_new(&p, b"N", true).map(|()| p)) {
                Ok(p) => {
                    assert_eq!(p.zone_name(), Some("zone"));
                    fx.assert_inside(&p, true);
                }
                Err(err) => allowed_failure(&err),
            }
        }
        Action::Mkdir(path) => match resolve(path).and_then(|p| s.create_dir_all(&p).map(|()| p)) {
            Ok(p) => fx.assert_inside(&p, true),
            Err(err) => allowed_failure(&err),
        },
        Action::Remove(path) => {
            if let Err(err) = resolve(path).and_then(|p| s.remove_file(&p)) {
                allowed_failure(&err);
            }
        }
        Action::RemoveAll(path) => {
            if let Err(err) = resolve(path).and_then(|p| s.remove_dir_all(&p)) {
                allowed_failure(&err);
            }
        }
        Action::Move(from, to, overwrite) => {
            let result = resolve(from)
                .and_then(|f| resolve(to).map(|t| (f, t)))
                .and_then(|(f, t)| s.rename(&f, &t, *overwrite).map(|()| t));
            match result {
                Ok(t) => fx.assert_inside(&t, false),
                Err(err) => allowed_failure(&err),
            }
        }
    }
}

// 256 cases by default; `PROPTEST_CASES=5000` for a longer run.
proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_generated_path_leaves_its_zone(actions in prop::collection::vec(action_strategy(), 1..8)) {
        let fx = fixture();
        let outside = fx.tmp.path().join("outside");
        let before = snapshot(&outside);
        let ro_before = snapshot(&fx.roots[1]);
        for action in &actions {
            run(&fx, action);
            prop_assert_eq!(&snapshot(&outside), &before, "outside changed after {:?}", action);
        }
        prop_assert_eq!(&snapshot(&fx.roots[1]), &ro_before, "the ro zone changed");
    }

    #[test]
    fn resolved_paths_never_contain_dot_dot(path in path_strategy()) {
        let fx = fixture();
        if let Ok(p) = fx.sandbox.resolve(&path) {
            prop_assert!(p.relative().components().all(|c| matches!(c, std::path::Component::Normal(_))));
            let again = fx.sandbox.resolve(&p.virtual_path());
            prop_assert_eq!(again.ok(), Some(p));
        }
    }
}
