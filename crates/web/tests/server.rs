//! The server in-process, driven as the page drives it: WebSocket frames that are protocol
//! events. A whole turn with an approval answered from one of two tabs (the other sees it
//! resolved), a tab that connects late gets the session so far, malformed frames get a
//! `status` error and end nothing, the session's end closes every socket, and what the guard
//! refuses over HTTP and WebSocket; the page's files in the form each `Accept-Encoding` takes
//! (gzip, Brotli or plain), with the same headers on every form.

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

/// The `Cookie` header a browser sends the server at `addr` after the token visit.
fn cookie(addr: SocketAddr, token: &str) -> String {
    format!("{}={token}", golem_http::guard::cookie_name(addr.port()))
}

/// Opens `/ws` as the page does: the cookie, the page's own `Origin`.
async fn tab(addr: SocketAddr, token: &str) -> Socket {
    let mut request = format!("ws://{addr}/ws").into_client_request().unwrap();
    let headers = request.headers_mut();
    headers.insert(
        "cookie",
        HeaderValue::from_str(&cookie(addr, token)).unwrap(),
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
    let own_cookie = cookie(addr, &token);
    let refused = [
        (ws("http://evil.example", &host, &own_cookie), 403),
        (
            ws(&own, &format!("evil.example:{}", addr.port()), &own_cookie),
            403,
        ),
        (ws(&own, &host, &cookie(addr, "wrong")), 401),
        // The old name, shared by every port, is no longer read.
        (ws(&own, &host, &format!("golem_forge_token={token}")), 401),
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
    let set_cookie = page.headers()["set-cookie"].to_str().unwrap();
    assert!(
        set_cookie.starts_with(&format!("{own_cookie};"))
            && set_cookie.contains("HttpOnly")
            && set_cookie.contains("SameSite=Strict")
            && set_cookie.contains("Path=/"),
        "{set_cookie}"
    );
    let index = client
        .get(format!("http://{addr}/"))
        .header("cookie", cookie(addr, &token))
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

/// The token visit `GET /?token=…` to `addr`: the `name=value` of the cookie it sets.
async fn visit(client: &reqwest::Client, addr: SocketAddr, token: &str) -> (String, String) {
    let page = client
        .get(format!("http://{addr}/?token={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 303);
    let set_cookie = page.headers()["set-cookie"].to_str().unwrap();
    let (name, value) = set_cookie
        .split(';')
        .next()
        .and_then(|pair| pair.split_once('='))
        .unwrap_or_else(|| panic!("not a cookie: {set_cookie}"));
    (name.to_owned(), value.to_owned())
}

/// `GET /` to `addr` with `cookie` as the `Cookie` header: the status.
async fn index_status(client: &reqwest::Client, addr: SocketAddr, cookie: &str) -> u16 {
    client
        .get(format!("http://{addr}/"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serve_and_an_inbox_on_one_machine_keep_their_cookies_apart() {
    let model = MockServer::start(vec![]).await;
    let (_dir, worker) = mock_program(&model, "");
    let (page, page_token, _task) = serve(&worker).await;
    let root = tempfile::tempdir().unwrap();
    let continuer: golem_web::Continuer =
        std::sync::Arc::new(|_| Box::pin(async { Err("not in this test".to_owned()) }));
    let inbox =
        golem_web::InboxServer::bind(root.path(), "127.0.0.1:0".parse().unwrap(), continuer)
            .await
            .unwrap();
    let inbox_addr = inbox.local_addr().unwrap();
    let inbox_token = inbox.token().to_owned();
    tokio::spawn(async move { inbox.run(std::future::pending()).await.unwrap() });

    // A browser keeps one cookie per name for 127.0.0.1, whatever the port: the second visit
    // replaces the first's cookie only if the names are the same.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page_cookie = visit(&client, page, &page_token).await;
    let inbox_cookie = visit(&client, inbox_addr, &inbox_token).await;
    assert_ne!(page_cookie.0, inbox_cookie.0, "one name for two servers");
    let mut jar = std::collections::BTreeMap::new();
    for (name, value) in [page_cookie.clone(), inbox_cookie.clone()] {
        jar.insert(name, value);
    }
    let sent: Vec<String> = jar.iter().map(|(n, v)| format!("{n}={v}")).collect();
    for order in [
        sent.join("; "),
        sent.iter().rev().cloned().collect::<Vec<_>>().join("; "),
    ] {
        assert_eq!(index_status(&client, page, &order).await, 200, "{order}");
        assert_eq!(
            index_status(&client, inbox_addr, &order).await,
            200,
            "{order}"
        );
    }

    // Each server reads its own cookie only: the other's, alone, is refused, and so is the
    // other's token under this server's name's place.
    let only_inbox = format!("{}={}", inbox_cookie.0, inbox_cookie.1);
    let only_page = format!("{}={}", page_cookie.0, page_cookie.1);
    assert_eq!(index_status(&client, page, &only_inbox).await, 401);
    assert_eq!(index_status(&client, inbox_addr, &only_page).await, 401);
    let swapped = format!("{}={}", page_cookie.0, inbox_cookie.1);
    assert_eq!(index_status(&client, page, &swapped).await, 401);
}

// -- the page's files, compressed ---------------------------------------------------------------

/// `body` decoded from `encoding` (a `Content-Encoding`; `None` is the plain bytes).
fn decode(encoding: Option<&str>, body: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    match encoding {
        None => out.extend_from_slice(body),
        Some("gzip") => {
            flate2::read::GzDecoder::new(body)
                .read_to_end(&mut out)
                .unwrap();
        }
        Some("br") => {
            brotli_decompressor::Decompressor::new(body, 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        Some(other) => panic!("an encoding the test cannot decode: {other}"),
    }
    out
}

/// A request for `url` on `addr` with the cookie, and `accept` as its `Accept-Encoding` (none
/// at all when `None`: this client adds none of its own).
fn asset_request(
    client: &reqwest::Client,
    method: reqwest::Method,
    addr: SocketAddr,
    token: &str,
    url: &str,
    accept: Option<&str>,
) -> reqwest::RequestBuilder {
    let request = client
        .request(method, format!("http://{addr}{url}"))
        .header("cookie", cookie(addr, token));
    match accept {
        Some(accept) => request.header("accept-encoding", accept),
        None => request,
    }
}

/// `Accept-Encoding` values and the `Content-Encoding` each gets (`None`: the plain bytes, and
/// no `Content-Encoding`).
const NEGOTIATED: &[(Option<&str>, Option<&str>)] = &[
    (Some("gzip"), Some("gzip")),
    (Some("gzip, deflate"), Some("gzip")),
    // What Chromium sends, to 127.0.0.1 too.
    (Some("gzip, deflate, br, zstd"), Some("br")),
    (Some("br"), Some("br")),
    (Some("br;q=0.5, gzip"), Some("gzip")),
    (Some("identity;q=0, gzip;q=0.2, br;q=0.1"), Some("gzip")),
    (Some("*"), Some("br")),
    (None, None),
    (Some(""), None),
    (Some("identity"), None),
    (Some("gzip;q=0"), None),
    (Some("gzip;q=0, br;q=0"), None),
    (Some("*;q=0"), None),
    (Some("deflate, zstd"), None),
    (Some("gzip;q=2"), None),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_files_are_sent_compressed_to_whoever_takes_it_and_plain_otherwise() {
    let model = MockServer::start(vec![]).await;
    let (_dir, worker) = mock_program(&model, "");
    let (addr, token, _task) = serve(&worker).await;
    let client = reqwest::Client::new();
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let files = [
        ("/", "index.html", "text/html; charset=utf-8"),
        ("/assets/app.js", "app.js", "text/javascript; charset=utf-8"),
        (
            "/assets/lib/results.js",
            "lib/results.js",
            "text/javascript; charset=utf-8",
        ),
        (
            "/assets/vendor/preact.module.js",
            "vendor/preact.module.js",
            "text/javascript; charset=utf-8",
        ),
        ("/assets/style.css", "style.css", "text/css; charset=utf-8"),
    ];
    for (url, rel, content_type) in files {
        let plain = std::fs::read(assets.join(rel)).unwrap();
        for (accept, expected) in NEGOTIATED {
            let what = format!("{url} with Accept-Encoding {accept:?}");
            let response = asset_request(&client, reqwest::Method::GET, addr, &token, url, *accept)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status().as_u16(), 200, "{what}");
            let headers = response.headers().clone();
            let encoding = headers
                .get("content-encoding")
                .map(|v| v.to_str().unwrap().to_owned());
            assert_eq!(encoding.as_deref(), *expected, "{what}");
            assert_eq!(headers["vary"], "accept-encoding", "{what}");
            assert_eq!(headers["content-type"], content_type, "{what}");
            // The guard's headers are the same on every form.
            assert_eq!(
                headers["content-security-policy"],
                golem_http::guard::CSP,
                "{what}"
            );
            assert_eq!(headers["x-content-type-options"], "nosniff", "{what}");
            assert_eq!(headers["cache-control"], "no-store", "{what}");
            assert_eq!(headers["x-frame-options"], "DENY", "{what}");
            let body = response.bytes().await.unwrap();
            assert_eq!(
                headers["content-length"],
                body.len().to_string().as_str(),
                "{what}"
            );
            if expected.is_some() {
                assert!(
                    body.len() < plain.len() * 2 / 3,
                    "{what}: {} bytes of {} is hardly compressed",
                    body.len(),
                    plain.len()
                );
            }
            assert!(
                decode(encoding.as_deref(), &body) == plain,
                "{what}: the body is not assets/{rel}"
            );
        }
    }

    // HEAD gets the headers GET gets, without the body.
    for (accept, expected) in [
        (Some("gzip"), Some("gzip")),
        (Some("br, gzip"), Some("br")),
        (None, None),
    ] {
        let get = asset_request(
            &client,
            reqwest::Method::GET,
            addr,
            &token,
            "/assets/app.js",
            accept,
        )
        .send()
        .await
        .unwrap();
        let length = get.headers()["content-length"].clone();
        let head = asset_request(
            &client,
            reqwest::Method::HEAD,
            addr,
            &token,
            "/assets/app.js",
            accept,
        )
        .send()
        .await
        .unwrap();
        assert_eq!(head.status().as_u16(), 200);
        assert_eq!(
            head.headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap()),
            expected,
            "HEAD with {accept:?}"
        );
        assert_eq!(head.headers()["vary"], "accept-encoding");
        assert_eq!(
            head.headers()["content-length"],
            length,
            "HEAD with {accept:?}"
        );
        assert!(head.bytes().await.unwrap().is_empty());
    }

    // Every `Accept-Encoding` of a request counts; a missing file is still a plain 404.
    let split = asset_request(
        &client,
        reqwest::Method::GET,
        addr,
        &token,
        "/assets/app.js",
        Some("identity"),
    )
    .header("accept-encoding", "gzip")
    .send()
    .await
    .unwrap();
    assert_eq!(split.headers()["content-encoding"], "gzip");
    let missing = asset_request(
        &client,
        reqwest::Method::GET,
        addr,
        &token,
        "/assets/nope.js",
        Some("gzip"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert!(missing.headers().get("content-encoding").is_none());
}
