//! Recording through a sandbox and undoing: the zone comes back byte for byte (files, modes,
//! links, directories), turns are undone newest first, outside edits are conflicts, the cap
//! makes a turn not undoable, and a cut-off undo is finished by the next.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::*;
use crate::{Sandbox, ZoneConfig, ZoneMode};

/// Every entry under `root`: relative path → what it is (content and mode, link target, dir).
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let what = if meta.is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                format!("dir {mode:o}")
            } else {
                format!(
                    "file {mode:o} {}",
                    String::from_utf8_lossy(&std::fs::read(&path).unwrap())
                )
            };
            out.insert(rel, what);
        }
    }
    out
}

struct Fixture {
    _tmp: tempfile::TempDir,
    zone: std::path::PathBuf,
    journal: Arc<UndoJournal>,
    sandbox: Sandbox,
    notices: Arc<Mutex<Vec<String>>>,
}

fn fixture(cap: u64) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let zone = tmp.path().join("work");
    std::fs::create_dir_all(zone.join("docs")).unwrap();
    std::fs::write(zone.join("a.txt"), "old a").unwrap();
    std::fs::write(zone.join("docs/b.txt"), "old b").unwrap();
    std::fs::set_permissions(
        zone.join("docs/b.txt"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    std::os::unix::fs::symlink("a.txt", zone.join("link")).unwrap();
    let journal = Arc::new(UndoJournal::open(&tmp.path().join("undo/s1"), cap).unwrap());
    let notices = Arc::new(Mutex::new(Vec::new()));
    let sink = notices.clone();
    journal.set_notices(Arc::new(move |n| sink.lock().unwrap().push(n)));
    let sandbox = Sandbox::open(tmp.path(), &[ZoneConfig::new("work", ZoneMode::Rw)])
        .unwrap()
        .with_undo(journal.clone());
    Fixture {
        _tmp: tmp,
        zone,
        journal,
        sandbox,
        notices,
    }
}

impl Fixture {
    fn path(&self, vpath: &str) -> crate::ZonePath {
        self.sandbox.resolve(vpath).unwrap()
    }

    /// A turn touching every kind of operation.
    fn busy_turn(&self, turn: u32) {
        self.journal.begin_turn(turn);
        let s = &self.sandbox;
        s.write_atomic(&self.path("/work/a.txt"), b"new a", false)
            .unwrap();
        s.write_atomic(&self.path("/work/new/deep/c.txt"), b"c", true)
            .unwrap();
        s.remove_file(&self.path("/work/link")).unwrap();
        s.rename(&self.path("/work/docs"), &self.path("/work/moved"), false)
            .unwrap();
        s.write_atomic(&self.path("/work/moved/b.txt"), b"newer b", false)
            .unwrap();
        s.remove_dir_all(&self.path("/work/new")).unwrap();
        s.write_atomic(&self.path("/work/new2.txt"), b"n", false)
            .unwrap();
    }
}

#[test]
fn a_turn_of_every_operation_is_undone_byte_for_byte() {
    let f = fixture(DEFAULT_UNDO_CAP);
    let before = snapshot(&f.zone);
    f.busy_turn(1);
    assert_ne!(snapshot(&f.zone), before);
    let report = f.journal.undo(UndoScope::Last(1), false).unwrap();
    assert_eq!(report.turns, vec![1]);
    assert!(
        report.forced.is_empty() && report.kept.is_empty(),
        "{report:?}"
    );
    assert_eq!(snapshot(&f.zone), before);
    // Nothing left to undo.
    assert!(matches!(
        f.journal.undo(UndoScope::Last(1), false),
        Err(UndoError::Nothing(_))
    ));
}

#[test]
fn turns_are_undone_newest_first_and_from_a_turn_on() {
    let f = fixture(DEFAULT_UNDO_CAP);
    let start = snapshot(&f.zone);
    f.journal.begin_turn(1);
    f.sandbox
        .write_atomic(&f.path("/work/a.txt"), b"one", false)
        .unwrap();
    let after_one = snapshot(&f.zone);
    f.journal.begin_turn(2);
    f.sandbox
        .write_atomic(&f.path("/work/a.txt"), b"two", false)
        .unwrap();
    // A turn that changed nothing is not a turn to undo.
    f.journal.begin_turn(3);
    f.journal.begin_turn(4);
    f.sandbox
        .write_atomic(&f.path("/work/z.txt"), b"four", false)
        .unwrap();
    assert_eq!(
        f.journal.undo(UndoScope::Last(1), false).unwrap().turns,
        [4]
    );
    assert_eq!(
        f.journal.undo(UndoScope::Last(1), false).unwrap().turns,
        [2]
    );
    assert_eq!(snapshot(&f.zone), after_one);
    assert_eq!(
        f.journal.undo(UndoScope::From(1), false).unwrap().turns,
        [1]
    );
    assert_eq!(snapshot(&f.zone), start);
}

#[test]
fn an_outside_edit_is_a_conflict_and_nothing_changes_unless_forced() {
    let f = fixture(DEFAULT_UNDO_CAP);
    f.journal.begin_turn(1);
    f.sandbox
        .write_atomic(&f.path("/work/a.txt"), b"session", false)
        .unwrap();
    f.sandbox
        .write_atomic(&f.path("/work/fresh.txt"), b"made", false)
        .unwrap();
    std::fs::write(f.zone.join("a.txt"), "edited outside").unwrap();
    let held = snapshot(&f.zone);
    let err = f.journal.undo(UndoScope::Last(1), false).unwrap_err();
    match &err {
        UndoError::Conflicts { conflicts, turns } => {
            assert_eq!(turns, &[1]);
            assert_eq!(conflicts.len(), 1);
            assert_eq!(conflicts[0].path, "/work/a.txt");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(err.to_string().contains("/work/a.txt"), "{err}");
    assert_eq!(snapshot(&f.zone), held, "a refused undo changes nothing");
    let report = f.journal.undo(UndoScope::Last(1), true).unwrap();
    assert_eq!(report.forced.len(), 1);
    assert_eq!(
        std::fs::read_to_string(f.zone.join("a.txt")).unwrap(),
        "old a"
    );
    assert!(!f.zone.join("fresh.txt").exists());
}

#[test]
fn a_turn_past_the_cap_is_not_undoable_and_says_so() {
    let f = fixture(6);
    f.journal.begin_turn(1);
    f.sandbox
        .write_atomic(&f.path("/work/a.txt"), b"a", false)
        .unwrap();
    f.sandbox
        .write_atomic(&f.path("/work/docs/b.txt"), b"b", false)
        .unwrap();
    let notices = f.notices.lock().unwrap().clone();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("83% full (5 bytes of 6 bytes)")),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("this turn cannot be undone")),
        "{notices:?}"
    );
    let err = f.journal.undo(UndoScope::Last(1), false).unwrap_err();
    assert!(
        matches!(err, UndoError::NotUndoable { turn: 1, .. }),
        "{err:?}"
    );
    // The next turn starts afresh (small files still fit).
    f.journal.begin_turn(2);
    f.sandbox
        .write_atomic(&f.path("/work/new.txt"), b"x", false)
        .unwrap();
    assert_eq!(
        f.journal.undo(UndoScope::Last(1), false).unwrap().turns,
        [2]
    );
}

#[test]
fn a_cut_off_undo_is_reported_and_finished_by_the_next() {
    let f = fixture(DEFAULT_UNDO_CAP);
    let start = snapshot(&f.zone);
    f.busy_turn(1);
    // As if a kill struck after the undo began and one file was put back.
    f.journal
        .append(&log::Line::UndoBegun { turns: vec![1] })
        .unwrap();
    std::fs::write(f.zone.join("a.txt"), "old a").unwrap();
    let reopened = UndoJournal::open(&f.journal.dir(), DEFAULT_UNDO_CAP).unwrap();
    let said = reopened.interrupted().expect("a report");
    assert!(said.contains("undo of turn 1 was cut off"), "{said}");
    reopened.undo(UndoScope::Last(1), false).unwrap();
    assert_eq!(snapshot(&f.zone), start);
    assert_eq!(reopened.interrupted(), None);
}

#[test]
fn a_change_cut_off_is_reported_on_reopening() {
    let f = fixture(DEFAULT_UNDO_CAP);
    f.journal.begin_turn(1);
    // The before-image is kept, the process dies before the after-image.
    let dir = f.sandbox.zones()[0].dir();
    f.journal.before("work", &f.zone, dir, Path::new("a.txt"));
    std::fs::write(f.zone.join("a.txt"), "half way").unwrap();
    let reopened = UndoJournal::open(&f.journal.dir(), DEFAULT_UNDO_CAP).unwrap();
    let said = reopened.interrupted().expect("a report");
    assert!(said.contains("/work/a.txt is changed"), "{said}");
    reopened.undo(UndoScope::Last(1), false).unwrap();
    assert_eq!(
        std::fs::read_to_string(f.zone.join("a.txt")).unwrap(),
        "old a"
    );
}

#[test]
fn a_session_that_changes_nothing_writes_nothing() {
    let f = fixture(DEFAULT_UNDO_CAP);
    f.journal.begin_turn(1);
    f.sandbox.read(&f.path("/work/a.txt")).unwrap();
    assert!(!f.journal.dir().exists());
}

#[test]
fn the_report_says_what_was_put_back_and_what_was_removed() {
    let f = fixture(DEFAULT_UNDO_CAP);
    f.journal.begin_turn(1);
    f.sandbox
        .write_atomic(&f.path("/work/a.txt"), b"changed", false)
        .unwrap();
    f.sandbox
        .write_atomic(&f.path("/work/made.txt"), b"new", false)
        .unwrap();
    let report = f.journal.undo(UndoScope::Last(1), false).unwrap();
    assert_eq!(report.restored, ["/work/a.txt"]);
    assert_eq!(report.removed, ["/work/made.txt"]);
    assert_eq!(
        report.summary(),
        "undid turn 1: /work/a.txt put back; /work/made.txt removed"
    );
    assert_eq!(
        report.model_note(),
        "[The user undid the file changes of turn 1: /work/a.txt put back; /work/made.txt \
         removed, as before those turns. Read files again before relying on what was done then.]"
    );
    // A turn that only made a file: nothing is said to be put back.
    f.journal.begin_turn(2);
    f.sandbox
        .write_atomic(&f.path("/work/only.txt"), b"x", false)
        .unwrap();
    let report = f.journal.undo(UndoScope::Last(1), false).unwrap();
    assert_eq!(report.summary(), "undid turn 2: /work/only.txt removed");
}
