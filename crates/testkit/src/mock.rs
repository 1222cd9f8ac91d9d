//! A local mock of a provider's HTTP API: replies are scripted in order (JSON bodies or SSE
//! streams with delays, a cut connection, a hang, or a gate the test opens), and every request
//! is recorded (path, headers, JSON body) so tests can assert what was sent.
//!
//! A context limit ([`MockServer::set_context_limit`]) makes it answer a request larger than
//! the limit with its wire's real overflow error, and count each request's tokens as the input
//! of the scripted reply's usage. A rate limit ([`MockServer::set_rate_limit`]) makes it answer
//! requests beyond so many a minute with a 429 and `retry-after`, as a provider does.
//!
//! Start it inside a Tokio test with [`MockServer::start`], or from a plain test with
//! [`MockServer::start_blocking`] (its own thread and runtime), e.g. when the code under test
//! is a subprocess.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::local_server::{Runner, on_own_thread, on_this_runtime};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;

/// A piece of a scripted streaming body.
#[derive(Debug, Clone)]
pub enum Chunk {
    /// Bytes sent as they are (use [`sse`] to build SSE frames).
    Data(String),
    /// A pause before the next chunk.
    Delay(Duration),
    /// The connection breaks here (30 ms after the previous chunk, so that it went out).
    Cut,
    /// Nothing more is ever sent, and the connection stays open.
    Hang,
    /// Nothing more is sent until the test opens the gate (at once if it is open already).
    Until(Gate),
}

/// Where a scripted stream waits ([`Chunk::Until`]) until the test opens it: a pause that ends
/// when the test has seen what it waited for, rather than after a guessed time.
#[derive(Debug, Clone)]
pub struct Gate(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Gate {
    fn default() -> Self {
        Self(Arc::new(tokio::sync::watch::Sender::new(false)))
    }
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens the gate: every stream waiting at it goes on, and so does any that reaches it later.
    pub fn open(&self) {
        self.0.send_replace(true);
    }

    async fn passed(&self) {
        let mut open = self.0.subscribe();
        // The sender lives as long as the gate, so this ends only when the gate is open.
        let _ = open.wait_for(|open| *open).await;
    }
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// Response headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, piece by piece.
    pub chunks: Vec<Chunk>,
}

impl Reply {
    /// A `text/event-stream` reply with status 200.
    pub fn sse(chunks: Vec<Chunk>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
        }
    }

    /// A JSON reply with `status`.
    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![Chunk::Data(body.to_owned())],
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same reply with the body held back for `wait` (the status and headers go out at
    /// once, as a slow model's would).
    pub fn delayed(mut self, wait: Duration) -> Self {
        self.chunks.insert(0, Chunk::Delay(wait));
        self
    }
}

/// One SSE frame: `event: NAME` (when given) and `data: DATA`, then a blank line.
pub fn sse(event: Option<&str>, data: &str) -> Chunk {
    let mut frame = String::new();
    if let Some(event) = event {
        frame.push_str(&format!("event: {event}\n"));
    }
    for line in data.lines() {
        frame.push_str(&format!("data: {line}\n"));
    }
    frame.push('\n');
    Chunk::Data(frame)
}

/// A request the mock received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The URL path, e.g. `/v1/messages`.
    pub path: String,
    /// The headers, names lowercase.
    pub headers: HashMap<String, String>,
    /// The body as JSON (`null` when it is not JSON).
    pub body: serde_json::Value,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    /// The answer once the scripted replies are used up (else 500 `no scripted reply`).
    fallback: Option<Reply>,
    requests: Vec<Recorded>,
    /// Requests above this many tokens get their wire's overflow error.
    context_limit: Option<u64>,
    /// Requests whose body holds the text get the reply, every time, without using up a
    /// scripted one.
    rules: Vec<(String, Reply)>,
    /// Requests beyond this rate get a 429.
    rate: Option<Bucket>,
    /// 429 answers of the rate limit so far.
    limited: u64,
}

/// A token bucket: `burst` requests at most at once, refilled at `per_second`.
struct Bucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    /// Takes a token for a request now; else how long until there is one.
    fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - self.tokens) / self.per_second,
            ))
        }
    }
}

/// OpenAI's 429 for a request over the rate limit, saying when to come back.
fn rate_limited(wait: Duration) -> Reply {
    let ms = wait.as_millis().max(1);
    Reply::json(
        429,
        r#"{"error": {"message": "Rate limit reached for requests", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}"#,
    )
    .header("retry-after-ms", &ms.to_string())
    .header("retry-after", &ms.div_ceil(1000).to_string())
}

/// A running mock server on 127.0.0.1; dropping it stops the server.
pub struct MockServer {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    script: Arc<Mutex<Script>>,
    /// Stops the server when dropped.
    _runner: Runner,
}

fn new_script(replies: Vec<Reply>) -> Arc<Mutex<Script>> {
    Arc::new(Mutex::new(Script {
        replies: replies.into(),
        fallback: None,
        requests: Vec::new(),
        context_limit: None,
        rules: Vec::new(),
        rate: None,
        limited: 0,
    }))
}

fn app(script: Arc<Mutex<Script>>) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(script)
}

impl MockServer {
    /// Starts a server on the current Tokio runtime that answers requests with `replies`, in
    /// order; past the last one it answers 500 `no scripted reply`.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let script = new_script(replies);
        let app = app(script.clone());
        let (base_url, runner) = on_this_runtime(|listener| async move {
            let _ = axum::serve(listener, app).await;
        })
        .await;
        Self {
            base_url,
            script,
            _runner: runner,
        }
    }

    /// Like [`MockServer::start`], for tests that are not async: the server runs on its own
    /// thread with its own Tokio runtime until the `MockServer` is dropped. Must not be called
    /// from within a Tokio runtime's worker (it blocks until the server listens).
    pub fn start_blocking(replies: Vec<Reply>) -> Self {
        let script = new_script(replies);
        let app = app(script.clone());
        // Dropping the runner drops any reply still streaming (a delay, a hang).
        let (base_url, runner) = on_own_thread("mock-model-server", |listener| async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            base_url,
            script,
            _runner: runner,
        }
    }

    /// Answers every request past the scripted replies with `reply` (instead of 500), e.g. to
    /// serve the same turn to many runs when measuring.
    pub fn set_fallback(&self, reply: Reply) {
        self.script.lock().unwrap().fallback = Some(reply);
    }

    /// Answers every request whose body contains `text` with `reply`, without using up a
    /// scripted reply (requests the runtime makes besides the conversation's, such as the
    /// summary of a compaction). A context limit applies to them too.
    pub fn answer_when(&self, text: &str, reply: Reply) {
        self.script
            .lock()
            .unwrap()
            .rules
            .push((text.to_owned(), reply));
    }

    /// From now on, counts each request as one token per four bytes of its body: a request of
    /// more than `tokens` gets the overflow error of its wire (by path: Anthropic's 400 `prompt
    /// is too long` on `/messages`, OpenAI's 400 `context_length_exceeded` on
    /// `/chat/completions` and `/responses`) and uses up no scripted reply; any other gets its
    /// scripted reply with the request's count as the usage's input tokens (in place of the
    /// scripted 10, on every wire).
    pub fn set_context_limit(&self, tokens: u64) {
        self.script.lock().unwrap().context_limit = Some(tokens);
    }

    /// From now on, answers any request beyond `per_minute` a minute with OpenAI's 429
    /// `rate_limit_exceeded` and `retry-after-ms` (and `retry-after`, whole seconds) saying when
    /// the next one would pass; such a request uses up no scripted reply. The limit is a token
    /// bucket of `burst` requests (at least 1), refilled evenly, full at the start: a provider's
    /// requests-per-minute limit, which does not let a whole minute's worth through at once.
    pub fn set_rate_limit(&self, per_minute: u32, burst: u32) {
        let burst = f64::from(burst.max(1));
        self.script.lock().unwrap().rate = Some(Bucket {
            per_second: f64::from(per_minute.max(1)) / 60.0,
            burst,
            tokens: burst,
            last: Instant::now(),
        });
    }

    /// How many requests the rate limit answered with a 429 so far.
    pub fn rate_limited(&self) -> u64 {
        self.script.lock().unwrap().limited
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().unwrap().requests.clone()
    }

    /// Waits (blocking the thread, polling every few milliseconds) until at least `count`
    /// requests have arrived; false if `timeout` passed first.
    pub fn wait_for_requests(&self, count: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.script.lock().unwrap().requests.len() >= count {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

async fn handle(
    State(script): State<Arc<Mutex<Script>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let tokens = (body.len() as u64).div_ceil(4);
    let reply = {
        let mut script = script.lock().unwrap();
        let limit = script.context_limit;
        script.requests.push(Recorded {
            path: uri.path().to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
            body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        });
        let over = match &mut script.rate {
            Some(bucket) => bucket.take(Instant::now()).err(),
            None => None,
        };
        if over.is_some() {
            script.limited += 1;
        }
        let text = String::from_utf8_lossy(&body);
        let ruled = script
            .rules
            .iter()
            .find(|(needle, _)| text.contains(needle.as_str()))
            .map(|(_, reply)| reply.clone());
        let mut next = || {
            ruled
                .clone()
                .or_else(|| script.replies.pop_front())
                .or_else(|| script.fallback.clone())
        };
        match limit {
            _ if over.is_some() => over.map(rate_limited),
            Some(limit) if tokens > limit => Some(overflow(uri.path(), tokens, limit)),
            Some(_) => next().map(|reply| counted(reply, tokens)),
            None => next(),
        }
    };
    let reply =
        reply.unwrap_or_else(|| Reply::json(500, r#"{"error":{"message":"no scripted reply"}}"#));
    let mut builder = Response::builder().status(StatusCode::from_u16(reply.status).unwrap());
    for (name, value) in &reply.headers {
        builder = builder.header(name, value);
    }
    let stream = futures::stream::unfold(VecDeque::from(reply.chunks), |mut chunks| async move {
        loop {
            match chunks.pop_front()? {
                Chunk::Data(data) => {
                    return Some((Ok::<_, std::io::Error>(Bytes::from(data)), chunks));
                }
                Chunk::Delay(wait) => tokio::time::sleep(wait).await,
                Chunk::Cut => {
                    // Let what was sent before reach the client first (headers included), so
                    // the cut happens mid-stream rather than before the response starts.
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    return Some((
                        Err(std::io::Error::other("cut by the mock")),
                        VecDeque::new(),
                    ));
                }
                Chunk::Hang => futures::future::pending::<()>().await,
                Chunk::Until(gate) => gate.passed().await,
            }
        }
    });
    builder
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// The overflow error of the wire at `path`, as the real APIs send it.
fn overflow(path: &str, tokens: u64, limit: u64) -> Reply {
    let body = if path.ends_with("/messages") {
        serde_json::json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": format!("prompt is too long: {tokens} tokens > {limit} maximum")}})
    } else if path.ends_with("/responses") {
        serde_json::json!({"error": {"message": "Your input exceeds the context window of this \
            model. Please adjust your input and try again.", "type": "invalid_request_error",
            "param": "input", "code": "context_length_exceeded"}})
    } else {
        serde_json::json!({"error": {"message": format!("This model's maximum context length \
            is {limit} tokens. However, your messages resulted in {tokens} tokens. Please \
            reduce the length of the messages."), "type": "invalid_request_error",
            "param": "messages", "code": "context_length_exceeded"}})
    };
    Reply::json(400, &body.to_string())
}

/// Where each wire's usage has the input tokens, in the JSON of the event that reports it:
/// Chat Completions' usage chunk before `[DONE]`, Anthropic's `message_start`, and Responses'
/// `response.completed` (whose input tokens include the cached ones).
const INPUT_TOKENS: [&str; 3] = [
    "/usage/prompt_tokens",
    "/message/usage/input_tokens",
    "/response/usage/input_tokens",
];

/// `reply` with `tokens` as the input of its usage, on any wire (the scripted replies of
/// [`crate::openai`], [`crate::anthropic`] and [`crate::responses`] say 10).
fn counted(mut reply: Reply, tokens: u64) -> Reply {
    for chunk in &mut reply.chunks {
        if let Chunk::Data(frame) = chunk
            && let Some(recounted) = recounted(frame, tokens)
        {
            *chunk = recounted;
        }
    }
    reply
}

/// An SSE frame (as [`sse`] makes them, with one `data:` line) of an event that reports the
/// input tokens, with `tokens` in their place; `None` for any other frame or chunk.
fn recounted(frame: &str, tokens: u64) -> Option<Chunk> {
    let lines = frame.strip_suffix("\n\n")?;
    let (event, data) = match lines.split_once('\n') {
        Some((event, data)) => (Some(event.strip_prefix("event: ")?), data),
        None => (None, lines),
    };
    let mut json: serde_json::Value = serde_json::from_str(data.strip_prefix("data: ")?).ok()?;
    let pointer = INPUT_TOKENS
        .iter()
        .find(|pointer| json.pointer(pointer).is_some_and(serde_json::Value::is_u64))?;
    *json.pointer_mut(pointer)? = tokens.into();
    Some(sse(event, &json.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(base_url: &str, path: &str, body: &str) -> String {
        use std::io::{Read, Write};
        let addr = base_url.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }

    #[test]
    fn a_blocking_server_answers_in_order_records_and_stops_on_drop() {
        let server = MockServer::start_blocking(vec![
            Reply::json(200, r#"{"n":1}"#),
            Reply::sse(vec![sse(Some("ping"), "{}")]).header("x-test", "yes"),
        ]);
        let first = post(&server.base_url, "/v1/messages", r#"{"a":1}"#);
        assert!(first.starts_with("HTTP/1.1 200"), "{first}");
        assert!(first.contains(r#"{"n":1}"#), "{first}");
        let second = post(&server.base_url, "/v1/chat/completions", "not json");
        assert!(second.contains("x-test: yes"), "{second}");
        assert!(second.contains("event: ping\ndata: {}\n\n"), "{second}");
        let third = post(&server.base_url, "/x", "{}");
        assert!(third.starts_with("HTTP/1.1 500"), "{third}");
        assert!(third.contains("no scripted reply"), "{third}");

        assert!(server.wait_for_requests(3, Duration::from_secs(1)));
        let requests = server.requests();
        assert_eq!(requests[0].path, "/v1/messages");
        assert_eq!(requests[0].body, serde_json::json!({"a": 1}));
        assert_eq!(requests[1].body, serde_json::Value::Null);
        assert_eq!(requests[1].headers["content-type"], "application/json");
        assert!(!server.wait_for_requests(4, Duration::from_millis(20)));

        let addr = server.base_url.trim_start_matches("http://").to_owned();
        drop(server);
        assert!(
            std::net::TcpStream::connect(&addr).is_err(),
            "the server stops when dropped"
        );
    }

    #[test]
    fn a_reply_goes_on_past_a_gate_once_it_is_open() {
        use std::io::{Read, Write};
        let gate = Gate::new();
        let reply = Reply::sse(vec![
            Chunk::Data("before ".into()),
            Chunk::Until(gate.clone()),
            Chunk::Data("after".into()),
        ]);
        let server = MockServer::start_blocking(vec![reply.clone(), reply]);
        let addr = server.base_url.trim_start_matches("http://").to_owned();
        let mut stream = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            stream,
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        while !String::from_utf8_lossy(&seen).contains("before ") {
            let n = stream.read(&mut buf).unwrap();
            assert!(
                n > 0,
                "the reply ended early: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
        gate.open();
        stream.read_to_end(&mut seen).unwrap();
        assert!(String::from_utf8_lossy(&seen).contains("after"));
        // A gate already open lets the next reply through at once.
        let second = post(&server.base_url, "/", "{}");
        assert!(
            second.contains("before ") && second.contains("after"),
            "{second}"
        );
    }

    #[test]
    fn dropping_a_blocking_server_ends_a_reply_that_hangs() {
        let server = MockServer::start_blocking(vec![Reply::sse(vec![Chunk::Hang])]);
        let addr = server.base_url.trim_start_matches("http://").to_owned();
        let client = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(&addr).unwrap();
            write!(
                stream,
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
            )
            .unwrap();
            let mut sink = Vec::new();
            let _ = stream.read_to_end(&mut sink);
        });
        assert!(server.wait_for_requests(1, Duration::from_secs(5)));
        drop(server);
        client.join().unwrap();
    }

    #[test]
    fn the_fallback_answers_once_the_script_is_used_up() {
        let server = MockServer::start_blocking(vec![Reply::json(200, "first")]);
        server.set_fallback(Reply::json(200, "again"));
        for expected in ["first", "again", "again"] {
            let response = post(&server.base_url, "/", "{}");
            assert!(
                response.contains(&format!("\r\n{expected}\r\n")),
                "{response}"
            );
        }
    }

    #[test]
    fn a_rule_answers_its_requests_every_time_and_leaves_the_script_alone() {
        let server =
            MockServer::start_blocking(vec![Reply::json(200, "first"), Reply::json(200, "second")]);
        server.answer_when("summarise", Reply::json(200, "summary"));
        for (body, expected) in [
            ("{}", "first"),
            (r#"{"ask": "summarise"}"#, "summary"),
            (r#"{"ask": "summarise it again"}"#, "summary"),
            ("{}", "second"),
        ] {
            let response = post(&server.base_url, "/", body);
            assert!(
                response.contains(&format!("\r\n{expected}\r\n")),
                "{response}"
            );
        }
    }

    #[test]
    fn a_context_limit_answers_each_wires_overflow_and_counts_the_rest() {
        let server = MockServer::start_blocking(vec![crate::openai::text("fits")]);
        server.set_context_limit(100);
        let big = format!(r#"{{"a":"{}"}}"#, "x".repeat(800));
        let anthropic = post(&server.base_url, "/v1/messages", &big);
        assert!(anthropic.starts_with("HTTP/1.1 400"), "{anthropic}");
        assert!(
            anthropic.contains("prompt is too long: 202 tokens > 100 maximum"),
            "{anthropic}"
        );
        for path in ["/v1/chat/completions", "/v1/responses"] {
            let openai = post(&server.base_url, path, &big);
            assert!(openai.starts_with("HTTP/1.1 400"), "{openai}");
            assert!(
                openai.contains(r#""code":"context_length_exceeded""#),
                "{openai}"
            );
        }
        // The scripted reply was kept for a request that fits, and counts its tokens.
        let small = format!(r#"{{"a":"{}"}}"#, "x".repeat(192));
        let fits = post(&server.base_url, "/v1/chat/completions", &small);
        assert!(fits.starts_with("HTTP/1.1 200"), "{fits}");
        assert!(fits.contains(r#""prompt_tokens":50,"#), "{fits}");
    }

    /// The input tokens of `reply`'s usage, read where its wire reports them.
    fn input_tokens(reply: &Reply) -> Vec<u64> {
        reply
            .chunks
            .iter()
            .filter_map(|chunk| match chunk {
                Chunk::Data(frame) => frame.lines().find_map(|l| l.strip_prefix("data: ")),
                _ => None,
            })
            .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
            .filter_map(|event| {
                [
                    "/usage/prompt_tokens",
                    "/message/usage/input_tokens",
                    "/response/usage/input_tokens",
                ]
                .iter()
                .find_map(|pointer| event.pointer(pointer).and_then(serde_json::Value::as_u64))
            })
            .collect()
    }

    #[test]
    fn counted_writes_the_tokens_into_each_wires_usage() {
        let call = [("c1", "read_file", serde_json::json!({"path": "/a"}))];
        for reply in [
            crate::openai::text("hi"),
            crate::openai::tool_calls(&call),
            crate::anthropic::text("hi"),
            crate::anthropic::tool_calls(&call),
            crate::responses::text("hi"),
            crate::responses::tool_calls(&call),
        ] {
            assert_eq!(input_tokens(&reply), [10], "{reply:?}");
            assert_eq!(input_tokens(&counted(reply, 1234)), [1234]);
        }
    }

    #[test]
    fn a_context_limit_counts_a_responses_request_in_response_completed() {
        let server = MockServer::start_blocking(vec![crate::responses::text("fits")]);
        server.set_context_limit(100);
        let small = format!(r#"{{"a":"{}"}}"#, "x".repeat(192));
        let fits = post(&server.base_url, "/v1/responses", &small);
        assert!(fits.starts_with("HTTP/1.1 200"), "{fits}");
        let completed = fits
            .split("\n\n")
            .find(|frame| frame.contains("event: response.completed"))
            .unwrap_or_else(|| panic!("{fits}"));
        assert!(completed.contains(r#""input_tokens":50,"#), "{completed}");
    }

    #[test]
    fn a_rate_limit_answers_429_past_the_burst_and_lets_requests_through_as_it_refills() {
        let server = MockServer::start_blocking(vec![]);
        server.set_fallback(Reply::json(200, "ok"));
        // 1,200 a minute: one request every 50 ms, two at once.
        server.set_rate_limit(1200, 2);
        for _ in 0..2 {
            let passed = post(&server.base_url, "/v1/chat/completions", "{}");
            assert!(passed.starts_with("HTTP/1.1 200"), "{passed}");
        }
        let limited = post(&server.base_url, "/v1/chat/completions", "{}");
        assert!(limited.starts_with("HTTP/1.1 429"), "{limited}");
        assert!(limited.contains("rate_limit_exceeded"), "{limited}");
        assert!(limited.contains("retry-after: 1\r\n"), "{limited}");
        let wait: u64 = limited
            .lines()
            .find_map(|l| l.strip_prefix("retry-after-ms: "))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!((1..=50).contains(&wait), "{wait}");
        assert_eq!(server.rate_limited(), 1);
        std::thread::sleep(Duration::from_millis(60));
        let passed = post(&server.base_url, "/v1/chat/completions", "{}");
        assert!(passed.starts_with("HTTP/1.1 200"), "{passed}");
        assert_eq!(server.rate_limited(), 1);
        assert_eq!(server.requests().len(), 4);
    }

    #[test]
    fn delayed_puts_a_pause_before_the_body() {
        let reply = Reply::json(200, "{}").delayed(Duration::from_millis(5));
        assert!(matches!(reply.chunks[0], Chunk::Delay(d) if d == Duration::from_millis(5)));
        assert!(matches!(&reply.chunks[1], Chunk::Data(d) if d == "{}"));
    }
}
