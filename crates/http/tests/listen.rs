//! The accept loop of both HTTP front ends (`golem_http::listen`) on a one-route router: a
//! half-sent request head is closed after the header-read timeout; at the cap, the connection
//! that has waited longest for its first head is closed and a new one is served; a connection
//! that has sent its head no longer counts; shutdown ends the loop. Bounds of 30 s are failure
//! bounds, not measures.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use golem_http::listen::{Limits, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long anything may take before the test fails.
const BOUND: Duration = Duration::from_secs(30);

/// Half a request head: no blank line ends it.
const HALF_HEAD: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n";

/// A whole request, keeping the connection alive.
const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";

/// `GET /` answers `ok`, served under `limits` until the sender is used or dropped.
async fn start(limits: Limits) -> (SocketAddr, oneshot::Sender<()>, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = Router::new().route("/", get(|| async { "ok" }));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, router, limits, async move {
        let _ = stopped.await;
    }));
    (addr, stop, task)
}

async fn half_sent(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(HALF_HEAD).await.unwrap();
    stream
}

/// Reads until the server closes `stream` (what it sent before is ignored).
async fn assert_closed(stream: &mut TcpStream, what: &str) {
    let mut buffer = [0; 1024];
    let closed = tokio::time::timeout(BOUND, async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "{what}: still open after {BOUND:?}");
}

/// Sends a whole request on `stream` and reads the answer (`ok`, 2 bytes of body).
async fn assert_served(stream: &mut TcpStream) {
    stream.write_all(REQUEST).await.unwrap();
    let mut raw = Vec::new();
    let mut buffer = [0; 1024];
    tokio::time::timeout(BOUND, async {
        while !(raw.windows(4).any(|w| w == b"\r\n\r\n") && raw.ends_with(b"ok")) {
            let n = stream.read(&mut buffer).await.unwrap();
            assert_ne!(
                n,
                0,
                "closed before the answer: {:?}",
                String::from_utf8_lossy(&raw)
            );
            raw.extend_from_slice(&buffer[..n]);
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no answer within {BOUND:?}"));
    assert!(
        raw.starts_with(b"HTTP/1.1 200 "),
        "{:?}",
        String::from_utf8_lossy(&raw)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_head_is_closed_after_the_header_read_timeout() {
    let (addr, _stop, _task) = start(Limits {
        header_read: Duration::from_millis(500),
        waiting: 16,
    })
    .await;
    let mut idle = half_sent(addr).await;
    assert_closed(&mut idle, "a half-sent head").await;
    // One that sends nothing at all, too.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    assert_closed(&mut silent, "a silent connection").await;
    let mut fresh = TcpStream::connect(addr).await.unwrap();
    assert_served(&mut fresh).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_cap_the_longest_waiting_connection_is_closed_and_the_new_one_served() {
    // The timeout is long: a connection closed here was closed by the cap.
    let (addr, _stop, _task) = start(Limits {
        header_read: Duration::from_secs(600),
        waiting: 4,
    })
    .await;
    let mut oldest = half_sent(addr).await;
    let mut others = Vec::new();
    for _ in 0..3 {
        others.push(half_sent(addr).await);
    }
    let mut holder = TcpStream::connect(addr).await.unwrap();
    assert_closed(&mut oldest, "the longest-waiting connection").await;
    assert_served(&mut holder).await;
    // Many more: each new one is served in turn.
    for _ in 0..20 {
        others.push(half_sent(addr).await);
    }
    let mut late = TcpStream::connect(addr).await.unwrap();
    assert_served(&mut late).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_sent_its_head_no_longer_counts() {
    let (addr, _stop, _task) = start(Limits {
        header_read: Duration::from_secs(600),
        waiting: 2,
    })
    .await;
    let mut served = TcpStream::connect(addr).await.unwrap();
    assert_served(&mut served).await;
    let mut first = half_sent(addr).await;
    let _second = half_sent(addr).await;
    let _third = half_sent(addr).await;
    assert_closed(&mut first, "the longest-waiting connection").await;
    // The kept-alive connection was not the longest-waiting one: it is still served.
    assert_served(&mut served).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_idle_connections_and_ends_the_loop() {
    let (addr, stop, task) = start(Limits::default()).await;
    let mut kept = TcpStream::connect(addr).await.unwrap();
    assert_served(&mut kept).await;
    let _ = stop.send(());
    tokio::time::timeout(BOUND, task)
        .await
        .expect("the loop ends")
        .unwrap();
    assert_closed(&mut kept, "a kept-alive connection after shutdown").await;
}
