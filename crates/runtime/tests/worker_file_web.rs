//! `toolsets.web` in worker files: every key and its default, and each mistake (an unknown key,
//! a bad host pattern, a bad backend, a SearXNG backend without its address) as an error that
//! names the file, the line and the key; and the tools a worker with it gets.

use std::path::Path;
use std::sync::Arc;

use golem_core::approval::{ApprovalController, ApprovalMode};
use golem_core::bus::UiEventBus;
use golem_core::interrupt::InterruptSignal;
use golem_core::ui::RuntimeUI;
use golem_llm::resolve::ModelResolver;
use golem_runtime::budget::BudgetLimits;
use golem_runtime::config::ProgramConfig;
use golem_runtime::launch::{SessionEnv, WorkerFrame};
use golem_runtime::registry::WorkerRegistry;
use golem_runtime::tree::WorkerTree;
use golem_runtime::worker::{
    WebSearchConfig, WebToolsetConfig, WorkerDefinition, WorkerFileError, parse_worker,
};
use golem_sandbox::Sandbox;
use golem_web_tools::{HostPattern, PrivateHost, SearchBackend};

fn parse(yaml: &str) -> Result<WorkerDefinition, WorkerFileError> {
    parse_worker(
        &format!("---\n{yaml}---\nHi.\n"),
        Path::new("greeter.worker"),
    )
}

fn web(yaml: &str) -> WebToolsetConfig {
    parse(yaml)
        .unwrap_or_else(|e| panic!("{e}\n{yaml}"))
        .toolsets
        .web
        .unwrap_or_else(|| panic!("no web toolset: {yaml}"))
}

fn check_err(yaml: &str, expected: &str) {
    let err = parse(yaml).expect_err(yaml);
    assert_eq!(
        err.to_string(),
        format!("worker file greeter.worker, {expected}"),
        "{yaml}"
    );
}

#[test]
fn the_key_enables_the_toolset_with_its_defaults() {
    for yaml in [
        "name: greeter\ntoolsets:\n  web:\n",
        "name: greeter\ntoolsets:\n  web: {}\n",
    ] {
        assert_eq!(
            web(yaml),
            WebToolsetConfig {
                allow: vec![],
                private_hosts: vec![],
                max_bytes: 2_000_000,
                timeout: 30,
                search: None,
            }
        );
    }
    assert_eq!(
        parse("name: greeter\ntoolsets:\n  filesystem:\n")
            .unwrap()
            .toolsets
            .web,
        None
    );
}

#[test]
fn every_key_of_the_issue() {
    let config = web(r#"name: greeter
toolsets:
  web:
    allow: ["docs.rs", "*.python.org", "127.0.0.1:8080"]
    private_hosts: ["127.0.0.1", "10.0.0.0/8", "intranet.example"]
    max_bytes: 1000
    timeout: 5
    search: { backend: searxng, url: "http://127.0.0.1:8888" }
"#);
    let allow = |text: &str| HostPattern::parse(text).unwrap();
    let private = |text: &str| PrivateHost::parse(text).unwrap();
    assert_eq!(
        config,
        WebToolsetConfig {
            allow: vec![
                allow("docs.rs"),
                allow("*.python.org"),
                allow("127.0.0.1:8080")
            ],
            private_hosts: vec![
                private("127.0.0.1"),
                private("10.0.0.0/8"),
                private("intranet.example")
            ],
            max_bytes: 1000,
            timeout: 5,
            search: Some(WebSearchConfig {
                backend: SearchBackend::Searxng,
                url: Some("http://127.0.0.1:8888".into()),
            }),
        }
    );
    let brave = web("name: greeter\ntoolsets:\n  web:\n    search: { backend: brave }\n");
    assert_eq!(
        brave.search,
        Some(WebSearchConfig {
            backend: SearchBackend::Brave,
            url: None
        })
    );
    let tavily = web(
        "name: greeter\ntoolsets:\n  web:\n    search:\n      backend: tavily\n      url: http://127.0.0.1:9\n",
    );
    assert_eq!(
        tavily.search.unwrap().url.as_deref(),
        Some("http://127.0.0.1:9")
    );
}

#[test]
fn mistakes_name_the_file_the_line_and_the_key() {
    for (yaml, expected) in [
        (
            "name: greeter\ntoolsets:\n  web: { allowed: [docs.rs] }\n",
            "line 4: unknown key `allowed` in `toolsets.web` (did you mean `allow`?)",
        ),
        (
            "name: greeter\ntoolsets:\n  webb: {}\n",
            "line 4: unknown key `webb` in `toolsets` (did you mean `web`?)",
        ),
        (
            "name: greeter\ntoolsets:\n  web:\n    allow:\n      - docs.rs\n      - https://python.org\n",
            "line 7: `toolsets.web.allow[1]` must be a host such as \"docs.rs\", \"*.python.org\" or \
             \"127.0.0.1:8080\": `https://python.org`: write the host only, without `https://` \
             (allow lists hosts, and web_fetch takes http and https)",
        ),
        (
            "name: greeter\ntoolsets:\n  web: { allow: [\"docs.*\"] }\n",
            "line 4: `toolsets.web.allow[0]` must be a host such as \"docs.rs\", \"*.python.org\" or \
             \"127.0.0.1:8080\": `docs.*`: `*` may only start a pattern, as `*.` before a domain \
             (`*.python.org` for its subdomains)",
        ),
        (
            "name: greeter\ntoolsets:\n  web: { allow: docs.rs }\n",
            "line 4: `toolsets.web.allow` must be a list, found \"docs.rs\"",
        ),
        (
            "name: greeter\ntoolsets:\n  web: { private_hosts: [\"localhost:8080\"] }\n",
            "line 4: `toolsets.web.private_hosts[0]` must be a host, an address or a network such as \
             \"intranet.example\", \"10.1.2.3\" or \"10.0.0.0/8\": `localhost:8080`: private_hosts \
             lists hosts without ports (a port other than 80 and 443 is written in allow)",
        ),
        (
            "name: greeter\ntoolsets:\n  web: { max_bytes: 0 }\n",
            "line 4: `toolsets.web.max_bytes` must be at least 1 (bytes), found \"0\"",
        ),
        (
            "name: greeter\ntoolsets:\n  web: { timeout: 0 }\n",
            "line 4: `toolsets.web.timeout` must be at least 1 (seconds), found \"0\"",
        ),
        (
            "name: greeter\ntoolsets:\n  web: { timeout: soon }\n",
            "line 4: `toolsets.web.timeout` must be a whole number, found \"soon\"",
        ),
        (
            "name: greeter\ntoolsets:\n  web:\n    search: { backend: google }\n",
            "line 5: `toolsets.web.search.backend` must be one of `searxng`, `brave`, `tavily`, \
             found \"google\"",
        ),
        (
            "name: greeter\ntoolsets:\n  web:\n    search: { backend: brave, key: x }\n",
            "line 5: unknown key `key` in `toolsets.web.search` (expected one of `backend`, `url`)",
        ),
        (
            "name: greeter\ntoolsets:\n  web:\n    search: { backend: brave, url: \"api.search.brave.com\" }\n",
            "line 5: `toolsets.web.search.url` must be an http or https URL such as \
             http://127.0.0.1:8888, found \"api.search.brave.com\" (relative URL without a base)",
        ),
    ] {
        check_err(yaml, expected);
    }
}

#[test]
fn a_searxng_backend_needs_its_url() {
    let err = parse("name: greeter\ntoolsets:\n  web:\n    search:\n      backend: searxng\n")
        .expect_err("no url");
    let WorkerFileError::Invalid {
        line, key, message, ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(key.as_deref(), Some("toolsets.web.search"), "{err}");
    assert!((5..=6).contains(line), "{err}");
    assert_eq!(
        message,
        "`toolsets.web.search` must give `url` for the searxng backend (the address of the \
         instance, such as http://127.0.0.1:8888)"
    );
}

#[test]
fn a_worker_with_the_toolset_gets_web_fetch_and_web_search() {
    let dir = tempfile::tempdir().unwrap();
    let worker = parse(
        "name: greeter\ntoolsets:\n  web:\n    allow: [docs.rs]\n    search: { backend: searxng, url: \"http://127.0.0.1:9\" }\n",
    )
    .unwrap();
    let config = ProgramConfig::discover(dir.path()).unwrap();
    let registry = WorkerRegistry::discover(&config, dir.path()).unwrap();
    let env = Arc::new(SessionEnv {
        resolver: ModelResolver::new(config.providers.clone()),
        max_depth: config.delegation.max_depth,
        redactor: SessionEnv::secrets_of(&config),
        config: Arc::new(config),
        registry: Arc::new(registry),
        controller: ApprovalController::new(ApprovalMode::AutoDeny),
        ui: RuntimeUI::new(UiEventBus::new()),
        interrupt: InterruptSignal::new(),
        observer: None,
        cli_model: None,
        env_model: None,
        max_iterations: None,
        record: None,
        ready_model: None,
        jail_helper: None,
        tree: WorkerTree::new(RuntimeUI::new(UiEventBus::new())),
        budget: BudgetLimits::default(),
        undo: None,
        client_mcp: None,
    });
    let sandbox = Sandbox::open(dir.path(), &[]).unwrap();
    let tools =
        golem_runtime::launch::build_tools(&env, &worker, &sandbox, &WorkerFrame::default())
            .unwrap();
    let names: Vec<&str> = tools.all().map(|t| t.name()).collect();
    assert_eq!(names, ["web_fetch", "web_search"]);
    let policies: Vec<String> = tools.all().map(|t| t.approval_policy().unwrap()).collect();
    assert_eq!(
        policies,
        [
            "pre-approved for docs.rs; other hosts ask",
            "pre-approved (searxng at http://127.0.0.1:9/)"
        ]
    );
}
