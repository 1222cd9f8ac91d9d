//! The scan on layers made by hand, for what a jailed program cannot make (the jail's
//! seccomp filter refuses set-id modes, and it may not make device nodes): such an upper
//! directory must still be refused, should the jail ever let one through.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{Changeset, ChangesetError, Layers};
use crate::{Sandbox, ZoneConfig, ZoneMode};

/// A zone `work` with one file, and an empty upper directory for it.
fn setup() -> (tempfile::TempDir, Sandbox, tempfile::TempDir, PathBuf) {
    let base = tempfile::tempdir().unwrap();
    std::fs::create_dir(base.path().join("work")).unwrap();
    std::fs::write(base.path().join("work/file"), "x").unwrap();
    let sandbox = Sandbox::open(base.path(), &[ZoneConfig::new("work", ZoneMode::Rw)]).unwrap();
    let layers = tempfile::tempdir().unwrap();
    let upper = layers.path().join("upper");
    std::fs::create_dir(&upper).unwrap();
    (base, sandbox, layers, upper)
}

fn scan(
    sandbox: &Sandbox,
    layers: tempfile::TempDir,
    upper: &Path,
) -> Result<Changeset, ChangesetError> {
    Changeset::scan(
        sandbox,
        Layers::new(layers, vec![("work".to_owned(), upper.to_path_buf())]),
    )
}

#[track_caller]
fn refused(result: Result<Changeset, ChangesetError>, path: &str, words: &str) {
    match result {
        Err(ChangesetError::Refused {
            path: refused,
            reason,
        }) => {
            assert_eq!(refused, path);
            assert!(reason.contains(words), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn set_id_files_are_refused() {
    for (mode, words) in [(0o4755, "set-user-ID"), (0o2755, "set-group-ID")] {
        let (_base, sandbox, layers, upper) = setup();
        std::fs::write(upper.join("tool"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(upper.join("tool"), PermissionsExt::from_mode(mode)).unwrap();
        refused(scan(&sandbox, layers, &upper), "/work/tool", words);
    }
    // On a file the zone has, too (a mode change).
    let (_base, sandbox, layers, upper) = setup();
    std::fs::write(upper.join("file"), "x").unwrap();
    std::fs::set_permissions(upper.join("file"), PermissionsExt::from_mode(0o4644)).unwrap();
    refused(scan(&sandbox, layers, &upper), "/work/file", "set-user-ID");
}

#[test]
fn device_nodes_are_refused_and_whiteouts_are_deletions() {
    let (_base, sandbox, layers, upper) = setup();
    // A whiteout (character device 0/0) may be made without privileges.
    rustix::fs::mknodat(
        rustix::fs::CWD,
        upper.join("file"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0),
        0,
    )
    .unwrap();
    let changes = scan(&sandbox, layers, &upper).unwrap();
    let listed: Vec<String> = changes.changes().iter().map(ToString::to_string).collect();
    assert_eq!(listed, ["delete /work/file"]);

    let (_base, sandbox, layers, upper) = setup();
    let made = rustix::fs::mknodat(
        rustix::fs::CWD,
        upper.join("null"),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    );
    if made.is_err() {
        // Only root may make device nodes.
        assert!(!rustix::process::geteuid().is_root());
        return;
    }
    refused(scan(&sandbox, layers, &upper), "/work/null", "device node");
}

#[test]
fn names_that_cannot_be_virtual_paths_are_refused() {
    use std::os::unix::ffi::OsStrExt;
    let (_base, sandbox, layers, upper) = setup();
    let name = std::ffi::OsStr::from_bytes(b"bad\xff");
    std::fs::write(upper.join(name), "x").unwrap();
    refused(
        scan(&sandbox, layers, &upper),
        "/work/bad\u{fffd}",
        "not valid UTF-8",
    );

    let (_base, sandbox, layers, upper) = setup();
    std::fs::write(upper.join("new\nline"), "x").unwrap();
    refused(
        scan(&sandbox, layers, &upper),
        "/work/new\nline",
        "cannot be named",
    );
}
