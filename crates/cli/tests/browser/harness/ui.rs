//! The `Ui` driver: one test's browser (a fresh profile, headless Chromium through
//! chromedriver) on one `serve`, a blocking facade over the `fantoccini` WebDriver client —
//! starting it, each WebDriver call with a deadline, navigation, windows and scripts; and its
//! guard, which leaves the failure artifacts when the test panics, then ends everything.

use std::time::Duration;

use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand, WindowHandle};
use fantoccini::{Client, ClientBuilder};
use golem_testkit::mock::MockServer;
use serde_json::{Value, json};

use super::LIMIT;
use super::processes::{CHROMIUM, Driver, Serve, require_browser, tail};
use golem_testkit::cli::TestEnv;

/// One test's browser on one `serve`: a blocking facade over the WebDriver client.
///
/// Dropping it (also while a test panics) saves the artifacts when panicking, ends the
/// WebDriver session, then kills chromedriver (and the browser) and `serve`.
pub struct Ui {
    pub(super) name: String,
    rt: tokio::runtime::Runtime,
    client: Option<Client>,
    /// The server under test.
    pub serve: Serve,
    pub(super) driver: Driver,
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
    pub(super) fn call<T, F, Fut>(&self, what: &str, f: F) -> T
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
    pub(super) fn try_call<T, F, Fut>(&self, f: F) -> Result<T, String>
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

    /// Opens `url`, which may be another server's (the browser keeps its cookies).
    pub fn goto_url(&self, url: &str) {
        let url = url.to_owned();
        self.call("navigate", |c| async move { c.goto(&url).await });
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

    /// Runs the asynchronous `script` (a function body whose last argument is the callback
    /// that gives its value; `arguments` are `args` before it) in the page.
    pub fn js_async(&self, script: &str, args: Vec<Value>) -> Value {
        let script = script.to_owned();
        self.call(&format!("run async script {script}"), |c| async move {
            c.execute_async(&script, args).await
        })
    }

    /// Makes the page's viewport `width` × `height` CSS pixels (the window less whatever the
    /// browser draws around the page) and waits until the page sees that width.
    pub fn set_viewport(&self, width: u32, height: u32) {
        self.call("set the window size", |c| async move {
            c.set_window_size(width, height).await
        });
        let inner = self.js("return [window.innerWidth, window.innerHeight];", vec![]);
        let around = |i: usize, wanted: u32| {
            let seen = inner[i].as_u64().unwrap_or(u64::from(wanted));
            wanted + u32::try_from(u64::from(wanted).saturating_sub(seen)).unwrap_or(0)
        };
        let (outer_w, outer_h) = (around(0, width), around(1, height));
        if (outer_w, outer_h) != (width, height) {
            self.call("set the window size", |c| async move {
                c.set_window_size(outer_w, outer_h).await
            });
        }
        self.wait_js(
            &format!("the viewport to be {width} px wide"),
            "window.innerWidth === arguments[0]",
            vec![json!(width)],
        );
    }

    /// Grants the page the permission `name` (`clipboard-read`, …) without a prompt.
    pub fn grant(&self, name: &str) {
        let command = SetPermission {
            name: name.to_owned(),
        };
        self.call(&format!("grant {name}"), |c| async move {
            c.issue_cmd(command).await
        });
    }

    /// Like [`Ui::js`], with a script error as `None` (while the page reloads, say).
    pub(super) fn try_js(&self, script: &str, args: Vec<Value>) -> Option<Value> {
        let script = script.to_owned();
        self.try_call(|c| async move { c.execute(&script, args).await })
            .ok()
    }
}

/// WebDriver's "Set Permission" (the Permissions specification's extension command).
#[derive(Debug)]
struct SetPermission {
    name: String,
}

impl WebDriverCompatibleCommand for SetPermission {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/permissions",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({"descriptor": {"name": self.name}, "state": "granted"}).to_string()),
        )
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
