//! Cancelling a call: the client's cancellation interrupts the worker exactly like Ctrl+C —
//! the slow tool in progress (a sub-worker whose model takes a minute) is interrupted, the
//! worker summarises, the session ends as interrupted — and the server goes on answering.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{
    HttpServer, Transport, VARIANTS, WIRE, connection, run_client, with, worker, writer,
};
use golem_testkit::cli::Project;

#[test]
fn cancelling_a_slow_call_interrupts_its_tools_and_the_server_goes_on() {
    for (transport, protocol) in VARIANTS {
        let main = writer("").replacen(
            "toolsets:\n",
            "toolsets:\n  workers:\n    allowed_workers: [helper]\n",
            1,
        );
        let project = Project::new(
            &[
                ("main.worker", main),
                ("helper.worker", worker("helper", "Thinks hard", "")),
            ],
            vec![
                WIRE.tool_calls(&[("call_slow", "helper", json!({"input": "think hard"}))]),
                WIRE.text("Too late.").delayed(Duration::from_secs(60)),
                WIRE.text("Summary: the helper was interrupted."),
            ],
        );
        // Delegation asks; this client cannot be asked.
        let (workers, extra) = (["main.worker"], ["--approval", "approve_all"]);
        let server =
            (transport == Transport::Http).then(|| HttpServer::start(&project, &workers, &extra));
        // The client cancels once the helper's model has been asked (and takes its time).
        let flag = project.env.path().join("helper-asked");
        let config = with(
            connection(
                &project,
                transport,
                protocol,
                &workers,
                &extra,
                server.as_ref(),
            ),
            json!({
                "tool": "main",
                "arguments": {"input": "ask the helper"},
                "cancel_at": "helper: started",
                "cancel_when": flag,
            }),
        );
        let started = Instant::now();
        let run = std::thread::scope(|scope| {
            scope.spawn(|| {
                if project.model.wait_for_requests(2, Duration::from_secs(30)) {
                    std::fs::write(&flag, "").unwrap();
                }
            });
            run_client("cancel.py", config, &project)
        });
        if let Some(server) = server {
            let (code, stderr) = server.stop();
            assert_eq!(code, Some(0), "{stderr}");
        }
        let took = started.elapsed();
        let report = &run.report;
        assert_eq!(
            report["cancelled"], true,
            "{transport:?}/{protocol:?}: {report}"
        );
        assert!(
            report.get("result").is_none(),
            "a cancelled call is not answered"
        );
        assert_eq!(
            report["tools_after"],
            json!(["main"]),
            "the server still answers"
        );
        assert!(
            took < Duration::from_secs(30),
            "{transport:?}/{protocol:?}: the slow tool was not waited for ({took:?})"
        );

        // The slow tool was interrupted, the root summarised, the session ended interrupted.
        let requests = project.model.requests();
        assert_eq!(
            requests.len(),
            3,
            "{transport:?}/{protocol:?}: {report}\n{}",
            run.stderr
        );
        let results = WIRE.tool_results(&requests[2]);
        assert_eq!(results[0].tool_call_id, "call_slow");
        assert!(
            results[0].content.contains("INTERRUPTED"),
            "{transport:?}/{protocol:?}: {results:?}"
        );
        let transcripts = project.transcripts();
        assert_eq!(transcripts.len(), 1);
        let last = transcripts[0].last().unwrap();
        assert_eq!(
            (&last["kind"], &last["reason"]),
            (&json!("ended"), &json!("interrupted")),
            "{transport:?}/{protocol:?}: {last}\n{}",
            run.stderr
        );
        let call = transcripts[0]
            .iter()
            .find(|l| l["kind"] == "toolCall")
            .unwrap();
        assert!(call.to_string().contains("interrupted"), "{call}");
    }
}
