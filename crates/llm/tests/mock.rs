//! A local mock of a provider's HTTP API: replies are scripted in order (JSON bodies or SSE
//! streams with delays, a cut connection, or a hang), and every request is recorded (path,
//! headers, JSON body) so tests can assert what was sent.

use std::collections::{HashMap, VecDeque};

use std::sync::{Arc, Mutex};
use std::time::Duration;

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
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
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
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: serde_json::Value,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
}

/// A running mock server on 127.0.0.1.
pub struct MockServer {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub base_url: String,
    script: Arc<Mutex<Script>>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Starts a server that answers requests with `replies`, in order; past the last one it
    /// answers 500 `no scripted reply`.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let script = Arc::new(Mutex::new(Script {
            replies: replies.into(),
            requests: Vec::new(),
        }));
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            base_url,
            script,
            task,
        }
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().unwrap().requests.clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(script): State<Arc<Mutex<Script>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut script = script.lock().unwrap();
        script.requests.push(Recorded {
            path: uri.path().to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
            body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        });
        script.replies.pop_front()
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
            }
        }
    });
    builder
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}
