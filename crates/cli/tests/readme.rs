//! The README's promise of one test command: the command it names under "Run every test" is
//! the one `.ci/run` runs, and that command (`scripts/test`) installs every part the tests need
//! beyond cargo, at the versions the tests' own failure messages name, before it runs every
//! test.

use golem_testkit::parts::{
    ACP_PYTHON_PACKAGE, CHROMIUM_INSTALL, KUBERNETES_VALIDATE_PACKAGE, MCP_PYTHON_PACKAGE,
    MCP_SERVER_PACKAGES, REDIS_INSTALL, SLIRP_INSTALL, TEST_COMMAND, XMLSCHEMA_PACKAGE,
};

use golem_testkit::cli::{repo_file, repo_root};

/// The lines of the first ```sh block after `heading` in the README.
fn readme_block(heading: &str) -> Vec<String> {
    let readme = repo_file("README.md");
    let section = readme
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("the README has no `{heading}` section"))
        .1;
    let block = section
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .unwrap_or_else(|| panic!("`{heading}` has no ```sh block"))
        .0;
    block.lines().map(str::to_owned).collect()
}

/// The command lines of a shell script: no comments, no blank lines.
fn commands(script: &str) -> Vec<&str> {
    script
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
}

#[test]
fn the_readme_names_one_test_command_and_ci_runs_exactly_it() {
    let block = readme_block("## Run every test");
    assert_eq!(block, [TEST_COMMAND], "the README's test command");
    let ci = repo_file(".ci/run");
    let ci = commands(&ci);
    assert!(
        ci.contains(&TEST_COMMAND),
        ".ci/run does not run the README's test command `{TEST_COMMAND}`: {ci:#?}"
    );
    assert!(
        !ci.iter().any(|line| line.starts_with("cargo test")),
        ".ci/run runs its own `cargo test` besides the README's command: {ci:#?}"
    );
}

#[test]
fn the_test_command_installs_every_part_then_runs_every_test() {
    let path = repo_root().join(TEST_COMMAND);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .permissions(),
    );
    assert!(mode & 0o111 != 0, "{TEST_COMMAND} is not executable");
    let script = repo_file(TEST_COMMAND);
    let lines = commands(&script);
    for package in MCP_SERVER_PACKAGES {
        assert!(
            script.contains(package),
            "{TEST_COMMAND} does not install {package}"
        );
    }
    assert!(
        lines
            .iter()
            .any(|l| l.contains("npm install") && l.contains("target/mcp-servers")),
        "{TEST_COMMAND} does not install the MCP reference servers into target/mcp-servers"
    );
    for package in [
        MCP_PYTHON_PACKAGE,
        ACP_PYTHON_PACKAGE,
        KUBERNETES_VALIDATE_PACKAGE,
        XMLSCHEMA_PACKAGE,
    ] {
        assert!(
            script.contains(&format!("'{package}'")),
            "{TEST_COMMAND} does not pin {package}"
        );
        // The venv counts as present only when it has this package at this version.
        let (name, _) = package.split_once("==").expect("a pinned package");
        assert!(
            script.contains(&format!("m.version('{name}')")),
            "{TEST_COMMAND} does not check that target/mcp-venv has {name}"
        );
    }
    assert!(
        lines.iter().any(|l| l.contains("-m venv target/mcp-venv")),
        "{TEST_COMMAND} does not make target/mcp-venv"
    );
    // Every Debian package the tests' failures name is one the script installs.
    let debian = CHROMIUM_INSTALL
        .strip_prefix("apt-get install -y ")
        .expect("an apt-get command");
    for package in debian
        .split(' ')
        .chain(["nodejs", "npm", "python3-venv", "git"])
        .chain(SLIRP_INSTALL.split(' ').skip(3))
        .chain(REDIS_INSTALL.split(' ').skip(3))
    {
        assert!(
            lines
                .iter()
                .any(|l| l.contains("missing+=(") && l.split(['(', ')', ' ']).any(|w| w == package)),
            "{TEST_COMMAND} does not install the Debian package {package}"
        );
    }
    assert!(
        lines.iter().any(|l| l.contains("apt-get install -y")),
        "{TEST_COMMAND} installs no Debian package"
    );
    assert!(
        script.contains("sudo apt-get install -y"),
        "{TEST_COMMAND} does not name the apt-get command when it cannot run it"
    );
    let test = lines
        .iter()
        .position(|l| l.starts_with("cargo test --workspace --locked"))
        .expect("the script runs cargo test --workspace --locked");
    let last_install = lines
        .iter()
        .rposition(|l| l.contains("install"))
        .expect("install steps");
    assert!(
        last_install < test,
        "the tests run before every part is installed"
    );
}
