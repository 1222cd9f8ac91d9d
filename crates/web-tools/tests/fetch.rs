//! `web_fetch` end to end against local servers: pre-approval by `allow` and approval for
//! other hosts; private addresses refused before any prompt (IP literals in every notation,
//! `localhost`), and after a redirect; `private_hosts`; credentials headers; the size and time
//! limits; HTML → markdown, JSON → structured, binary refused; HTTP errors.

use std::time::{Duration, Instant};

use golem_protocol::{DecidedBy, ToolErrorCode, ToolStatus};
use golem_web_tools::WebToolsetConfig;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::server::{Answer, Server};
use super::{Env, error_of, options};

const PAGE: &str = "<!doctype html><html><head><title>Doc</title>\
    <style>body { color: red }</style><script>alert('hi')</script></head>\
    <body><h1>Heading</h1><p>A <em>small</em> page with a <a href=\"/next\">link</a>.</p>\
    <script>document.write('gone')</script></body></html>";

/// A server with a few routes, and the options that pre-approve it (`127.0.0.1` listed as a
/// private host, its port in `allow`).
async fn site() -> (Server, WebToolsetConfig) {
    let server = Server::start(|request| match request.target.as_str() {
        "/page" => Answer::ok("text/html; charset=utf-8", PAGE),
        "/data" => Answer::ok(
            "application/json",
            r#"{"name": "golem", "tags": ["a", "b"]}"#,
        ),
        "/notes.txt" => Answer::ok("text/plain", "just text"),
        "/logo.png" => Answer::ok("image/png", vec![0x89, b'P', b'N', b'G', 0, 0, 0, 0]),
        "/missing" => Answer::status(404, "text/html", "<h1>Not here</h1><p>Try /page</p>"),
        _ => Answer::status(404, "text/plain", "no such page"),
    })
    .await;
    let options = options(&[format!("127.0.0.1:{}", server.port)], &["127.0.0.1"]);
    (server, options)
}

#[tokio::test]
async fn an_allowed_host_is_pre_approved_and_html_becomes_markdown() {
    let (server, options) = site().await;
    let env = Env::new(options);
    let outcome = env
        .call("web_fetch", json!({"url": server.url("/page")}))
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert!(env.asked().is_empty());
    let value = outcome.value;
    assert_eq!(value.kind, "text");
    assert_eq!(value.mime_type.as_deref(), Some("text/markdown"));
    let markdown = value.data["content"].as_str().unwrap();
    assert!(markdown.starts_with("# Heading"), "{markdown}");
    assert!(
        markdown.contains("_small_") || markdown.contains("*small*"),
        "{markdown}"
    );
    assert!(markdown.contains("[link](/next)"), "{markdown}");
    for gone in ["alert", "color: red", "document.write", "gone"] {
        assert!(!markdown.contains(gone), "{gone} in {markdown}");
    }
    assert_eq!(
        value.summary.as_deref(),
        Some(format!("200 OK · text/html · {} bytes", PAGE.len()).as_str())
    );
    assert_eq!(server.paths(), ["/page"]);
    let request = &server.received()[0];
    assert_eq!(request.method, "GET");
    assert!(
        request
            .header("user-agent")
            .unwrap()
            .starts_with("golem-forge/")
    );
}

/// A page of 3,000 nested elements (about 15 kB) once overflowed a Tokio worker's stack and
/// aborted the process; it converts, flattened, and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deeply_nested_page_is_flattened_not_a_crash() {
    let page = format!(
        "<html><body>{}the text{}</body></html>",
        "<div><b>".repeat(3_000),
        "</b></div>".repeat(3_000)
    );
    let server = Server::start(move |_| Answer::ok("text/html", page.clone())).await;
    let env = Env::new(options(
        &[format!("127.0.0.1:{}", server.port)],
        &["127.0.0.1"],
    ));
    let outcome = env
        .call("web_fetch", json!({"url": server.url("/deep")}))
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    let markdown = outcome.value.data["content"].as_str().unwrap();
    assert!(markdown.contains("the text"), "{markdown}");
    assert!(
        markdown.contains("nests deeper than 128 levels"),
        "{markdown}"
    );
}

#[tokio::test]
async fn json_is_structured_text_is_text_and_binary_is_refused() {
    let (server, options) = site().await;
    let env = Env::new(options);
    let json = env
        .call("web_fetch", json!({"url": server.url("/data")}))
        .await;
    assert_eq!(json.value.kind, "structured");
    assert_eq!(
        json.value.data,
        json!({"name": "golem", "tags": ["a", "b"]})
    );
    assert_eq!(
        json.value.summary.as_deref(),
        Some("200 OK · application/json · 37 bytes")
    );
    let text = env
        .call("web_fetch", json!({"url": server.url("/notes.txt")}))
        .await;
    assert_eq!(text.value.kind, "text");
    assert_eq!(text.value.mime_type.as_deref(), Some("text/plain"));
    assert_eq!(text.value.data["content"], "just text");
    let binary = env
        .call("web_fetch", json!({"url": server.url("/logo.png")}))
        .await;
    assert_eq!(binary.status, ToolStatus::Error);
    let error = error_of(&binary);
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert_eq!(
        error.message,
        format!(
            "{} is binary content (image/png, 8 bytes); web_fetch returns HTML, JSON and other \
             text only",
            server.url("/logo.png")
        )
    );
}

#[tokio::test]
async fn another_host_asks_and_the_prompt_says_what_and_why() {
    let (server, _) = site().await;
    let env = Env::new(options(
        &[format!("127.0.0.1:{}", server.port)],
        &["127.0.0.1", "localhost"],
    ));
    let outcome = env
        .call("web_fetch", json!({"url": "http://localhost/docs?q=1"}))
        .await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    let asked = env.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].description,
        "GET http://localhost/docs?q=1; asked because localhost is not in toolsets.web.allow"
    );
    // The same host with the port of its allow entry is pre-approved; on 80 it asks.
    let outcome = env
        .call(
            "web_fetch",
            json!({"url": format!("http://127.0.0.1:{}/page", server.port)}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Success);
    assert_eq!(env.asked().len(), 1);
    let outcome = env
        .call("web_fetch", json!({"url": "http://127.0.0.1/page"}))
        .await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert_eq!(env.asked().len(), 2);
    assert_eq!(server.paths(), ["/page"]);
}

#[tokio::test]
async fn an_approved_post_sends_its_body() {
    let server = Server::start(|request| {
        Answer::ok(
            "application/json",
            json!({"got": request.body, "type": request.header("content-type")}).to_string(),
        )
    })
    .await;
    // 127.0.0.1 on its port is allowed; the POST is pre-approved like a GET.
    let env = Env::approving(options(
        &[format!("127.0.0.1:{}", server.port)],
        &["127.0.0.1"],
    ));
    let outcome = env
        .call(
            "web_fetch",
            json!({"url": server.url("/api"), "method": "POST", "body": "{\"a\": 1}",
                   "headers": {"X-Trace": "t1"}}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert_eq!(
        outcome.value.data,
        json!({"got": "{\"a\": 1}", "type": "application/json"})
    );
    let request = &server.received()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.header("x-trace"), Some("t1"));
}

#[tokio::test]
async fn ip_literals_of_loopback_in_any_notation_are_refused_before_any_prompt() {
    let env = Env::approving(WebToolsetConfig::default());
    for (url, shown) in [
        ("http://2130706433/", "http://127.0.0.1/"),
        ("http://0x7f.1/", "http://127.0.0.1/"),
        ("http://0177.0.0.1/", "http://127.0.0.1/"),
        ("http://127.1/", "http://127.0.0.1/"),
        ("http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/"),
        ("http://[::1]/", "http://[::1]/"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "http://169.254.169.254/latest/meta-data/",
        ),
        ("http://[fd00:ec2::254]/", "http://[fd00:ec2::254]/"),
        ("http://10.0.0.1/", "http://10.0.0.1/"),
        ("http://100.64.0.1/", "http://100.64.0.1/"),
    ] {
        let outcome = env.call("web_fetch", json!({ "url": url })).await;
        assert_eq!(outcome.status, ToolStatus::Error, "{url}");
        assert_eq!(outcome.decided_by, None, "{url}: refused before the gate");
        let error = error_of(&outcome);
        assert_eq!(error.code, ToolErrorCode::PermissionDenied, "{url}");
        assert!(
            error.message.starts_with(&format!("refused {shown}: ")),
            "{url}: {}",
            error.message
        );
        assert!(
            error.message.contains("toolsets.web.private_hosts"),
            "{}",
            error.message
        );
    }
    assert!(env.asked().is_empty());
    let error = error_of(
        &env.call("web_fetch", json!({"url": "http://0x7f.1/"}))
            .await,
    );
    assert_eq!(
        error.message,
        "refused http://127.0.0.1/: 127.0.0.1 is a loopback address (127.0.0.0/8); web_fetch \
         does not reach loopback, private or other special addresses unless the URL's host is \
         listed in toolsets.web.private_hosts"
    );
    let error = error_of(
        &env.call("web_fetch", json!({"url": "http://[::ffff:127.0.0.1]/"}))
            .await,
    );
    assert!(
        error
            .message
            .contains("::ffff:127.0.0.1 is the IPv4-mapped form of 127.0.0.1, a loopback address"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn localhost_is_refused_unless_listed_in_private_hosts() {
    let (server, _) = site().await;
    let allow = [format!("localhost:{}", server.port)];
    let refused = Env::approving(options(&allow, &[]));
    let url = format!("http://localhost:{}/page", server.port);
    let error = error_of(&refused.call("web_fetch", json!({ "url": url })).await);
    assert_eq!(error.code, ToolErrorCode::PermissionDenied);
    assert!(
        error.message.contains("`localhost` names this machine"),
        "{}",
        error.message
    );
    assert!(server.paths().is_empty());

    let listed = Env::new(options(&allow, &["localhost"]));
    let outcome = listed.call("web_fetch", json!({ "url": url })).await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(server.paths(), ["/page"]);
}

#[tokio::test]
async fn redirects_are_checked_again() {
    let server = Server::start(|request| match request.target.as_str() {
        "/to-metadata" => Answer::redirect(302, "http://169.254.169.254/latest/meta-data/"),
        "/to-mapped" => Answer::redirect(301, "http://[::ffff:7f00:1]/"),
        "/to-localhost" => Answer::redirect(302, "http://localhost/secret"),
        "/to-file" => Answer::redirect(302, "file:///etc/passwd"),
        "/to-elsewhere" => Answer::redirect(302, "http://example.com/"),
        "/hop" => Answer::redirect(307, "/page"),
        "/loop" => Answer::redirect(302, "/loop"),
        "/page" => Answer::ok("text/plain", "landed"),
        _ => Answer::status(404, "text/plain", "no"),
    })
    .await;
    let env = Env::approving(options(
        &[format!("127.0.0.1:{}", server.port)],
        &["127.0.0.1"],
    ));
    let fetch = |path: &str| env.call("web_fetch", json!({"url": server.url(path)}));

    let error = error_of(&fetch("/to-metadata").await);
    assert_eq!(error.code, ToolErrorCode::PermissionDenied);
    assert_eq!(
        error.message,
        format!(
            "{} redirected; refused http://169.254.169.254/latest/meta-data/: \
             169.254.169.254 is a cloud metadata service address (169.254.169.254/32); web_fetch \
             does not reach loopback, private or other special addresses unless the URL's host \
             is listed in toolsets.web.private_hosts",
            server.url("/to-metadata")
        )
    );
    let error = error_of(&fetch("/to-mapped").await);
    assert_eq!(error.code, ToolErrorCode::PermissionDenied);
    assert!(
        error.message.contains("IPv4-mapped form of 127.0.0.1"),
        "{}",
        error.message
    );
    let error = error_of(&fetch("/to-localhost").await);
    assert_eq!(error.code, ToolErrorCode::PermissionDenied);
    assert!(
        error.message.contains("`localhost` names this machine"),
        "{}",
        error.message
    );
    let error = error_of(&fetch("/to-file").await);
    assert_eq!(error.code, ToolErrorCode::PermissionDenied);
    assert!(
        error.message.contains("only http and https"),
        "{}",
        error.message
    );

    // A pre-approved fetch does not follow a redirect out of `allow` (nothing is requested).
    let error = error_of(&fetch("/to-elsewhere").await);
    assert_eq!(error.code, ToolErrorCode::PermissionDenied);
    assert!(
        error
            .message
            .contains("redirected to http://example.com/, whose host is not in toolsets.web.allow"),
        "{}",
        error.message
    );

    let landed = fetch("/hop").await;
    assert_eq!(landed.status, ToolStatus::Success, "{:?}", landed.error);
    assert_eq!(landed.value.data["content"], "landed");
    assert!(
        landed
            .value
            .summary
            .as_deref()
            .unwrap()
            .ends_with(&format!("redirected to {}", server.url("/page"))),
        "{:?}",
        landed.value.summary
    );
    let error = error_of(&fetch("/loop").await);
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert!(
        error.message.contains("redirected more than 5 times"),
        "{}",
        error.message
    );
    let loops = server.paths().iter().filter(|p| *p == "/loop").count();
    assert_eq!(loops, 6, "the first request and five redirects");
    assert!(env.asked().is_empty());
}

#[tokio::test]
async fn credentials_and_custom_headers_do_not_cross_origins() {
    let server = Server::start(|request| match request.target.as_str() {
        "/away" => Answer::redirect(
            302,
            &format!(
                "http://localhost:{}/echo",
                request.header("host").unwrap().rsplit(':').next().unwrap()
            ),
        ),
        "/stay" => Answer::redirect(302, "/echo"),
        _ => Answer::ok(
            "application/json",
            json!({"authorization": request.header("authorization"),
                   "cookie": request.header("cookie"),
                   "x-api-key": request.header("x-api-key"),
                   "accept-language": request.header("accept-language")})
            .to_string(),
        ),
    })
    .await;
    let port = server.port;
    let env = Env::approving(options(
        &[format!("127.0.0.1:{port}"), format!("localhost:{port}")],
        &["127.0.0.1", "localhost"],
    ));
    let headers = json!({"Authorization": "Bearer s3cret", "Cookie": "id=1",
                         "X-Api-Key": "k3y", "Accept-Language": "fr"});
    let stay = env
        .call(
            "web_fetch",
            json!({"url": server.url("/stay"), "headers": headers}),
        )
        .await;
    assert_eq!(
        stay.value.data,
        json!({"authorization": "Bearer s3cret", "cookie": "id=1", "x-api-key": "k3y",
               "accept-language": "fr"})
    );
    let away = env
        .call(
            "web_fetch",
            json!({"url": server.url("/away"), "headers": headers}),
        )
        .await;
    assert_eq!(away.status, ToolStatus::Success, "{:?}", away.error);
    // Across origins only the safelisted headers go on: a custom key header stays behind.
    assert_eq!(
        away.value.data,
        json!({"authorization": null, "cookie": null, "x-api-key": null,
               "accept-language": "fr"})
    );

    // To a host not in allow, they are refused before any prompt.
    let strict = Env::approving(options(&[], &["127.0.0.1"]));
    let error = error_of(
        &strict
            .call(
                "web_fetch",
                json!({"url": "https://example.com/", "headers": {"authorization": "x"}}),
            )
            .await,
    );
    assert_eq!(error.code, ToolErrorCode::PermissionDenied);
    assert_eq!(
        error.message,
        "the `authorization` header carries credentials, which are sent only to hosts in \
         toolsets.web.allow; example.com is not in it"
    );
    assert!(strict.asked().is_empty());
}

#[tokio::test]
async fn oversize_bodies_are_cut_with_a_clear_error() {
    let server = Server::start(|request| match request.target.as_str() {
        "/declared" => Answer::ok("text/plain", vec![b'a'; 5000]),
        "/undeclared" => Answer::Response {
            status: 200,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: vec![b'a'; 5000],
            declare_length: false,
        },
        "/endless" => Answer::Endless {
            content_type: "text/html".into(),
        },
        _ => Answer::ok("text/plain", vec![b'a'; 1000]),
    })
    .await;
    let env = Env::new(WebToolsetConfig {
        max_bytes: 1000,
        ..options(&[format!("127.0.0.1:{}", server.port)], &["127.0.0.1"])
    });
    let fetch = |path: &str| env.call("web_fetch", json!({"url": server.url(path)}));
    let error = error_of(&fetch("/declared").await);
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert_eq!(
        error.message,
        format!(
            "the response of {} is 5.0 kB: larger than the limit of 1000 bytes \
             (toolsets.web.max_bytes); nothing of it is returned",
            server.url("/declared")
        )
    );
    for path in ["/undeclared", "/endless"] {
        let error = error_of(&fetch(path).await);
        assert_eq!(error.code, ToolErrorCode::ExecutionError);
        assert!(
            error
                .message
                .contains("was cut at 1000 bytes: larger than the limit of 1000 bytes"),
            "{path}: {}",
            error.message
        );
    }
    let exact = fetch("/exact").await;
    assert_eq!(exact.status, ToolStatus::Success, "{:?}", exact.error);
}

#[tokio::test]
async fn a_server_that_does_not_answer_times_out() {
    let server = Server::start(|_| Answer::Silence(Duration::from_secs(30))).await;
    let env = Env::new(WebToolsetConfig {
        timeout: 1,
        ..options(&[format!("127.0.0.1:{}", server.port)], &["127.0.0.1"])
    });
    let started = Instant::now();
    let outcome = env
        .call("web_fetch", json!({"url": server.url("/slow")}))
        .await;
    let error = error_of(&outcome);
    assert_eq!(error.code, ToolErrorCode::Timeout);
    assert_eq!(
        error.message,
        format!(
            "fetching {} took longer than 1 s and was stopped (the call's timeout, at most \
             toolsets.web.timeout)",
            server.url("/slow")
        )
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    // A call's own timeout, shorter than the toolset's.
    let env = Env::new(options(
        &[format!("127.0.0.1:{}", server.port)],
        &["127.0.0.1"],
    ));
    let outcome = env
        .call(
            "web_fetch",
            json!({"url": server.url("/slow"), "timeout": 1}),
        )
        .await;
    assert_eq!(error_of(&outcome).code, ToolErrorCode::Timeout);

    // An interrupt stops the fetch.
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        stopper.cancel();
    });
    let outcome = env
        .call_with("web_fetch", json!({"url": server.url("/slow")}), &cancel)
        .await;
    assert_eq!(
        outcome.status,
        ToolStatus::Interrupted,
        "{:?}",
        outcome.error
    );
}

#[tokio::test]
async fn http_errors_are_errors_with_an_excerpt() {
    let (server, options) = site().await;
    let env = Env::new(options);
    let error = error_of(
        &env.call("web_fetch", json!({"url": server.url("/missing")}))
            .await,
    );
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert_eq!(
        error.message,
        format!(
            "GET {} answered 404 Not Found (text/html, 33 bytes):\n# Not here\n\nTry /page",
            server.url("/missing")
        )
    );
    assert_eq!(error.details, Some(json!({"status": 404})));
}

#[tokio::test]
async fn bad_arguments_are_refused_before_any_prompt() {
    let env = Env::approving(options(&["docs.rs".to_owned()], &[]));
    for (args, code, message) in [
        (
            json!({"url": "docs.rs/std"}),
            ToolErrorCode::InvalidArguments,
            "`docs.rs/std` is not an absolute URL (relative URL without a base); give one such \
             as https://example.com/page",
        ),
        (
            json!({"url": "ftp://docs.rs/"}),
            ToolErrorCode::InvalidArguments,
            "only http and https URLs can be fetched, not `ftp:` (ftp://docs.rs/)",
        ),
        (
            json!({"url": "https://docs.rs:8443/"}),
            ToolErrorCode::PermissionDenied,
            "refused https://docs.rs:8443/: port 8443 is not allowed; web_fetch uses ports 80 \
             and 443, and another port only for a host written with it in toolsets.web.allow \
             (such as `docs.rs:8443`)",
        ),
        (
            json!({"url": "https://docs.rs/", "body": "x"}),
            ToolErrorCode::InvalidArguments,
            "a body is sent with POST only: add \"method\": \"POST\" or leave the body out",
        ),
        (
            json!({"url": "https://docs.rs/", "headers": {"Host": "intranet"}}),
            ToolErrorCode::InvalidArguments,
            "the `Host` header is set by web_fetch itself; leave it out",
        ),
        (
            json!({"url": "https://docs.rs/", "headers": {"X": "a\nb"}}),
            ToolErrorCode::InvalidArguments,
            "the value of the `X` header is not valid (no line breaks or control characters)",
        ),
        (
            json!({"url": "https://user:pw@example.com/"}),
            ToolErrorCode::PermissionDenied,
            "the URL carries credentials (user:password@), which are sent only to hosts in \
             toolsets.web.allow; example.com is not in it",
        ),
    ] {
        let outcome = env.call("web_fetch", args.clone()).await;
        let error = error_of(&outcome);
        assert_eq!(
            (error.code, error.message.as_str()),
            (code, message),
            "{args}"
        );
    }
    let invalid = env
        .call(
            "web_fetch",
            json!({"url": "https://docs.rs/", "method": "PUT"}),
        )
        .await;
    assert_eq!(error_of(&invalid).code, ToolErrorCode::InvalidArguments);
    assert!(env.asked().is_empty());
}

#[tokio::test]
async fn the_tool_tells_the_model_and_check_its_policy() {
    let env_options = options(&["docs.rs".to_owned(), "*.python.org".to_owned()], &[]);
    let tools = golem_web_tools::web_tools(&env_options, None).unwrap();
    let fetch = &tools[0];
    assert_eq!(fetch.name(), "web_fetch");
    assert_eq!(
        fetch.approval_policy().as_deref(),
        Some("pre-approved for docs.rs, *.python.org; other hosts ask")
    );
    assert!(
        fetch
            .description()
            .contains("Fetches from docs.rs, *.python.org are pre-approved"),
        "{}",
        fetch.description()
    );
    let schema = fetch.input_schema();
    assert_eq!(schema["required"], json!(["url"]));
    assert_eq!(
        schema["properties"]["method"]["enum"],
        json!(["GET", "POST"])
    );
    assert!(
        schema["properties"]["timeout"]["description"]
            .as_str()
            .unwrap()
            .contains("at most 30"),
        "{schema}"
    );
    let none = golem_web_tools::web_tools(&WebToolsetConfig::default(), None).unwrap();
    assert_eq!(
        none[0].approval_policy().as_deref(),
        Some("ask (no host in allow)")
    );
}
