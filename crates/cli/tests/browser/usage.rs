//! The status bar's usage line: tokens read from and written to the provider's cache are shown
//! when there are any (a mock Anthropic server reporting them), beside the uncached input and
//! the output, at a desktop's width and a phone's, and again after a reload.

use golem_testkit::Wire;
use golem_testkit::mock::{Chunk, MockServer, Reply};
use serde_json::json;

use crate::harness::{HEIGHT, Serve, Ui, WIDTHS, fs_worker, project, tid};
use golem_testkit::cli::{TestEnv, model_for, provider_env};

/// The wire that reports cache reads and writes.
const CACHING: Wire = Wire::Anthropic;

/// `text` as the Anthropic wire answers it, its `message_start` reporting `written` tokens
/// written to the cache and `read` read from it.
fn cached_text(text: &str, written: u64, read: u64) -> Reply {
    let mut reply = CACHING.text(text);
    for chunk in &mut reply.chunks {
        if let Chunk::Data(frame) = chunk
            && frame.starts_with("event: message_start")
        {
            let patched = frame
                .replace(
                    "\"cache_creation_input_tokens\":0",
                    &format!("\"cache_creation_input_tokens\":{written}"),
                )
                .replace(
                    "\"cache_read_input_tokens\":0",
                    &format!("\"cache_read_input_tokens\":{read}"),
                );
            assert!(
                written + read == 0 || &patched != frame,
                "the usage of {frame:?} is patched"
            );
            *frame = patched;
        }
    }
    reply
}

/// The usage line as shown: its text, and the cache part's text and whether every line of it is
/// on screen with nothing drawn over it (null when absent).
fn usage_line(ui: &Ui) -> (String, serde_json::Value) {
    let cache = ui.js(
        "const e = document.querySelector(arguments[0]);
         if (!e) return null;
         // Every line of it is on screen, and nothing is drawn over it.
         const lines = [...e.getClientRects()];
         const shown = lines.length > 0 && lines.every(r => r.width > 0 && r.left >= 0 && r.right <= innerWidth + 0.5
           && [r.left + 2, (r.left + r.right) / 2, r.right - 2].every(x => e.contains(document.elementFromPoint(x, r.top + r.height / 2))));
         return { text: e.innerText, shown };",
        vec![json!(tid("cache"))],
    );
    (ui.text(&tid("tokens")), cache)
}

#[test]
fn cache_reads_and_writes_are_shown_in_the_usage_line_when_there_are_any() {
    for width in WIDTHS {
        let env = TestEnv::new();
        let worker = project(&env, &fs_worker());
        let server = MockServer::start_blocking(vec![
            cached_text("Nothing cached.", 0, 0),
            cached_text("Cached.", 1870, 0),
            cached_text("Read back.", 0, 500),
        ]);
        let serve = Serve::start_with(
            &env,
            &provider_env(CACHING, &server),
            &[
                "serve",
                &worker,
                "--port",
                "0",
                "--model",
                model_for(CACHING),
            ],
        );
        let ui = Ui::attach(&format!("cache_tokens_in_the_usage_line_{width}"), serve);
        ui.goto_token_url();
        ui.wait_connected();
        ui.set_viewport(width, HEIGHT);

        // No cache used: nothing about it.
        ui.turn("first", "Nothing cached.");
        let (line, cache) = usage_line(&ui);
        assert_eq!(cache, json!(null), "{line}");
        assert!(!line.contains("cache"), "{line}");

        ui.turn("second", "Cached.");
        ui.wait("the cache write in the usage line", |ui| {
            let (_, cache) = usage_line(ui);
            (cache["text"] == "cache 1,870 written").then_some(())
        });
        assert_eq!(
            usage_line(&ui).1["shown"],
            true,
            "{width} px\n{}",
            ui.describe()
        );

        ui.turn("third", "Read back.");
        let both = json!({"text": "cache 1,870 written, 500 read", "shown": true});
        ui.wait("the cache read too", |ui| {
            (usage_line(ui).1 == both).then_some(())
        });
        let (line, _) = usage_line(&ui);
        if width >= 1000 {
            // The uncached input is the 10 tokens of each call; the total counts everything.
            assert!(line.contains("(30 in · "), "{line}");
        }
        let total: u64 = line
            .split(" tokens")
            .next()
            .unwrap_or_default()
            .replace(',', "")
            .parse()
            .unwrap_or_else(|e| panic!("{line:?}: {e}"));
        assert!(total > 30 + 1870 + 500, "{line}");

        // The session's status says the same after a reload.
        ui.reload();
        ui.wait_connected();
        ui.wait("the cache line after a reload", |ui| {
            (usage_line(ui).1 == both).then_some(())
        });
    }
}
