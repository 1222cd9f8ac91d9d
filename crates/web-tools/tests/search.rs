//! `web_search` against a local fake of each backend's API: the request each one gets (path,
//! query, key header, body) and the table made of its answer; no backend, a missing key and a
//! backend's refusal are errors that name what to fix.

use golem_protocol::{DecidedBy, ToolErrorCode, ToolStatus};
use golem_web_tools::{SearchBackend, WebSearchConfig, WebToolsetConfig};
use serde_json::{Value, json};

use super::server::{Answer, Received, Server};
use super::{Env, error_of};

fn env(backend: SearchBackend, server: &Server, key: Option<&str>) -> Env {
    Env::with_key(
        WebToolsetConfig {
            search: Some(WebSearchConfig {
                backend,
                url: Some(server.url("")),
            }),
            ..WebToolsetConfig::default()
        },
        key,
    )
}

/// The query parameters of a request target.
fn query(request: &Received) -> Vec<(String, String)> {
    let url = url::Url::parse(&format!("http://x{}", request.target)).unwrap();
    url.query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn rows(value: &golem_protocol::ToolResultValue) -> Vec<Value> {
    value.data["rows"].as_array().unwrap().clone()
}

#[tokio::test]
async fn searxng_json_api() {
    let server = Server::start(|request| {
        if !request.target.starts_with("/search?") {
            return Answer::status(404, "text/plain", "no");
        }
        let results: Vec<Value> = (1..=8)
            .map(|i| {
                json!({"title": format!("Result {i}"), "url": format!("https://r{i}.example/"),
                            "content": format!("snippet {i}"), "engine": "x"})
            })
            .collect();
        Answer::ok(
            "application/json",
            json!({"query": "rust async", "results": results}).to_string(),
        )
    })
    .await;
    let env = env(SearchBackend::Searxng, &server, None);
    let outcome = env
        .call(
            "web_search",
            json!({"query": "rust async", "numResults": 3}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy), "pre-approved");
    assert!(env.asked().is_empty());
    let value = outcome.value;
    assert_eq!(value.kind, "table");
    let columns: Vec<&str> = value.data["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["title", "url", "snippet"]);
    assert_eq!(
        rows(&value),
        (1..=3)
            .map(
                |i| json!({"title": format!("Result {i}"), "url": format!("https://r{i}.example/"),
                            "snippet": format!("snippet {i}")})
            )
            .collect::<Vec<_>>()
    );
    assert_eq!(
        value.summary.as_deref(),
        Some("3 results for \"rust async\" (SearXNG)")
    );
    let request = &server.received()[0];
    assert_eq!(request.method, "GET");
    assert_eq!(
        query(request),
        [
            ("q".to_owned(), "rust async".to_owned()),
            ("format".to_owned(), "json".to_owned())
        ]
    );
    // Five by default.
    let outcome = env.call("web_search", json!({"query": "x"})).await;
    assert_eq!(rows(&outcome.value).len(), 5);
}

#[tokio::test]
async fn brave_web_search_api() {
    let server = Server::start(|request| {
        if request.header("x-subscription-token") != Some("brave-key")
            || !request.target.starts_with("/res/v1/web/search?")
        {
            return Answer::status(401, "application/json", r#"{"error": "unauthorized"}"#);
        }
        Answer::ok(
            "application/json",
            json!({"type": "search", "web": {"results": [
                {"title": "The Rust Book", "url": "https://doc.rust-lang.org/book/",
                 "description": "Learn <strong>Rust</strong> &amp; more"}
            ]}})
            .to_string(),
        )
    })
    .await;
    let outcome = env(SearchBackend::Brave, &server, Some("brave-key"))
        .call("web_search", json!({"query": "rust book", "numResults": 7}))
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert_eq!(
        rows(&outcome.value),
        [
            json!({"title": "The Rust Book", "url": "https://doc.rust-lang.org/book/",
                "snippet": "Learn Rust & more"})
        ]
    );
    assert_eq!(
        outcome.value.summary.as_deref(),
        Some("1 result for \"rust book\" (Brave Search)")
    );
    let request = &server.received()[0];
    assert_eq!(
        query(request),
        [
            ("q".to_owned(), "rust book".to_owned()),
            ("count".to_owned(), "7".to_owned())
        ]
    );
    assert_eq!(request.header("accept"), Some("application/json"));

    let wrong_key = env(SearchBackend::Brave, &server, Some("nope"))
        .call("web_search", json!({"query": "rust"}))
        .await;
    let error = error_of(&wrong_key);
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert_eq!(
        error.message,
        format!(
            "Brave Search at {} answered 401 Unauthorized (is the API key in BRAVE_API_KEY \
             right?): {{\"error\": \"unauthorized\"}}",
            server.url("/")
        )
    );
}

#[tokio::test]
async fn tavily_search_api() {
    let server = Server::start(|request| {
        if request.method != "POST"
            || request.target != "/search"
            || request.header("authorization") != Some("Bearer tvly-key")
        {
            return Answer::status(401, "application/json", "{}");
        }
        let body: Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(body, json!({"query": "golem forge", "max_results": 2}));
        Answer::ok(
            "application/json",
            json!({"query": "golem forge", "results": [
                {"title": "A", "url": "https://a.example/", "content": "first", "score": 0.9},
                {"title": "B", "url": "https://b.example/", "content": "second", "score": 0.5},
            ]})
            .to_string(),
        )
    })
    .await;
    let outcome = env(SearchBackend::Tavily, &server, Some("tvly-key"))
        .call(
            "web_search",
            json!({"query": "golem forge", "numResults": 2}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert_eq!(rows(&outcome.value).len(), 2);
    assert_eq!(rows(&outcome.value)[1]["snippet"], "second");
    assert_eq!(
        server.received()[0].header("content-type"),
        Some("application/json")
    );
}

#[tokio::test]
async fn missing_backend_or_key_and_refusals_say_what_to_fix() {
    let none = Env::new(WebToolsetConfig::default());
    let error = error_of(&none.call("web_search", json!({"query": "x"})).await);
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert_eq!(
        error.message,
        "web_search has no search backend: set toolsets.web.search in the worker file \
         (backend: searxng with the url of an instance, or brave or tavily with BRAVE_API_KEY \
         or TAVILY_API_KEY in the environment)"
    );

    let server =
        Server::start(|_| Answer::status(403, "text/html", "<h1>403 Forbidden</h1>")).await;
    let no_key = env(SearchBackend::Tavily, &server, None);
    let error = error_of(&no_key.call("web_search", json!({"query": "x"})).await);
    assert_eq!(
        error.message,
        "web_search uses Tavily (toolsets.web.search.backend: tavily), which needs an API key \
         in the environment variable TAVILY_API_KEY; it is not set"
    );
    assert!(server.received().is_empty());

    let searxng = env(SearchBackend::Searxng, &server, None);
    let error = error_of(&searxng.call("web_search", json!({"query": "x"})).await);
    assert!(
        error
            .message
            .contains("answered 403 Forbidden (does the instance allow the JSON format?"),
        "{}",
        error.message
    );
    let blank = error_of(&searxng.call("web_search", json!({"query": "  "})).await);
    assert_eq!(blank.code, ToolErrorCode::InvalidArguments);
}

#[test]
fn a_searxng_backend_needs_a_url() {
    let err = golem_web_tools::web_tools(
        &WebToolsetConfig {
            search: Some(WebSearchConfig {
                backend: SearchBackend::Searxng,
                url: None,
            }),
            ..WebToolsetConfig::default()
        },
        None,
    )
    .err()
    .unwrap();
    assert_eq!(
        err.to_string(),
        "toolsets.web.search.url is needed for the searxng backend (the address of the \
         instance, such as http://127.0.0.1:8888)"
    );
}
