//! What is not ACP gets a JSON-RPC error and the agent goes on: a line that is not JSON, a
//! session asked for before `initialize`, an unknown method, a prompt for a session that does
//! not exist, a relative `cwd`, an image the agent does not accept. Stdout carries only the
//! protocol, and the agent exits 0 when the editor closes its input.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{WIRE, project_dir, writer};
use golem_testkit::cli::{Project, binary};

/// Writes `line` and reads stdout until the answer with `id` (`null` for a line that is not
/// JSON); every line read must be JSON.
fn ask(stdin: &mut ChildStdin, stdout: &Receiver<String>, line: &str, id: &Value) -> Value {
    writeln!(stdin, "{line}").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let Ok(line) = stdout.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC ({e}): {line}"));
        if &value["id"] == id && value.get("method").is_none() {
            return value;
        }
    }
    panic!("no answer to {line}");
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[test]
fn malformed_and_out_of_order_requests_are_errors_and_the_agent_goes_on() {
    let project = Project::new(&[("main.worker", writer(""))], Vec::new());
    let mut child = Command::new(binary())
        .args([
            "acp",
            "main.worker",
            "--model",
            "test:default",
            "--approval",
            "auto_deny",
        ])
        .current_dir(project.env.path().join("proj"))
        .env_clear()
        .envs(project.server_env(WIRE))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let cwd = project_dir(&project);
    let code = |answer: Value| answer["error"]["code"].clone();

    let garbage = ask(&mut stdin, &rx, "this is not json", &Value::Null);
    assert_eq!(code(garbage), -32700);
    let early = ask(
        &mut stdin,
        &rx,
        &request(1, "session/new", json!({"cwd": cwd, "mcpServers": []})),
        &json!(1),
    );
    assert_eq!(code(early), -32600, "a session before initialize");
    let init = ask(
        &mut stdin,
        &rx,
        &request(2, "initialize", json!({"protocolVersion": 1})),
        &json!(2),
    );
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    let unknown = ask(
        &mut stdin,
        &rx,
        &request(3, "no/such_method", json!({})),
        &json!(3),
    );
    assert_eq!(code(unknown), -32601, "an unknown method");
    let nobody = ask(
        &mut stdin,
        &rx,
        &request(
            4,
            "session/prompt",
            json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}),
        ),
        &json!(4),
    );
    assert_eq!(code(nobody), -32602, "a prompt for no session");
    let relative = ask(
        &mut stdin,
        &rx,
        &request(
            5,
            "session/new",
            json!({"cwd": "relative/dir", "mcpServers": []}),
        ),
        &json!(5),
    );
    assert_eq!(code(relative), -32602, "a relative cwd");
    let bad_params = ask(
        &mut stdin,
        &rx,
        &request(6, "session/new", json!({"cwd": 42})),
        &json!(6),
    );
    assert_eq!(code(bad_params), -32602, "params of the wrong shape");

    let session = ask(
        &mut stdin,
        &rx,
        &request(7, "session/new", json!({"cwd": cwd, "mcpServers": []})),
        &json!(7),
    );
    let id = session["result"]["sessionId"].as_str().unwrap().to_owned();
    let image = ask(
        &mut stdin,
        &rx,
        &request(
            8,
            "session/prompt",
            json!({"sessionId": id, "prompt": [
                {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}]}),
        ),
        &json!(8),
    );
    assert_eq!(image["error"]["code"], -32602, "{image}");
    assert!(
        image["error"]["message"].to_string().contains("image"),
        "{image}"
    );
    // Still serving: a prompt that works.
    let answered = ask(
        &mut stdin,
        &rx,
        &request(
            9,
            "session/prompt",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "hi"}]}),
        ),
        &json!(9),
    );
    assert_eq!(answered["result"]["stopReason"], "end_turn", "{answered}");

    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    // The session's transcript was closed on the way out.
    let transcripts = project.transcripts();
    assert_eq!(transcripts.len(), 1);
    assert!(
        transcripts[0]
            .iter()
            .any(|entry| entry.to_string().contains("sessionEnded")),
        "{:#?}",
        transcripts[0]
    );
}
