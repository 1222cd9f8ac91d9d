//! The page's layout at a desktop's width and a phone's: the header keeps the worker's name
//! whole (the model's name gives way, shortened), and nothing in it runs off the screen.

use golem_testkit::mock::MockServer;
use serde_json::{Value, json};

use crate::harness::{HEIGHT, Serve, Ui, WIDTHS, WIRE, tid};
use golem_testkit::cli::{self, PROJECT, TestEnv, WRITES_ASK, fs_front_matter, provider_env};

/// A worker whose name is longer than the fixtures' `scribe`.
const NAME: &str = "release_notes";

/// A model name as long as real ones get (`provider:family-version-date`).
const MODEL: &str = "openai:gpt-mock-2025-08-07-extended-preview";

/// How the header draws `selector`: (its text, cut (`scrollWidth > clientWidth`), inside the
/// viewport).
fn drawn(ui: &Ui, selector: &str) -> Value {
    ui.js(
        "const e = document.querySelector(arguments[0]);
         if (!e) return null;
         const r = e.getBoundingClientRect();
         return { text: e.textContent, cut: e.scrollWidth > e.clientWidth,
                  inside: r.left >= 0 && r.right <= innerWidth + 0.5, width: r.width };",
        vec![json!(selector)],
    )
}

#[test]
fn the_header_keeps_the_workers_name_whole_at_every_width() {
    let env = TestEnv::new();
    env.project(&[(
        &format!("{NAME}.worker"),
        cli::worker(NAME, &fs_front_matter(WRITES_ASK)),
    )]);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("unused"));
    let worker = format!("{PROJECT}/{NAME}.worker");
    let serve = Serve::start_with(
        &env,
        &provider_env(WIRE, &server),
        &["serve", &worker, "--port", "0", "--model", MODEL],
    );
    let ui = Ui::attach("the_header_keeps_the_workers_name_whole", serve);
    ui.goto_token_url();
    ui.wait_connected();
    for width in WIDTHS {
        ui.set_viewport(width, HEIGHT);
        ui.wait_text(".topbar .worker", NAME);
        let name = drawn(&ui, ".topbar .worker");
        assert_eq!(name["text"], NAME, "{width} px: {name}");
        assert_eq!(
            name["cut"], false,
            "{width} px: the worker's name is whole: {name}"
        );
        assert_eq!(name["inside"], true, "{width} px: {name}");
        let model = drawn(&ui, &tid("model"));
        assert_eq!(model["text"], MODEL, "{width} px: {model}");
        assert_eq!(model["inside"], true, "{width} px: {model}");
        if width >= 1000 {
            assert_eq!(
                model["cut"], false,
                "{width} px: room for the model: {model}"
            );
        }
        // Nothing in the header runs off the screen, and its buttons stay whole.
        let header = ui.js(
            "const h = document.querySelector('.topbar');
             return { overflows: h.scrollWidth > h.clientWidth,
                      outside: [...h.querySelectorAll('button')].filter(b => {
                        const r = b.getBoundingClientRect(); return r.right > innerWidth + 0.5 || r.left < 0; }).length };",
            vec![],
        );
        assert_eq!(
            header,
            json!({"overflows": false, "outside": 0}),
            "{width} px\n{}",
            ui.describe()
        );
    }
}
