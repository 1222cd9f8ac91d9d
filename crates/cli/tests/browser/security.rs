//! The server's rules against other pages and other machines, without a browser: every request
//! needs the token (none or a wrong one is 401), the token URL sets an `HttpOnly;
//! SameSite=Strict` cookie and redirects (303); pages carry a strict CSP and `nosniff`; a
//! WebSocket from a foreign `Origin` and any request whose `Host` names another name (DNS
//! rebinding) are refused; the token is fresh per run; `serve` listens on the chosen address
//! only; and idle connections cannot lock the token holder out (1,100 half-sent request heads,
//! each closed after the header-read timeout). Requests are written by hand over TCP so that
//! every header is the test's.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use golem_testkit::mock::MockServer;
use tokio_tungstenite::tungstenite;
use tungstenite::client::IntoClientRequest;
use tungstenite::http::HeaderValue;

use crate::harness::{LIMIT, Serve, WIRE, fs_worker, project};
use golem_testkit::cli::TestEnv;
use golem_testkit::cli::flood::{
    IDLE, answer_status, assert_raised_its_open_file_limit, closed_by_the_server, half_sent,
    with_server_soft_limit,
};

/// The token cookie's name starts so; each server's ends with `_PORT`.
const COOKIE: &str = "golem_forge_token";

/// A `serve` on a fresh project (the mock model is never asked).
fn serve(extra: &[&str]) -> (TestEnv, MockServer, Serve) {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("unused"));
    let serve = Serve::start(&env, &server, &worker, extra);
    (env, server, serve)
}

/// An HTTP response as read off the socket.
#[derive(Debug)]
struct Response {
    status: u16,
    /// Header names lowercase, in order.
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `GET path` to `serve` with `headers` (a `Host` naming the server's address unless given),
/// `Connection: close`.
fn get(serve: &Serve, path: &str, headers: &[(&str, &str)]) -> Response {
    let mut request = format!("GET {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {}\r\n", serve.authority));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    let mut stream = TcpStream::connect_timeout(&serve.addr, LIMIT).expect("connect to serve");
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    // An upgrade answered 101 keeps the connection open: read what came, then stop.
    let mut buffer = [0; 8192];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&buffer[..n]);
                if raw.starts_with(b"HTTP/1.1 101") && raw.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Err(e) => panic!("reading the answer to GET {path}: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response to GET {path}: {text:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Response {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// The headers of a WebSocket upgrade of `/ws`.
const UPGRADE: [(&str, &str); 4] = [
    ("Connection", "Upgrade"),
    ("Upgrade", "websocket"),
    ("Sec-WebSocket-Version", "13"),
    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
];

/// `Cookie: golem_forge_token_PORT=TOKEN`, the cookie a browser sends `serve` on PORT.
fn cookie(serve: &Serve, token: &str) -> String {
    format!("{COOKIE}_{}={token}", serve.addr.port())
}

/// Opens `/ws` with tungstenite with the `Cookie`, `Origin` and `Host` given (the host
/// defaults to the server's address); the first text frame, or the refusal's HTTP status.
fn websocket(
    serve: &Serve,
    cookie: Option<&str>,
    origin: Option<&str>,
    host: Option<&str>,
) -> Result<serde_json::Value, u16> {
    let mut request = format!("ws://{}/ws", serve.authority)
        .into_client_request()
        .unwrap();
    let headers = request.headers_mut();
    if let Some(cookie) = cookie {
        headers.insert("Cookie", HeaderValue::from_str(cookie).unwrap());
    }
    if let Some(origin) = origin {
        headers.insert("Origin", HeaderValue::from_str(origin).unwrap());
    }
    if let Some(host) = host {
        headers.insert("Host", HeaderValue::from_str(host).unwrap());
    }
    let stream = TcpStream::connect_timeout(&serve.addr, LIMIT).expect("connect to serve");
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    match tungstenite::client::client(request, stream) {
        Ok((mut socket, _response)) => loop {
            match socket.read().expect("a frame from /ws") {
                tungstenite::Message::Text(text) => {
                    return Ok(serde_json::from_str(&text)
                        .unwrap_or_else(|e| panic!("a frame is not JSON ({e}): {text}")));
                }
                tungstenite::Message::Close(frame) => {
                    panic!("/ws closed before its first event: {frame:?}")
                }
                _ => {}
            }
        },
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response))) => {
            Err(response.status().as_u16())
        }
        Err(e) => panic!("the WebSocket handshake failed otherwise: {e}"),
    }
}

fn assert_refused(status: u16, what: &str) {
    assert!(
        (400..500).contains(&status),
        "{what}: refused with a 4xx status, got {status}"
    );
}

#[test]
fn without_the_token_every_request_is_401() {
    let (_env, _server, serve) = serve(&[]);
    assert!(
        serve.url.starts_with("http://127.0.0.1:"),
        "it listens on 127.0.0.1 by default: {}",
        serve.url
    );
    for path in [
        "/",
        "/index.html",
        "/assets/app.js",
        "/assets/index.html",
        "/nope",
    ] {
        let response = get(&serve, path, &[]);
        assert_eq!(response.status, 401, "GET {path}: {response:?}");
    }
    let mut headers = UPGRADE.to_vec();
    let origin = serve.origin.clone();
    headers.push(("Origin", &origin));
    let response = get(&serve, "/ws", &headers);
    assert_eq!(response.status, 401, "the WebSocket: {response:?}");
    assert_eq!(
        websocket(&serve, None, Some(&serve.origin), None).err(),
        Some(401)
    );
}

#[test]
fn a_wrong_token_is_401() {
    let (_env, _server, serve) = serve(&[]);
    let wrong: String = serve
        .token
        .chars()
        .map(|c| if c == 'a' { 'b' } else { 'a' })
        .collect();
    for (path, headers) in [
        (format!("/?token={wrong}"), vec![]),
        ("/?token=".to_owned(), vec![]),
        ("/".to_owned(), vec![("Cookie", cookie(&serve, &wrong))]),
        (
            format!("/assets/app.js?token={wrong}"),
            vec![("Cookie", cookie(&serve, ""))],
        ),
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let response = get(&serve, &path, &headers);
        assert_eq!(response.status, 401, "GET {path} {headers:?}: {response:?}");
        assert!(
            response.header("set-cookie").is_none(),
            "no cookie for a wrong token: {response:?}"
        );
    }
    assert_eq!(
        websocket(
            &serve,
            Some(&cookie(&serve, &wrong)),
            Some(&serve.origin),
            None
        )
        .err(),
        Some(401)
    );
}

#[test]
fn the_token_sets_a_strict_cookie_and_redirects() {
    let (_env, _server, serve) = serve(&[]);
    let response = get(&serve, &format!("/?token={}", serve.token), &[]);
    assert_eq!(response.status, 303, "{response:?}");
    assert_eq!(response.header("location"), Some("/"), "{response:?}");
    let set_cookie = response
        .header("set-cookie")
        .unwrap_or_else(|| panic!("no cookie: {response:?}"));
    let attributes: Vec<&str> = set_cookie.split(';').map(str::trim).collect();
    assert_eq!(
        attributes[0],
        cookie(&serve, &serve.token),
        "the cookie holds the token: {set_cookie}"
    );
    for wanted in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(
            attributes.iter().any(|a| a.eq_ignore_ascii_case(wanted)),
            "{wanted} missing: {set_cookie}"
        );
    }

    // With the cookie: the page, with a strict policy.
    let page = get(&serve, "/", &[("Cookie", &cookie(&serve, &serve.token))]);
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "{page:?}"
    );
    let csp = page
        .header("content-security-policy")
        .unwrap_or_else(|| panic!("no Content-Security-Policy: {page:?}"));
    assert!(csp.contains("default-src 'self'"), "{csp}");
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert!(
        page.body.contains("<script"),
        "the page loads its modules: {}",
        page.body
    );
}

#[test]
fn a_websocket_from_a_foreign_origin_is_refused() {
    let (_env, _server, serve) = serve(&[]);
    let cookie = cookie(&serve, &serve.token);
    for origin in [
        "http://evil.example",
        "http://127.0.0.1.evil.example",
        "null",
        &format!("https://{}", serve.authority),
        "http://localhost:1",
    ] {
        match websocket(&serve, Some(&cookie), Some(origin), None) {
            Err(status) => assert_refused(status, &format!("Origin: {origin}")),
            Ok(first) => panic!("Origin: {origin} was let in: {first}"),
        }
    }
    // The page's own origin gets the session.
    let first = websocket(&serve, Some(&cookie), Some(&serve.origin), None)
        .unwrap_or_else(|status| panic!("the page's own origin is refused: {status}"));
    assert!(first["type"].is_string(), "an event: {first}");
    // A client that sends no Origin (not a browser) with the token is let in.
    assert!(websocket(&serve, Some(&cookie), None, None).is_ok());
}

#[test]
fn a_host_header_naming_another_name_is_refused() {
    let (_env, _server, serve) = serve(&[]);
    let cookie = cookie(&serve, &serve.token);
    let port = serve.addr.port();
    let token_path = format!("/?token={}", serve.token);
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_owned(),
        format!("127.0.0.1.evil.example:{port}"),
        format!("127.0.0.2:{port}"),
    ] {
        let page = get(&serve, "/", &[("Host", &host), ("Cookie", &cookie)]);
        assert_refused(page.status, &format!("GET / with Host: {host}"));
        let login = get(&serve, &token_path, &[("Host", &host)]);
        assert_refused(login.status, &format!("the token URL with Host: {host}"));
        assert!(login.header("set-cookie").is_none(), "{login:?}");
        let origin = format!("http://{host}");
        match websocket(&serve, Some(&cookie), Some(&origin), Some(&host)) {
            Err(status) => assert_refused(status, &format!("/ws with Host: {host}")),
            Ok(first) => panic!("/ws with Host: {host} was let in: {first}"),
        }
    }
    // The server's own name works.
    let page = get(&serve, "/", &[("Cookie", &cookie)]);
    assert_eq!(page.status, 200, "{page:?}");
}

/// Whether something accepts TCP connections at `addr`.
fn accepts(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

#[test]
fn it_listens_on_the_chosen_address_only() {
    let (_env, _server, serve127) = serve(&["--host", "127.0.0.1"]);
    let port = serve127.addr.port();
    assert_eq!(serve127.addr, SocketAddr::from(([127, 0, 0, 1], port)));
    assert!(accepts(serve127.addr));
    assert!(
        !accepts(SocketAddr::from(([127, 0, 0, 2], port))),
        "nothing listens on 127.0.0.2:{port}"
    );
    let ipv6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    if ipv6 {
        assert!(
            !accepts(format!("[::1]:{port}").parse().unwrap()),
            "nothing listens on [::1]:{port}"
        );
    }

    // Another loopback address, chosen: only there.
    let (_env, _server, serve2) = serve(&["--host", "127.0.0.2"]);
    let port = serve2.addr.port();
    assert!(
        serve2
            .url
            .starts_with(&format!("http://127.0.0.2:{port}/?token=")),
        "{}",
        serve2.url
    );
    assert!(accepts(serve2.addr));
    assert!(
        !accepts(SocketAddr::from(([127, 0, 0, 1], port))),
        "nothing listens on 127.0.0.1:{port}"
    );
    let page = get(&serve2, "/", &[("Cookie", &cookie(&serve2, &serve2.token))]);
    assert_eq!(page.status, 200, "{page:?}");
}

#[test]
fn every_run_has_a_fresh_token_of_at_least_128_bits() {
    let (_env, _server, first) = serve(&[]);
    let (_env2, _server2, second) = serve(&[]);
    assert_ne!(first.token, second.token);
    for token in [&first.token, &second.token] {
        let hex = token.chars().all(|c| c.is_ascii_hexdigit());
        let bits = token.len() * if hex { 4 } else { 6 };
        assert!(bits >= 128, "{token}: about {bits} bits");
        assert!(
            token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "{token}: URL-safe"
        );
    }
}

#[test]
fn idle_half_sent_connections_do_not_lock_the_token_holder_out() {
    let (_env, _server, serve) = with_server_soft_limit(|| serve(&[]));
    assert_raised_its_open_file_limit(serve.pid());
    let opened = std::time::Instant::now();
    let idle = half_sent(serve.addr, IDLE);
    let opening = opened.elapsed();
    let request = format!(
        "GET /?token={} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        serve.token, serve.authority
    );
    let (status, took) = answer_status(serve.addr, &request);
    eprintln!(
        "serve: {IDLE} half-sent connections opened in {opening:?}; the token holder's \
         answer ({status}) took {took:?}"
    );
    assert_eq!(
        status,
        303,
        "the token URL redirects; {}",
        serve.stderr_tail()
    );
    // The page is served too, on a fresh connection with the cookie.
    let page = get(&serve, "/", &[("Cookie", &cookie(&serve, &serve.token))]);
    assert_eq!(page.status, 200, "{page:?}");
    drop(idle);
}

#[test]
fn a_half_sent_request_head_is_closed_after_the_header_read_timeout() {
    let (_env, _server, serve) = serve(&[]);
    let took = closed_by_the_server(serve.addr);
    eprintln!("serve: a half-sent request head was closed after {took:?}");
}
