//! Test environment: a worker directory with zones, and an `outside` directory of sentinel
//! files that no operation may ever read or change.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use golem_policy::ApprovalDecisionType;
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::{Sandbox, ZoneApproval, ZoneConfig, ZoneMode, ZonePath};
use tempfile::TempDir;

/// The content of every sentinel file outside the zones.
pub const SECRET: &[u8] = b"OUTSIDE-SECRET-7f3a";

/// A temporary worker directory with zones `input` (ro), `output` and `scratch` (rw), and an
/// `outside` directory with sentinel files.
pub struct Env {
    pub tmp: TempDir,
    pub sandbox: Sandbox,
    before: BTreeMap<PathBuf, Vec<u8>>,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(outside.join("sub")).unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        std::fs::write(outside.join("sub/secret.txt"), SECRET).unwrap();
        std::fs::write(outside.join("passwd"), SECRET).unwrap();
        let work = tmp.path().join("work");
        std::fs::create_dir_all(work.join("input/docs")).unwrap();
        std::fs::write(work.join("input/hello.txt"), b"hello from input").unwrap();
        std::fs::write(work.join("input/docs/a.md"), b"# a").unwrap();
        let zones = vec![
            ZoneConfig::new("input", ZoneMode::Ro),
            ZoneConfig::new("output", ZoneMode::Rw).with_approval(ZoneApproval {
                create: Some(ApprovalDecisionType::PreApproved),
                write: ApprovalDecisionType::Ask,
                delete: ApprovalDecisionType::Blocked,
            }),
            ZoneConfig::new("scratch", ZoneMode::Rw),
        ];
        let sandbox = Sandbox::open(&work, &zones).unwrap();
        let before = snapshot(&outside);
        Env {
            tmp,
            sandbox,
            before,
        }
    }

    pub fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }

    pub fn work(&self) -> PathBuf {
        self.tmp.path().join("work")
    }

    /// The host directory of a zone.
    pub fn zone_dir(&self, zone: &str) -> PathBuf {
        self.work().join(zone)
    }

    pub fn resolve(&self, path: &str) -> ZonePath {
        self.sandbox
            .resolve(path)
            .unwrap_or_else(|err| panic!("resolve {path}: {err}"))
    }

    /// Asserts that nothing outside the zones changed (no file added, removed or modified).
    pub fn assert_outside_untouched(&self) {
        assert_eq!(
            snapshot(&self.outside()),
            self.before,
            "the outside directory changed"
        );
    }
}

/// Every file under `dir` with its content (symlinks as their target text).
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(path, target.into_os_string().into_encoded_bytes());
            } else if meta.is_dir() {
                out.insert(path.clone(), b"<dir>".to_vec());
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// Asserts an error code, and that the message names no host path.
pub fn assert_code<T: std::fmt::Debug>(
    result: Result<T, ToolError>,
    code: ToolErrorCode,
    env: &Env,
) -> ToolError {
    let err = match result {
        Ok(value) => panic!("expected {code}, got Ok({value:?})"),
        Err(err) => err,
    };
    assert_eq!(err.code, code, "{}", err.message);
    let host = env.tmp.path().to_string_lossy().into_owned();
    assert!(
        !err.message.contains(&host),
        "message leaks a host path: {}",
        err.message
    );
    err
}

/// Asserts that no byte of the secret is in `bytes`.
pub fn assert_no_secret(bytes: &[u8]) {
    assert!(
        !bytes.windows(SECRET.len()).any(|window| window == SECRET),
        "read a byte sequence from outside the zone"
    );
}

/// Creates a symbolic link at `link` pointing to `target`.
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// Asserts an error code only (for requests whose own text spells a host path, which the
/// message may quote back).
pub fn assert_code_only<T: std::fmt::Debug>(result: Result<T, ToolError>, code: ToolErrorCode) {
    match result {
        Ok(value) => panic!("expected {code}, got Ok({value:?})"),
        Err(err) => assert_eq!(err.code, code, "{}", err.message),
    }
}
