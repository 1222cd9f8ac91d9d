//! Token to screen, end to end: `golem-forge chat` runs in a real pseudo-terminal against a
//! small Anthropic-wire SSE server in this process. The server writes one text delta at a time
//! and notes when its last byte went into the socket; a reader of the terminal notes when the
//! token's text comes out of the terminal. The difference is what the user waits for beyond the
//! network: HTTP and SSE decoding, the provider decoder, the runtime, the event bus, the
//! markdown renderer and the terminal write (plus the loopback and the pseudo-terminal, so the
//! numbers are an upper bound on our own time). Colour on and with `NO_COLOR`.
//! `cargo bench -p golem-forge --bench token_latency`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::json;

/// Tokens in the measured answer, and the pause between two of them (a fast model's pace).
const TOKENS: usize = 400;
const GAP: Duration = Duration::from_millis(8);
/// Tokens of the first answer, which warms up the connection and the renderer.
const WARM_UP: usize = 40;
/// Tokens per paragraph: 10 tokens of 6 columns stay on one 120-column row.
const PER_LINE: usize = 10;
const LIMIT: Duration = Duration::from_secs(30);

fn main() {
    for color in [true, false] {
        let latencies = run(color);
        report(if color { "colour" } else { "NO_COLOR" }, latencies);
    }
}

/// The token marker `i` and its text as sent.
fn marker(turn: usize, i: usize) -> String {
    format!("t{turn}{i:04}")
}

fn token_text(turn: usize, i: usize) -> String {
    let end = if (i + 1).is_multiple_of(PER_LINE) {
        "\n\n"
    } else {
        " "
    };
    format!("{}{end}", marker(turn, i))
}

fn frame(data: serde_json::Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

/// Reads one HTTP request (headers and a `content-length` body); false at the connection's end.
fn read_request(reader: &mut BufReader<TcpStream>) -> bool {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return false;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    true
}

/// Answers the turns of one chat: turn 0 with `WARM_UP` tokens, turn 1 with `TOKENS`, noting
/// when each token of turn 1 was written.
fn serve(listener: TcpListener, sent: Arc<Mutex<Vec<Option<Instant>>>>) {
    let mut turn = 0;
    while turn < 2 {
        let (stream, _) = listener.accept().unwrap();
        stream.set_nodelay(true).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut out = stream;
        while turn < 2 && read_request(&mut reader) {
            let count = if turn == 0 { WARM_UP } else { TOKENS };
            let mut head = String::from(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n",
            );
            let chunk = |text: String, out: &mut TcpStream, head: &mut String| {
                head.push_str(&format!("{:x}\r\n{text}\r\n", text.len()));
                out.write_all(head.as_bytes()).unwrap();
                out.flush().unwrap();
                head.clear();
            };
            chunk(
                frame(json!({"type": "message_start", "message": {
                    "id": "msg_bench", "type": "message", "role": "assistant",
                    "model": "claude-bench", "content": [], "stop_reason": null,
                    "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}))
                    + &frame(json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}})),
                &mut out,
                &mut head,
            );
            for i in 0..count {
                std::thread::sleep(GAP);
                chunk(
                    frame(json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": token_text(turn, i)}})),
                    &mut out,
                    &mut head,
                );
                if turn == 1 {
                    sent.lock().unwrap()[i] = Some(Instant::now());
                }
            }
            chunk(
                frame(json!({"type": "content_block_stop", "index": 0}))
                    + &frame(json!({"type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                        "usage": {"output_tokens": count}}))
                    + &frame(json!({"type": "message_stop"})),
                &mut out,
                &mut head,
            );
            out.write_all(b"0\r\n\r\n").unwrap();
            out.flush().unwrap();
            turn += 1;
        }
    }
}

/// What the terminal reader keeps: the raw output and when each token of turn 1 showed.
struct Screen {
    raw: Vec<u8>,
    seen: Vec<Option<Instant>>,
    /// Where to look for the next token of turn 1.
    cursor: usize,
    next: usize,
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Runs one chat and returns the token latencies of the measured turn.
fn run(color: bool) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("golem-forge.config.yaml"), "{}\n").unwrap();
    std::fs::write(
        dir.path().join("scribe.worker"),
        "---\nname: scribe\ndescription: benchmark worker\n---\nYou write.\n",
    )
    .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(Mutex::new(vec![None; TOKENS]));
    let server = {
        let sent = sent.clone();
        std::thread::spawn(move || serve(listener, sent))
    };

    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_golem-forge"));
    cmd.args(["chat", "scribe.worker", "--model", "anthropic:claude-bench"]);
    cmd.cwd(dir.path());
    cmd.env_clear();
    cmd.env("HOME", dir.path());
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd.env("TERM", "xterm-256color");
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-bench");
    cmd.env("ANTHROPIC_BASE_URL", &url);
    if !color {
        cmd.env("NO_COLOR", "1");
    }
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
    let screen = Arc::new(Mutex::new(Screen {
        raw: Vec::new(),
        seen: vec![None; TOKENS],
        cursor: 0,
        next: 0,
    }));
    let (changed, wake) = mpsc::channel::<()>();
    {
        let (screen, writer) = (screen.clone(), writer.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let now = Instant::now();
                let mut screen = screen.lock().unwrap();
                let start = screen.raw.len().saturating_sub(16);
                screen.raw.extend_from_slice(&buf[..n]);
                while screen.next < TOKENS {
                    let needle = marker(1, screen.next);
                    let Some(at) = find(&screen.raw, needle.as_bytes(), screen.cursor) else {
                        break;
                    };
                    let next = screen.next;
                    screen.seen[next] = Some(now);
                    screen.cursor = at + needle.len();
                    screen.next += 1;
                }
                // The line editor asks where the cursor is and what the terminal is.
                let fresh = &screen.raw[start..];
                let mut replies = Vec::new();
                if find(fresh, b"\x1b[6n", 0).is_some() {
                    replies.extend_from_slice(b"\x1b[1;1R");
                }
                if find(fresh, b"\x1b[c", 0).is_some() {
                    replies.extend_from_slice(b"\x1b[?1;2c");
                }
                drop(screen);
                if !replies.is_empty() {
                    let mut writer = writer.lock().unwrap();
                    writer.write_all(&replies).unwrap();
                    writer.flush().unwrap();
                }
                let _ = changed.send(());
            }
        });
    }
    let wait_for = |what: &[u8], from: usize| -> usize {
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(at) = find(&screen.lock().unwrap().raw, what, from) {
                return at + what.len();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "waited for {:?}; the terminal shows:\n{}",
                String::from_utf8_lossy(what),
                String::from_utf8_lossy(&screen.lock().unwrap().raw)
            );
            let _ = wake.recv_timeout(left.min(Duration::from_millis(200)));
        }
    };
    let type_line = |text: &str| {
        let mut writer = writer.lock().unwrap();
        writer.write_all(format!("{text}\r").as_bytes()).unwrap();
        writer.flush().unwrap();
    };

    let mut at = wait_for("scribe› ".as_bytes(), 0);
    type_line("warm up");
    at = wait_for(marker(0, WARM_UP - 1).as_bytes(), at);
    at = wait_for("scribe› ".as_bytes(), at);
    type_line("go");
    at = wait_for(marker(1, TOKENS - 1).as_bytes(), at);
    wait_for("scribe› ".as_bytes(), at);
    type_line("/exit");
    let status = child.wait().unwrap();
    assert!(status.success(), "chat exited with {status:?}");
    server.join().unwrap();

    let sent = sent.lock().unwrap();
    let screen = screen.lock().unwrap();
    sent.iter()
        .zip(&screen.seen)
        .map(|(sent, seen)| {
            let (sent, seen) = (sent.unwrap(), seen.unwrap());
            seen.saturating_duration_since(sent)
        })
        .collect()
}

fn report(name: &str, mut latencies: Vec<Duration>) {
    latencies.sort();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 - 1.0) * q).round() as usize;
        latencies[i].as_secs_f64() * 1000.0
    };
    let mean =
        latencies.iter().map(Duration::as_secs_f64).sum::<f64>() / latencies.len() as f64 * 1000.0;
    println!(
        "token to screen, {name:<8} ({} tokens, {} ms apart): median {:.3} ms  mean {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  max {:.3} ms",
        latencies.len(),
        GAP.as_millis(),
        at(0.5),
        mean,
        at(0.9),
        at(0.99),
        at(1.0)
    );
}
