//! The cap on what one run writes into the zones. Nothing in the kernel limits a process
//! group's writes to a directory tree short of quotas, so the parent watches instead, on a
//! thread of its own, in two ways:
//!
//! - It notes how much space and how many inodes the file systems of the read-write zones use
//!   when the run starts, looks again every [`POLL`], and reports when either grew past the
//!   run's cap. What this cannot tell apart: growth caused by other programs writing to the
//!   same file system at the same time counts against the run, and space they free hides some
//!   of its writes. A run can overshoot the cap by what it writes in one poll interval (tens of
//!   MB on a fast disk). Inodes are capped only on file systems that count them (not btrfs).
//! - Allocated space misses what a file can occupy without holding it: a sparse file (made by
//!   `truncate` or a seek past its end) holds no blocks yet fills its whole size once written
//!   or copied. A run whose zones are seen through copy-on-write layers (every program a
//!   worker's tools run: [`ZoneWatch::start_on`]) changes only their upper directories, which
//!   start empty and hold only what the run wrote, and are copied into the zones when the
//!   changeset is applied, each hard link as a file of its own. So those trees are walked too,
//!   each path of a regular file counted at the larger of its apparent size and its allocated
//!   blocks, and the watch reports when that total passes the cap. A file counts at its size
//!   at the time of the walk (one extended then shrunk between two walks is not seen); a
//!   directory the run shut to us is skipped (the watch never changes what it walks: the run
//!   owns those trees, and a path-based change there could be turned onto a host file). After
//!   a walk that took `d` the next comes no sooner than [`WALK_SHARE`] times `d` later (at
//!   least [`POLL`]), so the walks take a bounded share of one core.
//!
//! A run that writes its zones directly ([`ZoneWatch::start`]: git's commands) is watched by
//! its file systems alone: walking a user's whole zone at every command would cost more than
//! such a run takes, and its programs are git's own.
//!
//! Runs in the golem-forge process.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::jail::JailLimits;
use crate::jail::spec::{SpecZone, human_mib};

/// How often the file systems are looked at.
const POLL: Duration = Duration::from_millis(20);

/// A walk of the trees is followed by a pause this many times as long as it took, so that
/// walking takes at most a tenth of the watch thread's time.
const WALK_SHARE: u32 = 9;

/// The copy-on-write layers' upper directories the writes land in.
#[derive(Debug, Clone)]
struct Trees {
    roots: Vec<PathBuf>,
    /// The zones, for the message.
    zones: Vec<String>,
}

impl Trees {
    /// What the regular files under the roots can occupy: each path at the larger of its
    /// apparent size and its allocated blocks. Symbolic links are not followed; what cannot be
    /// read (a directory the run shut, an entry gone meanwhile) is skipped.
    fn occupied(&self) -> u64 {
        let mut total = 0u64;
        let mut stack = self.roots.clone();
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                // `DirEntry::metadata` does not follow a symbolic link.
                let Ok(meta) = entry.metadata() else {
                    continue;
                };
                if meta.is_dir() {
                    stack.push(entry.path());
                } else if meta.is_file() {
                    total = total.saturating_add(occupies(&meta));
                }
            }
        }
        total
    }
}

/// What a regular file can occupy: its apparent size, or its allocated blocks when those are
/// more (space allocated past its end).
fn occupies(meta: &std::fs::Metadata) -> u64 {
    meta.len().max(meta.blocks().saturating_mul(512))
}

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
fn usage(path: &Path) -> Option<(u64, Option<u64>)> {
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
        ZoneWatch::start_with(
            writable.map(|zone| (zone.name.as_str(), zone.host.as_path())),
            false,
            limits,
        )
    }

    /// Starts watching the file systems and trees of `paths`, each the upper directory of a
    /// zone's copy-on-write layer, where the zone's writes land.
    pub fn start_on<'a>(
        paths: impl IntoIterator<Item = (&'a str, &'a Path)>,
        limits: &JailLimits,
    ) -> ZoneWatch {
        ZoneWatch::start_with(paths, true, limits)
    }

    /// Starts watching `paths`, each the directory that a zone's writes land in, and with
    /// `walk` their trees too (see the module's header).
    fn start_with<'a>(
        paths: impl IntoIterator<Item = (&'a str, &'a Path)>,
        walk: bool,
        limits: &JailLimits,
    ) -> ZoneWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let mut by_device: BTreeMap<u64, Watched> = BTreeMap::new();
        let mut trees = Trees {
            roots: Vec::new(),
            zones: Vec::new(),
        };
        for (name, path) in paths {
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            if walk {
                trees.roots.push(path.to_path_buf());
                trees.zones.push(name.to_owned());
            }
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
        if by_device.is_empty() && trees.roots.is_empty() {
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
            let mut next_walk = Instant::now();
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(POLL);
                if let Some(why) = over_cap(&watched, max_bytes, max_files) {
                    let _ = send.send(why);
                    return;
                }
                let started = Instant::now();
                if trees.roots.is_empty() || started < next_walk {
                    continue;
                }
                if let Some(why) = trees_over_cap(&trees, max_bytes) {
                    let _ = send.send(why);
                    return;
                }
                next_walk = Instant::now() + POLL.max(started.elapsed() * WALK_SHARE);
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

/// Why the run is over its cap by what the files it wrote can occupy, if it is.
fn trees_over_cap(trees: &Trees, max_bytes: u64) -> Option<String> {
    let grown = trees.occupied();
    if grown <= max_bytes {
        return None;
    }
    let zones = trees
        .zones
        .iter()
        .map(|zone| format!("/{zone}"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "it wrote more than {} into the zones, the cap of one run (its files in {zones} can \
         occupy {} more, each counted at its apparent size)",
        human_mib(max_bytes),
        human_mib(grown)
    ))
}

/// Why the run is over its cap by what its zones' file systems use, if it is.
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
