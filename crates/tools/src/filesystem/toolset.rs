//! The filesystem toolset as a worker file configures it (`toolsets.filesystem`, no options
//! yet) and its place among the toolsets: the file tools over the worker's sandbox.

use golem_toolset::{BuildContext, Reach, Tools, Toolset, ToolsetConfig, ToolsetError};
use serde::Deserialize;

use super::filesystem_tools;

/// File tools over the worker's zones.
pub struct FilesystemToolset;

/// The filesystem toolset's options: none yet (`filesystem: {}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilesystemToolsetConfig {}

impl ToolsetConfig for FilesystemToolsetConfig {
    fn empty() -> Result<FilesystemToolsetConfig, &'static str> {
        Ok(FilesystemToolsetConfig::default())
    }
}

impl Toolset for FilesystemToolset {
    type Config = FilesystemToolsetConfig;

    fn build(_: &FilesystemToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        Ok(filesystem_tools(cx.sandbox.clone()))
    }

    fn reach(_: &FilesystemToolsetConfig) -> Reach {
        Reach {
            zones: true,
            ..Reach::default()
        }
    }
}
