//! Changeset runs (issue 26): a jailed run sees each `rw` zone through a copy-on-write layer,
//! the zone is unchanged after it, and what it did comes back as a changeset that can be
//! previewed, applied (the zone then has exactly those changes, as if the run had written it
//! directly) or discarded; changes that may not be applied refuse the whole changeset.

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use golem_sandbox::ZoneOperation;
use golem_sandbox::changeset::{ChangeKind, Changeset, ChangesetError, Content};
use golem_sandbox::jail::{ChangesetRun, JailLimits, ZoneWrites};

use super::*;

/// A worker directory with zones `input` (ro) and `output` (rw), `output` holding a small
/// tree for a script to change.
struct Env {
    tmp: TempDir,
    sandbox: Sandbox,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        let output = work.join("output");
        for dir in ["input", "output", "output/tree/sub", "output/redo"] {
            std::fs::create_dir_all(work.join(dir)).unwrap();
        }
        std::fs::write(work.join("input/data.txt"), "input data\n").unwrap();
        for (name, content) in [
            ("keep.txt", "keep\n"),
            ("modify.txt", "old\n"),
            ("delete.txt", "bye\n"),
            ("script.sh", "#!/bin/sh\necho hi\n"),
            ("tree/a.txt", "a\n"),
            ("tree/sub/b.txt", "b\n"),
            ("redo/old.txt", "old\n"),
        ] {
            std::fs::write(output.join(name), content).unwrap();
            std::fs::set_permissions(output.join(name), PermissionsExt::from_mode(0o644)).unwrap();
        }
        for dir in ["", "tree", "tree/sub", "redo"] {
            std::fs::set_permissions(output.join(dir), PermissionsExt::from_mode(0o755)).unwrap();
        }
        let sandbox = Sandbox::open(
            &work,
            &[
                ZoneConfig::new("input", ZoneMode::Ro),
                ZoneConfig::new("output", ZoneMode::Rw),
            ],
        )
        .unwrap();
        Env { tmp, sandbox }
    }

    fn zone(&self) -> PathBuf {
        self.tmp.path().join("work/output")
    }

    fn jail(&self, policy: JailPolicy) -> Jail {
        Jail::new(helper(), self.sandbox.clone(), policy).with_zone_writes(ZoneWrites::Changeset)
    }

    async fn run(&self, script: &str) -> ChangesetRun {
        self.run_with(JailPolicy::default(), script, Duration::from_secs(30))
            .await
    }

    /// Runs `script` (with umask 022) in a jail whose zones are copy-on-write layers.
    async fn run_with(&self, policy: JailPolicy, script: &str, timeout: Duration) -> ChangesetRun {
        let script = format!("umask 022\n{script}");
        let command = script_command("bash", "main.sh", &script, timeout);
        self.jail(policy)
            .run_changeset(&command, &CancellationToken::new())
            .await
            .unwrap()
    }

    /// Runs `script` in the ordinary jail: it changes the zone directly.
    async fn run_direct(&self, script: &str) -> JailOutput {
        let script = format!("umask 022\n{script}");
        let command = script_command("bash", "main.sh", &script, Duration::from_secs(30));
        Jail::new(helper(), self.sandbox.clone(), JailPolicy::default())
            .run(&command, &CancellationToken::new())
            .await
            .unwrap()
    }
}

/// One entry of a tree as a test compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Dir(u32),
    File(u32, Vec<u8>),
    Link(PathBuf),
    Other,
}

/// Every entry under `root` (its own mode included, as ``), never following a link.
fn snapshot(root: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let mode = meta.permissions().mode() & 0o7777;
        let entry = if meta.is_dir() {
            for child in std::fs::read_dir(&path).unwrap() {
                stack.push(child.unwrap().path());
            }
            Entry::Dir(mode)
        } else if meta.is_symlink() {
            Entry::Link(std::fs::read_link(&path).unwrap())
        } else if meta.is_file() {
            // A file without read permission, for an ordinary user.
            let content = std::fs::read(&path).unwrap_or_else(|_| b"<unreadable>".to_vec());
            Entry::File(mode, content)
        } else {
            Entry::Other
        };
        out.insert(rel, entry);
    }
    out
}

/// The changes, one line each.
fn listed(changeset: &Changeset) -> Vec<String> {
    changeset
        .changes()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[track_caller]
fn changeset(run: ChangesetRun) -> Changeset {
    assert_exit(&run.output, 0);
    run.changeset.unwrap()
}

#[track_caller]
fn refusal(run: ChangesetRun) -> (String, String) {
    assert_exit(&run.output, 0);
    match run.changeset {
        Err(ChangesetError::Refused { path, reason }) => (path, reason),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Creates, modifies, deletes, changes a mode, links, removes a tree, and removes and makes
/// again a directory (an opaque one).
const SCRIPT: &str = "set -e
umask 022
echo new > created.txt
echo changed > modify.txt
rm delete.txt
chmod 755 script.sh
ln -s keep.txt link
rm -rf tree
rm -rf redo && mkdir redo && echo fresh > redo/new.txt
mkdir -p newdir/inner && echo x > newdir/inner/x.txt
cat modify.txt
ls tree 2>/dev/null || echo no-tree
";

#[tokio::test]
async fn the_zone_is_unchanged_and_the_changes_come_back_in_order() {
    let env = Env::new();
    let before = snapshot(&env.zone());
    let run = env.run(SCRIPT).await;
    // The program saw its own changes.
    assert_eq!(run.output.stdout.text, "changed\nno-tree\n");
    let changes = changeset(run);
    assert_eq!(
        snapshot(&env.zone()),
        before,
        "the zone changed during the run"
    );
    assert_eq!(
        listed(&changes),
        [
            "create /output/created.txt (file, 0644, 4 bytes)",
            "delete /output/delete.txt",
            "link /output/link -> keep.txt",
            "write /output/modify.txt (0644, 8 bytes)",
            "create /output/newdir (directory, 0755)",
            "create /output/newdir/inner (directory, 0755)",
            "create /output/newdir/inner/x.txt (file, 0644, 2 bytes)",
            "delete /output/redo/old.txt",
            "create /output/redo/new.txt (file, 0644, 6 bytes)",
            "chmod /output/script.sh (0755)",
            "delete /output/tree/a.txt",
            "delete /output/tree/sub/b.txt",
            "delete /output/tree/sub (directory)",
            "delete /output/tree (directory)",
        ]
    );
    let operations: Vec<ZoneOperation> = changes.changes().iter().map(|c| c.operation()).collect();
    use ZoneOperation::{Create, Delete, Write};
    assert_eq!(
        operations,
        [
            Create, Delete, Create, Write, Create, Create, Create, Delete, Create, Write, Delete,
            Delete, Delete, Delete
        ]
    );
    changes.discard().unwrap();
}

#[tokio::test]
async fn applied_the_zone_is_as_if_the_run_had_written_it() {
    let env = Env::new();
    let changes = changeset(env.run(SCRIPT).await);
    let layers = changes.layers_dir().unwrap().to_path_buf();
    assert_eq!(changes.apply(&env.sandbox).unwrap(), 14);
    assert!(!layers.exists(), "the layers outlived the apply");

    let direct = Env::new();
    assert_exit(&direct.run_direct(SCRIPT).await, 0);
    assert_eq!(snapshot(&env.zone()), snapshot(&direct.zone()));
}

#[tokio::test]
async fn discarded_the_zone_stays_as_it_was_and_the_layers_are_gone() {
    let env = Env::new();
    let before = snapshot(&env.zone());
    let changes = changeset(env.run(SCRIPT).await);
    let layers = changes.layers_dir().unwrap().to_path_buf();
    assert!(layers.exists());
    changes.discard().unwrap();
    assert!(!layers.exists(), "the layers outlived the discard");
    assert_eq!(snapshot(&env.zone()), before);
}

#[tokio::test]
async fn a_dropped_changeset_removes_its_layers_even_unreadable_ones() {
    let env = Env::new();
    let changes = changeset(
        env.run(
            "mkdir -p locked/deeper && echo x > locked/deeper/f && chmod 000 locked/deeper locked",
        )
        .await,
    );
    assert_eq!(
        listed(&changes),
        [
            "create /output/locked (directory, 0000)",
            "create /output/locked/deeper (directory, 0000)",
            "create /output/locked/deeper/f (file, 0644, 2 bytes)",
        ]
    );
    let layers = changes.layers_dir().unwrap().to_path_buf();
    drop(changes);
    assert!(!layers.exists());
}

#[tokio::test]
async fn what_the_run_made_read_only_or_unreadable_is_applied_with_its_mode() {
    let env = Env::new();
    let script = "mkdir ro && echo x > ro/f && chmod 555 ro && chmod 500 redo; \
                  echo secret > closed && chmod 000 closed";
    let changes = changeset(env.run(script).await);
    changes.apply(&env.sandbox).unwrap();
    let direct = Env::new();
    assert_exit(&direct.run_direct(script).await, 0);
    let (applied, expected) = (snapshot(&env.zone()), snapshot(&direct.zone()));
    // Let the temporary directories be removed.
    for zone in [env.zone(), direct.zone()] {
        for dir in ["ro", "redo"] {
            std::fs::set_permissions(zone.join(dir), PermissionsExt::from_mode(0o755)).unwrap();
        }
    }
    assert_eq!(applied, expected);
    assert_eq!(applied["ro"], Entry::Dir(0o555));
    assert!(matches!(applied["closed"], Entry::File(0, _)));
}

#[tokio::test]
async fn a_file_rewritten_with_the_same_bytes_or_touched_is_no_change() {
    let env = Env::new();
    let changes = changeset(
        env.run(
            "touch keep.txt; echo keep > keep.txt; cp keep.txt k2 && rm k2; chmod 644 modify.txt",
        )
        .await,
    );
    assert!(changes.is_empty(), "{:?}", listed(&changes));
}

#[tokio::test]
async fn a_file_replaced_by_a_directory_and_a_directory_by_a_file() {
    let env = Env::new();
    let script = "umask 022; rm keep.txt && mkdir keep.txt && echo in > keep.txt/in; \
                  rm -rf tree && echo flat > tree; mv modify.txt moved.txt";
    let changes = changeset(env.run(script).await);
    assert_eq!(
        listed(&changes),
        [
            "delete /output/keep.txt",
            "create /output/keep.txt (directory, 0755)",
            "create /output/keep.txt/in (file, 0644, 3 bytes)",
            "delete /output/modify.txt",
            "create /output/moved.txt (file, 0644, 4 bytes)",
            "delete /output/tree/a.txt",
            "delete /output/tree/sub/b.txt",
            "delete /output/tree/sub (directory)",
            "delete /output/tree (directory)",
            "create /output/tree (file, 0644, 5 bytes)",
        ]
    );
    changes.apply(&env.sandbox).unwrap();
    let direct = Env::new();
    assert_exit(&direct.run_direct(script).await, 0);
    assert_eq!(snapshot(&env.zone()), snapshot(&direct.zone()));
}

#[tokio::test]
async fn renaming_a_directory_of_the_zone_becomes_a_copy_and_deletions() {
    let env = Env::new();
    let script = "python3 -c \"import os\ntry:\n    os.rename('tree', 'x')\nexcept OSError as e:\n    print(e.errno)\"; mv tree moved";
    let run = env.run(script).await;
    assert_eq!(
        run.output.stdout.text, "18\n",
        "EXDEV: {}",
        run.output.stderr.text
    );
    let changes = changeset(run);
    assert_eq!(
        listed(&changes),
        [
            "create /output/moved (directory, 0755)",
            "create /output/moved/a.txt (file, 0644, 2 bytes)",
            "create /output/moved/sub (directory, 0755)",
            "create /output/moved/sub/b.txt (file, 0644, 2 bytes)",
            "delete /output/tree/a.txt",
            "delete /output/tree/sub/b.txt",
            "delete /output/tree/sub (directory)",
            "delete /output/tree (directory)",
        ]
    );
}

#[tokio::test]
async fn previews_show_text_whole_and_binary_by_size_and_hash() {
    let env = Env::new();
    let changes = changeset(
        env.run("printf 'changed\\n' > modify.txt; printf '\\x00\\x01\\x02' > blob.bin; rm delete.txt; ln -s keep.txt l")
            .await,
    );
    let preview = |path: &str| {
        let change = changes
            .changes()
            .iter()
            .find(|change| change.virtual_path() == path)
            .unwrap();
        changes.preview(&env.sandbox, change).unwrap()
    };
    let modified = preview("/output/modify.txt");
    assert_eq!(
        modified.before,
        Content::Text {
            text: "old\n".into(),
            mode: 0o644
        }
    );
    assert_eq!(
        modified.after,
        Content::Text {
            text: "changed\n".into(),
            mode: 0o644
        }
    );
    let blob = preview("/output/blob.bin");
    assert_eq!(blob.before, Content::Absent);
    assert_eq!(
        blob.after,
        Content::Binary {
            size: 3,
            // sha256 of 00 01 02
            sha256: "ae4b3280e56e2faf83f414a6e3dabe9d5fbe18976544c05fed121accb85b53fc".into(),
            mode: 0o644,
        }
    );
    let deleted = preview("/output/delete.txt");
    assert!(matches!(deleted.before, Content::Text { .. }));
    assert_eq!(deleted.after, Content::Absent);
    assert_eq!(
        preview("/output/l").after,
        Content::Symlink {
            target: "keep.txt".into()
        }
    );
}

#[tokio::test]
async fn a_fifo_refuses_the_whole_changeset() {
    let env = Env::new();
    let (path, reason) = refusal(env.run("echo x > fine.txt; mkfifo pipe").await);
    assert_eq!(path, "/output/pipe");
    assert!(reason.contains("FIFO"), "{reason}");
}

#[tokio::test]
async fn a_socket_refuses_the_whole_changeset() {
    let env = Env::new();
    let (path, reason) = refusal(
        env.run("python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock')\"")
            .await,
    );
    assert_eq!(path, "/output/sock");
    assert!(reason.contains("socket"), "{reason}");
}

#[tokio::test]
async fn set_id_bits_cannot_be_set_and_a_sticky_bit_refuses_the_changeset() {
    let env = Env::new();
    // The jail's seccomp filter refuses set-id modes outright.
    let run = env
        .run("echo x > s; chmod 4755 s 2>/dev/null || echo no-suid; chmod 2755 s 2>/dev/null || echo no-sgid")
        .await;
    assert_eq!(run.output.stdout.text, "no-suid\nno-sgid\n");
    assert_eq!(
        listed(&run.changeset.unwrap()),
        ["create /output/s (file, 0644, 2 bytes)"]
    );
    let (path, reason) = refusal(env.run("echo x > s; chmod 1755 s").await);
    assert_eq!(path, "/output/s");
    assert!(reason.contains("sticky"), "{reason}");
    let (path, reason) = refusal(env.run("mkdir d; chmod 1777 d").await);
    assert_eq!(path, "/output/d");
    assert!(reason.contains("sticky"), "{reason}");
}

#[tokio::test]
async fn symlinks_leading_outside_the_zone_refuse_the_changeset() {
    let env = Env::new();
    for (script, path, shown) in [
        ("ln -s /etc/passwd pw", "/output/pw", "/etc/passwd"),
        (
            "ln -s /output/keep.txt abs",
            "/output/abs",
            "/output/keep.txt",
        ),
        ("ln -s ../.. up", "/output/up", "../.."),
        ("mkdir d && ln -s ../../x d/out", "/output/d/out", "../../x"),
        // Each link stays inside by itself; through `d/up` the second one leaves.
        (
            "mkdir d && ln -s .. d/up && ln -s d/up/.. out",
            "/output/out",
            "d/up/..",
        ),
    ] {
        let (refused, reason) = refusal(env.run(script).await);
        assert_eq!(refused, path, "{script}");
        assert!(
            reason.contains(shown) && reason.contains("outside the zone"),
            "{reason}"
        );
    }
    // Inside the zone, also through other links and up and down again, is fine.
    let changes = changeset(
        env.run("mkdir -p d/e && ln -s ../keep.txt d/k && ln -s d/e/../k k2 && ln -s tree/sub s")
            .await,
    );
    assert_eq!(
        listed(&changes),
        [
            "create /output/d (directory, 0755)",
            "create /output/d/e (directory, 0755)",
            "link /output/d/k -> ../keep.txt",
            "link /output/k2 -> d/e/../k",
            "link /output/s -> tree/sub",
        ]
    );
}

#[tokio::test]
async fn read_only_zones_stay_read_only() {
    let env = Env::new();
    let run = env
        .run("echo x > /input/new 2>/dev/null || echo refused; rm /input/data.txt 2>/dev/null || echo kept")
        .await;
    assert_eq!(run.output.stdout.text, "refused\nkept\n");
    assert!(changeset(run).is_empty());
    assert_eq!(
        std::fs::read_to_string(env.tmp.path().join("work/input/data.txt")).unwrap(),
        "input data\n"
    );
}

#[tokio::test]
async fn the_program_cannot_see_the_layers() {
    let env = Env::new();
    let run = env
        .run("cat /proc/self/mountinfo; ls -a /tmp /; find / -xdev -name 'golem-*' 2>/dev/null")
        .await;
    let text = run.output.stdout.text.clone();
    let changes = changeset(run);
    let layers = changes.layers_dir().unwrap().to_string_lossy().into_owned();
    assert!(!text.contains(&layers), "{text}");
    assert!(!text.contains("golem-changes"), "{text}");
    assert!(
        text.lines()
            .any(|line| line.contains(" /output ") && line.contains(" - overlay ")),
        "{text}"
    );
    assert!(changes.is_empty(), "{:?}", listed(&changes));
}

#[tokio::test]
async fn the_write_cap_watches_the_layer() {
    let env = Env::new();
    let limits = JailLimits {
        zone_write_bytes: 4 << 20,
        ..JailLimits::default()
    };
    let policy = JailPolicy {
        limits,
        ..JailPolicy::default()
    };
    let before = snapshot(&env.zone());
    let run = env
        .run_with(
            policy,
            "for i in $(seq 1 200); do head -c 1000000 /dev/zero > big$i; done",
            Duration::from_secs(60),
        )
        .await;
    assert!(
        matches!(&run.output.exit, JailExit::LimitExceeded(why) if why.contains("/output")),
        "{:?}",
        run.output.exit
    );
    assert_eq!(snapshot(&env.zone()), before);
    run.changeset.unwrap().discard().unwrap();
}

/// Issue 45: a sparse file in the layer would occupy its whole size in the zone once applied,
/// so the cap counts its apparent size, and nothing of the run lands in the zone.
#[tokio::test]
async fn the_write_cap_counts_sparse_files_in_the_layer() {
    let env = Env::new();
    let policy = JailPolicy {
        limits: JailLimits {
            zone_write_bytes: 256 << 20,
            ..JailLimits::default()
        },
        ..JailPolicy::default()
    };
    let before = snapshot(&env.zone());
    let run = env
        .run_with(
            policy,
            "for i in $(seq 1 20); do truncate -s 200M f$i; sleep 0.2; done; echo FINISHED",
            Duration::from_secs(60),
        )
        .await;
    assert!(
        matches!(&run.output.exit, JailExit::LimitExceeded(why) if why.contains("/output")),
        "{:?}",
        run.output.exit
    );
    assert!(!run.output.stdout.text.contains("FINISHED"));
    assert_eq!(snapshot(&env.zone()), before);
    run.changeset.unwrap().discard().unwrap();
}

/// Hard links made in the layer are applied as separate files, so each counts.
#[tokio::test]
async fn the_write_cap_counts_each_hard_link_in_the_layer() {
    let env = Env::new();
    let policy = JailPolicy {
        limits: JailLimits {
            zone_write_bytes: 256 << 20,
            ..JailLimits::default()
        },
        ..JailPolicy::default()
    };
    let before = snapshot(&env.zone());
    let run = env
        .run_with(
            policy,
            "truncate -s 200M one; \
             for i in $(seq 1 20); do ln one link$i; sleep 0.2; done; echo FINISHED",
            Duration::from_secs(60),
        )
        .await;
    assert!(
        matches!(&run.output.exit, JailExit::LimitExceeded(why) if why.contains("/output")),
        "{:?}\n{}",
        run.output.exit,
        run.output.stderr.text
    );
    assert!(!run.output.stdout.text.contains("FINISHED"));
    assert_eq!(snapshot(&env.zone()), before);
    run.changeset.unwrap().discard().unwrap();
}

#[tokio::test]
async fn a_small_sparse_file_in_the_layer_is_not_stopped() {
    let env = Env::new();
    let policy = JailPolicy {
        limits: JailLimits {
            zone_write_bytes: 256 << 20,
            ..JailLimits::default()
        },
        ..JailPolicy::default()
    };
    let run = env
        .run_with(
            policy,
            "truncate -s 1M sparse; head -c 100000 /dev/urandom > data; sleep 1; echo FINISHED",
            Duration::from_secs(60),
        )
        .await;
    assert_eq!(
        run.output.exit,
        JailExit::Code(0),
        "{}",
        run.output.stderr.text
    );
    assert!(run.output.stdout.text.contains("FINISHED"));
    run.changeset.unwrap().discard().unwrap();
}

#[tokio::test]
async fn after_a_timeout_nothing_of_the_run_writes_any_more() {
    let env = Env::new();
    let run = env
        .run_with(
            JailPolicy::default(),
            "(while :; do echo x >> bg.txt; done) & sleep 30",
            Duration::from_millis(700),
        )
        .await;
    assert_eq!(run.output.exit, JailExit::TimedOut);
    let changes = run.changeset.unwrap();
    let [change] = changes.changes() else {
        panic!("{:?}", listed(&changes));
    };
    let ChangeKind::CreateFile { size, .. } = change.kind() else {
        panic!("{change}");
    };
    assert!(*size > 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = match changes.preview(&env.sandbox, change).unwrap().after {
        Content::Text { text, .. } => text.len() as u64,
        Content::Binary { size, .. } => size,
        other => panic!("{other:?}"),
    };
    assert_eq!(after, *size, "the file grew after the scan");
}

#[tokio::test]
async fn protected_paths_refuse_the_changeset() {
    let env = Env::new();
    let (path, reason) = refusal(
        env.run(
            "mkdir -p .git/hooks && echo x > notes.txt && echo '#!/bin/sh' > .git/hooks/pre-commit",
        )
        .await,
    );
    assert!(path.starts_with("/output/.git"), "{path}");
    assert!(reason.starts_with("protected:"), "{reason}");
    // Nothing of it was applied, and nothing can be.
    assert!(!env.zone().join("notes.txt").exists());
}

#[tokio::test]
async fn symlinks_already_in_the_zone_are_not_followed() {
    let env = Env::new();
    let outside = env.tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    symlink(&outside, env.zone().join("away")).unwrap();
    // Replaced by a directory of its own: the link goes, nothing outside is touched.
    let changes = changeset(env.run("rm away && mkdir away && echo x > away/f").await);
    assert_eq!(
        listed(&changes),
        [
            "delete /output/away",
            "create /output/away (directory, 0755)",
            "create /output/away/f (file, 0644, 2 bytes)",
        ]
    );
    changes.apply(&env.sandbox).unwrap();
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    assert!(env.zone().join("away").is_dir());
}

#[tokio::test]
async fn a_jail_without_a_writable_zone_runs_and_has_nothing_to_change() {
    let env = Env::new();
    let read_only = env
        .sandbox
        .narrow(&[ZoneConfig::new("input", ZoneMode::Ro)])
        .unwrap();
    let mut command = script_command(
        "bash",
        "main.sh",
        "cat /input/data.txt",
        Duration::from_secs(30),
    );
    command.cwd_zone = None;
    let jail = Jail::new(helper(), read_only, JailPolicy::default())
        .with_zone_writes(ZoneWrites::Changeset);
    let run = jail
        .run_changeset(&command, &CancellationToken::new())
        .await
        .unwrap();
    assert_exit(&run.output, 0);
    assert_eq!(run.output.stdout.text, "input data\n");
    assert!(run.changeset.unwrap().is_empty());
    let mut process = jail.spawn(&command).await.unwrap();
    assert_eq!(
        process.read_line().await.unwrap().as_deref(),
        Some("input data")
    );
    assert!(!process.has_changes());
    assert!(process.end_with_changes().await.unwrap().is_empty());
}
