//! The adversarial suite: every way out of a zone we could think of. Each case asserts the
//! outcome and, at the end, that no file outside the zones was read (no secret byte returned)
//! or changed (the `outside` directory is byte-for-byte what it was).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::{EntryKind, Sandbox, ZoneConfig, ZoneMode};
use rustix::fs::{CWD, RenameFlags};

use crate::common::{Env, SECRET, assert_code, assert_code_only, assert_no_secret, symlink};

fn invalid<T: std::fmt::Debug>(result: Result<T, ToolError>, env: &Env) -> ToolError {
    assert_code(result, ToolErrorCode::InvalidPath, env)
}

/// Resolving must fail with `INVALID_PATH`.
fn refused_at_resolve(env: &Env, path: &str) {
    invalid(env.sandbox.resolve(path), env);
}

/// Every read-side operation on `path` is refused with `INVALID_PATH`.
fn refused_everywhere(env: &Env, path: &str) {
    let s = &env.sandbox;
    let p = env.resolve(path);
    invalid(s.read(&p), env);
    invalid(s.read_prefix(&p, 10), env);
    invalid(s.read_dir(&p), env);
    invalid(s.walk(&p, true, 100), env);
}

#[test]
fn dot_dot_relative() {
    let env = Env::new();
    for path in [
        "../etc/passwd",
        "..",
        "./../outside/secret.txt",
        "input/../../outside",
    ] {
        refused_at_resolve(&env, path);
    }
    env.assert_outside_untouched();
}

#[test]
fn dot_dot_out_of_a_zone() {
    let env = Env::new();
    for path in [
        "/input/../../etc/passwd",
        "/input/../../outside/secret.txt",
        "/input/..",
        "/input/docs/../../..",
        "/scratch/a/b/../../../outside/secret.txt",
        "/..",
        "/../..",
    ] {
        refused_at_resolve(&env, path);
    }
    env.assert_outside_untouched();
}

#[test]
fn dot_dot_into_another_zone_is_refused() {
    let env = Env::new();
    // Lexically this is /scratch/x, but `..` may not leave the zone it started in.
    let err = invalid(env.sandbox.resolve("/input/../scratch/x"), &env);
    assert!(err.message.contains("zone input"), "{}", err.message);
    // Inside a zone, `..` is fine.
    assert_eq!(
        env.sandbox
            .read(&env.resolve("/input/docs/../hello.txt"))
            .unwrap(),
        b"hello from input"
    );
}

#[test]
fn absolute_host_paths() {
    let env = Env::new();
    let secret = env.outside().join("secret.txt");
    let own = env.zone_dir("input").join("hello.txt");
    for path in [
        "/etc/passwd".to_owned(),
        secret.display().to_string(),
        own.display().to_string(),
        format!("/input{}", secret.display()),
    ] {
        match env.sandbox.resolve(&path) {
            // The last one is a plain relative name inside /input: it does not exist there.
            Ok(p) => assert_code_only(env.sandbox.read(&p), ToolErrorCode::FileNotFound),
            Err(err) => {
                assert_eq!(err.code, ToolErrorCode::InvalidPath);
                assert!(err.message.contains("unknown zone"), "{}", err.message);
            }
        }
    }
    env.assert_outside_untouched();
}

#[test]
fn percent_encoding_is_literal() {
    let env = Env::new();
    for path in [
        "/input/%2e%2e/%2e%2e/outside/secret.txt",
        "/input/%2e%2e%2f%2e%2e%2foutside%2fsecret.txt",
        "/input/..%2f..%2foutside",
        "/input/%252e%252e/secret.txt",
    ] {
        let p = env.resolve(path);
        assert_code(env.sandbox.read(&p), ToolErrorCode::FileNotFound, &env);
    }
    // Writing one creates a file with that literal name, inside the zone.
    let p = env.resolve("/scratch/%2e%2e");
    env.sandbox.write_atomic(&p, b"literal", false).unwrap();
    assert_eq!(
        std::fs::read(env.zone_dir("scratch").join("%2e%2e")).unwrap(),
        b"literal"
    );
    env.assert_outside_untouched();
}

#[test]
fn doubled_separators() {
    let env = Env::new();
    refused_at_resolve(&env, "//input//..//..//outside/secret.txt");
    refused_at_resolve(&env, "/input///..///..");
    assert_eq!(
        env.sandbox
            .read(&env.resolve("//input//hello.txt"))
            .unwrap(),
        b"hello from input"
    );
    assert_eq!(
        env.resolve("/input//docs///a.md").virtual_path(),
        "/input/docs/a.md"
    );
    env.assert_outside_untouched();
}

#[test]
fn backslashes() {
    let env = Env::new();
    for path in [
        "/input/..\\..\\outside\\secret.txt",
        "\\input\\hello.txt",
        "/input\\..\\..\\etc\\passwd",
        "/scratch/a\\b",
    ] {
        let err = invalid(env.sandbox.resolve(path), &env);
        assert!(err.message.contains("backslash"), "{}", err.message);
    }
    env.assert_outside_untouched();
}

#[test]
fn nul_and_control_bytes() {
    let env = Env::new();
    for path in [
        "/input/hello.txt\0.png",
        "/input\0/../../etc",
        "\0",
        "/scratch/a\nb",
        "/scratch/\x1b[2J",
    ] {
        refused_at_resolve(&env, path);
    }
    env.assert_outside_untouched();
}

#[test]
fn very_long_paths_and_components() {
    let env = Env::new();
    refused_at_resolve(&env, &format!("/input/{}", "a".repeat(256)));
    refused_at_resolve(&env, &format!("/input/{}", "é".repeat(128)));
    refused_at_resolve(&env, &format!("/input{}", "/a".repeat(3000)));
    refused_at_resolve(
        &env,
        &format!("/input/{}/../../../outside", "x/".repeat(2100)),
    );
    // At the limits: accepted by the syntax, then simply not found.
    let p = env.resolve(&format!("/input/{}", "a".repeat(255)));
    assert_code(env.sandbox.read(&p), ToolErrorCode::FileNotFound, &env);
    let deep = format!("/scratch{}", format!("/{}", "d".repeat(200)).repeat(19));
    let p = env.resolve(&deep);
    env.sandbox.create_dir_all(&p).unwrap();
    // Many `..` that stay inside are fine; one more is refused.
    let back = format!("{deep}{}", "/..".repeat(19));
    assert!(env.resolve(&back).is_zone_root());
    refused_at_resolve(&env, &format!("{back}/.."));
    env.assert_outside_untouched();
}

#[test]
fn unicode_lookalikes_are_plain_names() {
    let env = Env::new();
    // U+FF0F fullwidth solidus, U+2215 division slash, U+2025 two-dot leader, U+FF0E fullwidth
    // full stop, U+2024 one-dot leader: ordinary characters, never separators or `..`.
    for path in ["/input／..／..／outside", "/input∕..∕..∕etc∕passwd"] {
        let err = invalid(env.sandbox.resolve(path), &env);
        assert!(err.message.contains("unknown zone"), "{}", err.message);
    }
    for path in [
        "/input/‥/‥/outside/secret.txt",
        "/input/．．/．．/outside/secret.txt",
        "/input/․․/secret.txt",
        "/input/hello.txt／",
    ] {
        assert_code(
            env.sandbox.read(&env.resolve(path)),
            ToolErrorCode::FileNotFound,
            &env,
        );
    }
    env.sandbox
        .write_atomic(&env.resolve("/scratch/‥"), b"u", false)
        .unwrap();
    assert!(env.zone_dir("scratch").join("‥").is_file());
    env.assert_outside_untouched();
}

#[test]
fn symlink_to_etc_inside_a_zone() {
    let env = Env::new();
    symlink("/etc", env.zone_dir("scratch").join("etc"));
    refused_everywhere(&env, "/scratch/etc");
    refused_everywhere(&env, "/scratch/etc/passwd");
    invalid(
        env.sandbox.metadata(&env.resolve("/scratch/etc/passwd")),
        &env,
    );
    invalid(
        env.sandbox.exists(&env.resolve("/scratch/etc/passwd")),
        &env,
    );
    // The link itself is visible as a link, and never entered by a walk.
    let info = env.sandbox.metadata(&env.resolve("/scratch/etc")).unwrap();
    assert_eq!(info.kind, EntryKind::Symlink);
    let (entries, _) = env
        .sandbox
        .walk(&env.resolve("/scratch"), true, 1000)
        .unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    env.assert_outside_untouched();
}

#[test]
fn symlinks_to_outside_files_absolute_and_relative() {
    let env = Env::new();
    let scratch = env.zone_dir("scratch");
    symlink(env.outside().join("secret.txt"), scratch.join("abs"));
    symlink("../../outside/secret.txt", scratch.join("rel"));
    std::fs::create_dir_all(scratch.join("d1/d2/d3")).unwrap();
    symlink(
        "../../../../../outside/secret.txt",
        scratch.join("d1/d2/d3/deep"),
    );
    for path in ["/scratch/abs", "/scratch/rel", "/scratch/d1/d2/d3/deep"] {
        let p = env.resolve(path);
        invalid(env.sandbox.read(&p), &env);
        invalid(env.sandbox.read_prefix(&p, 1 << 20), &env);
    }
    env.assert_outside_untouched();
}

#[test]
fn symlinked_parent_directory() {
    let env = Env::new();
    let s = &env.sandbox;
    symlink(env.outside(), env.zone_dir("scratch").join("parent"));
    refused_everywhere(&env, "/scratch/parent");
    refused_everywhere(&env, "/scratch/parent/secret.txt");
    refused_everywhere(&env, "/scratch/parent/sub");
    invalid(s.metadata(&env.resolve("/scratch/parent/secret.txt")), &env);
    invalid(s.exists(&env.resolve("/scratch/parent/secret.txt")), &env);
    invalid(s.exists(&env.resolve("/scratch/parent/no-such-file")), &env);
    invalid(
        s.write_atomic(&env.resolve("/scratch/parent/new.txt"), b"x", false),
        &env,
    );
    invalid(
        s.write_atomic(&env.resolve("/scratch/parent/secret.txt"), b"x", false),
        &env,
    );
    invalid(
        s.write_atomic(&env.resolve("/scratch/parent/a/b.txt"), b"x", true),
        &env,
    );
    invalid(
        s.create_dir_all(&env.resolve("/scratch/parent/newdir")),
        &env,
    );
    invalid(
        s.remove_file(&env.resolve("/scratch/parent/secret.txt")),
        &env,
    );
    invalid(s.remove_dir_all(&env.resolve("/scratch/parent/sub")), &env);
    env.assert_outside_untouched();
}

#[test]
fn chains_and_loops_of_symlinks() {
    let env = Env::new();
    let scratch = env.zone_dir("scratch");
    std::fs::create_dir_all(scratch.join("x/y")).unwrap();
    symlink("../b", scratch.join("x/a"));
    symlink("x/y/../../c", scratch.join("b"));
    symlink("../outside", scratch.join("c"));
    invalid(
        env.sandbox.read(&env.resolve("/scratch/x/a/secret.txt")),
        &env,
    );
    symlink("loop2", scratch.join("loop1"));
    symlink("loop1", scratch.join("loop2"));
    invalid(env.sandbox.read(&env.resolve("/scratch/loop1")), &env);
    // A long chain that stays inside still ends (the kernel's limit), refused, never followed.
    std::fs::write(scratch.join("end"), b"end").unwrap();
    let mut previous = "end".to_owned();
    for i in 0..60 {
        let name = format!("chain{i}");
        symlink(&previous, scratch.join(&name));
        previous = name;
    }
    invalid(
        env.sandbox
            .read(&env.resolve(&format!("/scratch/{previous}"))),
        &env,
    );
    assert_eq!(
        env.sandbox.read(&env.resolve("/scratch/chain5")).unwrap(),
        b"end"
    );
    env.assert_outside_untouched();
}

#[test]
fn relative_links_that_stay_inside_work_and_absolute_ones_never() {
    let env = Env::new();
    let scratch = env.zone_dir("scratch");
    std::fs::create_dir_all(scratch.join("x")).unwrap();
    std::fs::write(scratch.join("f.txt"), b"inside").unwrap();
    symlink("../f.txt", scratch.join("x/up"));
    assert_eq!(
        env.sandbox.read(&env.resolve("/scratch/x/up")).unwrap(),
        b"inside"
    );
    // An absolute link is refused even when it points back into the zone.
    symlink(scratch.join("f.txt"), scratch.join("abs_inside"));
    invalid(env.sandbox.read(&env.resolve("/scratch/abs_inside")), &env);
}

#[test]
fn proc_self_root_tricks() {
    let env = Env::new();
    let scratch = env.zone_dir("scratch");
    let secret = env.outside().join("secret.txt");
    let via_proc = format!("/scratch/proc/self/root{}", secret.display());
    assert_code_only(
        env.sandbox.read(&env.resolve(&via_proc)),
        ToolErrorCode::FileNotFound,
    );
    symlink("/proc/self/root", scratch.join("pr"));
    symlink(
        "../../../../../../../../../../proc/self/root",
        scratch.join("pr_rel"),
    );
    symlink("/proc/self/cwd", scratch.join("cwd"));
    symlink("/proc/self/fd", scratch.join("fds"));
    for link in ["pr", "pr_rel"] {
        let path = format!("/scratch/{link}{}", secret.display());
        assert_code_only(
            env.sandbox.read(&env.resolve(&path)),
            ToolErrorCode::InvalidPath,
        );
    }
    invalid(env.sandbox.read_dir(&env.resolve("/scratch/cwd")), &env);
    for fd in 0..8 {
        let p = env.resolve(&format!("/scratch/fds/{fd}"));
        invalid(env.sandbox.read(&p), &env);
    }
    env.assert_outside_untouched();
}

#[test]
fn zone_directory_that_is_itself_a_symlink() {
    // Decision: allowed, followed once at open time (the user configured it); nothing inside
    // may climb out of the real directory.
    let env = Env::new();
    let real = env.tmp.path().join("real_zone");
    std::fs::create_dir(&real).unwrap();
    symlink(&real, env.work().join("linked"));
    let sandbox = Sandbox::open(&env.work(), &[ZoneConfig::new("linked", ZoneMode::Rw)]).unwrap();
    let p = sandbox.resolve("/linked/f.txt").unwrap();
    sandbox.write_atomic(&p, b"via link", false).unwrap();
    assert_eq!(std::fs::read(real.join("f.txt")).unwrap(), b"via link");
    symlink("../outside/secret.txt", real.join("up"));
    let err = sandbox
        .read(&sandbox.resolve("/linked/up").unwrap())
        .unwrap_err();
    assert_eq!(err.code, ToolErrorCode::InvalidPath);
    // Swapping the configured link after open changes nothing: the handle is the directory.
    std::fs::remove_file(env.work().join("linked")).unwrap();
    symlink(env.outside(), env.work().join("linked"));
    assert_eq!(sandbox.read(&p).unwrap(), b"via link");
    let secret = sandbox.resolve("/linked/secret.txt").unwrap();
    assert_eq!(
        sandbox.read(&secret).unwrap_err().code,
        ToolErrorCode::FileNotFound
    );
    env.assert_outside_untouched();
}

#[test]
fn writes_through_dangling_and_outside_symlinks() {
    let env = Env::new();
    let scratch = env.zone_dir("scratch");
    symlink(
        env.outside().join("created.txt"),
        scratch.join("dangle_abs"),
    );
    symlink("../../outside/created.txt", scratch.join("dangle_rel"));
    symlink(env.outside().join("secret.txt"), scratch.join("existing"));
    symlink("missing_inside.txt", scratch.join("dangle_inside"));
    for name in ["dangle_abs", "dangle_rel", "existing", "dangle_inside"] {
        let p = env.resolve(&format!("/scratch/{name}"));
        invalid(env.sandbox.write_atomic(&p, b"PWNED", false), &env);
        invalid(env.sandbox.write_atomic(&p, b"PWNED", true), &env);
        // The link is still a link: a refused write does not replace it either.
        assert!(
            std::fs::symlink_metadata(scratch.join(name))
                .unwrap()
                .is_symlink()
        );
    }
    assert!(!env.outside().join("created.txt").exists());
    env.assert_outside_untouched();
}

#[test]
fn rename_targets_and_sources_outside() {
    let env = Env::new();
    let s = &env.sandbox;
    symlink(env.outside(), env.zone_dir("scratch").join("parent"));
    s.write_atomic(&env.resolve("/scratch/f.txt"), b"mine", false)
        .unwrap();
    let f = env.resolve("/scratch/f.txt");
    invalid(
        s.rename(&f, &env.resolve("/scratch/parent/f.txt"), false),
        &env,
    );
    invalid(
        s.rename(&f, &env.resolve("/scratch/parent/secret.txt"), true),
        &env,
    );
    invalid(
        s.rename(
            &env.resolve("/scratch/parent/secret.txt"),
            &env.resolve("/scratch/stolen"),
            false,
        ),
        &env,
    );
    invalid(
        s.rename(
            &env.resolve("/scratch/parent/sub"),
            &env.resolve("/scratch/stolen"),
            true,
        ),
        &env,
    );
    refused_at_resolve(&env, "/scratch/../outside/f.txt");
    // Moving the link itself moves a link: the outside directory stays where it is.
    s.rename(
        &env.resolve("/scratch/parent"),
        &env.resolve("/output/moved_link"),
        false,
    )
    .unwrap();
    assert!(
        std::fs::symlink_metadata(env.zone_dir("output").join("moved_link"))
            .unwrap()
            .is_symlink()
    );
    invalid(s.read(&env.resolve("/output/moved_link/secret.txt")), &env);
    assert_eq!(s.read(&f).unwrap(), b"mine");
    env.assert_outside_untouched();
}

#[test]
fn remove_dir_all_never_follows_links_out() {
    let env = Env::new();
    let s = &env.sandbox;
    let scratch = env.zone_dir("scratch");
    std::fs::create_dir_all(scratch.join("victim/inner")).unwrap();
    std::fs::write(scratch.join("victim/inner/mine.txt"), b"mine").unwrap();
    symlink(env.outside(), scratch.join("victim/to_dir"));
    symlink(
        env.outside().join("secret.txt"),
        scratch.join("victim/inner/to_file"),
    );
    symlink("../../outside/sub", scratch.join("victim/rel_dir"));
    let removed = s.remove_dir_all(&env.resolve("/scratch/victim")).unwrap();
    assert!(
        removed.contains(&"/scratch/victim/to_dir".to_owned()),
        "{removed:?}"
    );
    assert_eq!(removed.last().map(String::as_str), Some("/scratch/victim"));
    assert!(!scratch.join("victim").exists());
    // A link given directly is removed as a link.
    symlink(env.outside(), scratch.join("link_dir"));
    assert_eq!(
        s.remove_dir_all(&env.resolve("/scratch/link_dir")).unwrap(),
        ["/scratch/link_dir"]
    );
    symlink(env.outside().join("secret.txt"), scratch.join("link_file"));
    s.remove_file(&env.resolve("/scratch/link_file")).unwrap();
    env.assert_outside_untouched();
}

#[test]
fn hard_link_made_outside_the_tools() {
    // Documented limit: a hard link is the file itself; the sandbox cannot know the file has
    // another name outside. Reading it reads that file. But writing replaces the link (atomic
    // rename) instead of writing through it, and deleting removes only the link, so the file's
    // outside name is never changed. The sandbox has no operation that creates hard links.
    let env = Env::new();
    let secret = env.outside().join("secret.txt");
    let link = env.zone_dir("scratch").join("hard");
    std::fs::hard_link(&secret, &link).unwrap();
    let p = env.resolve("/scratch/hard");
    assert_eq!(
        env.sandbox.read(&p).unwrap(),
        SECRET,
        "documented: not detectable"
    );
    env.sandbox.write_atomic(&p, b"overwritten", false).unwrap();
    assert_eq!(std::fs::read(&secret).unwrap(), SECRET);
    assert_eq!(std::fs::read(&link).unwrap(), b"overwritten");
    std::fs::remove_file(&link).unwrap();
    std::fs::hard_link(&secret, &link).unwrap();
    env.sandbox.remove_file(&p).unwrap();
    assert!(secret.exists());
    env.assert_outside_untouched();
}

/// Prepares `/scratch/race/d` (a directory holding `secret.txt` = `inside`) and
/// `/scratch/race/alt` (a symlink to the outside directory), and starts a thread that swaps the
/// two atomically (`RENAME_EXCHANGE`) until the returned flag is set.
fn start_swapper(env: &Env) -> (Arc<AtomicBool>, std::thread::JoinHandle<u64>) {
    let race = env.zone_dir("scratch").join("race");
    std::fs::create_dir_all(race.join("d")).unwrap();
    std::fs::write(race.join("d/secret.txt"), b"inside").unwrap();
    symlink(env.outside(), race.join("alt"));
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut swaps = 0u64;
        while !flag.load(Ordering::Relaxed) {
            if rustix::fs::renameat_with(
                CWD,
                race.join("d"),
                CWD,
                race.join("alt"),
                RenameFlags::EXCHANGE,
            )
            .is_ok()
            {
                swaps += 1;
            }
        }
        swaps
    });
    (stop, handle)
}

#[test]
fn toctou_directory_swapped_for_a_symlink_while_reading() {
    let env = Env::new();
    let (stop, swapper) = start_swapper(&env);
    let p = env.resolve("/scratch/race/d/secret.txt");
    let listing = env.resolve("/scratch/race/d");
    for _ in 0..3000 {
        match env.sandbox.read(&p) {
            Ok(bytes) => {
                assert_no_secret(&bytes);
                assert_eq!(bytes, b"inside");
            }
            Err(err) => assert!(
                matches!(
                    err.code,
                    ToolErrorCode::InvalidPath | ToolErrorCode::FileNotFound
                ),
                "{err}"
            ),
        }
        if let Ok(entries) = env.sandbox.read_dir(&listing) {
            assert!(
                entries.iter().all(|(name, _)| name == "secret.txt"),
                "{entries:?}"
            );
        }
        if let Ok((entries, _)) = env.sandbox.walk(&env.resolve("/scratch/race"), true, 100) {
            assert!(
                entries
                    .iter()
                    .all(|(name, _)| !name.contains("passwd") && !name.contains("sub")),
                "{entries:?}"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    env.assert_outside_untouched();
}

#[test]
fn toctou_file_swapped_for_a_symlink_while_reading() {
    let env = Env::new();
    let dir = env.zone_dir("scratch");
    std::fs::write(dir.join("f"), b"inside").unwrap();
    symlink(env.outside().join("secret.txt"), dir.join("g"));
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let (f, g) = (dir.join("f"), dir.join("g"));
    let swapper = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            let _ = rustix::fs::renameat_with(CWD, &f, CWD, &g, RenameFlags::EXCHANGE);
        }
    });
    let p = env.resolve("/scratch/f");
    for _ in 0..5000 {
        if let Ok(bytes) = env.sandbox.read(&p) {
            assert_eq!(bytes, b"inside");
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    env.assert_outside_untouched();
}

#[test]
fn toctou_directory_swapped_while_writing_and_removing() {
    let env = Env::new();
    let (stop, swapper) = start_swapper(&env);
    for i in 0..1500 {
        let p = env.resolve(&format!("/scratch/race/d/new{}.txt", i % 7));
        let _ = env.sandbox.write_atomic(&p, b"PWNED", true);
        let _ = env
            .sandbox
            .create_dir_all(&env.resolve("/scratch/race/d/newdir"));
        let _ = env
            .sandbox
            .remove_file(&env.resolve("/scratch/race/d/secret.txt"));
        let _ = env
            .sandbox
            .remove_dir_all(&env.resolve("/scratch/race/d/sub"));
        let _ = env.sandbox.rename(
            &env.resolve("/scratch/race/d/passwd"),
            &env.resolve("/scratch/stolen"),
            true,
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(!env.zone_dir("scratch").join("stolen").exists());
    env.assert_outside_untouched();
}

#[test]
fn stat_and_exists_reveal_nothing_about_outside_files() {
    let env = Env::new();
    symlink(env.outside(), env.zone_dir("scratch").join("parent"));
    // The same answer whether the outside file exists or not: no oracle.
    let existing = invalid(
        env.sandbox
            .exists(&env.resolve("/scratch/parent/secret.txt")),
        &env,
    );
    let missing = invalid(
        env.sandbox
            .exists(&env.resolve("/scratch/parent/nothing.txt")),
        &env,
    );
    assert_eq!(existing.code, missing.code);
    let existing = invalid(
        env.sandbox
            .metadata(&env.resolve("/scratch/parent/secret.txt")),
        &env,
    );
    let missing = invalid(
        env.sandbox
            .metadata(&env.resolve("/scratch/parent/nothing.txt")),
        &env,
    );
    assert_eq!(existing.code, missing.code);
    env.assert_outside_untouched();
}

#[test]
fn a_moved_relative_link_is_checked_again_on_use() {
    let env = Env::new();
    let s = &env.sandbox;
    let scratch = env.zone_dir("scratch");
    std::fs::create_dir_all(scratch.join("a/b")).unwrap();
    std::fs::write(scratch.join("f.txt"), b"inside").unwrap();
    symlink("../../f.txt", scratch.join("a/b/link"));
    assert_eq!(
        s.read(&env.resolve("/scratch/a/b/link")).unwrap(),
        b"inside"
    );
    // Moved two levels up, the same text now points outside the zone.
    s.rename(
        &env.resolve("/scratch/a/b/link"),
        &env.resolve("/scratch/link"),
        false,
    )
    .unwrap();
    invalid(s.read(&env.resolve("/scratch/link")), &env);
    invalid(
        s.write_atomic(&env.resolve("/scratch/link"), b"PWNED", false),
        &env,
    );
    env.assert_outside_untouched();
}

#[test]
fn absolute_link_into_another_zone_is_refused() {
    let env = Env::new();
    symlink(
        env.zone_dir("input").join("hello.txt"),
        env.zone_dir("scratch").join("other_zone"),
    );
    symlink(
        "../input/hello.txt",
        env.zone_dir("scratch").join("other_zone_rel"),
    );
    invalid(env.sandbox.read(&env.resolve("/scratch/other_zone")), &env);
    invalid(
        env.sandbox.read(&env.resolve("/scratch/other_zone_rel")),
        &env,
    );
    // And writing through it cannot reach the read-only zone.
    invalid(
        env.sandbox
            .write_atomic(&env.resolve("/scratch/other_zone_rel"), b"x", false),
        &env,
    );
    assert_eq!(
        std::fs::read(env.zone_dir("input").join("hello.txt")).unwrap(),
        b"hello from input"
    );
}

#[test]
fn walking_the_root_never_lists_outside() {
    let env = Env::new();
    symlink(env.outside(), env.zone_dir("scratch").join("parent"));
    symlink("..", env.zone_dir("scratch").join("up"));
    let (entries, truncated) = env.sandbox.walk(&env.resolve("/"), true, 10_000).unwrap();
    assert!(!truncated);
    for (name, _) in &entries {
        assert!(
            ["input", "output", "scratch"]
                .iter()
                .any(|zone| name.starts_with(zone)),
            "{name}"
        );
        assert!(
            !name.contains("secret") && !name.contains("passwd"),
            "{name}"
        );
    }
}

#[test]
fn special_files_are_listed_never_read() {
    let env = Env::new();
    let fifo = env.zone_dir("scratch").join("fifo");
    rustix::fs::mknodat(
        CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    // Opening a FIFO for reading would block forever; the sandbox opens non-blocking and
    // refuses anything but a regular file.
    invalid(env.sandbox.read(&env.resolve("/scratch/fifo")), &env);
    invalid(
        env.sandbox.read_prefix(&env.resolve("/scratch/fifo"), 10),
        &env,
    );
    let (entries, _) = env
        .sandbox
        .walk(&env.resolve("/scratch"), true, 10)
        .unwrap();
    assert_eq!(entries[0].1.kind, EntryKind::Fifo);
}
