//! The interactive jailed process (`Jail::spawn`): lines over stdin and stdout through the
//! jail, the jail still holding (no host file outside the zones, no network), stderr kept, a
//! program that exits seen as exited, and kill and drop ending everything it started.

use std::time::{Duration, Instant};

use golem_sandbox::jail::JailProcess;

use super::*;

/// A Python program that answers each line of stdin with one line of stdout, as `serve` does:
/// `echo X` → `X`, `read PATH` → `read: …` or `refused: ErrorName`, `connect` → what a TCP
/// connection out gave, `err X` → X on stderr (and `ok`), `exit N` → exits with N.
const SERVE: &str = r#"
import os, socket, sys
for line in sys.stdin:
    op, _, arg = line.rstrip("\n").partition(" ")
    if op == "echo":
        print(arg, flush=True)
    elif op == "read":
        try:
            with open(arg) as f:
                print("read: " + f.read().strip(), flush=True)
        except OSError as err:
            print("refused: " + type(err).__name__, flush=True)
    elif op == "connect":
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=2).close()
            print("connected", flush=True)
        except OSError as err:
            print("refused: " + type(err).__name__, flush=True)
    elif op == "err":
        sys.stderr.write(arg + "\n")
        sys.stderr.flush()
        print("ok", flush=True)
    elif op == "exit":
        sys.exit(int(arg))
"#;

async fn spawn_python(env: &JailEnv, code: &str, args: &[&str]) -> JailProcess {
    let mut command = script_command("python3", "serve.py", code, Duration::from_secs(1));
    command.args = args.iter().map(|a| (*a).to_owned()).collect();
    env.jail(JailPolicy::default())
        .spawn(&command)
        .await
        .unwrap()
}

async fn ask(process: &mut JailProcess, line: &str) -> String {
    process.write_line(line).await.unwrap();
    tokio::time::timeout(Duration::from_secs(20), process.read_line())
        .await
        .expect("an answer in time")
        .unwrap()
        .expect("a line, not the end of stdout")
}

#[tokio::test]
async fn lines_go_in_and_out_and_the_process_outlives_its_timeout() {
    let env = JailEnv::new();
    let mut process = spawn_python(&env, SERVE, &[]).await;
    assert_eq!(ask(&mut process, "echo one").await, "one");
    // `command.timeout` (1 s) is not a limit of a spawned process.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(ask(&mut process, "echo two words").await, "two words");
    assert_eq!(
        ask(&mut process, "read /input/data.txt").await,
        "read: input data"
    );
    let mark = process.stderr_mark();
    assert_eq!(ask(&mut process, "err to stderr").await, "ok");
    // stderr is read by a task of its own: give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while process.stderr_since(mark).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(process.stderr_since(mark), "to stderr\n");
    assert!(process.stderr().text.contains("to stderr"));
    assert!(!process.has_exited());
}

#[tokio::test]
async fn the_jail_holds_for_an_interactive_process() {
    let env = JailEnv::new();
    let mut process = spawn_python(&env, SERVE, &[]).await;
    let secret = env.outside("secret.txt");
    let answer = ask(&mut process, &format!("read {}", secret.display())).await;
    assert!(answer.starts_with("refused: "), "{answer}");
    assert!(!answer.contains(SECRET), "{answer}");
    let answer = ask(&mut process, "read /etc/shadow").await;
    assert!(answer.starts_with("refused: "), "{answer}");
    let answer = ask(&mut process, "connect").await;
    assert!(answer.starts_with("refused: "), "{answer}");
}

#[tokio::test]
async fn a_program_that_exits_is_seen_with_its_code() {
    let env = JailEnv::new();
    let mut process = spawn_python(&env, SERVE, &[]).await;
    assert_eq!(ask(&mut process, "echo first").await, "first");
    process.write_line("exit 7").await.unwrap();
    assert_eq!(process.read_line().await.unwrap(), None);
    assert_eq!(process.wait().await.unwrap(), JailExit::Code(7));
    assert!(process.has_exited());
    // Asking again gives the same answer.
    assert_eq!(process.wait().await.unwrap(), JailExit::Code(7));
}

#[tokio::test]
async fn a_program_missing_from_the_jail_is_exit_127() {
    let env = JailEnv::new();
    let mut command = script_command("python3", "x.py", "", Duration::from_secs(5));
    command.program = "no-such-program-anywhere".into();
    command.script = None;
    let mut process = env
        .jail(JailPolicy::default())
        .spawn(&command)
        .await
        .unwrap();
    assert_eq!(process.read_line().await.unwrap(), None);
    assert_eq!(process.wait().await.unwrap(), JailExit::Code(127));
    assert!(process.stderr().text.contains("command not found"));
}

/// Processes of the host whose command line holds `marker` (the jail's PID namespace is
/// inside the host's, so its processes show in the host's `/proc`).
fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|cmdline| String::from_utf8_lossy(cmdline).contains(marker))
        .count()
}

/// Waits up to 10 s for every process with `marker` to be gone.
async fn all_gone(marker: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if processes_with(marker) == 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// The serving program, which first starts a grandchild that sleeps (both carry `marker`).
async fn spawn_with_grandchild(env: &JailEnv, marker: &str) -> JailProcess {
    let code = format!(
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', \
         'import time; time.sleep(600)', '{marker}'])\n{SERVE}"
    );
    let mut process = spawn_python(env, &code, &[marker]).await;
    assert_eq!(ask(&mut process, "echo up").await, "up");
    // The program and its grandchild, as the host sees them.
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_with(marker) < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(processes_with(marker), 2);
    process
}

#[tokio::test]
async fn kill_ends_the_program_and_everything_it_started() {
    let env = JailEnv::new();
    let marker = format!("golem-kill-marker-{}", std::process::id());
    let mut process = spawn_with_grandchild(&env, &marker).await;
    process.kill();
    assert_eq!(process.read_line().await.unwrap(), None);
    assert_eq!(process.wait().await.unwrap(), JailExit::Interrupted);
    assert!(all_gone(&marker).await, "{marker} still runs");
    // A kill with a reason of the caller's own.
    let mut process = spawn_python(&env, SERVE, &[]).await;
    process.kill_as(JailExit::TimedOut);
    assert_eq!(process.wait().await.unwrap(), JailExit::TimedOut);
}

#[tokio::test]
async fn dropping_the_process_ends_everything_it_started() {
    let env = JailEnv::new();
    let marker = format!("golem-drop-marker-{}", std::process::id());
    let process = spawn_with_grandchild(&env, &marker).await;
    drop(process);
    assert!(all_gone(&marker).await, "{marker} still runs");
}

/// A program that writes a file for each `write NAME TEXT` line (relative to its working
/// directory, the zone `output`) and answers `done`.
const WRITER: &str = r#"
import sys
for line in sys.stdin:
    op, name, text = line.rstrip("\n").split(" ", 2)
    with open("/output/" + name, "w") as f:
        f.write(text)
    print("done", flush=True)
"#;

#[tokio::test]
async fn a_layered_process_changes_no_zone_and_its_changes_come_back_when_it_ends() {
    let env = JailEnv::new();
    let command = script_command("python3", "writer.py", WRITER, Duration::from_secs(1));
    let jail = env
        .jail(JailPolicy::default())
        .with_zone_writes(golem_sandbox::jail::ZoneWrites::Changeset);
    let mut process = jail.spawn(&command).await.unwrap();
    assert!(
        !process.has_changes(),
        "a fresh process has changed nothing"
    );
    assert_eq!(ask(&mut process, "write made.txt hello").await, "done");
    assert!(process.has_changes());
    assert!(
        !env.output("made.txt").exists(),
        "the zone is unchanged while the process lives"
    );
    let changeset = process.end_with_changes().await.unwrap();
    let changes: Vec<String> = changeset
        .changes()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(changes, ["create /output/made.txt (file, 0644, 5 bytes)"]);
    assert!(
        !env.output("made.txt").exists(),
        "not applied before the gate"
    );
    changeset.apply(&env.sandbox).unwrap();
    assert_eq!(
        std::fs::read_to_string(env.output("made.txt")).unwrap(),
        "hello"
    );

    // Dropped, a process's layers go with it, unapplied.
    let mut dropped = jail.spawn(&command).await.unwrap();
    assert_eq!(ask(&mut dropped, "write lost.txt gone").await, "done");
    drop(dropped);
    assert!(!env.output("lost.txt").exists());
}

#[tokio::test]
async fn a_direct_process_has_no_changeset() {
    let env = JailEnv::new();
    let command = script_command("python3", "writer.py", WRITER, Duration::from_secs(1));
    let mut process = env
        .jail(JailPolicy::default())
        .spawn(&command)
        .await
        .unwrap();
    assert_eq!(ask(&mut process, "write direct.txt now").await, "done");
    assert!(!process.has_changes());
    assert_eq!(
        std::fs::read_to_string(env.output("direct.txt")).unwrap(),
        "now"
    );
    let err = process.end_with_changes().await.unwrap_err();
    assert!(err.to_string().contains("directly"), "{err}");
}
