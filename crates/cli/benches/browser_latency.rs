//! Token to painted in the page, end to end: `golem-forge serve` against a small OpenAI-wire
//! SSE server in this process, with its page in headless Chromium (the harness of the browser
//! tests, `tests/browser/harness/mod.rs`). The server streams one small content delta at a time,
//! each carrying the wall-clock time (epoch milliseconds) just before it went into the socket;
//! in the page a `MutationObserver` schedules a `requestAnimationFrame` callback after each
//! change, which notes `performance.timeOrigin + performance.now()` for every token that has
//! appeared in the DOM since. The difference is what the user waits for beyond the network: the
//! provider decoder, the runtime, the event bus, the WebSocket, the page's rendering up to the
//! frame that shows it. Also printed: the page's weight (every file it loaded, uncompressed),
//! and the memory of `serve` (VmRSS, VmHWM) with one tab attached during a 200-turn session of
//! short answers sent through the page. Prints numbers; asserts nothing about them.
//! `cargo bench -p golem-forge --bench browser_latency`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

#[allow(
    dead_code,
    unused_imports,
    reason = "the browser tests' harness, of which the bench uses a part"
)]
#[path = "../tests/browser/harness/mod.rs"]
mod harness;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use golem_testkit::cli::TestEnv;
use harness::{Serve, Ui, fs_worker, project, tid};

/// Tokens in the measured answer, and the pause between two of them (a fast model's pace).
const TOKENS: usize = 400;
const GAP: Duration = Duration::from_millis(8);
/// Tokens of the first answer, which warms up the connection, the page and its renderer.
const WARM_UP: usize = 40;
/// Tokens per paragraph.
const PER_PARAGRAPH: usize = 10;
/// Turns of the memory measurement.
const TURNS: usize = 200;

fn main() {
    harness::require_browser();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let stream = stream.unwrap();
            std::thread::spawn(move || answer_connection(stream));
        }
    });

    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let serve = Serve::start_with(
        &env,
        &[
            ("OPENAI_API_KEY", "sk-bench".to_owned()),
            ("OPENAI_BASE_URL", base),
        ],
        &[
            "serve",
            &worker,
            "--port",
            "0",
            "--model",
            "openai:gpt-bench",
        ],
    );
    let pid = serve.pid();
    let ui = Ui::attach("browser_latency", serve);
    ui.goto_token_url();
    ui.wait_connected();
    let at_start = memory(pid);

    page_weight(&ui);

    ui.turn("warm up", &format!("w{:04}", WARM_UP - 1));
    ui.js(OBSERVER, vec![]);
    // At the moment Date.now() ticks, how far the page's high-resolution clock is from it.
    let offset = ui.js(
        "const start = Date.now(); let now; while ((now = Date.now()) === start) {} \
         return now - (performance.timeOrigin + performance.now());",
        vec![],
    );
    ui.turn("measure", &format!("t{:04}", TOKENS - 1));
    let seen = ui.js("return window.__golemLatency.seen;", vec![]);
    let mut latencies: Vec<f64> = (0..TOKENS)
        .filter_map(|i| {
            let token = &seen[format!("{i:04}")];
            Some(token["painted"].as_f64()? - token["sent"].as_f64()?)
        })
        .collect();
    println!(
        "token to painted: {} of {TOKENS} tokens seen, {} ms apart (performance.timeOrigin + \
         performance.now() runs {:.3} ms ahead of Date.now(); not corrected for)",
        latencies.len(),
        GAP.as_millis(),
        -offset.as_f64().unwrap_or(f64::NAN)
    );
    report(&mut latencies);

    // Memory with one tab attached during a session of short turns.
    ui.js(
        "window.__golemObserver && window.__golemObserver.disconnect();",
        vec![],
    );
    let after_latency = memory(pid);
    let started = Instant::now();
    let mut samples = Vec::new();
    for turn in 1..=TURNS {
        ui.turn(&format!("question {turn}"), &format!("Answer {turn}."));
        if turn % 50 == 0 {
            samples.push((turn, memory(pid)));
        }
    }
    let elapsed = started.elapsed();
    println!(
        "serve's memory, one tab attached: at start {}; after the latency turns {}",
        show(at_start),
        show(after_latency)
    );
    for (turn, sample) in &samples {
        println!("  after {turn:>3} more turns: {}", show(*sample));
    }
    let heap = ui.js(
        "return performance.memory ? performance.memory.usedJSHeapSize : null;",
        vec![],
    );
    println!(
        "{TURNS} turns through the page in {:.1} s ({:.0} ms a turn); the page's JS heap at the end: {}; messages on the page: {}",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1000.0 / TURNS as f64,
        heap.as_f64()
            .map(|b| format!("{:.1} MB", b / 1_000_000.0))
            .unwrap_or_else(|| "unknown".into()),
        ui.count(&tid("message"))
    );
}

/// Installed in the page before the measured turn: after each change to the DOM, in the next
/// animation frame, the time of every measured token (`tNNNN@STAMP`) that is new in the last
/// assistant message.
const OBSERVER: &str = r#"
    const state = { seen: {} };
    window.__golemLatency = state;
    const pattern = /t(\d{4})@(\d+\.\d+)/g;
    let pending = false;
    const look = () => {
        pending = false;
        const now = performance.timeOrigin + performance.now();
        const messages = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
        const last = messages[messages.length - 1];
        if (!last) return;
        for (const m of last.textContent.matchAll(pattern)) {
            if (!(m[1] in state.seen)) state.seen[m[1]] = { sent: Number(m[2]), painted: now };
        }
    };
    const observer = new MutationObserver(() => {
        if (!pending) { pending = true; requestAnimationFrame(look); }
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    window.__golemObserver = observer;
"#;

/// Prints the weight of the page: the document and every file it loaded, uncompressed.
fn page_weight(ui: &Ui) {
    let entries = ui.js(
        r#"return [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
              .map(e => ({ name: e.name, size: e.decodedBodySize, transfer: e.transferSize }));"#,
        vec![],
    );
    let entries = entries.as_array().cloned().unwrap_or_default();
    let total: u64 = entries.iter().filter_map(|e| e["size"].as_u64()).sum();
    println!(
        "page weight: {total} bytes uncompressed in {} files",
        entries.len()
    );
    for entry in &entries {
        println!(
            "  {:>7}  {}",
            entry["size"].as_u64().unwrap_or_default(),
            entry["name"].as_str().unwrap_or_default()
        );
    }
}

/// VmRSS and VmHWM of `pid` in kB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_default()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn show((rss, hwm): (u64, u64)) -> String {
    format!(
        "VmRSS {:.1} MB, VmHWM {:.1} MB",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0
    )
}

fn report(latencies: &mut [f64]) {
    if latencies.is_empty() {
        println!("  no token was seen");
        return;
    }
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q).round() as usize];
    let mean = latencies.iter().sum::<f64>() / latencies.len() as f64;
    println!(
        "  median {:.2} ms  mean {:.2} ms  p95 {:.2} ms  p99 {:.2} ms  min {:.2} ms  max {:.2} ms",
        at(0.5),
        mean,
        at(0.95),
        at(0.99),
        at(0.0),
        at(1.0)
    );
}

// ---- the model server ----

/// Milliseconds since the epoch, as the page's `Date.now()` counts them (with fractions).
fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

/// Reads one HTTP request; its JSON body, or `None` at the connection's end.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Value> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
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
    reader.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// The text of the last user message of a chat completions request.
fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let data = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk",
        "created": 1_700_000_000, "model": "gpt-bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]});
    format!("data: {data}\n\n")
}

/// Answers the requests of one connection: `warm up` with [`WARM_UP`] tokens `wNNNN`,
/// `measure` with [`TOKENS`] stamped tokens `tNNNN@STAMP` [`GAP`] apart, `question N` with
/// `Answer N.`.
fn answer_connection(stream: TcpStream) {
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    while let Some(body) = read_request(&mut reader) {
        let asked = last_user_text(&body);
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
        if out.write_all(head.as_bytes()).is_err() {
            return;
        }
        // One chunk of the chunked body (the empty one ends it).
        let mut send = |text: String| -> bool {
            let framed = format!("{:x}\r\n{text}\r\n", text.len());
            out.write_all(framed.as_bytes()).is_ok() && out.flush().is_ok()
        };
        let mut ok = send(chunk(json!({"role": "assistant", "content": ""}), None));
        if asked.contains("warm up") {
            for i in 0..WARM_UP {
                std::thread::sleep(GAP);
                let end = paragraph_end(i);
                ok &= send(chunk(json!({"content": format!("w{i:04}{end}")}), None));
            }
        } else if asked.contains("measure") {
            for i in 0..TOKENS {
                std::thread::sleep(GAP);
                let end = paragraph_end(i);
                // The stamp is taken last, right before the write.
                let text = format!("t{i:04}@{:.3}{end}", epoch_ms());
                ok &= send(chunk(json!({"content": text}), None));
            }
        } else {
            let number = asked.trim_start_matches("question ").trim();
            for part in ["Answer ", number, "."] {
                ok &= send(chunk(json!({"content": part}), None));
            }
        }
        ok &= send(chunk(json!({}), Some("stop")));
        let usage = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk",
            "created": 1_700_000_000, "model": "gpt-bench", "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
        ok &= send(format!("data: {usage}\n\ndata: [DONE]\n\n"));
        ok &= send(String::new());
        if !ok {
            return;
        }
    }
}

fn paragraph_end(i: usize) -> &'static str {
    if (i + 1).is_multiple_of(PER_PARAGRAPH) {
        "\n\n"
    } else {
        " "
    }
}
