//! Code blocks in answers: each has a copy button, labelled for assistive technology and kept
//! out of the text a user selects, that puts exactly its own block's text on the clipboard (as
//! the characters it is, markup included), at a desktop's width and a phone's.

use golem_testkit::mock::MockServer;
use serde_json::{Value, json};

use crate::harness::{HEIGHT, Ui, WIDTHS, WIRE, fs_worker, project, tid};
use golem_testkit::cli::TestEnv;

const FIRST: &str = "fn main() {\n    println!(\"<b>hi</b>\");\n}";
const SECOND: &str = "echo one && echo 'two'";

/// An answer with two fenced blocks between paragraphs.
fn answer() -> String {
    format!(
        "Here is the code:\n\n```rust\n{FIRST}\n```\n\nand a command:\n\n```sh\n{SECOND}\n```\n\nDone."
    )
}

/// The assistant message's copy buttons: (label, own text, `user-select`, inside the viewport).
fn buttons(ui: &Ui) -> Vec<Value> {
    let found = ui.js(
        "return [...document.querySelectorAll('[data-testid=\"message\"][data-role=\"assistant\"] [data-testid=\"copy-code\"]')]
            .map(b => { const r = b.getBoundingClientRect();
              return [b.getAttribute('aria-label'), b.textContent.trim(), getComputedStyle(b).userSelect,
                      r.width > 0 && r.left >= 0 && r.right <= innerWidth]; });",
        vec![],
    );
    found.as_array().cloned().unwrap_or_default()
}

/// Records every `navigator.clipboard.writeText` of the page in `window.copied` (then writes).
fn hook_clipboard(ui: &Ui) {
    ui.js(
        "window.copied = [];
         const write = navigator.clipboard.writeText.bind(navigator.clipboard);
         navigator.clipboard.writeText = (t) => { window.copied.push(t); return write(t); };",
        vec![],
    );
}

/// What the clipboard holds, read back through the page.
fn clipboard(ui: &Ui) -> String {
    let read = ui.js_async(
        "const done = arguments[arguments.length - 1];
         navigator.clipboard.readText().then(done, (e) => done('(unreadable: ' + e + ')'));",
        vec![],
    );
    read.as_str().unwrap_or_default().to_owned()
}

/// Clicks copy button `index` and waits until it says it copied.
fn copy(ui: &Ui, index: usize) {
    let selector = format!(
        "{}[data-role=\"assistant\"] .code-block:nth-of-type({}) {}",
        tid("message"),
        index + 1,
        tid("copy-code")
    );
    ui.click(&selector);
    ui.wait_js(
        &format!("copy button {index} to say it copied"),
        "document.querySelector(arguments[0])?.getAttribute('aria-label') === 'Copied'",
        vec![json!(selector)],
    );
}

#[test]
fn code_blocks_copy_their_own_text_and_the_button_is_not_selected() {
    for width in WIDTHS {
        let env = TestEnv::new();
        let worker = project(&env, &fs_worker());
        let server = MockServer::start_blocking(vec![WIRE.text(&answer())]);
        let ui = Ui::open(
            &format!("code_blocks_copy_their_own_text_{width}"),
            &env,
            &server,
            &worker,
            &[],
        );
        ui.set_viewport(width, HEIGHT);
        ui.grant("clipboard-read");
        ui.grant("clipboard-write");
        ui.turn("show me", "Done.");

        let found = buttons(&ui);
        assert_eq!(
            found.len(),
            2,
            "one button per block: {found:?}\n{}",
            ui.describe()
        );
        for button in &found {
            assert_eq!(button, &json!(["Copy code", "", "none", true]), "{found:?}");
        }

        hook_clipboard(&ui);
        copy(&ui, 1);
        assert_eq!(clipboard(&ui), SECOND);
        copy(&ui, 0);
        assert_eq!(
            clipboard(&ui),
            FIRST,
            "markup is copied as the characters it is"
        );
        assert_eq!(
            ui.js("return window.copied;", vec![]),
            json!([SECOND, FIRST]),
            "each click writes its own block once"
        );

        // Selecting the whole answer takes its text and the code, never the buttons.
        let selected = ui.js(
            "const md = document.querySelector('[data-testid=\"message\"][data-role=\"assistant\"] .md');
             const range = document.createRange();
             range.selectNodeContents(md);
             const sel = getSelection();
             sel.removeAllRanges();
             sel.addRange(range);
             return sel.toString();",
            vec![],
        );
        let selected = selected.as_str().unwrap_or_default();
        assert!(
            selected.contains(FIRST) && selected.contains(SECOND) && selected.contains("Done."),
            "{selected:?}"
        );
        assert!(
            !selected.contains("Copy") && !selected.contains("Copied"),
            "{selected:?}"
        );
    }
}
