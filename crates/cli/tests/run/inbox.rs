//! The approval inbox end to end: `--approval defer` parks a run (exit 4) with its call in
//! `golem-forge inbox`; `inbox approve --resume` runs the call once and finishes the turn;
//! `inbox deny --note` tells the model; a batch's parked item continues at `batch resume`.

use super::*;

/// `golem-forge ARGS` in the project `proj/`, with the provider of `wire` pointed at `server`
/// (no `--model`: the inbox commands take the session's).
fn golem(env: &TestEnv, wire: Wire, server: &MockServer, args: &[&str]) -> Output {
    env.command()
        .current_dir(env.path().join("proj"))
        .args(args)
        .envs(provider_env(wire, server))
        .output()
        .unwrap()
}

/// The session id `run` names on stderr when it parks.
fn parked_session(output: &Output) -> String {
    let text = stderr(output);
    let at = text.find("session ").expect("names the session");
    text[at + 8..].split_whitespace().next().unwrap().to_owned()
}

fn inbox_entries(env: &TestEnv) -> Vec<Value> {
    inbox_entries_in(env, "proj")
}

fn write_call(content: &str) -> Value {
    json!({"path": "/out/a.txt", "content": content})
}

#[test]
fn a_deferred_write_parks_the_run_and_approve_resume_writes_it_once() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "write_file", write_call("hello inbox"))]),
        wire.text("Written."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &[
            "proj/main.worker",
            "write",
            "it",
            "--approval",
            "defer",
            "--json",
        ],
    );
    assert_exit(&output, 4);
    assert!(
        !env.path().join("proj/out/a.txt").exists(),
        "nothing written yet"
    );
    assert_eq!(server.requests().len(), 1);
    let events = events(&output);
    let deferred = events
        .iter()
        .find(|e| e["type"] == "approvalDeferred")
        .expect("approvalDeferred");
    assert_eq!(deferred["inboxId"], 1);
    assert_eq!(deferred["request"]["toolName"], "write_file");
    assert!(
        !events.iter().any(|e| e["type"] == "toolResult"),
        "a parked call has no result yet"
    );
    let ended = events.iter().find(|e| e["type"] == "turnEnded").unwrap();
    assert_eq!(ended["status"], "waitingApproval", "{ended}");
    assert_eq!(events.last().unwrap()["reason"], "waitingApproval");

    // The inbox lists it, with where it waits and a preview of the change.
    let entries = inbox_entries(&env);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["id"], 1);
    assert_eq!(entries[0]["worker"], "main");
    assert_eq!(entries[0]["request"]["args"]["content"], "hello inbox");
    let session = entries[0]["session"].as_str().unwrap().to_owned();
    let listed = env
        .command()
        .current_dir(env.path().join("proj"))
        .arg("inbox")
        .output()
        .unwrap();
    let listed = stdout(&listed);
    assert!(
        listed.contains("write_file") && listed.contains(&session),
        "{listed}"
    );
    let shown = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["inbox", "show", "1"])
        .output()
        .unwrap();
    assert_exit(&shown, 0);
    assert!(
        stdout(&shown).contains("+hello inbox"),
        "{}",
        stdout(&shown)
    );

    // Approved and continued: the call runs once, the model finishes the turn.
    let output = golem(&env, wire, &server, &["inbox", "approve", "1", "--resume"]);
    assert_exit(&output, 0);
    assert_eq!(stdout(&output), "Written.\n");
    assert_eq!(
        std::fs::read_to_string(env.path().join("proj/out/a.txt")).unwrap(),
        "hello inbox"
    );
    assert_eq!(server.requests().len(), 2);
    let results = results_sent(wire, &server, 1);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].tool_call_id, "call_1");
    assert!(!wire.is_error(&results[0]), "{results:?}");
    assert!(inbox_entries(&env).is_empty(), "the settled entry is gone");

    // The answer is used up: continuing again runs nothing twice.
    let again = golem(&env, wire, &server, &["inbox", "approve", "1"]);
    assert_exit(&again, 2);
    assert!(
        stderr(&again).contains("no approval 1 waits"),
        "{}",
        stderr(&again)
    );
    let transcript = std::fs::read_to_string(
        env.path()
            .join(format!("proj/.golem-forge/sessions/{session}.jsonl")),
    )
    .unwrap();
    let records = transcript
        .lines()
        .filter(|l| l.contains("\"toolCall\"") && l.contains("call_1"))
        .count();
    assert_eq!(records, 1, "one record of the call:\n{transcript}");
}

#[test]
fn a_denial_with_a_note_reaches_the_model_when_the_session_resumes() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "write_file", write_call("x"))]),
        wire.text("Understood."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/main.worker", "write", "--approval", "defer"],
    );
    assert_exit(&output, 4);
    let text = stderr(&output);
    assert!(text.contains("waits for approval (inbox 1)"), "{text}");
    // Parking is an outcome, not an error, and the hints name the entry, not a placeholder.
    let session = parked_session(&output);
    let end: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Waiting:"))
        .collect();
    assert_eq!(
        end,
        [
            format!(
                "Waiting: session {session} is parked until approval 1 in the inbox is answered"
            )
            .as_str(),
            "Hint: `golem-forge inbox show 1` shows what it would do; `golem-forge inbox approve 1 \
             --resume` approves it and continues at once (or `deny 1`)",
            format!(
                "Hint: `golem-forge sessions resume {session}` continues it once it is answered"
            )
            .as_str(),
        ],
        "{text}"
    );
    assert!(!text.contains("Error:"), "{text}");

    let denied = golem(
        &env,
        wire,
        &server,
        &["inbox", "deny", "1", "--note", "write b.txt instead"],
    );
    assert_exit(&denied, 0);
    assert!(
        stderr(&denied).contains("sessions resume"),
        "{}",
        stderr(&denied)
    );
    // Resumed with no input: the parked turn continues.
    let resumed = golem(
        &env,
        wire,
        &server,
        &["sessions", "resume", &session, "--approval", "defer"],
    );
    assert_exit(&resumed, 0);
    assert_eq!(stdout(&resumed), "Understood.\n");
    let results = results_sent(wire, &server, 1);
    assert!(
        results[0].content.contains("write b.txt instead"),
        "the note reaches the model: {results:?}"
    );
    assert!(wire.is_error(&results[0]));
    assert!(!env.path().join("proj/out/a.txt").exists());
}

#[test]
fn a_parked_batch_item_continues_at_batch_resume_and_the_rest_complete() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("main.worker", fs_worker(""))]);
    env.write(
        "proj/items.jsonl",
        "{\"id\": \"a\", \"input\": \"say a\"}\n{\"id\": \"b\", \"input\": \"write b\"}\n",
    );
    // One item at a time, in order: a answers, b writes (parked), then b goes on.
    let server = MockServer::start_blocking(vec![
        wire.text("A."),
        wire.tool_calls(&[("call_b", "write_file", write_call("from b"))]),
        wire.text("Wrote b."),
    ]);
    let output = env
        .command()
        .current_dir(env.path().join("proj"))
        .args([
            "batch",
            "main.worker",
            "--input",
            "items.jsonl",
            "--approval",
            "defer",
            "--concurrency",
            "1",
            "--model",
            model_for(wire),
        ])
        .envs(provider_env(wire, &server))
        .output()
        .unwrap();
    assert_exit(&output, 4);
    let told = stderr(&output);
    assert!(
        told.contains("1 waiting for approval") && told.contains("golem-forge inbox"),
        "{told}"
    );
    let entries = inbox_entries_in(&env, "proj");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["batch"]["item"], "b");
    let batch = entries[0]["batch"]["batch"].as_str().unwrap().to_owned();

    let approved = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["inbox", "approve", "1"])
        .output()
        .unwrap();
    assert_exit(&approved, 0);
    assert!(
        stderr(&approved).contains("batch resume"),
        "{}",
        stderr(&approved)
    );
    let resumed = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["batch", "resume", &batch])
        .envs(provider_env(wire, &server))
        .output()
        .unwrap();
    assert_exit(&resumed, 0);
    assert_eq!(
        std::fs::read_to_string(env.path().join("proj/out/a.txt")).unwrap(),
        "from b"
    );
    let results = env
        .command()
        .current_dir(env.path().join("proj"))
        .args(["batch", "results", &batch])
        .output()
        .unwrap();
    let lines: Vec<Value> = stdout(&results)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines.iter().all(|l| l["status"] == "completed"),
        "{lines:?}"
    );
    assert_eq!(lines[1]["answer"], "Wrote b.");
    assert!(inbox_entries_in(&env, "proj").is_empty());
}

fn inbox_entries_in(env: &TestEnv, dir: &str) -> Vec<Value> {
    let output = env
        .command()
        .current_dir(env.path().join(dir))
        .args(["inbox", "--json"])
        .output()
        .unwrap();
    assert_exit(&output, 0);
    stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}
