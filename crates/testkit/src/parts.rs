//! The parts the tests need beyond cargo, and the commands that install them. The README's
//! test command, `scripts/test`, installs every one of them on a fresh machine before it runs
//! the tests; a test that cannot find its part fails with [`missing`]'s message, which names
//! both that command and the part's own install command (never skips).
//! `crates/cli/tests/readme.rs` checks that the script installs what is named here.

/// The README's test command: installs the parts below, then runs every test.
pub const TEST_COMMAND: &str = "scripts/test";

/// The MCP reference servers (npm), installed into `target/mcp-servers`.
pub const MCP_SERVER_PACKAGES: [&str; 2] = [
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];

/// The exact command, from the workspace root, that installs the MCP reference servers.
pub const MCP_SERVERS_INSTALL: &str = "npm install --prefix target/mcp-servers \
     @modelcontextprotocol/server-everything@2026.8.31 \
     @modelcontextprotocol/server-filesystem@2026.8.31";

/// The JSON Schema validator `ajv` (with `ajv-formats`) and the YAML language server (npm),
/// installed into `target/schema-tools`: the worker schema's tests run them with the
/// machine's Node, as a strict validator and an editor would.
pub const SCHEMA_TOOL_PACKAGES: [&str; 3] = [
    "ajv@8.20.0",
    "ajv-formats@3.0.1",
    "yaml-language-server@1.25.0",
];

/// The exact command, from the workspace root, that installs the schema tools.
pub const SCHEMA_TOOLS_INSTALL: &str = "npm install --prefix target/schema-tools ajv@8.20.0 \
     ajv-formats@3.0.1 yaml-language-server@1.25.0";

/// The Python MCP client (PyPI) the `golem-forge mcp` tests drive, pinned.
pub const MCP_PYTHON_PACKAGE: &str = "mcp==2.3.0";

/// The Python ACP client (PyPI) the `golem-forge acp` tests drive as an editor, pinned; it
/// lives in the same virtual environment.
pub const ACP_PYTHON_PACKAGE: &str = "agent-client-protocol==0.12.1";

/// The Kubernetes manifest validator (PyPI) the deployment test runs on `deploy/kubernetes/`
/// (it ships the API schemas, so it validates offline), pinned; it lives in the same virtual
/// environment.
pub const KUBERNETES_VALIDATE_PACKAGE: &str = "kubernetes-validate==1.37.0";

/// The XML Schema validator (PyPI) the `golem-forge test --junit` test checks the JUnit XML
/// with, against the committed JUnit schema, pinned; it lives in the same virtual environment.
pub const XMLSCHEMA_PACKAGE: &str = "xmlschema==4.3.2";

/// The command, from the workspace root, that makes the virtual environment with all four.
pub const MCP_PYTHON_INSTALL: &str = "python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip \
     install -q 'mcp==2.3.0' 'agent-client-protocol==0.12.1' 'kubernetes-validate==1.37.0' \
     'xmlschema==4.3.2'";

/// Debian's browser and its WebDriver, for the browser tests.
pub const CHROMIUM_INSTALL: &str = "apt-get install -y chromium chromium-driver";

/// The user-mode network stack a jail with the network on gets its own network through.
pub const SLIRP_INSTALL: &str = "apt-get install -y slirp4netns";

/// Debian's Redis server, which the queued-batch tests start on free ports, and `openssl`,
/// which makes the certificate of the one they start with TLS.
pub const REDIS_INSTALL: &str = "apt-get install -y redis-server openssl";

/// The failure message of a test whose part `what` is missing: how to install it, with the
/// README's test command or with the part's own `install` command.
pub fn missing(what: &str, install: &str) -> String {
    format!(
        "{what} is missing. The README's test command installs every part the tests need:\n    \
         {TEST_COMMAND}\nor install just this one from the workspace root:\n    {install}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_commands_name_the_pinned_versions() {
        for package in MCP_SERVER_PACKAGES {
            assert!(MCP_SERVERS_INSTALL.contains(package), "{package}");
        }
        for package in SCHEMA_TOOL_PACKAGES {
            assert!(SCHEMA_TOOLS_INSTALL.contains(package), "{package}");
        }
        assert!(MCP_PYTHON_INSTALL.contains(MCP_PYTHON_PACKAGE));
        assert!(MCP_PYTHON_INSTALL.contains(ACP_PYTHON_PACKAGE));
        assert!(MCP_PYTHON_INSTALL.contains(KUBERNETES_VALIDATE_PACKAGE));
        assert!(MCP_PYTHON_INSTALL.contains(XMLSCHEMA_PACKAGE));
    }

    #[test]
    fn a_missing_part_names_both_commands() {
        let text = missing("the MCP reference servers", MCP_SERVERS_INSTALL);
        assert!(text.contains("scripts/test"), "{text}");
        assert!(text.contains(MCP_SERVERS_INSTALL), "{text}");
    }
}
