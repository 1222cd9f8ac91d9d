//! The tool-list cache seen from the command line: [`refresh`] starts every server of a
//! toolset, lists its tools and writes its cache entry (`golem-forge mcp-refresh`,
//! `check --refresh`); [`cache_status`] says what the cache holds for each server without
//! starting any (`golem-forge check`). Each outcome is per server, so one failing server
//! does not hide the others.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::cache::{CacheError, CachedServer};
use super::{McpError, McpOptions, list_blocking, prepare_server};

/// What refreshing one server gave.
#[derive(Debug)]
pub struct ServerRefresh {
    /// The server's name in the worker file.
    pub server: String,
    /// Its listing and where it was cached, or why it failed (the message names the server).
    pub outcome: Result<Refreshed, McpError>,
}

/// A server listed again.
#[derive(Debug)]
pub struct Refreshed {
    /// What it reported and its tools.
    pub listing: CachedServer,
    /// Whether the list (or version) differs from the cached one (true without one).
    pub changed: bool,
    /// The cache file, or why it could not be written.
    pub cache: Result<PathBuf, CacheError>,
}

/// Starts every server of `options` (all at once), lists its tools and writes its cache
/// entry, overwriting what was there.
pub fn refresh(options: &McpOptions) -> Result<Vec<ServerRefresh>, McpError> {
    let prepared: Vec<(String, Result<_, McpError>)> = options
        .config
        .servers
        .iter()
        .map(|(name, server)| (name.clone(), prepare_server(options, name, server)))
        .collect();
    let specs = prepared
        .iter()
        .enumerate()
        .filter_map(|(index, (_, ready))| Some((index, ready.as_ref().ok()?.spec.clone())))
        .collect();
    let mut listed: BTreeMap<usize, _> = list_blocking(specs, options.timeout())?
        .into_iter()
        .collect();
    let outcomes = prepared
        .into_iter()
        .enumerate()
        .map(|(index, (server, ready))| {
            let outcome = ready.and_then(|prepared| {
                let listing = listed
                    .remove(&index)
                    .ok_or_else(|| McpError::NoToolList(server.clone()))??;
                let (changed, cache) = match &prepared.slot {
                    Some(slot) => {
                        let before = slot.read().ok().flatten().map(|entry| entry.listing);
                        let written = slot
                            .write(&prepared.spec.name, &listing)
                            .map(|()| slot.path().to_path_buf());
                        (before.as_ref() != Some(&listing), written)
                    }
                    None => (true, Err(CacheError::NoDirectory)),
                };
                Ok(Refreshed {
                    listing,
                    changed,
                    cache,
                })
            });
            ServerRefresh { server, outcome }
        })
        .collect();
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
                Err(e) => CacheStatus::Unknown(e.to_string()),
                Ok(prepared) => match prepared.slot.as_ref() {
                    None => CacheStatus::Unknown(CacheError::NoDirectory.to_string()),
                    Some(slot) => match slot.read() {
                        Ok(Some(entry)) => CacheStatus::Cached {
                            fetched_at: entry.fetched_at,
                            tools: entry.listing.tools.len(),
                            version: entry.listing.version,
                        },
                        Ok(None) => CacheStatus::Missing,
                        Err(why) => CacheStatus::Unusable(why.to_string()),
                    },
                },
            };
            (name.clone(), status)
        })
        .collect()
}
