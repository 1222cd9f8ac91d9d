//! Structured output end to end: a worker with `output: {schema}` shows its answer's JSON
//! value as `output` in `turnEnded` (`run --json`) on each wire and with the offline `test`
//! model, and a sub-worker with one answers its caller with the value.

use super::*;

const SCHEMA: &str = "output:\n  schema: { type: object, properties: { verdict: { enum: [ok, bad] }, reasons: { type: array, items: { type: string } } }, required: [verdict] }\n";

fn turn_ended(events: &[Value]) -> &Value {
    of_type(events, "turnEnded")
        .first()
        .copied()
        .unwrap_or_else(|| panic!("no turnEnded in {events:#?}"))
}

#[test]
fn run_json_shows_the_structured_answer_in_turn_ended() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", worker("main", SCHEMA))]);
        let answer = wire.structured_answer(&json!({"verdict": "bad", "reasons": ["too long"]}));
        let server = MockServer::start_blocking(vec![answer]);
        let output = run(
            &env,
            wire,
            &server,
            &["proj/main.worker", "judge", "--json"],
        );
        assert_exit(&output, 0);
        let events = events(&output);
        let ended = turn_ended(&events);
        assert_eq!(ended["status"], "completed", "{wire:?}: {ended}");
        assert_eq!(
            ended["output"],
            json!({"verdict": "bad", "reasons": ["too long"]}),
            "{wire:?}"
        );
        let requests = server.requests();
        assert_eq!(
            requests.len(),
            1,
            "{wire:?}: the final_result call is not run"
        );
        assert_eq!(
            wire.output_schema_sent(&requests[0]),
            Some(json!({
                "type": "object",
                "properties": {
                    "verdict": {"enum": ["ok", "bad"]},
                    "reasons": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["verdict"],
            })),
            "{wire:?}: {:#}",
            requests[0].body
        );
        let started = of_type(&events, "sessionStarted");
        assert_eq!(
            started[0]["protocolVersion"],
            golem_protocol::PROTOCOL_VERSION
        );
    }
}

#[test]
fn a_turn_whose_answer_stays_invalid_fails_naming_the_violation() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("main.worker", worker("main", SCHEMA))]);
    let server = MockServer::start_blocking(vec![
        wire.text(r#"{"verdict": "maybe"}"#),
        wire.text(r#"{"verdict": "perhaps"}"#),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &["proj/main.worker", "judge", "--json"],
    );
    assert_exit(&output, 1);
    let events = events(&output);
    let ended = turn_ended(&events);
    assert_eq!(ended["status"], "failed");
    let error = ended["error"].as_str().unwrap();
    assert!(error.contains("at `/verdict`"), "{error}");
    assert!(ended.get("output").is_none(), "{ended}");
    assert_eq!(server.requests().len(), 2, "one repair");
}

#[test]
fn the_offline_test_model_answers_with_a_valid_value() {
    let env = TestEnv::new();
    project(&env, &[("main.worker", worker("main", SCHEMA))]);
    let output = env
        .command()
        .args([
            "run",
            "proj/main.worker",
            "judge",
            "--json",
            "--model",
            "test:default",
        ])
        .output()
        .unwrap();
    assert_exit(&output, 0);
    let events = events(&output);
    let ended = turn_ended(&events);
    assert_eq!(ended["output"], json!({"verdict": "ok"}), "{ended}");
}

#[test]
fn a_sub_worker_with_an_output_schema_answers_its_caller_with_the_value() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(
        &env,
        &[
            ("a.worker", delegating_worker("a", &["judge"])),
            ("judge.worker", worker("judge", SCHEMA)),
        ],
    );
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_a", "judge", json!({"input": "judge this"}))]),
        wire.text(r#"{"verdict": "ok"}"#),
        wire.text("The judge says ok."),
    ]);
    let output = run(
        &env,
        wire,
        &server,
        &[
            "proj/a.worker",
            "ask the judge",
            "-a",
            "approve_all",
            "--json",
        ],
    );
    assert_exit(&output, 0);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].body.get("response_format").is_none());
    assert_eq!(
        requests[1].body["response_format"]["json_schema"]["name"],
        "judge"
    );
    let results = results_sent(wire, &server, 2);
    assert!(
        results[0].content.contains(r#"{"verdict":"ok"}"#),
        "{results:?}"
    );
    let events = events(&output);
    let result = of_type(&events, "toolResult")
        .into_iter()
        .find(|e| e["toolName"] == "judge")
        .unwrap();
    assert_eq!(result["value"]["kind"], "structured", "{result}");
    assert_eq!(result["value"]["data"], json!({"verdict": "ok"}));
    // The root has no output schema: its turn has no `output`.
    assert!(turn_ended(&events).get("output").is_none());
}
