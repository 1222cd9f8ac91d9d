//! The workers toolset (`toolsets.workers`): one tool per sub-worker a worker may delegate to,
//! each asked of the build context's [`golem_toolset::Delegation`], so that it knows nothing of
//! how the child is built (`delegation.rs`, `launch.rs`). Where no delegation is given (`check`
//! describing a worker), it has no tools.

use golem_toolset::{BuildContext, Reach, Tools, Toolset, ToolsetConfig, ToolsetError};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::worker::name::{is_valid_worker_name, name_problem};

/// The workers toolset: one tool per sub-worker this worker may delegate to.
pub struct WorkersToolset;

/// `toolsets.workers`: the sub-workers this worker may delegate to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkersToolsetConfig {
    /// Worker names, each becoming a tool of the same name.
    #[serde(default, deserialize_with = "worker_names")]
    #[schemars(with = "Option<Vec<String>>")]
    pub allowed_workers: Vec<String>,
}

impl ToolsetConfig for WorkersToolsetConfig {
    fn empty() -> Result<WorkersToolsetConfig, &'static str> {
        Ok(WorkersToolsetConfig::default())
    }
}

impl Toolset for WorkersToolset {
    type Config = WorkersToolsetConfig;

    fn build(config: &WorkersToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        let Some(delegation) = cx.delegation else {
            return Ok(Vec::new());
        };
        config
            .allowed_workers
            .iter()
            .map(|name| {
                delegation.tool(name).map_err(|e| {
                    ToolsetError::Config(format!(
                        "worker {} allows delegating to `{name}`: {e}",
                        cx.worker
                    ))
                })
            })
            .collect()
    }

    /// Sub-workers' zones narrow the caller's.
    fn reach(_: &WorkersToolsetConfig) -> Reach {
        Reach {
            zones: true,
            ..Reach::default()
        }
    }
}

fn worker_names<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    let names = Option::<Vec<String>>::deserialize(deserializer)?.unwrap_or_default();
    for name in &names {
        if !is_valid_worker_name(name) {
            return Err(serde::de::Error::custom(format!(
                "must list worker names matching {}",
                name_problem(name)
            )));
        }
    }
    Ok(names)
}
