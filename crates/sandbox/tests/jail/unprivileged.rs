//! The jail's suites as an ordinary user. CI and containers run the tests as `root`, for whom
//! the kernel waives some limits (`RLIMIT_NPROC`) and the jail relies on cgroups instead; a
//! desktop user is the opposite case. When this process is `root`, the zone escape suite and
//! the jail's behaviour and escape suites run again in a child process of this test binary with uid and gid 65534 (`setpriv`,
//! from util-linux); when it is not, the suites in this very run already are that case.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

/// The unprivileged id the suites run as.
const NOBODY: &str = "65534";

#[test]
fn the_jail_suites_hold_for_an_ordinary_user() {
    if !rustix::process::getuid().is_root() {
        // Every other test of this binary already runs as this ordinary user.
        assert!(!rustix::process::geteuid().is_root());
        return;
    }
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // The build directory may sit below a folder only root can enter (a private checkout):
    // the test binary and the helper run from copies in the shared temporary directory.
    let copy = |from: PathBuf, name: &str| {
        let to = home.path().join(name);
        std::fs::copy(&from, &to).unwrap();
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
        to
    };
    let exe = copy(std::env::current_exe().unwrap(), "runner");
    let jail_helper = copy(super::helper(), "golem-jail");
    let output = Command::new("setpriv")
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "--",
        ])
        .arg(&exe)
        // `escapes` selects both the zone escape suite and the jail's.
        .args([
            "escapes",
            "jail::behaviour",
            "jail::changeset",
            "--test-threads=2",
        ])
        .env("HOME", home.path())
        .env("TMPDIR", home.path())
        .env(super::HELPER_COPY_VAR, &jail_helper)
        .output()
        .unwrap_or_else(|e| {
            panic!("setpriv could not run ({e}): install it with `apt-get install -y util-linux`")
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let passed: u32 = stdout
        .lines()
        .find_map(|line| line.strip_prefix("test result: ok. "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no test result line:\n{stdout}\n{stderr}"));
    assert!(
        passed >= 30,
        "only {passed} tests ran as uid {NOBODY}:\n{stdout}"
    );
}
