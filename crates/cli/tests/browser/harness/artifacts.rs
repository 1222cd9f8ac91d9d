//! What a failing browser test leaves behind and says: a summary of what the page shows (for
//! failure messages), the browser's console log, and the artifacts saved under
//! `target/browser-artifacts/<test name>/` (screenshots of every window, the DOM, the console
//! log, `serve`'s stderr, chromedriver's log).

use std::path::{Path, PathBuf};

use fantoccini::wd::WebDriverCompatibleCommand;
use serde_json::{Value, json};

use super::processes::tail;
use super::ui::Ui;

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

impl Ui {
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
    pub(super) fn save_artifacts(&self) -> Vec<PathBuf> {
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

/// `target/browser-artifacts` (next to the test's own temporary directory under `target/`).
pub fn artifacts_dir() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("browser-artifacts")
}
