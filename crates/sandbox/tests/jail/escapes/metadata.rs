//! Metadata of read-only files (review finding 2): Landlock does not cover `chmod`, `chown`,
//! `utime`, extended attributes or inode flags, and `ro` zones and system paths were plain bind
//! mounts, so all of these changed host files. They are read-only mounts now: the kernel
//! answers `EROFS`. Changes to system files are attempted as no-ops (the current mode, owner and
//! time), so a broken jail still changes nothing on the host.

use std::os::unix::fs::MetadataExt;

use super::super::*;

/// Prints `refused` or `CHANGED: COMMAND` per line.
const TRY: &str =
    "t() { if \"$@\" 2>/dev/null; then echo \"CHANGED: $*\"; else echo refused; fi; }\n";

const SET_NOATIME: &str = "import array, fcntl, os, sys\n\
fd = os.open(sys.argv[1], os.O_RDONLY)\n\
flags = array.array('l', [0])\n\
fcntl.ioctl(fd, 0x80086601, flags)\n\
fcntl.ioctl(fd, 0x40086602, array.array('l', [flags[0] | 0x80]))\n";

fn snapshot(path: &std::path::Path) -> (u32, u32, i64, i64, Vec<std::ffi::OsString>) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let xattrs = list_xattrs(path);
    (
        meta.mode(),
        meta.uid(),
        meta.mtime(),
        meta.mtime_nsec(),
        xattrs,
    )
}

fn list_xattrs(path: &std::path::Path) -> Vec<std::ffi::OsString> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, sys; print(sorted(os.listxattr(sys.argv[1])))",
        ])
        .arg(path)
        .output()
        .unwrap();
    vec![std::ffi::OsString::from(
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )]
}

#[tokio::test]
async fn read_only_zone_metadata_cannot_change() {
    let env = JailEnv::new();
    let file = env.tmp.path().join("work/input/data.txt");
    let dir = env.tmp.path().join("work/input");
    let before = (snapshot(&file), snapshot(&dir));
    let out = env
        .bash(&metadata_script(&["/input/data.txt", "/input"]))
        .await;
    assert_exit(&out, 0);
    assert!(!out.stdout.text.contains("CHANGED"), "{}", out.stdout.text);
    assert_eq!(
        out.stdout.text.matches("refused").count(),
        10,
        "{}",
        out.stdout.text
    );
    assert_eq!((snapshot(&file), snapshot(&dir)), before);
}

/// The attempts on each target: mode, owner, times, a user attribute, an inode flag.
fn metadata_script(targets: &[&str]) -> String {
    let mut script = String::from(TRY);
    script.push_str("cat > /tmp/noatime.py <<'PY'\n");
    script.push_str(SET_NOATIME);
    script.push_str("PY\n");
    for target in targets {
        script.push_str(&format!(
            "t chmod 600 {target}\n\
             t chown \"$(id -u):$(id -g)\" {target}\n\
             t touch -d '2001-01-01 00:00' {target}\n\
             t python3 -c \"import os; os.setxattr('{target}', 'user.x', b'1')\"\n\
             t python3 /tmp/noatime.py {target}\n"
        ));
    }
    script
}

#[tokio::test]
async fn system_files_and_device_nodes_cannot_change() {
    let env = JailEnv::new();
    let watched = ["/dev/null", "/usr/bin/bash", "/etc/passwd", "/usr"];
    let before: Vec<_> = watched
        .iter()
        .map(|p| snapshot(std::path::Path::new(p)))
        .collect();
    // No-op changes: the same mode, owner and times they have.
    let mut script = String::from(TRY);
    for target in watched {
        script.push_str(&format!(
            "t chmod \"$(stat -c %a {target})\" {target}\n\
             t chown \"$(stat -c %u:%g {target})\" {target}\n\
             t touch -r {target} {target}\n"
        ));
    }
    // Device nodes still work.
    script.push_str("echo x > /dev/null && head -c 4 /dev/zero | wc -c\n");
    let out = env.bash(&script).await;
    assert_exit(&out, 0);
    assert!(!out.stdout.text.contains("CHANGED"), "{}", out.stdout.text);
    assert_eq!(
        out.stdout.text.matches("refused").count(),
        watched.len() * 3,
        "{}",
        out.stdout.text
    );
    assert!(out.stdout.text.ends_with("4\n"), "{}", out.stdout.text);
    let after: Vec<_> = watched
        .iter()
        .map(|p| snapshot(std::path::Path::new(p)))
        .collect();
    assert_eq!(after, before);
}

#[tokio::test]
async fn metadata_in_a_read_write_zone_still_changes() {
    let env = JailEnv::new();
    let out = env
        .bash(
            "echo hi > /output/f && chmod 600 /output/f && touch -d '2001-01-01 00:00' /output/f \
             && stat -c '%a %Y' /output/f",
        )
        .await;
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "600 978307200\n");
}
