//! Daemons of programs started outside the jail end with the run: an MCP stdio server and the
//! `notify:` command each start a grandchild that leaves their process group and session
//! (double fork and `setsid`, as a daemon does), which writes its pid to a file and sleeps; once
//! `golem-forge run` has exited, or was killed (`SIGKILL`) while a call waited on the server,
//! every such pid must be gone (golem-forge runs these programs under its reaper,
//! `golem_sandbox::reaper`, which also ends everything when its parent dies). Needs `sh`, `setsid` and `sleep` (util-linux,
//! coreutils): a missing one fails with its install command.

use std::path::Path;
use std::time::{Duration, Instant};

use super::*;
use crate::chat::{ANSWER, CHOICES, Chat, WORKER, fs_worker, project as chat_project};

/// How long a daemon may take to go after the run exited before the test fails (never reached
/// when things work).
const GONE_WITHIN: Duration = Duration::from_secs(20);

/// The shell lines that start the daemon: a subshell (the first fork) runs `setsid` in the
/// background (the second) and exits, so the daemon is orphaned, in a session of its own; it
/// appends its pid to the file `$1` and sleeps for good. The script goes on once the pid is
/// there (a program that ended sooner would take its daemon with it before it was seen).
const DAEMON: &str = "before=$(cat \"$1\" 2>/dev/null | wc -l)
( setsid sh -c 'echo $$ >> \"$1\"; exec sleep 86399' daemon \"$1\" </dev/null >/dev/null 2>&1 & )
while [ \"$(cat \"$1\" 2>/dev/null | wc -l)\" -le \"$before\" ]; do sleep 0.01; done";

/// An MCP stdio server in `sh` that first starts [`DAEMON`]: it answers `initialize`,
/// `tools/list` (`ping` and `hang`) and `tools/call` (`pong`; never for `hang`), one JSON
/// message a line.
fn server_script() -> String {
    format!(
        r#"{DAEMON}
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case $line in
    *'"method":"initialize"'*)
      version=$(printf '%s\n' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
      printf '{{"jsonrpc":"2.0","id":%s,"result":{{"protocolVersion":"%s","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"daemons","version":"1.0.0"}}}}}}\n' "$id" "$version" ;;
    *'"method":"tools/list"'*)
      printf '{{"jsonrpc":"2.0","id":%s,"result":{{"tools":[{{"name":"ping","description":"Answers pong.","inputSchema":{{"type":"object","properties":{{}}}}}},{{"name":"hang","description":"Never answers.","inputSchema":{{"type":"object","properties":{{}}}}}}]}}}}\n' "$id" ;;
    *'"method":"tools/call"'*'"name":"hang"'*) ;;
    *'"method":"tools/call"'*)
      printf '{{"jsonrpc":"2.0","id":%s,"result":{{"content":[{{"type":"text","text":"pong"}}]}}}}\n' "$id" ;;
    *)
      if [ -n "$id" ]; then printf '{{"jsonrpc":"2.0","id":%s,"result":{{}}}}\n' "$id"; fi ;;
  esac
done
"#
    )
}

/// Fails with the install command when a program the fixtures run is missing.
fn require_tools() {
    for (program, install) in [
        ("sh", "apt-get install -y dash"),
        ("setsid", "apt-get install -y util-linux"),
        ("sleep", "apt-get install -y coreutils"),
        ("sed", "apt-get install -y sed"),
        ("wc", "apt-get install -y coreutils"),
        ("cat", "apt-get install -y coreutils"),
    ] {
        let found = std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
        });
        assert!(
            found,
            "{}",
            golem_testkit::parts::missing(&format!("`{program}`"), install)
        );
    }
}

/// The pids in `file` so far.
fn pids_in(file: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// The pids in `file`, which must name at least `at_least`.
fn daemons(file: &Path, at_least: usize) -> Vec<u32> {
    let pids = pids_in(file);
    let text = std::fs::read_to_string(file).unwrap_or_default();
    assert!(
        pids.len() >= at_least,
        "expected at least {at_least} daemon pids in {}, found {text:?}",
        file.display()
    );
    pids
}

/// Whether `pid` is still one of our daemons, alive (a zombie is dead; a pid taken by another
/// program is not ours).
fn alive(pid: u32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let zombie = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
    cmdline.starts_with(b"sleep\x0086399") && !zombie
}

/// Fails (after killing them) if any of `pids` is still alive [`GONE_WITHIN`] from now.
fn assert_gone(pids: &[u32], what: &str) {
    let start = Instant::now();
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
        if left.is_empty() {
            return;
        }
        if start.elapsed() > GONE_WITHIN {
            let stats: Vec<String> = left
                .iter()
                .map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default())
                .collect();
            for pid in &left {
                send_signal(*pid, "-KILL");
            }
            panic!("the daemons of {what} outlived the run: {left:?} (of {pids:?}): {stats:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes the project with the worker `main` whose MCP server `daemons` runs
/// [`server_script`] (tools `ping` and `hang`, pre-approved); returns the file its daemons
/// write their pids to.
fn daemons_project(env: &TestEnv) -> std::path::PathBuf {
    let script = env.write("server.sh", &server_script());
    let pids = env.path().join("daemons.txt");
    let worker = worker(
        "main",
        &format!(
            "toolsets:\n  mcp:\n    servers:\n      daemons: {{ command: sh, args: [\"{}\", \"{}\"] }}\n    \
             tools: {{ daemons: [ping, hang] }}\n    approval: {{ default: preApproved }}\n",
            script.display(),
            pids.display()
        ),
    );
    project(env, &[("main.worker", worker)]);
    pids
}

#[test]
fn a_daemon_of_an_mcp_server_outside_the_jail_ends_with_the_run() {
    require_tools();
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let pids = daemons_project(&env);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("c1", "daemons__ping", json!({}))]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert!(results[0].content.contains("pong"), "{results:?}");
    // Started twice: listed when the toolset was built (no cache yet), then for the call.
    let started = daemons(&pids, 2);
    assert_gone(&started, "the MCP server");
}

#[test]
fn a_daemon_of_an_mcp_server_ends_when_golem_forge_is_killed() {
    require_tools();
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let pids = daemons_project(&env);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("c1", "daemons__hang", json!({}))]),
        wire.text("Done."),
    ]);
    let child = spawn(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    // The second daemon is the one of the server started for the call, which never answers.
    let deadline = Instant::now() + LIMIT;
    while pids_in(&pids).len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the server was not started for the call"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    send_signal(child.id(), "-KILL");
    let _killed = wait_for_exit(child);
    let started = daemons(&pids, 2);
    assert_gone(&started, "the MCP server of a killed golem-forge");
}

#[test]
fn a_daemon_of_the_notify_command_ends_with_the_run() {
    require_tools();
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    chat_project(&env, &fs_worker());
    // The command starts the daemon and lingers, so it still runs when the run ends.
    let script = env.write("notify.sh", &format!("{DAEMON}\nexec sleep 86398\n"));
    let pids = env.path().join("daemons.txt");
    env.write(
        "proj/golem-forge.config.yaml",
        &format!(
            "notify:\n  command: [sh, \"{}\", \"{}\"]\n  after_seconds: 0\n",
            script.display(),
            pids.display()
        ),
    );
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "c1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "a\n"}),
        )]),
        wire.text("Done."),
    ]);
    let envs: Vec<(&str, String)> = provider_env(wire, &server).into_iter().collect();
    let worker = format!("proj/{WORKER}.worker");
    let mut pty = Chat::start(
        &env,
        &[
            "run",
            &worker,
            "go",
            "--approval",
            "interactive",
            "--model",
            model_for(wire),
        ],
        &envs,
    );
    pty.wait_for(CHOICES);
    pty.wait_prompt_text(ANSWER);
    // The approval waits until the nudge has started its daemon.
    let deadline = Instant::now() + LIMIT;
    while std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "no nudge:\n{}", pty.dump());
        std::thread::sleep(Duration::from_millis(20));
    }
    pty.send("y");
    pty.wait_for("Done.");
    assert_eq!(pty.wait_exit(LIMIT), 0, "{}", pty.dump());
    let started = daemons(&pids, 1);
    assert_gone(&started, "the notify command");
}
