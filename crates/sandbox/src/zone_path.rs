//! [`ZonePath`]: a virtual path after normalization, bound to a zone of one sandbox by
//! position and name. Pure data: resolving happens in `sandbox.rs`, access in `ops.rs`.

use std::fmt;
use std::path::{Path, PathBuf};

use golem_protocol::{ToolError, ToolErrorCode};

use crate::path::{Normalized, normalize, shown};

/// A resolved virtual path: `/` (the root), a zone root, or a normalized path inside a zone.
///
/// It names its zone by position and name; a `ZonePath` from another sandbox is refused unless
/// that zone sits at the same position under the same name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ZonePath {
    zone: Option<(usize, String)>,
    rel: PathBuf,
}

impl ZonePath {
    /// A path in the zone at `index` called `name`.
    pub(crate) fn in_zone(index: usize, name: String, rel: PathBuf) -> Self {
        Self {
            zone: Some((index, name)),
            rel,
        }
    }

    /// The zone's position and name; `None` for `/`.
    pub(crate) fn zone_ref(&self) -> Option<(usize, &str)> {
        self.zone
            .as_ref()
            .map(|(index, name)| (*index, name.as_str()))
    }

    /// The root `/`, which lists the zones.
    pub fn root() -> Self {
        Self {
            zone: None,
            rel: PathBuf::new(),
        }
    }

    /// Whether this is `/`.
    pub fn is_root(&self) -> bool {
        self.zone.is_none()
    }

    /// Whether this is the root directory of a zone (`/<zone>`).
    pub fn is_zone_root(&self) -> bool {
        self.zone.is_some() && self.rel.as_os_str().is_empty()
    }

    /// The zone's name; `None` for `/`.
    pub fn zone_name(&self) -> Option<&str> {
        self.zone.as_ref().map(|(_, name)| name.as_str())
    }

    /// The normalized path inside the zone (empty for the zone root and for `/`).
    pub fn relative(&self) -> &Path {
        &self.rel
    }

    /// The last component, if any.
    pub fn file_name(&self) -> Option<&str> {
        self.rel.file_name().and_then(|name| name.to_str())
    }

    /// The parent directory (`/` has none; a zone root's parent is `/`).
    pub fn parent(&self) -> Option<ZonePath> {
        match (&self.zone, self.rel.parent()) {
            (None, _) => None,
            (Some(_), None) => Some(ZonePath::root()),
            (Some(zone), Some(parent)) => Some(ZonePath {
                zone: Some(zone.clone()),
                rel: parent.to_path_buf(),
            }),
        }
    }

    /// A child of this path (`name` must be one plain component; anything else is refused, and
    /// so is joining onto `/`: resolve `/<zone>` instead).
    pub fn join(&self, name: &str) -> Result<ZonePath, ToolError> {
        let joined = format!("{}/{name}", self.virtual_path().trim_end_matches('/'));
        let plain = !name.is_empty() && name != "." && name != ".." && !name.contains('/');
        if !plain {
            return Err(ToolError::new(
                ToolErrorCode::InvalidPath,
                format!("not a plain file name: {}", shown(name)),
            ));
        }
        match (&self.zone, normalize(&joined)?) {
            (Some(zone), Normalized::Zone { rel, .. }) => Ok(ZonePath {
                zone: Some(zone.clone()),
                rel,
            }),
            (None, _) | (_, Normalized::Root) => Err(ToolError::new(
                ToolErrorCode::InvalidPath,
                format!("{joined} is not inside a zone"),
            )),
        }
    }

    /// The virtual path: `/`, `/zone` or `/zone/rel`.
    pub fn virtual_path(&self) -> String {
        match &self.zone {
            None => "/".to_owned(),
            Some((_, name)) if self.rel.as_os_str().is_empty() => format!("/{name}"),
            Some((_, name)) => format!("/{name}/{}", self.rel.to_string_lossy()),
        }
    }

    /// The same zone with another relative path (already normalized by the kernel or by us).
    pub(crate) fn with_relative(&self, rel: PathBuf) -> ZonePath {
        ZonePath {
            zone: self.zone.clone(),
            rel,
        }
    }

    /// The relative path for cap-std: `.` for the zone root.
    pub(crate) fn rel_or_dot(&self) -> &Path {
        if self.rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &self.rel
        }
    }
}

impl fmt::Display for ZonePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.virtual_path())
    }
}
