//! Idle connections against an HTTP front end (`serve`, `mcp --http`): half-sent request
//! heads held open by someone without the token must not lock the token holder out. The
//! server is started with the soft open-file limit of 1,024 that many systems give a process;
//! this process then opens [`IDLE`] connections that each send half a request head and keep
//! it open (and checks that the server raised its soft limit to the hard one at start). Used
//! by the browser tests (`browser/security.rs`) and the MCP tests (`mcp/http.rs`).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// How many idle connections.
pub const IDLE: usize = 1_100;

/// The soft open-file limit the server starts with.
pub const SERVER_SOFT_LIMIT: u64 = 1_024;

/// How long anything may take before the test fails (a bound, not a measure).
pub const BOUND: Duration = Duration::from_secs(30);

/// Half a request head: no blank line ends it.
pub const HALF_HEAD: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n";

/// Runs `start` (which spawns the server) with this process's soft open-file limit at
/// [`SERVER_SOFT_LIMIT`], so that the server inherits it; then raises this process's soft
/// limit to its hard one, for the idle connections' descriptors.
pub fn with_server_soft_limit<T>(start: impl FnOnce() -> T) -> T {
    let limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum;
    assert!(
        hard.is_none_or(|hard| hard >= 2 * IDLE as u64),
        "the hard open-file limit ({hard:?}) is too low for {IDLE} connections"
    );
    let low = Rlimit {
        current: Some(hard.map_or(SERVER_SOFT_LIMIT, |h| h.min(SERVER_SOFT_LIMIT))),
        maximum: hard,
    };
    setrlimit(Resource::Nofile, low).unwrap();
    let started = start();
    let high = Rlimit {
        current: hard.or(Some(4 * IDLE as u64)),
        maximum: hard,
    };
    setrlimit(Resource::Nofile, high).unwrap();
    started
}

/// The soft and hard open-file limits of process `pid`, as `/proc/PID/limits` shows them.
pub fn open_file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .unwrap_or_else(|| panic!("no open-file limit in {limits}"));
    let mut fields = line["Max open files".len()..].split_whitespace();
    match (fields.next(), fields.next()) {
        (Some(soft), Some(hard)) => (soft.to_owned(), hard.to_owned()),
        _ => panic!("not a limits line: {line:?}"),
    }
}

/// Asserts that the server `pid`, started with a soft limit of [`SERVER_SOFT_LIMIT`], has
/// raised it to its hard limit.
pub fn assert_raised_its_open_file_limit(pid: u32) {
    let (soft, hard) = open_file_limits(pid);
    assert_eq!(
        soft, hard,
        "the server's soft open-file limit is raised to the hard one"
    );
}

/// Opens `count` connections to `addr`, each having sent [`HALF_HEAD`].
pub fn half_sent(addr: SocketAddr, count: usize) -> Vec<TcpStream> {
    (0..count)
        .map(|i| {
            let mut stream = TcpStream::connect_timeout(&addr, BOUND)
                .unwrap_or_else(|e| panic!("idle connection {i}: {e}"));
            stream
                .write_all(HALF_HEAD)
                .unwrap_or_else(|e| panic!("idle connection {i}: {e}"));
            stream
        })
        .collect()
}

/// Sends `request` on a new connection to `addr` and returns the status of the answer (its
/// head only, read within [`BOUND`]), and how long it took from connecting.
pub fn answer_status(addr: SocketAddr, request: &str) -> (u16, Duration) {
    let started = Instant::now();
    let mut stream = TcpStream::connect_timeout(&addr, BOUND).expect("connect");
    stream.set_read_timeout(Some(BOUND)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut buffer = [0; 4096];
    while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer) {
            Ok(0) => panic!(
                "the connection closed without an answer after {:?}: {:?}",
                started.elapsed(),
                String::from_utf8_lossy(&raw)
            ),
            Ok(n) => raw.extend_from_slice(&buffer[..n]),
            Err(e) => panic!(
                "no answer within {BOUND:?} ({e}; {:?} elapsed), got {:?}",
                started.elapsed(),
                String::from_utf8_lossy(&raw)
            ),
        }
    }
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {text:?}"));
    (status, started.elapsed())
}

/// Sends [`HALF_HEAD`] on a new connection to `addr` and waits (at most [`BOUND`]) for the
/// server to close it; how long that took.
pub fn closed_by_the_server(addr: SocketAddr) -> Duration {
    let started = Instant::now();
    let mut stream = TcpStream::connect_timeout(&addr, BOUND).expect("connect");
    stream.set_read_timeout(Some(BOUND)).unwrap();
    stream.write_all(HALF_HEAD).unwrap();
    let mut buffer = [0; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return started.elapsed(),
            // An answer (408 or 400) before the close is fine.
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return started.elapsed(),
            Err(e) => panic!(
                "the half-sent connection was still open after {:?} ({e})",
                started.elapsed()
            ),
        }
    }
}
