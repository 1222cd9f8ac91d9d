//! The official MCP reference servers that the README's test command installs from npm into
//! `target/mcp-servers` (run with the machine's Node): where a package's entry point is, or a
//! failure that says how to install them (tests fail, never skip, without them).

use std::path::PathBuf;

use crate::parts::{MCP_SERVERS_INSTALL, missing};

/// The entry point (`dist/index.js`) of the installed package `name` (`server-everything`,
/// `server-filesystem`); panics naming the install commands when the servers are not installed.
pub fn package(name: &str) -> PathBuf {
    let scope = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/mcp-servers/node_modules/@modelcontextprotocol");
    let installed = scope.join(name);
    assert!(
        installed.is_dir(),
        "{}",
        missing(
            &format!("the MCP reference server {name}"),
            MCP_SERVERS_INSTALL
        )
    );
    installed.join("dist/index.js")
}
