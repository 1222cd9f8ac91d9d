//! The configuration every jailed toolset shares (`jail:`, `limits:`, timeouts) and the small
//! deserializers the toolsets' configurations are written with, each failing at its own line.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

/// How strictly a toolset's child processes are jailed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JailMode {
    /// Every jail feature is required; a kernel without one is an error (the default).
    #[default]
    Strict,
    /// Use the jail features the kernel has, and say which are missing.
    BestEffort,
}

/// The default timeout of `run_code` and `shell`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The default of `max_timeout`: the longest a call may ask for, in seconds.
pub const DEFAULT_MAX_TIMEOUT_SECS: u64 = 600;

/// Resource limits of jailed processes; each absent value keeps the jail's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessLimitsConfig {
    /// CPU seconds per run (default 120).
    #[serde(default)]
    pub cpu_seconds: Option<u64>,
    /// Address space per process in MiB (default 2048).
    #[serde(default)]
    pub memory_mb: Option<u64>,
    /// Processes and threads (default 256).
    #[serde(default)]
    pub processes: Option<u64>,
    /// Open files per process (default 1024).
    #[serde(default)]
    pub open_files: Option<u64>,
    /// Largest file written, in MiB (default 256).
    #[serde(default)]
    pub file_size_mb: Option<u64>,
    /// Output kept per stream, in KiB (default 1024); the rest is counted and dropped.
    #[serde(default)]
    pub output_kb: Option<u64>,
    /// Memory of all processes of one run together, in MiB (default 2048).
    #[serde(default)]
    pub run_memory_mb: Option<u64>,
    /// Size of the private `/tmp` (and of `/dev/shm`), in MiB (default 512).
    #[serde(default)]
    pub tmp_mb: Option<u64>,
    /// Files the private `/tmp` (and `/dev/shm`) may hold (default 65536).
    #[serde(default)]
    pub tmp_files: Option<u64>,
    /// How much one run may write into the zones, in MiB (default 1024).
    #[serde(default)]
    pub zone_write_mb: Option<u64>,
    /// How many files one run may add to the zones (default 20000).
    #[serde(default)]
    pub zone_files: Option<u64>,
}

/// The default of a `timeout` in seconds.
pub fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

/// The default of a `max_timeout` in seconds.
pub fn default_max_timeout() -> u64 {
    DEFAULT_MAX_TIMEOUT_SECS
}

/// For `deserialize_with`: a key written with no value (`key:`) reads as the default, like an
/// absent one.
pub fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A `timeout` in seconds: at least 1; no value reads as [`DEFAULT_TIMEOUT_SECS`].
pub fn positive_secs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    at_least_one(deserializer, DEFAULT_TIMEOUT_SECS, "seconds")
}

/// A `max_timeout` in seconds: at least 1; no value reads as [`DEFAULT_MAX_TIMEOUT_SECS`].
pub fn positive_max_secs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    at_least_one(deserializer, DEFAULT_MAX_TIMEOUT_SECS, "seconds")
}

/// A count of `unit` that must be at least 1; no value reads as `default`.
pub fn at_least_one<'de, D: Deserializer<'de>>(
    deserializer: D,
    default: u64,
    unit: &str,
) -> Result<u64, D::Error> {
    let value = Option::<u64>::deserialize(deserializer)?.unwrap_or(default);
    if value == 0 {
        return Err(serde::de::Error::custom(format!(
            "must be at least 1 ({unit}), found \"0\""
        )));
    }
    Ok(value)
}

/// A string that must not be empty.
pub fn non_empty_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.is_empty() {
        return Err(serde::de::Error::custom("must not be empty"));
    }
    Ok(text)
}
