//! Each operation's success and failure paths, in ordinary (non-adversarial) use.

use std::os::unix::fs::PermissionsExt;

use golem_protocol::ToolErrorCode;
use golem_sandbox::{EntryKind, Sandbox, SandboxError, ZoneConfig, ZoneMode, ZonePath};

use crate::common::{Env, assert_code, symlink};

#[test]
fn open_creates_rw_dirs_and_refuses_missing_ro() {
    let tmp = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(tmp.path(), &[ZoneConfig::new("out", ZoneMode::Rw)]).unwrap();
    assert!(tmp.path().join("out").is_dir());
    assert_eq!(sandbox.zones()[0].name(), "out");
    assert_eq!(sandbox.zones()[0].host_path(), tmp.path().join("out"));

    let err = Sandbox::open(tmp.path(), &[ZoneConfig::new("input", ZoneMode::Ro)]).unwrap_err();
    assert!(matches!(err, SandboxError::MissingZoneDir { .. }));
    let message = err.to_string();
    assert!(
        message.contains("input")
            && message.contains(&tmp.path().join("input").display().to_string()),
        "{message}"
    );

    std::fs::write(tmp.path().join("file"), b"x").unwrap();
    let err = Sandbox::open(
        tmp.path(),
        &[ZoneConfig::new("f", ZoneMode::Rw).with_path("file")],
    )
    .unwrap_err();
    assert!(matches!(err, SandboxError::NotADirectory { .. }), "{err}");

    let err = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("out", ZoneMode::Rw),
            ZoneConfig::new("out", ZoneMode::Ro),
        ],
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "zone `out` is configured twice");

    let err = Sandbox::open(tmp.path(), &[ZoneConfig::new("Bad", ZoneMode::Rw)]).unwrap_err();
    assert!(err.to_string().contains("invalid zone name `Bad`"), "{err}");
}

#[test]
fn zones_of_different_modes_may_not_overlap_either_way() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("data/in")).unwrap();
    let err = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("input", ZoneMode::Ro).with_path("data/in"),
            ZoneConfig::new("data", ZoneMode::Rw),
        ],
    )
    .unwrap_err();
    assert!(
        matches!(err, SandboxError::ReadOnlyInsideWritable { .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("`input` is read-only but lies inside read-write zone `data`"),
        "{err}"
    );
    let err = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("same_ro", ZoneMode::Ro).with_path("data"),
            ZoneConfig::new("same_rw", ZoneMode::Rw).with_path("./data/../data"),
        ],
    )
    .unwrap_err();
    assert!(
        matches!(err, SandboxError::ReadOnlyInsideWritable { .. }),
        "{err}"
    );
    // The other way round too: the read-only zone could be changed through the writable one.
    for zones in [
        [
            ZoneConfig::new("data", ZoneMode::Ro),
            ZoneConfig::new("out", ZoneMode::Rw).with_path("data/in"),
        ],
        [
            ZoneConfig::new("out", ZoneMode::Rw).with_path("data/in"),
            ZoneConfig::new("data", ZoneMode::Ro),
        ],
    ] {
        let err = Sandbox::open(tmp.path(), &zones).unwrap_err();
        assert!(
            matches!(err, SandboxError::WritableInsideReadOnly { .. }),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("`out` is read-write but lies inside read-only zone `data`"),
            "{err}"
        );
    }
    // Through a link, which a worker file's paths do not show.
    std::os::unix::fs::symlink("data/in", tmp.path().join("link")).unwrap();
    let err = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("data", ZoneMode::Ro),
            ZoneConfig::new("out", ZoneMode::Rw).with_path("link"),
        ],
    )
    .unwrap_err();
    assert!(
        matches!(err, SandboxError::WritableInsideReadOnly { .. }),
        "{err}"
    );
    // Zones of the same mode may nest.
    for mode in [ZoneMode::Ro, ZoneMode::Rw] {
        Sandbox::open(
            tmp.path(),
            &[
                ZoneConfig::new("data", mode),
                ZoneConfig::new("inner", mode).with_path("data/in"),
            ],
        )
        .unwrap();
    }
}

#[test]
fn custom_path_is_relative_to_the_base_dir() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("data")).unwrap();
    std::fs::write(tmp.path().join("data/x.txt"), b"x").unwrap();
    let sandbox = Sandbox::open(
        tmp.path(),
        &[ZoneConfig::new("input", ZoneMode::Ro).with_path("./data")],
    )
    .unwrap();
    assert_eq!(sandbox.zones()[0].host_path(), tmp.path().join("data"));
    let p = sandbox.resolve("/input/x.txt").unwrap();
    assert_eq!(sandbox.read(&p).unwrap(), b"x");
}

#[test]
fn resolve_shapes() {
    let env = Env::new();
    let p = env.resolve("/output/a/b.txt");
    assert_eq!(p.zone_name(), Some("output"));
    assert_eq!(p.relative(), std::path::Path::new("a/b.txt"));
    assert_eq!(p.virtual_path(), "/output/a/b.txt");
    assert_eq!(p.file_name(), Some("b.txt"));
    assert_eq!(p.parent().unwrap().virtual_path(), "/output/a");
    assert_eq!(p.to_string(), "/output/a/b.txt");
    let zone_root = env.resolve("/output/");
    assert!(zone_root.is_zone_root());
    assert_eq!(zone_root.virtual_path(), "/output");
    assert_eq!(zone_root.parent(), Some(ZonePath::root()));
    assert_eq!(
        zone_root.join("n.txt").unwrap().virtual_path(),
        "/output/n.txt"
    );
    assert_code(zone_root.join(".."), ToolErrorCode::InvalidPath, &env);
    assert_code(zone_root.join("a/b"), ToolErrorCode::InvalidPath, &env);
    let root = env.resolve("/");
    assert!(root.is_root());
    assert_eq!(root.virtual_path(), "/");
    assert_eq!(root.zone_name(), None);

    let err = assert_code(
        env.sandbox.resolve("/nope/x"),
        ToolErrorCode::InvalidPath,
        &env,
    );
    assert!(
        err.message.contains("unknown zone `nope`"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("/input, /output, /scratch"),
        "{}",
        err.message
    );
}

#[test]
fn read_metadata_exists_and_list() {
    let env = Env::new();
    let s = &env.sandbox;
    assert_eq!(
        s.read(&env.resolve("/input/hello.txt")).unwrap(),
        b"hello from input"
    );
    let (head, total) = s.read_prefix(&env.resolve("/input/hello.txt"), 5).unwrap();
    assert_eq!((head.as_slice(), total), (&b"hello"[..], 16));
    let info = s.metadata(&env.resolve("/input/hello.txt")).unwrap();
    assert_eq!((info.kind, info.size), (EntryKind::File, 16));
    assert!(info.modified.is_some());
    assert_eq!(
        s.metadata(&env.resolve("/input/docs")).unwrap().kind,
        EntryKind::Directory
    );
    assert_eq!(
        s.metadata(&env.resolve("/")).unwrap().kind,
        EntryKind::Directory
    );
    assert_eq!(
        s.metadata(&env.resolve("/input")).unwrap().kind,
        EntryKind::Directory
    );
    assert!(s.exists(&env.resolve("/input/hello.txt")).unwrap());
    assert!(s.exists(&env.resolve("/")).unwrap());
    assert!(!s.exists(&env.resolve("/input/missing.txt")).unwrap());
    assert!(!s.exists(&env.resolve("/input/hello.txt/below")).unwrap());

    let names: Vec<_> = s
        .read_dir(&env.resolve("/input"))
        .unwrap()
        .into_iter()
        .map(|(n, i)| (n, i.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("docs".into(), EntryKind::Directory),
            ("hello.txt".into(), EntryKind::File)
        ]
    );
    let zones: Vec<_> = s
        .read_dir(&env.resolve("/"))
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(zones, ["input", "output", "scratch"]);

    assert_code(
        s.read(&env.resolve("/input/missing.txt")),
        ToolErrorCode::FileNotFound,
        &env,
    );
    let err = assert_code(
        s.read(&env.resolve("/input/docs")),
        ToolErrorCode::InvalidPath,
        &env,
    );
    assert!(err.message.contains("is a directory"), "{}", err.message);
    assert_code(s.read(&env.resolve("/")), ToolErrorCode::InvalidPath, &env);
    assert_code(
        s.read_dir(&env.resolve("/input/hello.txt")),
        ToolErrorCode::InvalidPath,
        &env,
    );
    assert_code(
        s.read_dir(&env.resolve("/input/nope")),
        ToolErrorCode::FileNotFound,
        &env,
    );
    assert_code(
        s.metadata(&env.resolve("/input/nope")),
        ToolErrorCode::FileNotFound,
        &env,
    );
}

#[test]
fn a_huge_sparse_file_is_refused_not_allocated() {
    let env = Env::new();
    let file = std::fs::File::create(env.zone_dir("scratch").join("sparse")).unwrap();
    file.set_len(1 << 40).unwrap();
    let p = env.resolve("/scratch/sparse");
    let err = assert_code(env.sandbox.read(&p), ToolErrorCode::ExecutionError, &env);
    assert!(err.message.contains("too large"), "{}", err.message);
    let (head, total) = env.sandbox.read_prefix(&p, 4).unwrap();
    assert_eq!((head, total), (vec![0; 4], 1 << 40));
}

#[test]
fn reading_a_fifo_is_refused_without_blocking() {
    let env = Env::new();
    let fifo = env.zone_dir("scratch").join("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let err = assert_code(
        env.sandbox.read(&env.resolve("/scratch/pipe")),
        ToolErrorCode::InvalidPath,
        &env,
    );
    assert!(
        err.message.contains("not a regular file"),
        "{}",
        err.message
    );
    assert_eq!(
        env.sandbox
            .metadata(&env.resolve("/scratch/pipe"))
            .unwrap()
            .kind,
        EntryKind::Fifo
    );
}

#[test]
fn sockets_and_devices_have_their_own_kinds_and_are_never_read() {
    let env = Env::new();
    let _listener =
        std::os::unix::net::UnixListener::bind(env.zone_dir("scratch").join("sock")).unwrap();
    let sock = env.resolve("/scratch/sock");
    assert_eq!(env.sandbox.metadata(&sock).unwrap().kind, EntryKind::Socket);
    assert_code(env.sandbox.read(&sock), ToolErrorCode::InvalidPath, &env);
    let (entries, _) = env
        .sandbox
        .walk(&env.resolve("/scratch"), true, 10)
        .unwrap();
    assert_eq!(entries[0].1.kind, EntryKind::Socket);

    // /dev/null is a character device on every Linux system; a zone on /dev shows it.
    let tmp = tempfile::tempdir().unwrap();
    let dev = Sandbox::open(
        tmp.path(),
        &[ZoneConfig::new("dev", ZoneMode::Ro).with_path("/dev")],
    )
    .unwrap();
    let null = dev.resolve("/dev/null").unwrap();
    assert_eq!(dev.metadata(&null).unwrap().kind, EntryKind::Device);
    let err = dev.read(&null).unwrap_err();
    assert_eq!(err.code, ToolErrorCode::InvalidPath, "{}", err.message);
    let listed = dev.read_dir(&dev.resolve("/dev").unwrap()).unwrap();
    let kind = |name: &str| listed.iter().find(|(n, _)| n == name).map(|(_, i)| i.kind);
    assert_eq!(kind("null"), Some(EntryKind::Device));
}

#[test]
fn write_atomic_creates_replaces_and_keeps_permissions() {
    let env = Env::new();
    let s = &env.sandbox;
    let p = env.resolve("/scratch/new.txt");
    s.write_atomic(&p, b"one", false).unwrap();
    assert_eq!(
        std::fs::read(env.zone_dir("scratch").join("new.txt")).unwrap(),
        b"one"
    );
    let host = env.zone_dir("scratch").join("new.txt");
    std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o640)).unwrap();
    s.write_atomic(&p, b"two", false).unwrap();
    assert_eq!(std::fs::read(&host).unwrap(), b"two");
    assert_eq!(
        std::fs::metadata(&host).unwrap().permissions().mode() & 0o777,
        0o640
    );

    let deep = env.resolve("/scratch/a/b/c.txt");
    let err = assert_code(
        s.write_atomic(&deep, b"x", false),
        ToolErrorCode::FileNotFound,
        &env,
    );
    assert!(
        err.message.contains("/scratch/a/b") && err.message.contains("createDirs"),
        "{}",
        err.message
    );
    s.write_atomic(&deep, b"x", true).unwrap();
    assert_eq!(s.read(&deep).unwrap(), b"x");
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(env.zone_dir("scratch"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    assert_code(
        s.write_atomic(&env.resolve("/scratch/a"), b"x", false),
        ToolErrorCode::InvalidPath,
        &env,
    );
    assert_code(
        s.write_atomic(&env.resolve("/scratch"), b"x", false),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    assert_code(
        s.write_atomic(&env.resolve("/"), b"x", false),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    let err = assert_code(
        s.write_atomic(&env.resolve("/input/hello.txt"), b"x", false),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    assert!(err.message.contains("read-only"), "{}", err.message);
    assert_eq!(
        s.read(&env.resolve("/input/hello.txt")).unwrap(),
        b"hello from input"
    );
}

#[test]
fn write_new_never_replaces() {
    let env = Env::new();
    let s = &env.sandbox;
    let p = env.resolve("/scratch/n/new.txt");
    s.write_new(&p, b"first", true).unwrap();
    let err = assert_code(
        s.write_new(&p, b"second", false),
        ToolErrorCode::ExecutionError,
        &env,
    );
    assert!(err.message.contains("already exists"), "{}", err.message);
    assert_eq!(s.read(&p).unwrap(), b"first");
    symlink("nowhere", env.zone_dir("scratch").join("n/link"));
    assert_code(
        s.write_new(&env.resolve("/scratch/n/link"), b"x", false),
        ToolErrorCode::ExecutionError,
        &env,
    );
    assert_code(
        s.write_new(&env.resolve("/input/new.txt"), b"x", false),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    let names: Vec<_> = std::fs::read_dir(env.zone_dir("scratch").join("n"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn write_follows_a_symlink_that_stays_inside() {
    let env = Env::new();
    std::fs::write(env.zone_dir("scratch").join("target.txt"), b"old").unwrap();
    symlink("target.txt", env.zone_dir("scratch").join("link.txt"));
    env.sandbox
        .write_atomic(&env.resolve("/scratch/link.txt"), b"new", false)
        .unwrap();
    assert_eq!(
        std::fs::read(env.zone_dir("scratch").join("target.txt")).unwrap(),
        b"new"
    );
    assert!(
        std::fs::symlink_metadata(env.zone_dir("scratch").join("link.txt"))
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn create_dir_and_remove() {
    let env = Env::new();
    let s = &env.sandbox;
    s.create_dir_all(&env.resolve("/scratch/x/y/z")).unwrap();
    s.create_dir_all(&env.resolve("/scratch/x/y/z")).unwrap();
    s.create_dir_all(&env.resolve("/scratch")).unwrap();
    s.write_atomic(&env.resolve("/scratch/x/y/f.txt"), b"f", false)
        .unwrap();
    let err = assert_code(
        s.remove_file(&env.resolve("/scratch/x")),
        ToolErrorCode::InvalidPath,
        &env,
    );
    assert!(err.message.contains("recursively"), "{}", err.message);
    s.remove_file(&env.resolve("/scratch/x/y/f.txt")).unwrap();
    assert_code(
        s.remove_file(&env.resolve("/scratch/x/y/f.txt")),
        ToolErrorCode::FileNotFound,
        &env,
    );
    s.write_atomic(&env.resolve("/scratch/x/y/g.txt"), b"g", false)
        .unwrap();
    let removed = s.remove_dir_all(&env.resolve("/scratch/x")).unwrap();
    assert_eq!(
        removed,
        [
            "/scratch/x/y/g.txt",
            "/scratch/x/y/z",
            "/scratch/x/y",
            "/scratch/x"
        ]
    );
    assert!(!env.zone_dir("scratch").join("x").exists());
    assert_code(
        s.remove_dir_all(&env.resolve("/scratch")),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    assert_code(
        s.remove_dir_all(&env.resolve("/input/docs")),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    assert_code(
        s.create_dir_all(&env.resolve("/input/new")),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    assert!(env.work().join("input/docs/a.md").exists());
    s.write_atomic(&env.resolve("/scratch/single.txt"), b"s", false)
        .unwrap();
    assert_eq!(
        s.remove_dir_all(&env.resolve("/scratch/single.txt"))
            .unwrap(),
        ["/scratch/single.txt"]
    );
}

#[test]
fn rename_within_and_across_zones() {
    let env = Env::new();
    let s = &env.sandbox;
    s.write_atomic(&env.resolve("/scratch/a.txt"), b"a", false)
        .unwrap();
    s.write_atomic(&env.resolve("/scratch/b.txt"), b"b", false)
        .unwrap();
    let err = assert_code(
        s.rename(
            &env.resolve("/scratch/a.txt"),
            &env.resolve("/scratch/b.txt"),
            false,
        ),
        ToolErrorCode::ExecutionError,
        &env,
    );
    assert!(err.message.contains("overwrite"), "{}", err.message);
    s.rename(
        &env.resolve("/scratch/a.txt"),
        &env.resolve("/scratch/b.txt"),
        true,
    )
    .unwrap();
    assert_eq!(s.read(&env.resolve("/scratch/b.txt")).unwrap(), b"a");
    s.rename(
        &env.resolve("/scratch/b.txt"),
        &env.resolve("/output/b.txt"),
        false,
    )
    .unwrap();
    assert_eq!(s.read(&env.resolve("/output/b.txt")).unwrap(), b"a");
    assert!(!s.exists(&env.resolve("/scratch/b.txt")).unwrap());
    s.create_dir_all(&env.resolve("/scratch/d/e")).unwrap();
    assert_code(
        s.rename(
            &env.resolve("/scratch/d"),
            &env.resolve("/scratch/d/e/f"),
            false,
        ),
        ToolErrorCode::InvalidPath,
        &env,
    );
    s.rename(
        &env.resolve("/scratch/d"),
        &env.resolve("/output/d2"),
        false,
    )
    .unwrap();
    assert!(s.exists(&env.resolve("/output/d2/e")).unwrap());
    assert_code(
        s.rename(
            &env.resolve("/scratch/missing"),
            &env.resolve("/output/x"),
            false,
        ),
        ToolErrorCode::FileNotFound,
        &env,
    );
    assert_code(
        s.rename(
            &env.resolve("/input/hello.txt"),
            &env.resolve("/output/h"),
            false,
        ),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    assert_code(
        s.rename(
            &env.resolve("/output/b.txt"),
            &env.resolve("/input/b"),
            false,
        ),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    assert_code(
        s.rename(&env.resolve("/output"), &env.resolve("/scratch/o"), false),
        ToolErrorCode::PermissionDenied,
        &env,
    );
    assert_code(
        s.rename(
            &env.resolve("/output/b.txt"),
            &env.resolve("/scratch/nodir/b"),
            false,
        ),
        ToolErrorCode::FileNotFound,
        &env,
    );
}

#[test]
fn rename_across_file_systems_copies_then_removes() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir_in(shm).unwrap();
    let sandbox = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("disk", ZoneMode::Rw),
            ZoneConfig::new("mem", ZoneMode::Rw).with_path(other.path()),
        ],
    )
    .unwrap();
    let r = |p: &str| sandbox.resolve(p).unwrap();
    sandbox
        .write_atomic(&r("/disk/tree/sub/f.txt"), b"file", true)
        .unwrap();
    std::fs::set_permissions(
        tmp.path().join("disk/tree/sub/f.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    symlink("sub/f.txt", tmp.path().join("disk/tree/link"));
    std::fs::set_permissions(
        tmp.path().join("disk/tree/sub"),
        std::fs::Permissions::from_mode(0o500),
    )
    .unwrap();
    sandbox
        .rename(&r("/disk/tree"), &r("/mem/tree"), false)
        .unwrap();
    assert!(
        !tmp.path().join("disk/tree").exists(),
        "the source is removed"
    );
    assert_eq!(
        std::fs::metadata(other.path().join("tree/sub"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o500
    );
    assert_eq!(
        std::fs::read(other.path().join("tree/sub/f.txt")).unwrap(),
        b"file"
    );
    assert_eq!(
        std::fs::metadata(other.path().join("tree/sub/f.txt"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::read_link(other.path().join("tree/link")).unwrap(),
        std::path::Path::new("sub/f.txt")
    );

    sandbox
        .write_atomic(&r("/disk/one.txt"), b"1", false)
        .unwrap();
    sandbox
        .write_atomic(&r("/mem/one.txt"), b"old", false)
        .unwrap();
    assert_code_plain(
        sandbox.rename(&r("/disk/one.txt"), &r("/mem/one.txt"), false),
        ToolErrorCode::ExecutionError,
    );
    sandbox
        .rename(&r("/disk/one.txt"), &r("/mem/one.txt"), true)
        .unwrap();
    assert_eq!(std::fs::read(other.path().join("one.txt")).unwrap(), b"1");
    assert!(!tmp.path().join("disk/one.txt").exists());
}

fn assert_code_plain<T: std::fmt::Debug>(
    result: Result<T, golem_protocol::ToolError>,
    code: ToolErrorCode,
) {
    assert_eq!(result.unwrap_err().code, code);
}

#[test]
fn walk_lists_recursively_sorted_with_limits() {
    let env = Env::new();
    let s = &env.sandbox;
    for p in [
        "/scratch/b/2.txt",
        "/scratch/b/1.txt",
        "/scratch/a.txt",
        "/scratch/.hidden/x",
        "/scratch/.h.txt",
    ] {
        s.write_atomic(&env.resolve(p), b"x", true).unwrap();
    }
    symlink("b", env.zone_dir("scratch").join("c_link"));
    let (entries, truncated) = s.walk(&env.resolve("/scratch"), false, 100).unwrap();
    let names: Vec<_> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a.txt", "b", "b/1.txt", "b/2.txt", "c_link"]);
    assert!(!truncated);
    assert_eq!(entries[4].1.kind, EntryKind::Symlink);
    let (entries, _) = s.walk(&env.resolve("/scratch"), true, 100).unwrap();
    let names: Vec<_> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            ".h.txt",
            ".hidden",
            ".hidden/x",
            "a.txt",
            "b",
            "b/1.txt",
            "b/2.txt",
            "c_link"
        ]
    );
    let (entries, truncated) = s.walk(&env.resolve("/scratch"), false, 3).unwrap();
    assert_eq!(entries.len(), 3);
    assert!(truncated);
    let (entries, truncated) = s.walk(&env.resolve("/scratch"), false, 5).unwrap();
    assert_eq!((entries.len(), truncated), (5, false));
    let (entries, _) = s.walk(&env.resolve("/scratch/b"), false, 100).unwrap();
    let names: Vec<_> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["1.txt", "2.txt"]);
    let (entries, _) = s.walk(&env.resolve("/"), false, 100).unwrap();
    let names: Vec<_> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        &names[..4],
        ["input", "input/docs", "input/docs/a.md", "input/hello.txt"]
    );
    assert!(names.contains(&"scratch/b/2.txt"));
    assert_code(
        s.walk(&env.resolve("/scratch/a.txt"), false, 10),
        ToolErrorCode::InvalidPath,
        &env,
    );
}
