//! The web toolset end to end: a model's `web_fetch` of a page on a local server the test
//! starts (listed in `allow` and `private_hosts`) reaches the model as markdown without a
//! prompt; private addresses are refused before any prompt; `web_search` against a local fake
//! SearXNG; `check` lists the toolset; a bad `allow` entry stops the launch naming its line.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use super::*;

/// A one-route-per-path HTTP server on 127.0.0.1 in a thread: `route(path)` gives the content
/// type and body of each answer. It serves until the test process ends.
fn http_server(route: fn(&str) -> (&'static str, String)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let path = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
            let (content_type, body) = route(&path);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

fn web_worker(web: &str) -> String {
    worker("main", &format!("toolsets:\n  web:\n{web}"))
}

fn site(path: &str) -> (&'static str, String) {
    match path {
        "/page" => (
            "text/html",
            "<html><head><script>steal()</script></head><body><h1>Release notes</h1>\
             <p>Version <b>2.0</b> is out.</p></body></html>"
                .to_owned(),
        ),
        p if p.starts_with("/search?") => (
            "application/json",
            json!({"results": [{"title": "Golem", "url": "https://golem.example/",
                                "content": "Forge of workers"}]})
            .to_string(),
        ),
        _ => ("text/plain", "nothing here".to_owned()),
    }
}

#[test]
fn an_allowed_page_reaches_the_model_as_markdown_without_a_prompt() {
    let port = http_server(site);
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let web = format!("    allow: [\"127.0.0.1:{port}\"]\n    private_hosts: [\"127.0.0.1\"]\n");
    project(&env, &[("main.worker", web_worker(&web))]);
    let url = format!("http://127.0.0.1:{port}/page");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "web_fetch", json!({ "url": url }))]),
        wire.text("Done."),
    ]);
    // Interactive with no terminal: a prompt would have been a headless denial.
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    let text = &results[0].content;
    assert!(text.starts_with("# Release notes"), "{text}");
    assert!(text.contains("**2.0**"), "{text}");
    assert!(!text.contains("steal"), "{text}");
    assert!(!wire.is_error(&results[0]));
    let events = events(&output);
    assert!(of_type(&events, "approvalRequired").is_empty());
    assert_eq!(
        of_type(&events, "approvalResolved")[0]["decidedBy"],
        "policy"
    );
    let result = of_type(&events, "toolResult")[0];
    assert_eq!(result["status"], "success");
    assert_eq!(result["value"]["kind"], "text");
    assert_eq!(result["value"]["mimeType"], "text/markdown");
}

#[test]
fn private_addresses_are_refused_before_any_prompt() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(&env, &[("main.worker", web_worker("    allow: []\n"))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            (
                "call_1",
                "web_fetch",
                json!({"url": "http://169.254.169.254/latest/meta-data/"}),
            ),
            ("call_2", "web_fetch", json!({"url": "http://0x7f.1/"})),
            (
                "call_3",
                "web_fetch",
                json!({"url": "http://localhost:8080/"}),
            ),
        ]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert_eq!(results.len(), 3);
    for result in &results {
        assert!(wire.is_error(result));
        assert!(
            result.content.contains("PERMISSION_DENIED"),
            "{}",
            result.content
        );
    }
    assert!(
        results[0].content.contains("cloud metadata service"),
        "{}",
        results[0].content
    );
    assert!(
        results[1]
            .content
            .contains("127.0.0.1 is a loopback address"),
        "{}",
        results[1].content
    );
    let events = events(&output);
    assert!(
        of_type(&events, "approvalRequired").is_empty(),
        "{events:#?}"
    );
}

#[test]
fn web_search_asks_the_configured_searxng() {
    let port = http_server(site);
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let web = format!("    search: {{ backend: searxng, url: \"http://127.0.0.1:{port}\" }}\n");
    project(&env, &[("main.worker", web_worker(&web))]);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[("call_1", "web_search", json!({"query": "golem"}))]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    let text = &results[0].content;
    assert!(text.contains("1 result for \"golem\" (SearXNG)"), "{text}");
    assert!(text.contains("https://golem.example/"), "{text}");
    let events = events(&output);
    let result = of_type(&events, "toolResult")[0];
    assert_eq!(result["value"]["kind"], "table");
}

#[test]
fn check_lists_the_web_toolset() {
    let env = TestEnv::new();
    let web = "    allow: [docs.rs, \"*.python.org\"]\n    search: { backend: brave }\n";
    project(&env, &[("main.worker", web_worker(web))]);
    let text = check_offline(&env);
    for expected in [
        "allow (pre-approved): docs.rs, *.python.org",
        "private hosts: none",
        "limits: 2000000 bytes and 30 s per fetch, 5 redirects",
        "search: brave at https://api.search.brave.com, warning: BRAVE_API_KEY is not set",
        "pre-approved for docs.rs, *.python.org; other hosts ask",
        "web_search",
    ] {
        assert!(text.contains(expected), "{expected}:\n{text}");
    }
}

#[test]
fn a_bad_allow_entry_stops_the_launch_naming_its_line() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    let web = "    allow:\n      - docs.rs\n      - https://python.org\n";
    project(&env, &[("main.worker", web_worker(web))]);
    let server = MockServer::start_blocking(vec![wire.text("never asked")]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("line 8: `toolsets.web.allow[1]` must be a host such as"),
        "{err}"
    );
    assert!(server.requests().is_empty());
}
