//! The HTTP server's door: without the token the client cannot connect and every request is
//! refused (401 with `WWW-Authenticate: Bearer`), as is one naming another host or coming from
//! another origin (403); with the token it is served (the other cases run over HTTP with it).
//! Stopping the server (SIGINT) during a call interrupts it and closes its session.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{
    HttpServer, Project, Protocol, Transport, WIRE, connection, run_client, run_client_unchecked,
    with, writer,
};

#[test]
fn without_the_token_nothing_is_served() {
    let project = Project::new(&[("main.worker", writer(""))], Vec::new());
    let server = HttpServer::start(&project, &["main.worker"], &[]);
    let config = with(
        connection(
            &project,
            Transport::Http,
            Protocol::Discovery,
            &["main.worker"],
            &[],
            Some(&server),
        ),
        json!({}),
    );
    let report = run_client("unauthorized.py", config, &project).report;
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");

    let client = report["client"].as_str().unwrap();
    assert_ne!(client, "connected", "{report}");
    for attempt in ["no_token", "wrong_token"] {
        assert_eq!(report[attempt]["status"], 401, "{attempt}: {report}");
        assert_eq!(
            report[attempt]["www_authenticate"], "Bearer realm=\"golem-forge\"",
            "{attempt}: {report}"
        );
    }
    assert_eq!(report["other_host"]["status"], 403, "{report}");
    assert_eq!(report["other_origin"]["status"], 403, "{report}");
    assert_eq!(report["right_token"]["status"], 200, "{report}");
    assert!(project.transcripts().is_empty());
}

#[test]
fn stopping_the_server_during_a_call_ends_the_calls_session_cleanly() {
    let project = Project::new(
        &[("main.worker", writer(""))],
        vec![WIRE.text("Too late.").delayed(Duration::from_secs(60))],
    );
    let server = HttpServer::start(&project, &["main.worker"], &[]);
    let config = with(
        connection(
            &project,
            Transport::Http,
            Protocol::Handshake,
            &["main.worker"],
            &[],
            Some(&server),
        ),
        json!({"calls": [{"tool": "main", "arguments": {"input": "take your time"}}]}),
    );
    std::thread::scope(|scope| {
        let client = scope.spawn(|| run_client_unchecked("call.py", config, &project));
        assert!(project.model.wait_for_requests(1, Duration::from_secs(30)));
        let stopping = Instant::now();
        let (code, stderr) = server.stop();
        let took = stopping.elapsed();
        assert_eq!(code, Some(0), "{stderr}");
        assert!(took < Duration::from_secs(10), "stopping took {took:?}");
        assert!(
            stderr.contains("golem-forge mcp: main interrupted in"),
            "{stderr}"
        );
        let (status, out, _) = client.join().unwrap();
        assert!(!status.success() || !out.contains("Too late."), "{out}");
    });
    let transcripts = project.transcripts();
    assert_eq!(transcripts.len(), 1);
    let last = transcripts[0].last().unwrap();
    assert_eq!(
        (&last["kind"], &last["reason"]),
        (&json!("ended"), &json!("interrupted")),
        "{last}"
    );
}
