//! What reaches the model after a model's mistakes, on each wire, through the real runtime:
//! a call with malformed arguments goes back in the history with valid JSON (`{}`, so that a
//! strict server such as LiteLLM does not refuse the next request), its result still says the
//! arguments were invalid, and every error result carries one `Error` prefix.

use super::*;

#[test]
fn malformed_arguments_go_back_as_valid_json_and_errors_have_one_prefix() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        let server = MockServer::start_blocking(vec![
            wire.tool_calls_raw(&[("call_1", "read_file", r#"{"path": "/out/a.txt""#)]),
            wire.tool_calls(&[("call_2", "read_file", json!({"path": "/out/missing.txt"}))]),
            wire.text("Done."),
        ]);
        let output = run(&env, wire, &server, &["proj/main.worker", "read", "--json"]);
        assert_exit(&output, 0);

        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{wire:?}");
        let history = &requests[1].body["messages"];
        let sent = wire.tool_calls_sent(&requests[1]);
        assert_eq!(sent.len(), 1, "{wire:?}: {history:#}");
        assert_eq!(
            (sent[0].id.as_str(), sent[0].arguments.clone()),
            ("call_1", json!({})),
            "{wire:?}: {history:#}"
        );

        let invalid = results_sent(wire, &server, 1);
        assert!(wire.is_error(&invalid[0]), "{wire:?}: {invalid:?}");
        assert!(
            invalid[0].content.starts_with(
                "Error [INVALID_ARGUMENTS]: arguments for read_file are not valid JSON"
            ),
            "{wire:?}: {invalid:?}"
        );
        let missing = results_sent(wire, &server, 2);
        assert!(wire.is_error(&missing[1]), "{wire:?}: {missing:?}");
        assert!(
            missing[1].content.starts_with("Error [FILE_NOT_FOUND]: "),
            "{wire:?}: one prefix: {missing:?}"
        );
    }
}
