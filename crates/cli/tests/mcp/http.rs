//! The HTTP server's door: without the token the client cannot connect and every request is
//! refused (401 with `WWW-Authenticate: Bearer`), as is one naming another host or coming from
//! another origin (403); with the token it is served (the other cases run over HTTP with it).
//! Stopping the server (SIGINT) during a call interrupts it and closes its session. Idle
//! connections cannot lock the token holder out (1,100 half-sent request heads), and a
//! half-sent head is closed after the header-read timeout.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{
    HttpServer, Protocol, Transport, WIRE, connection, run_client, run_client_unchecked, with,
    writer,
};
use golem_testkit::cli::Project;
use golem_testkit::cli::flood::{
    IDLE, answer_status, assert_raised_its_open_file_limit, closed_by_the_server, half_sent,
    with_server_soft_limit,
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

/// The address of the server's endpoint URL, `http://HOST:PORT/mcp`.
fn address(server: &HttpServer) -> std::net::SocketAddr {
    let authority = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    authority.parse().unwrap()
}

#[test]
fn idle_half_sent_connections_do_not_lock_the_token_holder_out() {
    let project = Project::new(&[("main.worker", writer(""))], Vec::new());
    let server = with_server_soft_limit(|| HttpServer::start(&project, &["main.worker"], &[]));
    assert_raised_its_open_file_limit(server.pid());
    let addr = address(&server);
    let opened = Instant::now();
    let idle = half_sent(addr, IDLE);
    let opening = opened.elapsed();
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "flood-test", "version": "1"},
        },
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.token,
        body.len()
    );
    let (status, took) = answer_status(addr, &request);
    eprintln!(
        "mcp --http: {IDLE} half-sent connections opened in {opening:?}; the token holder's \
         answer ({status}) took {took:?}"
    );
    drop(idle);
    let (code, stderr) = server.stop();
    assert_eq!(status, 200, "{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_half_sent_request_head_is_closed_after_the_header_read_timeout() {
    let project = Project::new(&[("main.worker", writer(""))], Vec::new());
    let server = HttpServer::start(&project, &["main.worker"], &[]);
    let took = closed_by_the_server(address(&server));
    eprintln!("mcp --http: a half-sent request head was closed after {took:?}");
    let (code, stderr) = server.stop();
    assert_eq!(code, Some(0), "{stderr}");
}
