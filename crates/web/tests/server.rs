//! The server in-process, driven as the page drives it: WebSocket frames that are protocol
//! events. A whole turn with an approval answered from one of two tabs (the other sees it
//! resolved), a tab that connects late gets the session so far, malformed frames get a
//! `status` error and end nothing, the session's end closes every socket, and what the guard
//! refuses over HTTP and WebSocket.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use golem_protocol::{DisplayEvent, ToolStatus, TurnStatus};
use golem_runtime::host::{HostOptions, HostWorker, SessionHost};
use golem_testkit::mock::MockServer;
use golem_testkit::openai;
use golem_testkit::program::mock_program;
use golem_web::WebServer;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long any one expected frame may take.
const WAIT: Duration = Duration::from_secs(20);

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

fn options(worker: &Path) -> HostOptions {
    HostOptions {
        keeps_history: true,
        ..HostOptions::new(HostWorker::File(worker.to_owned()))
    }
}

/// A served session of `worker`, and the task running it (ends with the session).
async fn serve(worker: &Path) -> (SocketAddr, String, tokio::task::JoinHandle<()>) {
    let host = SessionHost::open(options(worker)).unwrap();
    let server = WebServer::bind(host, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let token = server.token().to_owned();
    let task = tokio::spawn(async move {
        server.run(std::future::pending()).await.unwrap();
    });
    (addr, token, task)
}

/// Opens `/ws` as the page does: the cookie, the page's own `Origin`.
async fn tab(addr: SocketAddr, token: &str) -> Socket {
    let mut request = format!("ws://{addr}/ws").into_client_request().unwrap();
    let headers = request.headers_mut();
    headers.insert(
        "cookie",
        HeaderValue::from_str(&format!("golem_forge_token={token}")).unwrap(),
    );
    headers.insert(
        "origin",
        HeaderValue::from_str(&format!("http://{addr}")).unwrap(),
    );
    tokio_tungstenite::connect_async(request).await.unwrap().0
}

async fn send(socket: &mut Socket, action: Value) {
    socket
        .send(Message::Text(action.to_string().into()))
        .await
        .unwrap();
}

/// Reads frames until one matches `want`; returns it and every event before it.
async fn until(
    socket: &mut Socket,
    want: impl Fn(&DisplayEvent) -> bool,
) -> (DisplayEvent, Vec<DisplayEvent>) {
    let mut seen = Vec::new();
    loop {
        let frame = tokio::time::timeout(WAIT, socket.next())
            .await
            .unwrap_or_else(|_| panic!("no such event in time; saw {seen:#?}"))
            .unwrap_or_else(|| panic!("the socket closed; saw {seen:#?}"))
            .unwrap();
        let Message::Text(text) = frame else {
            continue;
        };
        let event: DisplayEvent = serde_json::from_str(text.as_str())
            .unwrap_or_else(|e| panic!("not a display event ({e}): {text}"));
        if want(&event) {
            return (event, seen);
        }
        seen.push(event);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tabs_share_a_turn_and_the_first_answer_decides_the_approval() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[(
            "call_1",
            "write_file",
            json!({"path": "/out/a.txt", "content": "hello"}),
        )]),
        openai::text("Wrote it."),
    ])
    .await;
    let (dir, worker) = mock_program(&server, "");
    let (addr, token, _task) = serve(&worker).await;
    let mut first = tab(addr, &token).await;
    let mut second = tab(addr, &token).await;
    until(&mut first, |e| {
        matches!(e, DisplayEvent::SessionStarted { .. })
    })
    .await;
    send(
        &mut first,
        json!({"type": "userInput", "content": "write a.txt"}),
    )
    .await;
    let (asked, _) = until(&mut second, |e| {
        matches!(e, DisplayEvent::ApprovalRequired(_))
    })
    .await;
    let DisplayEvent::ApprovalRequired(request) = asked else {
        unreachable!()
    };
    assert_eq!(request.tool_name, "write_file");
    let fields: Vec<&str> = request.fields.iter().map(|f| f.name.as_str()).collect();
    assert!(
        fields.contains(&"path") && fields.contains(&"content"),
        "the form of the arguments comes with the request: {fields:?}"
    );
    // The second tab answers, with edited arguments; the first sees it resolved.
    send(
        &mut second,
        json!({"type": "approvalResponse", "requestId": request.request_id, "approved": true,
               "modifiedArgs": {"path": "/out/a.txt", "content": "edited"}}),
    )
    .await;
    let (resolved, _) = until(&mut first, |e| {
        matches!(e, DisplayEvent::ApprovalResolved(_))
    })
    .await;
    let DisplayEvent::ApprovalResolved(resolved) = resolved else {
        unreachable!()
    };
    assert!(resolved.approved);
    let (result, _) = until(&mut first, |e| matches!(e, DisplayEvent::ToolResult { .. })).await;
    assert!(matches!(
        result,
        DisplayEvent::ToolResult {
            status: ToolStatus::Success,
            ..
        }
    ));
    let (ended, before) = until(&mut first, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
    assert!(matches!(
        ended,
        DisplayEvent::TurnEnded {
            status: TurnStatus::Completed,
            ..
        }
    ));
    let streamed: String = before
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::Streaming { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Wrote it.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/a.txt")).unwrap(),
        "edited"
    );

    // A tab that connects now gets the session so far: the answer in one merged stream.
    let mut late = tab(addr, &token).await;
    let (_, so_far) = until(&mut late, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
    let streams: Vec<(&str, bool)> = so_far
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::Streaming { delta, done, .. } => Some((delta.as_str(), *done)),
            _ => None,
        })
        .collect();
    assert_eq!(streams, [("Wrote it.", true)]);
    assert!(
        so_far.iter().any(|e| matches!(
            e,
            DisplayEvent::Message { message, .. }
                if message.role == golem_protocol::Role::User && message.content == "write a.txt"
        )),
        "the late tab sees what the first tab asked: {so_far:#?}"
    );
    assert!(
        so_far
            .iter()
            .any(|e| matches!(e, DisplayEvent::ApprovalResolved(_))),
        "the late tab knows the approval was answered: {so_far:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_get_a_status_error_and_the_session_goes_on() {
    let server = MockServer::start(vec![openai::text("still here")]).await;
    let (_dir, worker) = mock_program(&server, "");
    let (addr, token, _task) = serve(&worker).await;
    let mut socket = tab(addr, &token).await;
    for bad in [
        Message::Text("not json".into()),
        Message::Text(r#"{"type":"noSuchAction"}"#.into()),
        Message::Text(r#"{"type":"userInput"}"#.into()),
        Message::Binary(vec![0, 1, 2].into()),
    ] {
        socket.send(bad.clone()).await.unwrap();
        let (status, _) = until(&mut socket, |e| matches!(e, DisplayEvent::Status { .. })).await;
        let DisplayEvent::Status { level, message } = status else {
            unreachable!()
        };
        assert_eq!(level, golem_protocol::StatusLevel::Error, "{bad:?}");
        assert!(!message.is_empty());
    }
    send(&mut socket, json!({"type": "userInput", "content": "hi"})).await;
    let (ended, _) = until(&mut socket, |e| matches!(e, DisplayEvent::TurnEnded { .. })).await;
    assert!(matches!(
        ended,
        DisplayEvent::TurnEnded {
            status: TurnStatus::Completed,
            ..
        }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_the_session_closes_every_socket_and_the_server() {
    let server = MockServer::start(vec![]).await;
    let (_dir, worker) = mock_program(&server, "");
    let (addr, token, task) = serve(&worker).await;
    let mut first = tab(addr, &token).await;
    let mut second = tab(addr, &token).await;
    send(&mut first, json!({"type": "endSession"})).await;
    for socket in [&mut first, &mut second] {
        until(socket, |e| matches!(e, DisplayEvent::SessionEnded { .. })).await;
        let next = tokio::time::timeout(WAIT, socket.next()).await.unwrap();
        assert!(
            matches!(next, None | Some(Ok(Message::Close(_))) | Some(Err(_))),
            "{next:?}"
        );
    }
    tokio::time::timeout(WAIT, task).await.unwrap().unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "nothing listens once the session is over"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_foreign_origins_other_hosts_and_missing_tokens() {
    let server = MockServer::start(vec![]).await;
    let (_dir, worker) = mock_program(&server, "");
    let (addr, token, _task) = serve(&worker).await;
    let ws = |origin: &str, host: &str, cookie: &str| {
        let mut request = format!("ws://{addr}/ws").into_client_request().unwrap();
        let headers = request.headers_mut();
        headers.insert("origin", HeaderValue::from_str(origin).unwrap());
        headers.insert("host", HeaderValue::from_str(host).unwrap());
        headers.insert("cookie", HeaderValue::from_str(cookie).unwrap());
        request
    };
    let own = format!("http://{addr}");
    let host = addr.to_string();
    let cookie = format!("golem_forge_token={token}");
    let refused = [
        (ws("http://evil.example", &host, &cookie), 403),
        (
            ws(&own, &format!("evil.example:{}", addr.port()), &cookie),
            403,
        ),
        (ws(&own, &host, "golem_forge_token=wrong"), 401),
        (ws(&own, &host, "other=1"), 401),
    ];
    for (request, status) in refused {
        match tokio_tungstenite::connect_async(request).await {
            Err(WsError::Http(response)) => assert_eq!(response.status().as_u16(), status),
            other => panic!("expected HTTP {status}, got {other:?}"),
        }
    }
    // The query token works for scripts that cannot keep a cookie.
    let request = format!("ws://{addr}/ws?token={token}")
        .into_client_request()
        .unwrap();
    assert!(tokio_tungstenite::connect_async(request).await.is_ok());

    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = client
        .get(format!("http://{addr}/?token={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 303);
    let cookie = page.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let index = client
        .get(format!("http://{addr}/"))
        .header("cookie", format!("golem_forge_token={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(index.status().as_u16(), 200);
    let csp = index.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.starts_with("default-src 'self'"), "{csp}");
    assert_eq!(index.headers()["x-content-type-options"], "nosniff");
    let missing = client
        .get(format!("http://{addr}/assets/index.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 401);
}
