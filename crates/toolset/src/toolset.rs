//! The [`Toolset`] trait, and [`ConfiguredToolset`]: one toolset with the configuration a
//! worker gave it, as the launcher, `check` and the MCP catalog iterate them.

use std::fmt::Debug;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

use crate::{BuildContext, Tools, ToolsetError};

/// A kind of toolset: the value of its key under `toolsets:` and what becomes of it. The key
/// itself is given where the toolset is listed (golem-runtime's `toolsets.rs`).
pub trait Toolset {
    /// The configuration as written under its key.
    type Config: ToolsetConfig;

    /// How the tools' argument schemas are checked.
    const SCHEMAS: Schemas = Schemas::Checked;

    /// The worker's tools of this toolset. Errors say which worker and key they are about
    /// ([`BuildContext::config_error`]).
    fn build(config: &Self::Config, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError>;

    /// What its tools may reach.
    fn reach(config: &Self::Config) -> Reach;

    /// Whether its tools run programs in the process jail, and with what network.
    fn jail_use(_config: &Self::Config) -> Option<JailUse> {
        None
    }

    /// Its own part of `golem-forge check`'s report, if it has settings worth showing. Nothing
    /// is started to make it.
    fn section(
        _config: &Self::Config,
        _cx: &BuildContext<'_>,
    ) -> Result<Option<Section>, ToolsetError> {
        Ok(None)
    }

    /// Warnings `check` prints about settings that work but probably do not mean what they
    /// say.
    fn warnings(_config: &Self::Config) -> Vec<String> {
        Vec::new()
    }
}

/// A toolset's configuration. Deserialization checks everything it can alone, so that an error
/// names the file, the line and the key; its JSON Schema (doc comments as descriptions) is part
/// of the worker file's (`golem-forge schema worker`).
pub trait ToolsetConfig:
    DeserializeOwned + JsonSchema + Debug + Clone + PartialEq + Eq + Send + Sync + 'static
{
    /// The configuration of the key written with no value (`filesystem:`), or why it needs
    /// one.
    fn empty() -> Result<Self, &'static str>;
}

/// How the launcher registers a toolset's schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schemas {
    /// Known to be valid (our own, or checked by the toolset when it first read them): compiled
    /// on their first call.
    Checked,
    /// From outside (an MCP server): checked against the meta-schema now, a bad one failing
    /// the launch.
    Unchecked,
}

/// What a toolset's tools may reach, as the MCP server's tool annotations summarise a worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reach {
    /// They can read or change files of the worker's zones.
    pub zones: bool,
    /// They run programs over the zones (whose effects only the program knows).
    pub programs: bool,
    /// Those programs may use the network.
    pub network: bool,
    /// They fetch from the open web.
    pub web: bool,
    /// Their effects are whatever a user's code does (custom modules).
    pub anything: bool,
}

/// How a toolset uses the process jail, for `check`'s jail report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JailUse {
    /// What to call it in "Jail (for …)", when the kernel's support matters to it.
    pub label: Option<&'static str>,
    /// Some of its programs run without the network.
    pub network_off: bool,
    /// Some of its programs run with the network.
    pub network_on: bool,
}

/// A titled part of `check`'s report; its lines are printed indented under the title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// `Git`, `Web`, …
    pub title: String,
    /// The lines, each with its own indentation.
    pub lines: Vec<String>,
}

/// One toolset as a worker configured it, its kind erased.
pub trait ConfiguredToolset {
    /// Its key under `toolsets:`.
    fn key(&self) -> &'static str;
    /// See [`Toolset::SCHEMAS`].
    fn schemas(&self) -> Schemas;
    /// See [`Toolset::build`].
    fn build(&self, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError>;
    /// See [`Toolset::reach`].
    fn reach(&self) -> Reach;
    /// See [`Toolset::jail_use`].
    fn jail_use(&self) -> Option<JailUse>;
    /// See [`Toolset::section`].
    fn section(&self, cx: &BuildContext<'_>) -> Result<Option<Section>, ToolsetError>;
    /// See [`Toolset::warnings`].
    fn warnings(&self) -> Vec<String>;
}

/// A toolset of kind `T` under `key` with its configuration.
pub struct Configured<'a, T: Toolset> {
    /// Its key under `toolsets:`.
    pub key: &'static str,
    /// What the worker file says.
    pub config: &'a T::Config,
}

impl<T: Toolset> ConfiguredToolset for Configured<'_, T> {
    fn key(&self) -> &'static str {
        self.key
    }

    fn schemas(&self) -> Schemas {
        T::SCHEMAS
    }

    fn build(&self, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        T::build(self.config, cx)
    }

    fn reach(&self) -> Reach {
        T::reach(self.config)
    }

    fn jail_use(&self) -> Option<JailUse> {
        T::jail_use(self.config)
    }

    fn section(&self, cx: &BuildContext<'_>) -> Result<Option<Section>, ToolsetError> {
        T::section(self.config, cx)
    }

    fn warnings(&self) -> Vec<String> {
        T::warnings(self.config)
    }
}

/// For `deserialize_with` on a toolset's key: present (even with no value, which reads as
/// [`ToolsetConfig::empty`]) means the toolset is on.
pub fn present<'de, D, C>(deserializer: D) -> Result<Option<C>, D::Error>
where
    D: Deserializer<'de>,
    C: ToolsetConfig,
{
    match Option::<C>::deserialize(deserializer)? {
        Some(config) => Ok(Some(config)),
        None => C::empty().map(Some).map_err(serde::de::Error::custom),
    }
}
