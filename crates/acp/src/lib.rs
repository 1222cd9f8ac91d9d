//! `golem-forge acp`: a worker as an Agent Client Protocol agent, driven by an editor (Zed,
//! JetBrains IDEs, Neovim's CodeCompanion and avante, …) over stdio with JSON-RPC, on the
//! official SDK (`agent-client-protocol`, protocol v1). Each ACP session is a session of the
//! worker on the session host — the same transcript, approval gate, zones and jail as `chat`
//! — and this crate speaks only our event protocol to it: display events become
//! `session/update`s, approvals become the editor's permission dialog, a cancel is an
//! interrupt. The mapping is written down in `docs/acp.md`.

mod agent;
mod permission;
mod prompt;
mod render;
mod replay;
mod session;
mod tool_call;
mod updates;

use std::path::PathBuf;

use golem_core::approval::ApprovalMode;

pub use agent::serve_stdio;
pub use agent_client_protocol::Error as AcpError;

/// How the agent opens its sessions (from the command line).
#[derive(Debug, Clone)]
pub struct AcpSettings {
    /// `WORKER` as given: a `.worker` file, a directory with `main.worker`, or a worker name,
    /// resolved in each session's `cwd` (else in the directory the agent started in).
    pub worker: String,
    /// `--model`.
    pub model: Option<String>,
    /// `GOLEM_FORGE_MODEL`.
    pub env_model: Option<String>,
    /// `--approval`; else the program config's; else `interactive` (the editor is asked).
    pub approval: Option<ApprovalMode>,
    /// `--max-iterations`.
    pub max_iterations: Option<u32>,
    /// The binary that runs the jail's helper mode.
    pub jail_helper: Option<PathBuf>,
}
