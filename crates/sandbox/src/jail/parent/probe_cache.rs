//! The kernel probe's findings kept in a file between processes, so that a worker's launch
//! does not start the probe (a process of its own, a few milliseconds) every time.
//!
//! An entry holds for one boot of one kernel, one helper binary (path, size, modification
//! time) and one user, and for the settings that turn unprivileged user namespaces off: any
//! change to these makes the entry stale and the probe runs again. The entry only decides
//! whether a launch is refused early: the helper applies (and in strict mode insists on) every
//! layer at each run, so a wrong entry can fail a launch or let it start, never weaken a jail.
//! A missing, unreadable or stale file is not an error; writing goes through a temporary file
//! renamed over the entry.
//! Runs in the golem-forge process.

use std::io::Write;
use std::path::Path;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::jail::spec::KernelSupport;

/// Bumped when the file's shape or the probe's meaning changes.
const FORMAT: u32 = 1;

/// Kernel settings (under `/proc/sys`) that decide whether unprivileged user namespaces work.
const SETTINGS: [&str; 3] = [
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
];

/// What an entry was found under; it holds while all of it is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ProbeKey {
    /// The kernel's release and build (`/proc/sys/kernel/osrelease` and `version`).
    kernel: String,
    /// This boot (`/proc/sys/kernel/random/boot_id`).
    boot: String,
    /// The helper binary: path, size and modification time in nanoseconds.
    helper: String,
    uid: u32,
    /// The contents of each of [`SETTINGS`] (empty when absent).
    settings: Vec<String>,
}

impl ProbeKey {
    /// The key of a probe with `helper` now, or `None` when the boot or the helper cannot be
    /// identified (then nothing is cached).
    pub(super) fn current(helper: &Path) -> Option<ProbeKey> {
        let read = |path: &str| std::fs::read_to_string(path).map(|s| s.trim().to_owned());
        let kernel = format!(
            "{} {}",
            read("/proc/sys/kernel/osrelease").ok()?,
            read("/proc/sys/kernel/version").ok()?
        );
        let boot = read("/proc/sys/kernel/random/boot_id").ok()?;
        let meta = std::fs::metadata(helper).ok()?;
        let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some(ProbeKey {
            kernel,
            boot,
            helper: format!(
                "{} {} {}",
                helper.display(),
                meta.len(),
                modified.as_nanos()
            ),
            uid: rustix::process::getuid().as_raw(),
            settings: SETTINGS
                .iter()
                .map(|path| read(path).unwrap_or_default())
                .collect(),
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProbeFile {
    format: u32,
    key: ProbeKey,
    support: KernelSupport,
}

/// The findings stored at `path` for `key`, if the file holds an entry for exactly that key.
pub(super) fn load(path: &Path, key: &ProbeKey) -> Option<KernelSupport> {
    let text = std::fs::read(path).ok()?;
    let file: ProbeFile = serde_json::from_slice(&text).ok()?;
    (file.format == FORMAT && file.key == *key).then_some(file.support)
}

/// Stores `support` for `key` at `path` (its directory made if missing). Failures are
/// returned for the caller to log; the next launch probes again.
pub(super) fn store(path: &Path, key: &ProbeKey, support: &KernelSupport) -> std::io::Result<()> {
    let file = ProbeFile {
        format: FORMAT,
        key: key.clone(),
        support: support.clone(),
    };
    let text = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(&text)?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::LayerSupport;

    fn support(landlock: LayerSupport) -> KernelSupport {
        KernelSupport {
            user_namespaces: LayerSupport::Available(String::new()),
            landlock,
            seccomp: LayerSupport::Available(String::new()),
        }
    }

    fn helper(dir: &Path, contents: &str) -> std::path::PathBuf {
        let path = dir.join("helper");
        std::fs::write(&path, contents).unwrap();
        path
    }

    #[test]
    fn an_entry_holds_for_its_own_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let helper = helper(dir.path(), "v1");
        let key = ProbeKey::current(&helper).unwrap();
        let path = dir.path().join("cache/kernel-support.json");
        let found = support(LayerSupport::Available("ABI 6".into()));
        store(&path, &key, &found).unwrap();
        assert_eq!(load(&path, &key), Some(found));

        // Another helper binary (a rebuilt program) is another key.
        std::fs::write(&helper, "version two").unwrap();
        let rebuilt = ProbeKey::current(&helper).unwrap();
        assert_ne!(rebuilt, key);
        assert_eq!(load(&path, &rebuilt), None);

        // So is another boot.
        let other_boot = ProbeKey {
            boot: "another boot".into(),
            ..key.clone()
        };
        assert_eq!(load(&path, &other_boot), None);
    }

    #[test]
    fn a_damaged_or_foreign_file_is_no_entry() {
        let dir = tempfile::tempdir().unwrap();
        let key = ProbeKey::current(&helper(dir.path(), "v1")).unwrap();
        let path = dir.path().join("kernel-support.json");
        for text in ["", "{", "[]", r#"{"format": 99}"#, "\u{0}\u{1}"] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(load(&path, &key), None, "{text:?}");
        }
        let old_format = serde_json::json!({
            "format": FORMAT + 1,
            "key": key,
            "support": support(LayerSupport::Missing("x".into())),
        });
        std::fs::write(&path, old_format.to_string()).unwrap();
        assert_eq!(load(&path, &key), None);
    }

    #[test]
    fn a_missing_helper_has_no_key() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ProbeKey::current(&dir.path().join("absent")), None);
    }
}
