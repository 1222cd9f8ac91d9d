//! golem-forge's environment (the API keys) and memory are closed to the processes it starts
//! outside the jail: an MCP server run by the user's own `sh` reads the environment of
//! golem-forge (its grandparent: its parent is the reaper, `golem-forge __jail --reap`, whose
//! environment is the server's own) and is refused. Run as an ordinary user (`setpriv` to
//! `nobody` when the tests run as root: a child running as root could read it whatever
//! golem-forge does), from a copy of the binary that nobody can reach wherever the
//! repository was cloned.

use super::*;

#[test]
fn a_server_outside_the_jail_cannot_read_our_environment() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let leak = env.path().join("leak.txt");
    let said = env.path().join("said.txt");
    let reaper = env.path().join("reaper.txt");
    // The server reads its parent's (the reaper's) and its grandparent's (golem-forge's)
    // environment, then exits: it never answers, which fails the run; what it could read is
    // what matters.
    let script = format!(
        "cat /proc/$PPID/environ > '{}' 2>&1; \
         forge=$(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f2); \
         cat /proc/$forge/environ > '{}' 2> '{}'",
        reaper.display(),
        leak.display(),
        said.display()
    );
    let worker = worker(
        "main",
        &format!(
            "toolsets:\n  mcp:\n    servers:\n      peek: {{ command: sh, args: [\"-c\", {}] }}\n",
            serde_json::to_string(&script).unwrap()
        ),
    );
    project(&env, &[("main.worker", worker)]);
    let server = MockServer::start_blocking(vec![wire.text("Hello.")]);
    let mut command = env.std_command();
    if rustix::process::geteuid().is_root() {
        // An ordinary user, who may write the test's directory.
        for entry in walk(env.path()) {
            let mode = if entry.is_dir() { 0o777 } else { 0o666 };
            std::fs::set_permissions(&entry, std::os::unix::fs::PermissionsExt::from_mode(mode))
                .unwrap();
        }
        // The build directory may sit below a folder only root can enter (a clone in a 0700
        // home or `mktemp -d`): nobody runs a copy in the test's own directory.
        let program = env.path().join("golem-forge");
        std::fs::copy(command.get_program(), &program).unwrap();
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let mut as_nobody = std::process::Command::new("setpriv");
        as_nobody
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(program)
            .current_dir(env.path())
            .env_clear()
            .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))));
        command = as_nobody;
    }
    let output = command
        .args(["run", "proj/main.worker", "hi", "--model", model_for(wire)])
        .envs(provider_env(wire, &server))
        .output()
        .expect("setpriv (util-linux) runs golem-forge");
    assert!(
        said.exists(),
        "the server never ran: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let leaked = std::fs::read(&leak).unwrap_or_default();
    let key = provider_env(wire, &server)[0].1.clone();
    assert!(
        !String::from_utf8_lossy(&leaked).contains(&key),
        "the server read our API key from golem-forge's /proc/<pid>/environ"
    );
    let of_reaper = std::fs::read(&reaper).unwrap_or_default();
    assert!(
        !String::from_utf8_lossy(&of_reaper).contains(&key),
        "the reaper holds our API key"
    );
    let refusal = std::fs::read_to_string(&said).unwrap();
    assert!(refusal.contains("Permission denied"), "{refusal}");
}

/// `root` and everything under it.
fn walk(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out
}
