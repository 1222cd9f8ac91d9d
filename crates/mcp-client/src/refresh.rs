//! The tool-list cache seen from the command line: [`refresh`] starts every server of a
//! toolset, lists its tools and writes its cache entry (`golem-forge mcp-refresh`,
//! `check --refresh`); [`cache_status`] says what the cache holds for each server without
//! starting any (`golem-forge check`). Each outcome is per server, so one failing server
//! does not hide the others.

use std::path::PathBuf;

use super::cache::CachedServer;
use super::{McpError, McpOptions, list_blocking, prepare_server};

/// What refreshing one server gave.
#[derive(Debug)]
pub struct ServerRefresh {
    /// The server's name in the worker file.
    pub server: String,
    /// Its listing and where it was cached, or why it failed (the message names the server).
    pub outcome: Result<Refreshed, String>,
}

/// A server listed again.
#[derive(Debug)]
pub struct Refreshed {
    /// What it reported and its tools.
    pub listing: CachedServer,
    /// Whether the list (or version) differs from the cached one (true without one).
    pub changed: bool,
    /// The cache file, or why it could not be written.
    pub cache: Result<PathBuf, String>,
}

/// Starts every server of `options` (all at once), lists its tools and writes its cache
/// entry, overwriting what was there.
pub fn refresh(options: &McpOptions) -> Result<Vec<ServerRefresh>, McpError> {
    let mut outcomes = Vec::new();
    let mut ready = Vec::new();
    for (name, server) in &options.config.servers {
        match prepare_server(options, name, server) {
            Ok(prepared) => {
                ready.push((outcomes.len(), prepared));
                outcomes.push(ServerRefresh {
                    server: name.clone(),
                    outcome: Err(String::new()),
                });
            }
            Err(e) => outcomes.push(ServerRefresh {
                server: name.clone(),
                outcome: Err(e.0),
            }),
        }
    }
    let specs = ready.iter().map(|(_, p)| p.spec.clone()).collect();
    let listed = list_blocking(specs, options.timeout())?;
    for ((index, prepared), listed) in ready.into_iter().zip(listed) {
        let Some(outcome) = outcomes.get_mut(index) else {
            continue;
        };
        outcome.outcome = listed.map(|listing| {
            let (changed, cache) = match &prepared.slot {
                Some(slot) => {
                    let before = slot.read().ok().flatten().map(|entry| entry.listing);
                    let written = slot
                        .write(&prepared.spec.name, &listing)
                        .map(|()| slot.path().to_path_buf());
                    (before.as_ref() != Some(&listing), written)
                }
                None => (true, Err("no cache directory".to_owned())),
            };
            Refreshed {
                listing,
                changed,
                cache,
            }
        });
    }
    Ok(outcomes)
}

/// What the cache holds for one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheStatus {
    /// A usable entry.
    Cached {
        /// When it was fetched (`2026-11-25T02:30:00Z`).
        fetched_at: String,
        /// How many tools the server has.
        tools: usize,
        /// The version the server reported.
        version: String,
    },
    /// No entry: the first session lists the server's tools.
    Missing,
    /// An entry that cannot be used (corrupt, unreadable), listed again by the next session.
    Unusable(String),
    /// The entry cannot be found (a `${VAR}` not set, no cache directory).
    Unknown(String),
}

/// What the cache holds for each server of `options`, in order, without starting any.
pub fn cache_status(options: &McpOptions) -> Vec<(String, CacheStatus)> {
    options
        .config
        .servers
        .iter()
        .map(|(name, server)| {
            let status = match prepare_server(options, name, server) {
                Err(e) => CacheStatus::Unknown(e.0),
                Ok(prepared) => match prepared.slot.as_ref() {
                    None => CacheStatus::Unknown("no cache directory".to_owned()),
                    Some(slot) => match slot.read() {
                        Ok(Some(entry)) => CacheStatus::Cached {
                            fetched_at: entry.fetched_at,
                            tools: entry.listing.tools.len(),
                            version: entry.listing.version,
                        },
                        Ok(None) => CacheStatus::Missing,
                        Err(why) => CacheStatus::Unusable(why),
                    },
                },
            };
            (name.clone(), status)
        })
        .collect()
}
