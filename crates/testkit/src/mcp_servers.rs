//! The official MCP reference servers that `.ci/run` installs from npm into
//! `target/mcp-servers` (run with the machine's Node): where a package's entry point is, or a
//! failure that says how to install them (tests fail, never skip, without them).

use std::path::PathBuf;

/// The exact command, from the workspace root, that installs the reference servers.
pub const INSTALL: &str = "npm install --prefix target/mcp-servers \
     @modelcontextprotocol/server-everything@2026.8.31 \
     @modelcontextprotocol/server-filesystem@2026.8.31";

/// The entry point (`dist/index.js`) of the installed package `name` (`server-everything`,
/// `server-filesystem`); panics with [`INSTALL`] when the servers are not installed.
pub fn package(name: &str) -> PathBuf {
    let scope = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/mcp-servers/node_modules/@modelcontextprotocol");
    let installed = scope.join(name);
    assert!(
        installed.is_dir(),
        "the MCP reference server {name} is missing; from the workspace root run: {INSTALL}"
    );
    installed.join("dist/index.js")
}
