//! Set-id programs and file capabilities (review finding 1): jailed code copied `id` into an
//! rw zone and made it set-uid; on the host the file ran as root. Every way to put a set-uid
//! or set-gid bit or a `security.capability` attribute on a file (or to make a device node)
//! must fail, nothing the run leaves behind may carry one, and every mount of the jail's view
//! must be `nosuid`.

use std::os::unix::fs::PermissionsExt;

use super::super::*;

/// Each attempt prints `NAME DONE` or `NAME refused ERRNO`.
const ATTEMPTS: &str = r#"
import ctypes, errno, os, shutil
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
def attempt(name, f):
    try:
        f()
        print(name, 'DONE')
    except OSError as e:
        print(name, 'refused', errno.errorcode.get(e.errno, e.errno))
def sys(nr, *args):
    def call():
        if libc.syscall(nr, *args) < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    return call
shutil.copy('/usr/bin/id', '/output/suid_id')
attempt('chmod-u+s', lambda: os.chmod('/output/suid_id', 0o4755))
attempt('chmod-g+s', lambda: os.chmod('/output/suid_id', 0o2755))
fd = os.open('/output/suid_id', os.O_RDONLY)
attempt('fchmod', lambda: os.fchmod(fd, 0o4755))
dirfd = os.open('/output', os.O_RDONLY)
attempt('fchmodat', lambda: os.chmod('suid_id', 0o6755, dir_fd=dirfd))
attempt('chmod-syscall', sys(90, b'/output/suid_id', 0o4755))
attempt('fchmodat2', sys(452, AT_FDCWD, b'/output/suid_id', 0o4755, 0))
attempt('open-creat', lambda: os.close(os.open('/output/created', os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt('open-syscall', sys(2, b'/output/created2', os.O_CREAT | os.O_WRONLY, 0o2755))
attempt('creat', sys(85, b'/output/created3', 0o4755))
how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
attempt('openat2', sys(437, AT_FDCWD, b'/output/created4', ctypes.byref(how), 24))
attempt('mknod', lambda: os.mknod('/output/node', 0o104755))
attempt('mknod-device', lambda: os.mknod('/output/mem', 0o20666, os.makedev(1, 1)))
attempt('fcaps', lambda: os.setxattr('/output/suid_id', 'security.capability',
        bytes([1, 0, 0, 2]) + bytes(16)))
attempt('fcaps-fd', lambda: os.setxattr(fd, 'security.capability', bytes([1, 0, 0, 2]) + bytes(16)))
# Ordinary modes still work.
attempt('chmod-plain', lambda: os.chmod('/output/suid_id', 0o755))
"#;

#[tokio::test]
async fn no_set_id_bit_or_file_capability_can_be_set() {
    let env = JailEnv::new();
    let out = env.python(ATTEMPTS).await;
    assert_exit(&out, 0);
    let text = &out.stdout.text;
    for line in text.lines() {
        let done = line.ends_with(" DONE");
        if line.starts_with("chmod-plain") {
            assert!(done, "{text}");
        } else {
            assert!(!done, "{line}\n{text}");
        }
    }
    assert_eq!(text.lines().count(), 15, "{text}\n{}", out.stderr.text);
    // Nothing the run left on the host carries a set-id bit.
    for entry in std::fs::read_dir(env.output("")).unwrap() {
        let entry = entry.unwrap();
        let mode = entry.metadata().unwrap().permissions().mode();
        assert_eq!(mode & 0o6000, 0, "{:?} has mode {mode:o}", entry.path());
    }
}

#[tokio::test]
async fn bash_chmod_cannot_make_a_set_uid_program() {
    // The review's exact steps.
    let env = JailEnv::new();
    let out = env
        .bash("cp /usr/bin/id /output/suid_id && chmod 4755 /output/suid_id; echo status=$?")
        .await;
    assert_exit(&out, 0);
    assert!(out.stdout.text.contains("status=1"), "{}", out.stdout.text);
    let mode = std::fs::metadata(env.output("suid_id"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o755, "mode {mode:o}");
}

/// The mount options of one `/proc/self/mountinfo` line: (mount point, options).
fn mount_options(line: &str) -> (String, Vec<String>) {
    let fields: Vec<&str> = line.split(' ').collect();
    (
        fields[4].to_owned(),
        fields[5].split(',').map(str::to_owned).collect(),
    )
}

#[tokio::test]
async fn every_mount_is_nosuid_and_only_device_nodes_allow_devices() {
    let env = JailEnv::new();
    let out = env.bash("cat /proc/self/mountinfo").await;
    assert_exit(&out, 0);
    let text = &out.stdout.text;
    let mut points = Vec::new();
    for line in text.lines() {
        let (point, options) = mount_options(line);
        let has = |flag: &str| options.iter().any(|o| o == flag);
        assert!(has("nosuid"), "not nosuid: {line}");
        let device = point.starts_with("/dev/") && point != "/dev/shm";
        if device {
            // A device node cannot be opened on a nodev mount; it is read-only instead, so
            // its metadata cannot change.
            assert!(has("ro"), "device mount not read-only: {line}");
        } else {
            assert!(has("nodev"), "not nodev: {line}");
        }
        // `/proc` is the jail's own (its PID namespace's processes; the program writes its
        // own `uid_map` there to drop privileges), not a host tree.
        let writable = ["/output", "/tmp", "/dev/shm", "/proc"].contains(&point.as_str()) || device;
        if !writable {
            assert!(has("ro"), "not read-only: {line}");
        }
        points.push(point);
    }
    for expected in [
        "/",
        "/usr",
        "/etc/passwd",
        "/input",
        "/output",
        "/tmp",
        "/dev/null",
    ] {
        assert!(
            points.iter().any(|p| p == expected),
            "no {expected}: {text}"
        );
    }
}
