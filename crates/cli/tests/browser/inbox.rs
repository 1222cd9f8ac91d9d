//! The approval inbox page (`serve --inbox`): a write parked by `run --approval defer` is listed
//! with its diff preview; Approve on the page continues the session in the background, which
//! writes the file and settles the entry (gone from the page and from `inbox --json`); Deny
//! with a note tells the model and writes nothing; a parked batch item goes on through its
//! batch, which records its result. After an answer the page confirms it and says how the
//! session went on (completed, waiting again, failed), also after a reload, at a desktop's
//! width and a phone's. A `serve` page and an inbox page open in one browser each keep their
//! own token cookie: visiting the second does not log the first out.

use std::process::Output;
use std::time::{Duration, Instant};

use golem_testkit::mock::{MockServer, Reply};

use crate::harness::{
    HEIGHT, LIMIT, Serve, Ui, WIDTHS, WIRE, fs_worker, project, require_browser, tid, write_args,
};
use golem_testkit::cli::{TestEnv, model_for, provider_env};

/// `golem-forge run WORKER write it --approval defer`: parks the write (exit 4).
fn park_a_write(env: &TestEnv, server: &MockServer, worker: &str) {
    let output = env
        .std_command()
        .args(["run", worker, "write", "it", "--approval", "defer"])
        .args(["--model", model_for(WIRE)])
        .envs(provider_env(WIRE, server))
        .output()
        .expect("golem-forge runs");
    assert_eq!(
        output.status.code(),
        Some(4),
        "the run parks: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `golem-forge inbox --json` in the project: one JSON line per entry.
fn inbox_json(env: &TestEnv) -> Output {
    env.std_command()
        .current_dir(env.path().join("proj"))
        .args(["inbox", "--json"])
        .output()
        .expect("golem-forge inbox runs")
}

/// `serve --inbox --port 0` in the project, the provider pointed at `server`, opened in a
/// browser; waits for the list to be read.
fn open_inbox(name: &str, env: &TestEnv, server: &MockServer) -> Ui {
    require_browser();
    let serve = Serve::start_in(
        env,
        &env.path().join("proj"),
        &provider_env(WIRE, server),
        &["serve", "--inbox", "--port", "0"],
    );
    let ui = Ui::attach(name, serve);
    ui.goto_token_url();
    ui.wait_element(&format!("{}[data-loaded=\"true\"]", tid("inbox")));
    ui
}

/// Waits (polling, up to [`LIMIT`]) for `check`.
fn wait_until(what: &str, ui: &Ui, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !check() {
        assert!(
            Instant::now() < deadline,
            "{what} within {LIMIT:?}\n{}",
            ui.describe()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_parked_write_is_approved_on_the_inbox_page_and_runs_once() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[(
            "call_1",
            "write_file",
            write_args("/out/a.txt", "hello inbox\n"),
        )]),
        WIRE.text("Written."),
    ]);
    park_a_write(&env, &server, &worker);
    let ui = open_inbox(
        "a_parked_write_is_approved_on_the_inbox_page_and_runs_once",
        &env,
        &server,
    );
    let entry = format!(
        "{}[data-tool=\"write_file\"][data-state=\"waiting\"]",
        tid("inbox-entry")
    );
    ui.wait_element(&entry);
    let text = ui.text(&entry);
    assert!(
        text.contains("/out/a.txt") && text.contains("scribe"),
        "{text}"
    );
    // The preview is the session page's diff, the new line added.
    ui.wait_text(&format!("{entry} .diff-rows .drow.add"), "hello inbox");

    ui.click(&tid("inbox-approve"));
    wait_until("the file written", &ui, || {
        env.read("proj/out/a.txt").as_deref() == Some("hello inbox\n")
    });
    ui.wait_gone(&tid("inbox-entry"));
    ui.wait_element(&tid("inbox-empty"));
    let listed = inbox_json(&env);
    assert!(listed.status.success());
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout),
        "",
        "the entry is settled"
    );
    // The entry leaves when the call is settled; the model is asked once more after it ran.
    wait_until("the model asked again", &ui, || {
        server.requests().len() == 2
    });
}

#[test]
fn a_denial_with_a_note_on_the_inbox_page_reaches_the_model() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[("call_1", "write_file", write_args("/out/a.txt", "x\n"))]),
        WIRE.text("Understood."),
    ]);
    park_a_write(&env, &server, &worker);
    let ui = open_inbox(
        "a_denial_with_a_note_on_the_inbox_page_reaches_the_model",
        &env,
        &server,
    );
    ui.click(&tid("inbox-deny"));
    ui.fill(&tid("inbox-deny-note"), "write b.txt instead");
    ui.click(&tid("inbox-deny-confirm"));
    ui.wait_gone(&tid("inbox-entry"));
    wait_until("the model asked again", &ui, || {
        server.requests().len() == 2
    });
    let sent = server.requests()[1].body.to_string();
    assert!(
        sent.contains("write b.txt instead"),
        "the note reaches the model: {sent}"
    );
    assert!(env.read("proj/out/a.txt").is_none(), "nothing written");
    assert_eq!(String::from_utf8_lossy(&inbox_json(&env).stdout), "");
}

#[test]
fn a_parked_batch_item_approved_on_the_page_is_recorded_in_its_batch() {
    let env = TestEnv::new();
    project(&env, &fs_worker());
    env.write(
        "proj/items.jsonl",
        "{\"id\": \"b\", \"input\": \"write b\"}\n",
    );
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[("call_b", "write_file", write_args("/out/b.txt", "from b\n"))]),
        WIRE.text("Wrote b."),
    ]);
    let parked = env
        .std_command()
        .current_dir(env.path().join("proj"))
        .args(["batch", "scribe.worker", "--input", "items.jsonl"])
        .args(["--approval", "defer", "--model", model_for(WIRE)])
        .envs(provider_env(WIRE, &server))
        .output()
        .expect("golem-forge batch runs");
    assert_eq!(
        parked.status.code(),
        Some(4),
        "the item parks: {}",
        String::from_utf8_lossy(&parked.stderr)
    );
    let ui = open_inbox(
        "a_parked_batch_item_approved_on_the_page_is_recorded_in_its_batch",
        &env,
        &server,
    );
    let text = ui.wait_text(&tid("inbox-entry"), "item b");
    let batch = text
        .split("batch ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .expect("the entry names its batch")
        .to_owned();
    ui.click(&tid("inbox-approve"));
    ui.wait_gone(&tid("inbox-entry"));
    // The entry leaves when the call is settled; the result is recorded when the item ends.
    let latest = || {
        let results = env
            .std_command()
            .current_dir(env.path().join("proj"))
            .args(["batch", "results", &batch])
            .output()
            .expect("golem-forge batch results runs");
        let results = String::from_utf8_lossy(&results.stdout).into_owned();
        results
            .lines()
            .next()
            .and_then(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .unwrap_or_default()
    };
    wait_until("the item's result recorded", &ui, || {
        latest()["status"] == "completed"
    });
    assert_eq!(latest()["answer"], "Wrote b.");
    assert_eq!(env.read("proj/out/b.txt").as_deref(), Some("from b\n"));
}

#[test]
fn a_serve_page_and_the_inbox_page_in_one_browser_keep_their_cookies() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("unused"));
    let ui = Ui::open("both_cookies", &env, &server, &worker, &[]);
    let inbox = Serve::start_in(
        &env,
        &env.path().join("proj"),
        &provider_env(WIRE, &server),
        &["serve", "--inbox", "--port", "0"],
    );
    assert_ne!(inbox.addr.port(), ui.serve.addr.port());
    let loaded = format!("{}[data-loaded=\"true\"]", tid("inbox"));
    ui.goto_url(&inbox.url);
    ui.wait_element(&loaded);
    // Back on the session page, without the token: its own cookie is still there.
    ui.goto("/");
    ui.wait_connected();
    // And the inbox's too.
    ui.goto_url(&format!("{}/", inbox.origin));
    ui.wait_element(&loaded);
}

/// Waits for the page's confirmation of entry `id` with `outcome`; returns its text, after
/// checking that it is drawn inside the viewport.
fn wait_answered(ui: &Ui, id: u64, outcome: &str) -> String {
    let selector = format!(
        "{}[data-id=\"{id}\"][data-outcome=\"{outcome}\"]",
        tid("inbox-answered")
    );
    let text = ui.wait_text(&selector, "#");
    let inside = ui.js(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();
         return r.width > 0 && r.left >= 0 && r.right <= innerWidth + 0.5;",
        vec![serde_json::json!(selector)],
    );
    assert_eq!(inside, true, "{selector}\n{}", ui.describe());
    text
}

/// Parks a write in `env`, opens the inbox page at `width` and waits for the entry.
fn parked_at(name: &str, width: u32, env: &TestEnv, server: &MockServer) -> Ui {
    let worker = project(env, &fs_worker());
    park_a_write(env, server, &worker);
    let ui = open_inbox(&format!("{name}_{width}"), env, server);
    ui.set_viewport(width, HEIGHT);
    ui.wait_element(&format!("{}[data-state=\"waiting\"]", tid("inbox-entry")));
    ui
}

#[test]
fn after_an_approval_the_inbox_page_says_the_session_completed() {
    for width in WIDTHS {
        let env = TestEnv::new();
        let server = MockServer::start_blocking(vec![
            WIRE.tool_calls(&[("call_1", "write_file", write_args("/out/a.txt", "a\n"))]),
            WIRE.text("Written."),
        ]);
        let ui = parked_at("approved_completed", width, &env, &server);
        assert!(!ui.exists(&tid("inbox-answered")), "nothing answered yet");
        ui.click(&tid("inbox-approve"));
        ui.wait_element(&tid("inbox-answered"));
        let said = wait_answered(&ui, 1, "completed");
        assert!(said.starts_with("Approved #1 write_file"), "{said}");
        assert!(
            said.contains("the session continued and completed"),
            "{said}"
        );
        assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("a\n"));
        // The server remembers it: a reload shows it too.
        ui.reload();
        wait_answered(&ui, 1, "completed");
        ui.wait_element(&tid("inbox-empty"));
    }
}

#[test]
fn after_a_denial_the_inbox_page_says_how_the_session_went_on() {
    for width in WIDTHS {
        let env = TestEnv::new();
        let server = MockServer::start_blocking(vec![
            WIRE.tool_calls(&[("call_1", "write_file", write_args("/out/a.txt", "a\n"))]),
            WIRE.text("Understood."),
        ]);
        let ui = parked_at("denied_completed", width, &env, &server);
        ui.click(&tid("inbox-deny"));
        ui.fill(&tid("inbox-deny-note"), "not now");
        ui.click(&tid("inbox-deny-confirm"));
        let said = wait_answered(&ui, 1, "completed");
        assert!(said.starts_with("Denied #1 write_file"), "{said}");
        assert!(
            said.contains("the session continued and completed"),
            "{said}"
        );
        assert_eq!(
            ui.attr(&tid("inbox-answered"), "data-approved").as_deref(),
            Some("false")
        );
        assert!(env.read("proj/out/a.txt").is_none());
    }
}

#[test]
fn a_session_that_parks_again_or_fails_is_shown_as_such() {
    for width in WIDTHS {
        let env = TestEnv::new();
        let server = MockServer::start_blocking(vec![
            WIRE.tool_calls(&[("call_1", "write_file", write_args("/out/a.txt", "a\n"))]),
            // After the first write, a second one: parked again.
            WIRE.tool_calls(&[("call_2", "write_file", write_args("/out/b.txt", "b\n"))]),
            // After the second, the model's API refuses: the turn fails.
            Reply::json(
                400,
                r#"{"error": {"message": "bad request", "type": "invalid_request_error"}}"#,
            ),
        ]);
        let ui = parked_at("parks_again_then_fails", width, &env, &server);
        ui.click(&tid("inbox-approve"));
        let said = wait_answered(&ui, 1, "waiting");
        assert!(
            said.contains("the session continued and is waiting again (#2, below)"),
            "{said}"
        );
        ui.wait_element(&format!(
            "{}[data-id=\"2\"][data-state=\"waiting\"]",
            tid("inbox-entry")
        ));
        ui.click(&tid("inbox-approve"));
        let said = wait_answered(&ui, 2, "failed");
        assert!(said.starts_with("Approved #2 write_file"), "{said}");
        assert!(said.contains("continued and failed"), "{said}");
        // Newest first; the first answer's outcome is kept.
        let order = ui.js(
            "return [...document.querySelectorAll('[data-testid=\"inbox-answered\"]')].map(e => e.dataset.id + ':' + e.dataset.outcome);",
            vec![],
        );
        assert_eq!(order, serde_json::json!(["2:failed", "1:waiting"]));
        assert_eq!(env.read("proj/out/b.txt").as_deref(), Some("b\n"));
    }
}
