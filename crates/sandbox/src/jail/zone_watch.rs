//! The cap on what one run writes into the zones. Nothing in the kernel limits a process
//! group's writes to a directory tree short of quotas, so the parent watches instead: it notes
//! how much space and how many inodes the file systems of the read-write zones use when the run
//! starts, looks again every [`POLL`] on a thread of its own, and reports when either grew past
//! the run's cap; the run is then killed like at its timeout. What this cannot tell apart:
//! growth caused by other programs writing to the same file system at the same time counts
//! against the run, and space they free hides some of its writes. A run can overshoot the cap
//! by what it writes in one poll interval (tens of MB on a fast disk). Inodes are capped only
//! on file systems that count them (not btrfs).
//!
//! A run whose zones are seen through copy-on-write layers changes only their upper
//! directories, so the file systems of those are watched instead ([`ZoneWatch::start_on`]).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::oneshot;

use super::JailLimits;
use super::spec::{SpecZone, human_mib};

/// How often the file systems are looked at.
const POLL: Duration = Duration::from_millis(20);

/// One file system holding read-write zones, and its use when the run started.
#[derive(Debug, Clone)]
struct Watched {
    /// A zone on it (any one: the numbers are the file system's).
    path: PathBuf,
    /// The zones on it, for the message.
    zones: Vec<String>,
    bytes: u64,
    inodes: Option<u64>,
}

/// Space and inodes in use on the file system of `path` (inodes when it counts them).
fn usage(path: &std::path::Path) -> Option<(u64, Option<u64>)> {
    let stat = rustix::fs::statvfs(path).ok()?;
    let bytes = stat.f_blocks.saturating_sub(stat.f_bfree) * stat.f_frsize;
    let inodes = (stat.f_files > 0).then(|| stat.f_files.saturating_sub(stat.f_ffree));
    Some((bytes, inodes))
}

/// The watch of one run; [`ZoneWatch::stop`] ends it.
#[derive(Debug)]
pub(crate) struct ZoneWatch {
    stop: Arc<AtomicBool>,
    exceeded: Option<oneshot::Receiver<String>>,
}

impl ZoneWatch {
    /// Starts watching the file systems of the read-write `zones` (nothing to watch: a watch
    /// that never fires).
    pub fn start(zones: &[SpecZone], limits: &JailLimits) -> ZoneWatch {
        let writable = zones.iter().filter(|zone| zone.writable);
        ZoneWatch::start_on(
            writable.map(|zone| (zone.name.as_str(), zone.host.as_path())),
            limits,
        )
    }

    /// Starts watching the file systems of `paths`, each the directory that a zone's writes
    /// land in (the zone itself, or the upper directory of its copy-on-write layer).
    pub fn start_on<'a>(
        paths: impl IntoIterator<Item = (&'a str, &'a std::path::Path)>,
        limits: &JailLimits,
    ) -> ZoneWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let mut by_device: BTreeMap<u64, Watched> = BTreeMap::new();
        for (name, path) in paths {
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            if let Some(watched) = by_device.get_mut(&meta.dev()) {
                watched.zones.push(name.to_owned());
                continue;
            }
            if let Some((bytes, inodes)) = usage(path) {
                by_device.insert(
                    meta.dev(),
                    Watched {
                        path: path.to_path_buf(),
                        zones: vec![name.to_owned()],
                        bytes,
                        inodes,
                    },
                );
            }
        }
        if by_device.is_empty() {
            return ZoneWatch {
                stop,
                exceeded: None,
            };
        }
        let (send, receive) = oneshot::channel();
        let watched: Vec<Watched> = by_device.into_values().collect();
        let (max_bytes, max_files) = (limits.zone_write_bytes, limits.zone_files);
        let stopped = stop.clone();
        std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(POLL);
                if let Some(why) = over_cap(&watched, max_bytes, max_files) {
                    let _ = send.send(why);
                    return;
                }
            }
        });
        ZoneWatch {
            stop,
            exceeded: Some(receive),
        }
    }

    /// Resolves with the reason when the run passed its cap; never otherwise.
    pub async fn exceeded(&mut self) -> String {
        match self.exceeded.as_mut() {
            Some(receive) => match receive.await {
                Ok(why) => why,
                Err(_) => std::future::pending().await,
            },
            None => std::future::pending().await,
        }
    }

    /// Ends the watch.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for ZoneWatch {
    /// Ends the watch (its thread stops at its next look).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Why the run is over its cap, if it is.
fn over_cap(watched: &[Watched], max_bytes: u64, max_files: u64) -> Option<String> {
    for fs in watched {
        let (bytes, inodes) = usage(&fs.path)?;
        let zones = fs
            .zones
            .iter()
            .map(|zone| format!("/{zone}"))
            .collect::<Vec<_>>()
            .join(", ");
        let grown = bytes.saturating_sub(fs.bytes);
        if grown > max_bytes {
            return Some(format!(
                "it wrote more than {} into the zones, the cap of one run (the file system of \
                 {zones} grew by {})",
                human_mib(max_bytes),
                human_mib(grown)
            ));
        }
        if let (Some(now), Some(before)) = (inodes, fs.inodes) {
            let made = now.saturating_sub(before);
            if made > max_files {
                return Some(format!(
                    "it made more than {max_files} files in the zones, the cap of one run \
                     ({made} new on the file system of {zones})"
                ));
            }
        }
    }
    None
}
