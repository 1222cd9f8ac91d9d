//! A small HTTP/1.1 server on `127.0.0.1` for the web tests, on a raw tokio listener so that
//! each test can answer exactly as it needs: any status and headers, a body with or without
//! `Content-Length`, a body that never ends, or no answer at all. It records every request it
//! receives (method, path, headers, body), so a test can tell that a refused URL was never
//! requested. One request per connection (`Connection: close`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    /// The path and query.
    pub target: String,
    /// Header names lowercase.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How the server answers.
pub enum Answer {
    /// A response; `declare_length: false` sends the body without `Content-Length`, ending it
    /// by closing the connection.
    Response {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        declare_length: bool,
    },
    /// Headers, then body bytes forever.
    Endless { content_type: String },
    /// Nothing, for this long.
    Silence(Duration),
}

impl Answer {
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Answer {
        Answer::Response {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            declare_length: true,
        }
    }

    pub fn status(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Answer {
        Answer::Response {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            declare_length: true,
        }
    }

    pub fn redirect(status: u16, location: &str) -> Answer {
        Answer::Response {
            status,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
            declare_length: true,
        }
    }
}

type Route = dyn Fn(&Received) -> Answer + Send + Sync;

/// A running server; it stops when dropped.
pub struct Server {
    pub port: u16,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Starts a server answering each request with `route`.
    pub async fn start(route: impl Fn(&Received) -> Answer + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let route: Arc<Route> = Arc::new(route);
        let task = tokio::spawn({
            let received = received.clone();
            async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    let received = received.clone();
                    let route = route.clone();
                    tokio::spawn(async move {
                        let _ = serve(stream, &received, &*route).await;
                    });
                }
            }
        });
        Server {
            port,
            received,
            task,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// The paths requested so far.
    pub fn paths(&self) -> Vec<String> {
        self.received().into_iter().map(|r| r.target).collect()
    }
}

async fn serve(
    mut stream: TcpStream,
    received: &Mutex<Vec<Received>>,
    route: &Route,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let request = Received {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    received.lock().unwrap().push(request.clone());
    match route(&request) {
        Answer::Response {
            status,
            headers,
            body,
            declare_length,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\nConnection: close\r\n",
                reason(status)
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            if declare_length {
                head.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
            stream.shutdown().await?;
        }
        Answer::Endless { content_type } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: {content_type}\r\n\r\n"
            );
            stream.write_all(head.as_bytes()).await?;
            let block = vec![b'x'; 16 * 1024];
            loop {
                stream.write_all(&block).await?;
            }
        }
        Answer::Silence(time) => tokio::time::sleep(time).await,
    }
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Other",
    }
}
