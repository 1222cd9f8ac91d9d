//! The cache of MCP servers' tool lists, `<program root>/.golem-forge/mcp-tools/<key>.json`:
//! one file per server, keyed by a SHA-256 of what identifies it (the transport, command,
//! arguments, working directory and its own environment — each value hashed, never stored in
//! clear — and for a jailed server its jail: each zone's name, host directory and mode, and
//! the network; or the URL and the names of its headers). A file holds the server's reported name
//! and version and every tool as the server describes it, so that a session builds its MCP
//! tools without starting any server. Files are written through a temporary file and a rename;
//! a missing, unreadable or corrupt file is a cache miss, never an error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use golem_toolset::time::iso8601;
use rmcp::model::Tool as McpToolInfo;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{McpJailOptions, McpNotice};

/// The format of cache files; another number is a miss.
const FORMAT: u32 = 1;

/// What identifies a server for the cache, with its values as they are used (expanded).
#[derive(Debug, Clone, Copy)]
pub enum Identity<'a> {
    /// A stdio server.
    Stdio {
        /// The program.
        command: &'a str,
        /// Its arguments.
        args: &'a [String],
        /// Its working directory.
        cwd: &'a Path,
        /// Its own variables (expanded); only their hashes are kept.
        env: &'a BTreeMap<String, String>,
    },
    /// A stdio server in the jail.
    Jailed {
        /// The program.
        command: &'a str,
        /// Its arguments.
        args: &'a [String],
        /// Its own variables (expanded); only their hashes are kept.
        env: &'a BTreeMap<String, String>,
        /// Its jail (zones, network) and working directory in it.
        jail: &'a McpJailOptions,
    },
    /// A streamable HTTP server.
    Http {
        /// The endpoint.
        url: &'a str,
        /// Its headers; only their names are kept.
        headers: &'a BTreeMap<String, String>,
    },
}

impl Identity<'_> {
    /// The identity as stored: no secret in clear (variable values hashed, header values
    /// left out).
    fn to_json(self) -> Value {
        match self {
            Identity::Stdio {
                command,
                args,
                cwd,
                env,
            } => json!({
                "transport": "stdio",
                "command": command,
                "args": args,
                "cwd": cwd.to_string_lossy(),
                "env": hashed(env),
            }),
            Identity::Jailed {
                command,
                args,
                env,
                jail,
            } => {
                let zones: Vec<Value> = jail
                    .jail
                    .sandbox()
                    .zones()
                    .iter()
                    .map(|zone| {
                        json!({
                            "name": zone.name(),
                            "path": zone.host_path().to_string_lossy(),
                            "mode": format!("{:?}", zone.mode()),
                        })
                    })
                    .collect();
                json!({
                    "transport": "stdio",
                    "command": command,
                    "args": args,
                    "cwd": jail.cwd,
                    "env": hashed(env),
                    "jail": { "zones": zones, "network": jail.network() },
                })
            }
            Identity::Http { url, headers } => json!({
                "transport": "http",
                "url": url,
                "headers": headers.keys().collect::<Vec<_>>(),
            }),
        }
    }
}

/// Each variable's name with its value's hash.
fn hashed(env: &BTreeMap<String, String>) -> BTreeMap<&str, String> {
    env.iter()
        .map(|(name, value)| (name.as_str(), sha256_hex(value.as_bytes())))
        .collect()
}

/// A server's tool list and what it reported about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedServer {
    /// The name the server reported in the handshake.
    pub server_name: String,
    /// The version the server reported in the handshake.
    pub version: String,
    /// Every tool, as the server describes it.
    pub tools: Vec<McpToolInfo>,
}

impl CachedServer {
    /// The listing of a server that reported `(name, version)`.
    pub fn new((server_name, version): (String, String), tools: Vec<McpToolInfo>) -> Self {
        Self {
            server_name,
            version,
            tools,
        }
    }
}

/// A cache file, as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheFile {
    format: u32,
    key: String,
    /// The server's name in the worker file that last wrote the entry.
    server: String,
    identity: Value,
    fetched_at: String,
    server_name: String,
    server_version: String,
    tools: Vec<McpToolInfo>,
}

/// Why a server's cache entry cannot be used or kept.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The file cannot be read or written, or is not a cache file.
    #[error(transparent)]
    File(#[from] golem_toolset::cache_file::CacheFileError),
    /// The file is of another format or for another server (another key).
    #[error("{}: written for another format or server", .0.display())]
    OtherEntry(PathBuf),
    /// The entry could not be put into JSON.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    /// The toolset has no cache directory.
    #[error("no cache directory")]
    NoDirectory,
}

/// A cache entry that was read.
#[derive(Debug, Clone)]
#[allow(missing_docs)] // fields are named for what they hold
pub struct CacheEntry {
    /// When the list was fetched (`2026-11-25T02:30:00Z`).
    pub fetched_at: String,
    pub listing: CachedServer,
}

/// The cache file of one server, and what the session knows of it.
pub struct CacheSlot {
    path: PathBuf,
    key: String,
    identity: Value,
    notice: Option<McpNotice>,
    /// The listing the session's tools were built from.
    known: Mutex<Option<CachedServer>>,
}

impl CacheSlot {
    /// The slot of the server identified by `identity` in the cache directory `dir`.
    pub fn new(dir: &Path, identity: Identity<'_>, notice: Option<McpNotice>) -> CacheSlot {
        let identity = identity.to_json();
        let key = sha256_hex(identity.to_string().as_bytes());
        CacheSlot {
            path: dir.join(format!("{key}.json")),
            key,
            identity,
            notice,
            known: Mutex::new(None),
        }
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry, `Ok(None)` when there is none, an error saying why it cannot be used when it
    /// is unreadable, corrupt, of another format or of another key.
    pub fn read(&self) -> Result<Option<CacheEntry>, CacheError> {
        let Some(file): Option<CacheFile> =
            golem_toolset::cache_file::read(&self.path, "tool-list cache file")?
        else {
            return Ok(None);
        };
        if file.format != FORMAT || file.key != self.key {
            return Err(CacheError::OtherEntry(self.path.clone()));
        }
        Ok(Some(CacheEntry {
            fetched_at: file.fetched_at,
            listing: CachedServer {
                server_name: file.server_name,
                version: file.server_version,
                tools: file.tools,
            },
        }))
    }

    /// Notes `listing` as the one the session's tools were built from.
    pub fn remember(&self, listing: &CachedServer) {
        if let Ok(mut known) = self.known.lock() {
            *known = Some(listing.clone());
        }
    }

    /// Writes `listing` for the server named `server` (a temporary file renamed over the
    /// entry), and remembers it.
    pub fn write(&self, server: &str, listing: &CachedServer) -> Result<(), CacheError> {
        let file = CacheFile {
            format: FORMAT,
            key: self.key.clone(),
            server: server.to_owned(),
            identity: self.identity.clone(),
            fetched_at: iso8601(SystemTime::now()),
            server_name: listing.server_name.clone(),
            server_version: listing.version.clone(),
            tools: listing.tools.clone(),
        };
        let text = serde_json::to_string_pretty(&file)?;
        golem_toolset::cache_file::replace(&self.path, &text)?;
        self.remember(listing);
        Ok(())
    }

    /// After the server named `server` was started for a call: writes `fresh` when it differs
    /// from the listing the session was built from, and tells the user the new list takes
    /// effect in the next session.
    pub fn update_if_changed(&self, server: &str, fresh: CachedServer) {
        let known = self.known.lock().ok().and_then(|known| known.clone());
        if known.as_ref() == Some(&fresh) {
            return;
        }
        let what = match &known {
            Some(old) if old.version != fresh.version => format!(
                "its version changed ({} → {})",
                display_version(&old.version),
                display_version(&fresh.version)
            ),
            Some(old) if old.tools.len() != fresh.tools.len() => format!(
                "its tool list changed ({} → {} tools)",
                old.tools.len(),
                fresh.tools.len()
            ),
            _ => "its tool list changed".to_owned(),
        };
        let saved = match self.write(server, &fresh) {
            Ok(()) => {
                "the cache is updated; the new list takes effect in the next session".to_owned()
            }
            Err(e) => format!("the cache could not be updated ({e})"),
        };
        let message = format!(
            "MCP server `{server}`: {what} since its tools were cached; {saved} (or run \
             `golem-forge mcp-refresh`)"
        );
        tracing::info!("{message}");
        if let Some(notice) = &self.notice {
            (notice.0)(&message);
        }
    }
}

/// `version` for a message.
fn display_version(version: &str) -> &str {
    if version.is_empty() { "none" } else { version }
}

/// The lowercase hex SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio<'a>(env: &'a BTreeMap<String, String>, args: &'a [String]) -> Identity<'a> {
        Identity::Stdio {
            command: "node",
            args,
            cwd: Path::new("/p"),
            env,
        }
    }

    #[test]
    fn keys_follow_the_identity_and_hide_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let args = vec!["server.js".to_owned()];
        let env: BTreeMap<String, String> = [("TOKEN".to_owned(), "s3cret".to_owned())].into();
        let other: BTreeMap<String, String> = [("TOKEN".to_owned(), "other".to_owned())].into();
        let a = CacheSlot::new(dir.path(), stdio(&env, &args), None);
        let b = CacheSlot::new(dir.path(), stdio(&other, &args), None);
        assert_ne!(a.path(), b.path(), "a different value is another server");
        assert_eq!(
            a.path(),
            CacheSlot::new(dir.path(), stdio(&env, &args), None).path()
        );
        let headers: BTreeMap<String, String> =
            [("Authorization".to_owned(), "Bearer s3cret".to_owned())].into();
        let http = CacheSlot::new(
            dir.path(),
            Identity::Http {
                url: "https://example.com/mcp",
                headers: &headers,
            },
            None,
        );
        let listing = CachedServer::new(("srv".to_owned(), "1.0".to_owned()), Vec::new());
        a.write("files", &listing).unwrap();
        http.write("remote", &listing).unwrap();
        for slot in [&a, &http] {
            let text = std::fs::read_to_string(slot.path()).unwrap();
            assert!(!text.contains("s3cret"), "{text}");
            let entry = slot.read().unwrap().unwrap();
            assert_eq!(entry.listing, listing);
        }
        assert!(
            std::fs::read_to_string(http.path())
                .unwrap()
                .contains("Authorization")
        );
        std::fs::write(a.path(), "{ not json").unwrap();
        assert!(a.read().is_err(), "a corrupt file is reported, not trusted");
        assert!(b.read().unwrap().is_none(), "no file is a miss");
    }

    #[test]
    fn a_jailed_servers_key_holds_its_jail() {
        use golem_sandbox::jail::{Jail, JailPolicy};
        use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};

        let dir = tempfile::tempdir().unwrap();
        for zone in ["docs", "src"] {
            std::fs::create_dir(dir.path().join(zone)).unwrap();
        }
        let open = |zones: &[&str]| {
            let configs: Vec<ZoneConfig> = zones
                .iter()
                .map(|z| ZoneConfig::new(*z, ZoneMode::Ro))
                .collect();
            Sandbox::open(dir.path(), &configs).unwrap()
        };
        let jail = |zones: &[&str], network: bool| McpJailOptions {
            jail: Jail::new(
                "golem-forge".into(),
                open(zones),
                JailPolicy {
                    network,
                    ..JailPolicy::default()
                },
            ),
            cwd: Some("/docs".to_owned()),
        };
        let args = vec!["/docs/server.js".to_owned()];
        let env = BTreeMap::new();
        let key = |jail: &McpJailOptions| {
            let identity = Identity::Jailed {
                command: "node",
                args: &args,
                env: &env,
                jail,
            };
            CacheSlot::new(dir.path(), identity, None).key
        };
        let base = key(&jail(&["docs"], false));
        assert_eq!(base, key(&jail(&["docs"], false)));
        assert_ne!(base, key(&jail(&["docs"], true)), "the network");
        assert_ne!(base, key(&jail(&["docs", "src"], false)), "the zones");
        let outside = CacheSlot::new(dir.path(), stdio(&env, &args), None).key;
        assert_ne!(base, outside, "in or outside the jail");
        let identity = Identity::Jailed {
            command: "node",
            args: &args,
            env: &env,
            jail: &jail(&["docs"], false),
        }
        .to_json();
        assert_eq!(identity["jail"]["zones"][0]["name"], "docs");
        assert_eq!(identity["jail"]["network"], false);
    }
}
