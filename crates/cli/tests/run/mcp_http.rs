//! MCP servers over streamable HTTP end to end: the everything reference server run in its
//! `streamableHttp` mode on a free port, reached through a small recording proxy (the server
//! cannot show the headers it got) so that the configured header, `${VAR}` expanded, is seen
//! arriving. Tools are listed and called through `golem-forge run`; `check` shows the URL and
//! the header names, never their values; with the server down, a call gives an error result
//! naming it and the run goes on.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::mcp_toolset::{mcp_worker, package, run_with};
use super::*;

/// The header value's secret part, set in our environment.
const SECRET: &str = "hdr-secret-0815";

/// The everything server in `streamableHttp` mode, killed when dropped.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    /// Starts it on a free port and waits until it listens.
    fn start() -> HttpServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("node")
            .arg(package("server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < LIMIT, "the HTTP server never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpServer { child, port }
    }

    /// Stops it and waits until the port is closed.
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A TCP proxy to `upstream` that records every byte clients send; its address and the
/// record.
fn recording_proxy(upstream: u16) -> (SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let record = Arc::new(Mutex::new(Vec::new()));
    let recorded = record.clone();
    std::thread::spawn(move || {
        for client in listener.incoming().filter_map(Result::ok) {
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            let (mut client_in, mut server_out) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            let record = recorded.clone();
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                while let Ok(n) = client_in.read(&mut buffer) {
                    if n == 0 {
                        break;
                    }
                    record.lock().unwrap().extend_from_slice(&buffer[..n]);
                    if server_out.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                }
                let _ = server_out.shutdown(Shutdown::Write);
            });
            let (mut server_in, mut client_out) = (server, client);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut server_in, &mut client_out);
                let _ = client_out.shutdown(Shutdown::Both);
            });
        }
    });
    (address, record)
}

/// The worker `main` with the HTTP server `remote` at `url`, a header from `MCP_HTTP_SECRET`.
fn http_worker(url: &str) -> String {
    mcp_worker(&format!(
        "    servers:\n      remote: {{ url: \"{url}\", headers: {{ X-Golem-Test: \
         \"Bearer ${{MCP_HTTP_SECRET}}\" }} }}\n    tools: {{ remote: [echo, get-sum] }}\n    \
         approval: {{ default: preApproved }}\n"
    ))
}

#[test]
fn tools_are_listed_and_called_over_http_with_the_headers() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    let mut http = HttpServer::start();
    let (proxy, record) = recording_proxy(http.port);
    let url = format!("http://{proxy}/mcp");
    project(&env, &[("main.worker", http_worker(&url))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            ("c1", "remote__echo", json!({"message": "over http"})),
            ("c2", "remote__get-sum", json!({"a": 20, "b": 22})),
        ]),
        wire.text("Done."),
    ]);
    let output = run_with(
        &env,
        wire,
        &server,
        &["proj/main.worker", "go"],
        &[("MCP_HTTP_SECRET", SECRET)],
    );
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert!(
        results[0].content.contains("Echo: over http"),
        "{results:?}"
    );
    assert!(results[1].content.contains("42"), "{results:?}");
    let sent = String::from_utf8_lossy(&record.lock().unwrap()).to_ascii_lowercase();
    assert!(
        sent.contains(&format!("x-golem-test: bearer {SECRET}")),
        "the header reached the server, expanded: {sent}"
    );

    let check = env
        .command()
        .args(["check", "proj/main.worker", "--model", "test:default"])
        .env("MCP_HTTP_SECRET", SECRET)
        .output()
        .unwrap();
    assert_exit(&check, 0);
    let out = stdout(&check);
    assert!(
        out.contains(&format!("remote: http, {url}"))
            && out.contains("headers: X-Golem-Test")
            && out.contains("tool list cached"),
        "{out}"
    );
    assert!(!out.contains(SECRET), "no header value printed: {out}");

    // The server goes down: the tools still come from the cache, a call is an error result
    // naming the server, and the run goes on.
    http.stop();
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("c1", "remote__echo", json!({"message": "anyone?"}))]),
        wire.text("Carried on."),
    ]);
    let output = run_with(
        &env,
        wire,
        &server,
        &["proj/main.worker", "go"],
        &[("MCP_HTTP_SECRET", SECRET)],
    );
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert!(wire.is_error(&results[0]), "{results:?}");
    assert!(
        results[0].content.contains("MCP server `remote`"),
        "names the server: {results:?}"
    );
    assert!(
        stdout(&output).contains("Carried on."),
        "{}",
        render(&output)
    );
}

#[test]
fn a_url_that_is_not_http_is_refused_at_parse() {
    let env = TestEnv::new();
    project(&env, &[("main.worker", http_worker("ftp://127.0.0.1/mcp"))]);
    let output = env
        .command()
        .args(["check", "proj/main.worker", "--model", "test:default"])
        .output()
        .unwrap();
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("toolsets.mcp.servers.remote") && err.contains("http or https"),
        "{err}"
    );
}
