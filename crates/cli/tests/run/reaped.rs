//! Every process golem-forge starts is reaped before it exits. The run goes on under a small
//! Python parent that makes itself the child subreaper (`PR_SET_CHILD_SUBREAPER`): a process
//! golem-forge started and left behind, exited (a zombie) or still running, is handed to that
//! parent when golem-forge exits, which counts them. Without the subreaper such a child would
//! go to the machine's init, which in a container without one never reaps it.

use super::*;

/// Runs `argv`, then reports as JSON its exit code and the processes it left to us.
const SUBREAPER: &str = r#"
import ctypes, json, os, signal, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed: errno %d" % ctypes.get_errno())
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out, err = child.communicate()
left = []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        with open("/proc/%s/stat" % pid) as f:
            stat = f.read()
    except OSError:
        continue
    fields = stat[stat.rindex(")") + 2:].split()
    if int(fields[1]) == os.getpid():
        left.append({"pid": int(pid), "state": fields[0], "name": stat[stat.index("(") + 1:stat.rindex(")")]})
for entry in left:
    try:
        os.kill(entry["pid"], signal.SIGKILL)
    except OSError:
        pass
deadline = time.time() + 5
while time.time() < deadline:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        time.sleep(0.01)
print(json.dumps({"exit": child.returncode, "left": left, "stderr": err.decode(errors="replace")}))
"#;

/// Runs `command` with the shell toolset five times under the subreaper; each run must exit 0
/// and leave no process behind. (The fault showed in most runs, not all: several runs make its
/// loss near certain.)
fn assert_runs_leave_nothing(shell: &str, command: &str) {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(
        &env,
        &[(
            "main.worker",
            worker(
                "main",
                &format!(
                    "sandbox:\n  zones:\n    - name: out\n      mode: rw\ntoolsets:\n  shell:\n{shell}"
                ),
            ),
        )],
    );
    let program = env.std_command().get_program().to_owned();
    for attempt in 0..5 {
        let server = MockServer::start_blocking(vec![
            wire.tool_calls(&[("call_1", "shell", json!({ "command": command }))]),
            wire.text("Done."),
        ]);
        let output = std::process::Command::new("python3")
            .arg("-c")
            .arg(SUBREAPER)
            .arg(&program)
            .args(["run", "proj/main.worker", "go", "--model", model_for(wire)])
            .current_dir(env.path())
            .env_clear()
            .envs(
                env.std_command()
                    .get_envs()
                    .filter_map(|(k, v)| Some((k, v?))),
            )
            .envs(provider_env(wire, &server))
            .output()
            .expect(
                "python3 runs the subreaper (scripts/test installs it: apt-get install -y python3)",
            );
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["exit"], 0, "attempt {attempt}: {report}");
        assert_eq!(report["left"], json!([]), "attempt {attempt}: {report}");
        assert_eq!(server.requests().len(), 2, "the shell call ran");
    }
}

/// A one-shot run starts a standby jail after its shell call; at exit that helper and the
/// jail's PID 1 below it are reaped, not orphaned.
#[test]
fn a_run_that_used_the_jail_reaps_every_process_it_started() {
    assert_runs_leave_nothing(
        "    rules:\n      - { pattern: \"echo \", approval: preApproved }\n",
        "echo hi",
    );
}

/// A jailed program killed at its time limit: the helper, the jail's PID 1 and the program
/// are all reaped.
#[test]
fn a_run_whose_program_was_killed_reaps_every_process_it_started() {
    assert_runs_leave_nothing(
        "    timeout: 1\n    rules:\n      - { pattern: \"sleep \", approval: preApproved }\n",
        "sleep 5",
    );
}
