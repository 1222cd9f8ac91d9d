//! The [`Sandbox`]: the zones of one worker, each opened once as a capability handle, and the
//! translation of virtual paths into [`ZonePath`]s. File operations (`ops.rs`, `write.rs`,
//! `tree.rs`, `walk.rs`) all go through the handles opened here.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, MetadataExt};
use golem_policy::ApprovalRequirement;
use golem_protocol::{ToolError, ToolErrorCode};

use crate::errors::SandboxError;
use crate::path::{Normalized, normalize, shown};
use crate::protected::{ProtectedPaths, ZoneGuard};
use crate::undo::UndoJournal;
use crate::zone::{
    ZoneApproval, ZoneConfig, ZoneMode, ZoneOperation, invalid_name_message, is_valid_zone_name,
};
use crate::zone_path::ZonePath;

/// A configured zone with its directory opened as a capability handle.
#[derive(Debug)]
pub struct Zone {
    name: String,
    mode: ZoneMode,
    approval: ZoneApproval,
    host_path: PathBuf,
    dir: Dir,
    identity: (u64, u64),
}

impl Zone {
    /// The zone's name (its virtual path is `/<name>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ro` or `rw`.
    pub fn mode(&self) -> ZoneMode {
        self.mode
    }

    /// The consent decisions.
    pub fn approval(&self) -> &ZoneApproval {
        &self.approval
    }

    /// The host directory as configured (for diagnostics and `check`; never shown to a model).
    /// Operations never use it: they go through the handle opened at start.
    pub fn host_path(&self) -> &Path {
        &self.host_path
    }

    /// The capability handle every operation is resolved beneath.
    pub(crate) fn dir(&self) -> &Dir {
        &self.dir
    }
}

/// The zones of one worker, and the protected-files policy of each (`protected.rs`). Cheap to
/// clone (`Arc`s inside).
#[derive(Debug, Clone)]
pub struct Sandbox {
    zones: Arc<[Zone]>,
    /// One per zone, in the same order.
    guards: Arc<[ZoneGuard]>,
    /// The session's undo journal: every change through this sandbox keeps a before-image.
    undo: Option<Arc<UndoJournal>>,
}

impl Sandbox {
    /// Opens every zone's directory once (paths relative to `base_dir`, the worker file's
    /// directory). A missing `rw` directory is created; a missing `ro` one is an error. A zone
    /// directory that is itself a symbolic link is followed here, once: the user configured it.
    /// The built-in protected files and each zone's `unprotect` apply from the start; the
    /// caller adds its own with [`Sandbox::protect`].
    pub fn open(base_dir: &Path, zones: &[ZoneConfig]) -> Result<Sandbox, SandboxError> {
        let mut opened: Vec<Zone> = Vec::with_capacity(zones.len());
        let mut guards: Vec<ZoneGuard> = Vec::with_capacity(zones.len());
        for config in zones {
            check_name(&config.name, &opened)?;
            let relative = config
                .path
                .clone()
                .unwrap_or_else(|| PathBuf::from(&config.name));
            let host_path: PathBuf = base_dir.join(relative).components().collect();
            let zone = open_zone(config, host_path)?;
            let root = std::fs::canonicalize(&zone.host_path).ok();
            guards.push(ZoneGuard::new(root, &config.unprotect));
            opened.push(zone);
        }
        check_overlaps(&opened)?;
        Ok(Sandbox {
            zones: opened.into(),
            guards: guards.into(),
            undo: None,
        })
    }

    /// A sandbox with no zones (every path is refused).
    pub fn empty() -> Sandbox {
        Sandbox {
            zones: Arc::from(Vec::new()),
            guards: Arc::from(Vec::new()),
            undo: None,
        }
    }

    /// The same zones with `paths` protected too (the program config's `protected:` patterns,
    /// the host files of the worker's custom toolsets): protection is only ever added.
    pub fn protect(&self, paths: &ProtectedPaths) -> Sandbox {
        if paths.is_empty() {
            return self.clone();
        }
        Sandbox {
            zones: self.zones.clone(),
            guards: self.guards.iter().map(|guard| guard.with(paths)).collect(),
            undo: self.undo.clone(),
        }
    }

    /// The same zones, recording every change in `journal` (see `undo/`); sub-workers'
    /// sandboxes narrowed from this one record in it too.
    pub fn with_undo(&self, journal: Arc<UndoJournal>) -> Sandbox {
        Sandbox {
            undo: Some(journal),
            ..self.clone()
        }
    }

    /// The undo journal changes are recorded in, if any.
    pub fn undo_journal(&self) -> Option<&Arc<UndoJournal>> {
        self.undo.as_ref()
    }

    /// The protected-files policy of each zone, in zone order.
    pub(crate) fn guards(&self) -> &[ZoneGuard] {
        &self.guards
    }

    /// The zones, in configuration order.
    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }

    /// The zone called `name`.
    pub fn zone(&self, name: &str) -> Option<&Zone> {
        self.zones.iter().find(|zone| zone.name == name)
    }

    /// The sandbox of a sub-worker: only zones this one has, by name, on the same directory
    /// handle (a child's `path` is not consulted, so it can never point a zone elsewhere);
    /// `rw` may become `ro` but not the reverse; each approval is the stricter of parent's and
    /// child's; protected files stay protected (the child's `unprotect` can only narrow the
    /// parent's). Never widens.
    pub fn narrow(&self, zones: &[ZoneConfig]) -> Result<Sandbox, SandboxError> {
        let mut narrowed: Vec<Zone> = Vec::with_capacity(zones.len());
        let mut guards: Vec<ZoneGuard> = Vec::with_capacity(zones.len());
        for config in zones {
            check_name(&config.name, &narrowed)?;
            let index = self
                .zones
                .iter()
                .position(|zone| zone.name == config.name)
                .ok_or_else(|| SandboxError::UnknownZone {
                    zone: config.name.clone(),
                    known: self.known_zones(),
                })?;
            let parent = &self.zones[index];
            guards.push(
                self.guards
                    .get(index)
                    .map(|guard| guard.narrowed(&config.unprotect))
                    .unwrap_or_default(),
            );
            let mode = match (parent.mode, config.mode) {
                (ZoneMode::Ro, ZoneMode::Rw) => {
                    return Err(SandboxError::Widening {
                        zone: config.name.clone(),
                    });
                }
                (ZoneMode::Ro, ZoneMode::Ro) | (ZoneMode::Rw, ZoneMode::Ro) => ZoneMode::Ro,
                (ZoneMode::Rw, ZoneMode::Rw) => ZoneMode::Rw,
            };
            let dir = parent
                .dir
                .try_clone()
                .map_err(|source| SandboxError::Open {
                    zone: config.name.clone(),
                    path: parent.host_path.clone(),
                    source,
                })?;
            narrowed.push(Zone {
                name: config.name.clone(),
                mode,
                approval: parent.approval.strictest(&config.approval),
                host_path: parent.host_path.clone(),
                dir,
                identity: parent.identity,
            });
        }
        check_overlaps(&narrowed)?;
        Ok(Sandbox {
            zones: narrowed.into(),
            guards: guards.into(),
            undo: self.undo.clone(),
        })
    }

    /// Whether `other`'s zone `name` is the same directory as this sandbox's zone `name`.
    pub fn same_directory(&self, other: &Sandbox, name: &str) -> bool {
        match (self.zone(name), other.zone(name)) {
            (Some(a), Some(b)) => a.identity == b.identity,
            (None, _) | (_, None) => false,
        }
    }

    /// Resolves a virtual path. Malformed paths, `..` leaving a zone and unknown zones are
    /// `INVALID_PATH` (the message lists the known zones); `/` is [`ZonePath::root`].
    pub fn resolve(&self, virtual_path: &str) -> Result<ZonePath, ToolError> {
        match normalize(virtual_path)? {
            Normalized::Root => Ok(ZonePath::root()),
            Normalized::Zone { zone, rel } => {
                let index = self
                    .zones
                    .iter()
                    .position(|candidate| candidate.name == zone)
                    .ok_or_else(|| {
                        ToolError::new(
                            ToolErrorCode::InvalidPath,
                            format!(
                                "unknown zone `{zone}` in {}; paths start with a zone: {}",
                                shown(virtual_path),
                                self.known_zones()
                            ),
                        )
                    })?;
                Ok(ZonePath::in_zone(index, zone, rel))
            }
        }
    }

    /// `PERMISSION_DENIED` unless `path` is in an `rw` zone (checked before any approval).
    pub fn check_writable(&self, path: &ZonePath) -> Result<(), ToolError> {
        match self.zone_of(path)? {
            None => Err(ToolError::new(
                ToolErrorCode::PermissionDenied,
                "/ is the list of zones and cannot be changed; write inside a zone, /<zone>/<path>",
            )),
            Some(zone) => match zone.mode {
                ZoneMode::Rw => Ok(()),
                ZoneMode::Ro => Err(ToolError::new(
                    ToolErrorCode::PermissionDenied,
                    format!(
                        "zone {} is read-only (mode: ro): cannot change {}",
                        zone.name,
                        path.virtual_path()
                    ),
                )),
            },
        }
    }

    /// The zone's approval requirement for `op` on `path`; blocked names the zone and the
    /// operation (`delete is blocked in zone output`).
    pub fn requirement(&self, path: &ZonePath, op: ZoneOperation) -> ApprovalRequirement {
        match self.zone_of(path) {
            Ok(Some(zone)) => zone.approval.requirement(&zone.name, op),
            Ok(None) => ApprovalRequirement::blocked(format!(
                "{op} is blocked on /: it is the list of zones"
            )),
            Err(err) => ApprovalRequirement::blocked(err.message),
        }
    }

    /// The zone of `path` (`None` for `/`); a path from another sandbox is refused.
    pub(crate) fn zone_of(&self, path: &ZonePath) -> Result<Option<&Zone>, ToolError> {
        match path.zone_ref() {
            None => Ok(None),
            Some((index, name)) => match self.zones.get(index) {
                Some(zone) if zone.name == *name => Ok(Some(zone)),
                Some(_) | None => Err(ToolError::new(
                    ToolErrorCode::InvalidPath,
                    format!(
                        "{} belongs to another sandbox; resolve it again",
                        path.virtual_path()
                    ),
                )),
            },
        }
    }

    /// The zone of a path that must be inside one (`/` is refused with `what` in the message).
    pub(crate) fn zone_for(&self, path: &ZonePath, what: &str) -> Result<&Zone, ToolError> {
        self.zone_of(path)?.ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::InvalidPath,
                format!("cannot {what} /: it is the list of zones; use /<zone>/<path>"),
            )
        })
    }

    /// The known zones for messages: `/input, /output` or `no zones are configured`.
    pub(crate) fn known_zones(&self) -> String {
        if self.zones.is_empty() {
            return "no zones are configured".to_owned();
        }
        self.zones
            .iter()
            .map(|zone| format!("/{}", zone.name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn check_name(name: &str, seen: &[Zone]) -> Result<(), SandboxError> {
    if !is_valid_zone_name(name) {
        return Err(SandboxError::InvalidZoneName {
            name: name.to_owned(),
            message: invalid_name_message(name),
        });
    }
    if seen.iter().any(|zone| zone.name == name) {
        return Err(SandboxError::DuplicateZone {
            zone: name.to_owned(),
        });
    }
    Ok(())
}

/// Refuses zones of different modes whose directories overlap, either way round: a read-only
/// zone inside (or equal to) a read-write one could be changed through the other zone, and so
/// could the part of a read-only zone that holds a read-write one; `ro` would be a promise the
/// sandbox cannot keep. Zones of the same mode may nest.
fn check_overlaps(zones: &[Zone]) -> Result<(), SandboxError> {
    let canonical: Vec<Option<PathBuf>> = zones
        .iter()
        .map(|zone| std::fs::canonicalize(&zone.host_path).ok())
        .collect();
    for (ro, ro_path) in zones.iter().zip(&canonical) {
        if ro.mode != ZoneMode::Ro {
            continue;
        }
        for (rw, rw_path) in zones.iter().zip(&canonical) {
            if rw.mode != ZoneMode::Rw {
                continue;
            }
            let (ro_inside, rw_inside) = match (ro_path, rw_path) {
                (Some(ro_path), Some(rw_path)) => {
                    (ro_path.starts_with(rw_path), rw_path.starts_with(ro_path))
                }
                (None, _) | (_, None) => {
                    let same = ro.identity == rw.identity;
                    (same, same)
                }
            };
            if ro_inside {
                return Err(SandboxError::ReadOnlyInsideWritable {
                    ro_zone: ro.name.clone(),
                    rw_zone: rw.name.clone(),
                });
            }
            if rw_inside {
                return Err(SandboxError::WritableInsideReadOnly {
                    rw_zone: rw.name.clone(),
                    ro_zone: ro.name.clone(),
                });
            }
        }
    }
    Ok(())
}

fn open_zone(config: &ZoneConfig, host_path: PathBuf) -> Result<Zone, SandboxError> {
    let open_err = |source: io::Error, path: &Path| SandboxError::Open {
        zone: config.name.clone(),
        path: path.to_path_buf(),
        source,
    };
    match std::fs::metadata(&host_path) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(SandboxError::NotADirectory {
                zone: config.name.clone(),
                path: host_path,
            });
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => match config.mode {
            ZoneMode::Ro => {
                return Err(SandboxError::MissingZoneDir {
                    zone: config.name.clone(),
                    path: host_path,
                });
            }
            ZoneMode::Rw => {
                std::fs::create_dir_all(&host_path).map_err(|err| open_err(err, &host_path))?
            }
        },
        Err(err) => return Err(open_err(err, &host_path)),
    }
    let dir = Dir::open_ambient_dir(&host_path, ambient_authority())
        .map_err(|err| open_err(err, &host_path))?;
    let meta = dir
        .dir_metadata()
        .map_err(|err| open_err(err, &host_path))?;
    Ok(Zone {
        name: config.name.clone(),
        mode: config.mode,
        approval: config.approval,
        host_path,
        dir,
        identity: (meta.dev(), meta.ino()),
    })
}
