//! The browser harness: `golem-forge serve` as a subprocess against the mock model, a local
//! chromedriver (a free port, its own process group) and a headless Chromium with a fresh
//! profile, driven through WebDriver by `fantoccini` behind a blocking facade. Every process is
//! killed when its guard drops, also when a test panics; a panicking test first leaves a
//! screenshot, the page's console log, its DOM and the server's stderr under
//! `target/browser-artifacts/<test name>/` and prints where.
//!
//! Waiting is polling with a deadline ([`LIMIT`]) and a message saying what was awaited and what
//! the page showed instead; there are no fixed sleeps.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand, WindowHandle};
use fantoccini::{Client, ClientBuilder, Locator};
use golem_testkit::Wire;
use golem_testkit::mock::MockServer;
use serde_json::{Value, json};

use crate::common::{TestEnv, model_for, provider_env};

/// How long anything may take before a test gives up (never reached when things work).
pub const LIMIT: Duration = Duration::from_secs(20);
/// The pause between two looks at the page while waiting.
const POLL: Duration = Duration::from_millis(40);

/// Where Debian's packages put the browser and its WebDriver.
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const INSTALL: &str = "apt-get install -y chromium chromium-driver";

/// The wire every browser test speaks to the mock model.
pub const WIRE: Wire = Wire::OpenAi;

// ---- fixtures ----

/// The worker of the fixtures.
pub const WORKER: &str = "scribe";

/// The worker `scribe` with `front_matter` (YAML lines, each ending in a newline).
pub fn worker(front_matter: &str) -> String {
    format!(
        "---\nname: {WORKER}\ndescription: the {WORKER} worker\n{front_matter}---\nYou are the {WORKER} worker.\n"
    )
}

/// `scribe` with one read-write zone `out` whose writes ask, and the filesystem tools (whose
/// read-only tools the user may run by hand).
pub fn fs_worker() -> String {
    worker(
        "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      approval: { write: ask }\ntoolsets:\n  filesystem: {}\n",
    )
}

/// Writes the project `proj/` (a program config, the zone directory `out`, `scribe.worker` with
/// `worker_text`); returns the worker file's path relative to the test's directory.
pub fn project(env: &TestEnv, worker_text: &str) -> String {
    env.write(
        "proj/golem-forge.config.yaml",
        "delegation:\n  max_depth: 5\n",
    );
    env.mkdir("proj/out");
    let path = format!("proj/{WORKER}.worker");
    env.write(&path, worker_text);
    path
}

/// The arguments of a `write_file` call.
pub fn write_args(path: &str, content: &str) -> Value {
    json!({"path": path, "content": content})
}

// ---- processes ----

/// Kills the process group `pgid` (a child started with `process_group(0)`, and whatever it
/// started); an error (already gone) is ignored.
fn kill_group(pgid: u32) {
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// A free TCP port on 127.0.0.1 (free when asked; the caller binds it right away).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The last `limit` bytes of the file at `path` (lossy), for failure messages.
pub fn tail(path: &Path, limit: usize) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let from = bytes.len().saturating_sub(limit);
    String::from_utf8_lossy(&bytes[from..]).into_owned()
}

/// `golem-forge serve` running in the background; killed (with its process group) on drop.
pub struct Serve {
    child: Child,
    /// The first line it printed: `http://HOST:PORT/?token=TOKEN`.
    pub url: String,
    /// `http://HOST:PORT` (no trailing slash).
    pub origin: String,
    /// `HOST:PORT`, as the `Host` header names it.
    pub authority: String,
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The token.
    pub token: String,
    /// Where its stderr goes.
    pub stderr: PathBuf,
}

impl Serve {
    /// `golem-forge serve WORKER --port 0 --model …` plus `extra`, in `env`'s clean
    /// environment with the OpenAI wire pointed at `server`; waits for the URL line.
    pub fn start(env: &TestEnv, server: &MockServer, worker: &str, extra: &[&str]) -> Self {
        let mut args = vec!["serve", worker, "--port", "0", "--model", model_for(WIRE)];
        args.extend_from_slice(extra);
        Self::start_with(env, &provider_env(WIRE, server), &args)
    }

    /// `golem-forge ARGS` with `envs` added to `env`'s clean environment; waits for the URL
    /// line on stdout.
    pub fn start_with(env: &TestEnv, envs: &[(&str, String)], args: &[&str]) -> Self {
        let stderr = env.path().join(format!(
            "serve-{}.stderr",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ));
        let stderr_file = std::fs::File::create(&stderr).expect("serve's stderr file");
        let mut child = env
            .std_command()
            .args(args)
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr_file)
            .process_group(0)
            .spawn()
            .expect("golem-forge starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(first)) = lines.next() {
                let _ = tx.send(first);
            }
            // The contract: nothing else goes to stdout; drain it anyway.
            for _ in lines {}
        });
        let first = match rx.recv_timeout(LIMIT) {
            Ok(line) => line,
            Err(e) => {
                kill_group(child.id());
                let _ = child.wait();
                panic!(
                    "`golem-forge {}` printed no URL on stdout ({e}); its stderr:\n{}",
                    args.join(" "),
                    tail(&stderr, 4000)
                );
            }
        };
        let (origin, token) = parse_url(&first).unwrap_or_else(|| {
            kill_group(child.id());
            panic!(
                "the first line on stdout is not http://HOST:PORT/?token=TOKEN: {first:?}; stderr:\n{}",
                tail(&stderr, 4000)
            )
        });
        let authority = origin.trim_start_matches("http://").to_owned();
        let addr: SocketAddr = authority
            .parse()
            .unwrap_or_else(|e| panic!("{authority}: not an address ({e})"));
        Self {
            child,
            url: first.clone(),
            origin,
            authority,
            addr,
            token,
            stderr,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it wrote to stderr so far (the end of it).
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr, 6000)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

/// `http://HOST:PORT/?token=TOKEN` → (`http://HOST:PORT`, `TOKEN`).
fn parse_url(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("http://")?;
    let (authority, query) = rest.split_once("/?token=")?;
    if authority.is_empty() || query.is_empty() || query.contains(['&', '#', ' ']) {
        return None;
    }
    Some((format!("http://{authority}"), query.to_owned()))
}

/// Fails with how to install them when Chromium or chromedriver is missing.
pub fn require_browser() {
    for (path, what) in [(CHROMIUM, "Chromium"), (CHROMEDRIVER, "chromedriver")] {
        assert!(
            Path::new(path).exists(),
            "{what} is missing ({path}): the browser tests need Debian's Chromium and its \
             WebDriver; install them with `{INSTALL}`"
        );
    }
}

/// chromedriver on a free port, in its own process group (with the browsers it starts); the
/// group is killed on drop.
struct Driver {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Driver {
    fn start(dir: &Path) -> Self {
        require_browser();
        let port = free_port();
        let log = dir.join("chromedriver.log");
        let log_file = std::fs::File::create(&log).expect("chromedriver log file");
        let mut child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("log file"))
            .stderr(log_file)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{CHROMEDRIVER} does not start ({e}); reinstall with `{INSTALL}`")
            });
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + LIMIT;
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "{CHROMEDRIVER} exited ({status}) before listening:\n{}",
                    tail(&log, 4000)
                );
            }
            if Instant::now() > deadline {
                kill_group(child.id());
                let _ = child.wait();
                panic!(
                    "{CHROMEDRIVER} did not listen on {addr} within {LIMIT:?}:\n{}",
                    tail(&log, 4000)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/"),
            log,
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

/// chromedriver's browser log (`goog:loggingPrefs` {"browser": "ALL"}): the console messages
/// and page errors since the last read.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({"type": "browser"}).to_string()),
        )
    }
}

// ---- the page ----

/// `[data-testid="ID"]`.
pub fn tid(id: &str) -> String {
    format!("[data-testid=\"{id}\"]")
}

/// One test's browser on one `serve`: a blocking facade over the WebDriver client.
///
/// Dropping it (also while a test panics) saves the artifacts when panicking, ends the
/// WebDriver session, then kills chromedriver (and the browser) and `serve`.
pub struct Ui {
    name: String,
    rt: tokio::runtime::Runtime,
    client: Option<Client>,
    /// The server under test.
    pub serve: Serve,
    driver: Driver,
    profile: tempfile::TempDir,
}

impl Ui {
    /// Starts `serve` on `worker` (with `extra` options) against `server`, a browser, and
    /// opens the token URL; waits until the page is connected.
    pub fn open(
        name: &str,
        env: &TestEnv,
        server: &MockServer,
        worker: &str,
        extra: &[&str],
    ) -> Self {
        require_browser();
        let serve = Serve::start(env, server, worker, extra);
        let ui = Self::attach(name, serve);
        ui.goto_token_url();
        ui.wait_connected();
        ui
    }

    /// A browser (nothing opened yet) for `serve`.
    pub fn attach(name: &str, serve: Serve) -> Self {
        let profile = tempfile::tempdir().expect("a profile directory");
        let driver = Driver::start(profile.path());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let user_data = profile.path().join("chromium");
        let caps: Capabilities = serde_json::from_value(json!({
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--window-size=1200,900",
                    format!("--user-data-dir={}", user_data.display()),
                ],
            },
        }))
        .expect("capabilities are a JSON object");
        let connect = async {
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps)
                .connect(&driver.url)
                .await
        };
        let client = match rt.block_on(async { tokio::time::timeout(LIMIT, connect).await }) {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => panic!(
                "no WebDriver session ({e}); chromedriver's log:\n{}",
                tail(&driver.log, 4000)
            ),
            Err(_) => panic!(
                "no WebDriver session within {LIMIT:?}; chromedriver's log:\n{}",
                tail(&driver.log, 4000)
            ),
        };
        let ui = Self {
            name: name.to_owned(),
            rt,
            client: Some(client),
            serve,
            driver,
            profile,
        };
        ui.call("set the window size", |c| async move {
            c.set_window_size(1200, 900).await
        });
        ui
    }

    fn client(&self) -> Client {
        self.client.clone().expect("the WebDriver session is open")
    }

    /// Runs one WebDriver call `what` (with a deadline); panics with its error.
    fn call<T, F, Fut>(&self, what: &str, f: F) -> T
    where
        F: FnOnce(Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, fantoccini::error::CmdError>>,
    {
        match self.try_call(f) {
            Ok(value) => value,
            Err(e) => panic!("WebDriver: {what}: {e}"),
        }
    }

    /// Runs one WebDriver call with a deadline; its error as text.
    fn try_call<T, F, Fut>(&self, f: F) -> Result<T, String>
    where
        F: FnOnce(Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, fantoccini::error::CmdError>>,
    {
        let client = self.client();
        self.rt
            .block_on(async { tokio::time::timeout(LIMIT, f(client)).await })
            .map_err(|_| format!("no answer within {LIMIT:?}"))?
            .map_err(|e| e.to_string())
    }

    /// Opens the URL `serve` printed (the token, then the redirect to `/`).
    pub fn goto_token_url(&self) {
        let url = self.serve.url.clone();
        self.call("open the token URL", |c| async move { c.goto(&url).await });
    }

    /// Opens `path` on the server (the cookie is already set).
    pub fn goto(&self, path: &str) {
        let url = format!("{}{path}", self.serve.origin);
        self.call("navigate", |c| async move { c.goto(&url).await });
    }

    /// Reloads the page.
    pub fn reload(&self) {
        self.call("reload", |c| async move { c.refresh().await });
    }

    /// The current URL.
    pub fn current_url(&self) -> String {
        self.call("the current URL", |c| async move { c.current_url().await })
            .to_string()
    }

    /// Opens a second window on the session's page and switches to it; returns the handles
    /// (first, second).
    pub fn open_second_window(&self) -> (WindowHandle, WindowHandle) {
        let first = self.call("the window", |c| async move { c.window().await });
        let second = self
            .call("a new window", |c| async move { c.new_window(false).await })
            .handle;
        self.switch_to(&second);
        self.goto("/");
        (first, second)
    }

    /// Switches to the window `handle`.
    pub fn switch_to(&self, handle: &WindowHandle) {
        let handle = handle.clone();
        self.call("switch windows", |c| async move {
            c.switch_to_window(handle).await
        });
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub fn js(&self, script: &str, args: Vec<Value>) -> Value {
        let script = script.to_owned();
        self.call(&format!("run script {script}"), |c| async move {
            c.execute(&script, args).await
        })
    }

    /// Like [`Ui::js`], with a script error as `None` (while the page reloads, say).
    fn try_js(&self, script: &str, args: Vec<Value>) -> Option<Value> {
        let script = script.to_owned();
        self.try_call(|c| async move { c.execute(&script, args).await })
            .ok()
    }

    /// Polls `check` until it gives a value; panics after [`LIMIT`] saying it waited for
    /// `what`, with what the page showed.
    pub fn wait<T>(&self, what: &str, mut check: impl FnMut(&Self) -> Option<T>) -> T {
        let deadline = Instant::now() + LIMIT;
        loop {
            if let Some(value) = check(self) {
                return value;
            }
            if Instant::now() > deadline {
                panic!(
                    "waited {LIMIT:?} for {what}; the page shows:\n{}",
                    self.describe()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Polls the JavaScript expression `expr` until it is truthy; returns its value.
    pub fn wait_js(&self, what: &str, expr: &str, args: Vec<Value>) -> Value {
        let script = format!("return ({expr});");
        self.wait(what, |ui| {
            let value = ui.try_js(&script, args.clone())?;
            truthy(&value).then_some(value)
        })
    }

    /// Waits until the WebSocket is open and the session so far received.
    pub fn wait_connected(&self) {
        self.wait_js(
            "the page to connect (body[data-connected=true])",
            "document.body && document.body.dataset.connected === 'true'",
            vec![],
        );
    }

    /// Waits until no turn runs (`app[data-busy=false]`).
    pub fn wait_idle(&self) {
        self.wait_js(
            "the turn to end (app[data-busy=false])",
            &format!(
                "(document.querySelector('{}') || {{}}).dataset?.busy === 'false'",
                tid("app")
            ),
            vec![],
        );
    }

    /// Waits until a turn runs (`app[data-busy=true]`).
    pub fn wait_busy(&self) {
        self.wait_js(
            "a turn to run (app[data-busy=true])",
            &format!(
                "(document.querySelector('{}') || {{}}).dataset?.busy === 'true'",
                tid("app")
            ),
            vec![],
        );
    }

    /// The `data-last-turn` of `app` (the last `turnEnded`'s status).
    pub fn last_turn(&self) -> Option<String> {
        self.attr(&tid("app"), "data-last-turn")
    }

    /// Whether an element matches `selector`.
    pub fn exists(&self, selector: &str) -> bool {
        truthy(&self.js(
            "return document.querySelector(arguments[0]) !== null;",
            vec![json!(selector)],
        ))
    }

    /// How many elements match `selector`.
    pub fn count(&self, selector: &str) -> usize {
        self.js(
            "return document.querySelectorAll(arguments[0]).length;",
            vec![json!(selector)],
        )
        .as_u64()
        .unwrap_or_default() as usize
    }

    /// The attribute `name` of the first element matching `selector`.
    pub fn attr(&self, selector: &str, name: &str) -> Option<String> {
        self.js(
            "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;",
            vec![json!(selector), json!(name)],
        )
        .as_str()
        .map(str::to_owned)
    }

    /// The text (`innerText`, else `textContent`) of every element matching `selector`.
    pub fn texts(&self, selector: &str) -> Vec<String> {
        let value = self.js(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText || e.textContent || '');",
            vec![json!(selector)],
        );
        value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|v| v.as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The text of the first element matching `selector` (empty if none).
    pub fn text(&self, selector: &str) -> String {
        self.texts(selector).into_iter().next().unwrap_or_default()
    }

    /// Waits for an element matching `selector` whose text contains `needle`; returns its text.
    pub fn wait_text(&self, selector: &str, needle: &str) -> String {
        self.wait(&format!("{selector} containing {needle:?}"), |ui| {
            ui.texts(selector).into_iter().find(|t| t.contains(needle))
        })
    }

    /// The texts of the chat messages of `role` (`user`, `assistant`).
    pub fn messages(&self, role: &str) -> Vec<String> {
        self.texts(&format!("{}[data-role=\"{role}\"]", tid("message")))
    }

    /// Waits for a message of `role` containing `needle`; returns its text.
    pub fn wait_message(&self, role: &str, needle: &str) -> String {
        self.wait_text(&format!("{}[data-role=\"{role}\"]", tid("message")), needle)
    }

    /// Waits for an element matching `selector` that is displayed; returns it.
    pub fn wait_element(&self, selector: &str) -> Element {
        self.wait(&format!("{selector} to be shown"), |ui| {
            let selector = selector.to_owned();
            ui.try_call(|c| async move {
                let found = c.find(Locator::Css(&selector)).await?;
                Ok(found.is_displayed().await?.then_some(found))
            })
            .ok()
            .flatten()
        })
    }

    /// Waits until nothing matches `selector`.
    pub fn wait_gone(&self, selector: &str) {
        self.wait(&format!("{selector} to go away"), |ui| {
            ui.try_js(
                "return document.querySelector(arguments[0]) === null;",
                vec![json!(selector)],
            )
            .filter(truthy)
        });
    }

    /// Clicks the element matching `selector` (once it is shown) as a user would.
    pub fn click(&self, selector: &str) {
        let element = self.wait_element(selector);
        self.call(&format!("click {selector}"), |_| async move {
            element.click().await
        });
    }

    /// Types `text` into the element matching `selector` (WebDriver key codes allowed).
    pub fn type_into(&self, selector: &str, text: &str) {
        let element = self.wait_element(selector);
        let text = text.to_owned();
        self.call(&format!("type into {selector}"), |_| async move {
            element.send_keys(&text).await
        });
    }

    /// Replaces the value of the field matching `selector` with `text`, typed; checks that the
    /// field holds it.
    pub fn fill(&self, selector: &str, text: &str) {
        let element = self.wait_element(selector);
        let typed = text.to_owned();
        self.call(&format!("fill {selector}"), |_| async move {
            element.clear().await?;
            // Select all and delete too, for fields a script keeps filled.
            element.send_keys("\u{E009}a\u{E000}\u{E003}").await?;
            element.send_keys(&typed).await
        });
        let value = self.js(
            "const e = document.querySelector(arguments[0]); return e ? e.value : null;",
            vec![json!(selector)],
        );
        assert_eq!(
            value.as_str(),
            Some(text),
            "{selector} holds what was typed\n{}",
            self.describe()
        );
    }

    /// Sends `text` from the message box (typed, then the send button) and waits for it to
    /// show as the user's message.
    pub fn send(&self, text: &str) {
        let before = self.messages("user").len();
        self.type_into(&tid("input"), text);
        self.click(&tid("send"));
        self.wait(&format!("the user message {text:?} to show"), |ui| {
            let shown = ui.messages("user");
            (shown.len() > before && shown.iter().skip(before).any(|m| m.contains(text)))
                .then_some(())
        });
    }

    /// Sends `text` and waits for the turn to end with an assistant message containing
    /// `answer`.
    pub fn turn(&self, text: &str, answer: &str) {
        self.send(text);
        self.wait_message("assistant", answer);
        self.wait_idle();
    }

    /// A summary of what the page shows (connection, busy, messages, tool cards, the approval
    /// dialog, notices), for failure messages.
    pub fn describe(&self) -> String {
        let script = r#"
            const q = (s, root) => [...(root || document).querySelectorAll(s)];
            const t = e => (e.innerText || e.textContent || '').slice(0, 400);
            const app = document.querySelector('[data-testid="app"]');
            return JSON.stringify({
                url: location.href,
                title: document.title,
                connected: document.body ? document.body.dataset.connected : null,
                busy: app ? app.dataset.busy : '(no app)',
                lastTurn: app ? app.dataset.lastTurn : null,
                messages: q('[data-testid="message"]').map(e => ({
                    role: e.dataset.role, streaming: e.dataset.streaming, text: t(e) })),
                toolCards: q('[data-testid="tool-card"]').map(e => ({
                    tool: e.dataset.tool, status: e.dataset.status, text: t(e) })),
                approval: q('[data-testid="approval"]').map(t),
                notices: q('[data-testid="notice"]').map(t),
                body: document.body ? t(document.body).slice(0, 300) : null,
            }, null, 1);
        "#;
        let page = match self.try_js(script, vec![]) {
            Some(Value::String(text)) => text,
            Some(other) => other.to_string(),
            None => "(the page cannot be read)".to_owned(),
        };
        format!(
            "{page}\n-- serve's stderr (end):\n{}",
            tail(&self.serve.stderr, 1500)
        )
    }

    /// The console messages since the last read, one per line.
    pub fn console_log(&self) -> Result<String, String> {
        let entries = self.try_call(|c| async move { c.issue_cmd(BrowserLog).await })?;
        let lines: Vec<String> = entries
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|e| {
                        format!(
                            "{} {} {}",
                            e["timestamp"],
                            e["level"].as_str().unwrap_or("?"),
                            e["message"].as_str().unwrap_or_default()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(lines.join("\n"))
    }

    /// Saves the screenshots (every window), the console log, the DOM and `serve`'s stderr
    /// under `target/browser-artifacts/<name>/`; returns the paths written.
    fn save_artifacts(&self) -> Vec<PathBuf> {
        let dir = artifacts_dir().join(&self.name);
        let _ = std::fs::remove_dir_all(&dir);
        if std::fs::create_dir_all(&dir).is_err() {
            return Vec::new();
        }
        let mut saved = Vec::new();
        let mut write = |file: &str, bytes: &[u8]| {
            let path = dir.join(file);
            if std::fs::write(&path, bytes).is_ok() {
                saved.push(path);
            }
        };
        if let Ok(log) = self.console_log() {
            write("console.log", log.as_bytes());
        }
        let current = self.try_call(|c| async move { c.window().await }).ok();
        let windows = self
            .try_call(|c| async move { c.windows().await })
            .unwrap_or_default();
        for (index, window) in windows.iter().enumerate() {
            let suffix = if Some(window) == current.as_ref() {
                String::new()
            } else {
                format!("-window{}", index + 1)
            };
            let handle = window.clone();
            if self
                .try_call(|c| async move { c.switch_to_window(handle).await })
                .is_err()
            {
                continue;
            }
            if let Ok(png) = self.try_call(|c| async move { c.screenshot().await }) {
                write(&format!("screenshot{suffix}.png"), &png);
            }
            if let Ok(html) = self.try_call(|c| async move { c.source().await }) {
                write(&format!("page{suffix}.html"), html.as_bytes());
            }
        }
        if let Some(window) = current {
            let _ = self.try_call(|c| async move { c.switch_to_window(window).await });
        }
        write("summary.json", self.describe().as_bytes());
        write(
            "serve.stderr",
            &std::fs::read(&self.serve.stderr).unwrap_or_default(),
        );
        write(
            "chromedriver.log",
            tail(&self.driver.log, 200_000).as_bytes(),
        );
        saved
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let saved = self.save_artifacts();
            eprintln!("browser test {} failed; artifacts:", self.name);
            for path in &saved {
                eprintln!("  {}", path.display());
            }
        }
        if let Some(client) = self.client.take() {
            let _ = self.rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(5), client.close()).await
            });
        }
        // The fields drop next: the runtime, `serve` (killed), chromedriver (killed with the
        // browser), the profile directory.
        let _ = &self.profile;
    }
}

/// `target/browser-artifacts` (next to the test's own temporary directory under `target/`).
pub fn artifacts_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("browser-artifacts")
}

/// JavaScript truthiness of a JSON value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}
