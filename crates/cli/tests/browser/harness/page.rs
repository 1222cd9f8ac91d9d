//! The page as a test sees it, on [`Ui`]: waiting (polling with a deadline, [`LIMIT`], and a
//! message saying what was awaited and what the page showed instead), reading what it shows,
//! and acting on it as a user would (clicks, typing, sending a message).

use std::time::{Duration, Instant};

use fantoccini::Locator;
use fantoccini::elements::Element;
use serde_json::{Value, json};

use super::LIMIT;
use super::ui::Ui;

/// The pause between two looks at the page while waiting.
const POLL: Duration = Duration::from_millis(40);

/// `[data-testid="ID"]`.
pub fn tid(id: &str) -> String {
    format!("[data-testid=\"{id}\"]")
}

impl Ui {
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
