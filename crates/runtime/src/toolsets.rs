//! A worker's tools from its `toolsets:` section: the filesystem toolset over its sandbox, one
//! delegation tool per allowed worker; toolsets not built yet are a clear error, never silently
//! missing.

use std::sync::Arc;

use golem_core::registry::ToolRegistry;
use golem_sandbox::Sandbox;

use crate::delegation::DelegateTool;
use crate::launch::{LaunchError, SessionEnv, WorkerFrame};
use crate::worker::WorkerDefinition;

/// Builds the tools of `definition`.
pub fn build_tools(
    env: &Arc<SessionEnv>,
    definition: &WorkerDefinition,
    sandbox: &Sandbox,
    frame: &WorkerFrame,
) -> Result<ToolRegistry, LaunchError> {
    let mut registry = ToolRegistry::new();
    let mut add = |tool: Arc<dyn golem_core::tool::Tool>| {
        registry
            .register(tool)
            .map_err(|e| LaunchError::Config(format!("worker {}: {e}", definition.name)))
    };
    let toolsets = &definition.toolsets;
    if toolsets.filesystem.is_some() {
        for tool in golem_tools::filesystem::filesystem_tools(sandbox.clone()) {
            add(tool)?;
        }
    }
    if let Some(workers) = &toolsets.workers {
        for name in &workers.allowed_workers {
            let child = env.registry.load(name).map_err(|e| {
                LaunchError::Config(format!(
                    "worker {} allows delegating to `{name}`: {e}",
                    definition.name
                ))
            })?;
            let description = child.description.unwrap_or_default();
            add(Arc::new(DelegateTool::new(
                name,
                &description,
                env.clone(),
                frame.clone(),
            )))?;
        }
    }
    for (present, toolset, issue) in [
        (toolsets.shell.is_some(), "shell", "#6"),
        (toolsets.code.is_some(), "code", "#6"),
        (toolsets.custom.is_some(), "custom", "a later issue"),
    ] {
        if present {
            return Err(LaunchError::Unsupported(format!(
                "worker {} uses the {toolset} toolset, which is not available yet (it arrives with {issue})",
                definition.name
            )));
        }
    }
    Ok(registry)
}
