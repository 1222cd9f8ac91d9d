//! The conversation through the page: a streamed answer appears (first part while it streams,
//! markdown rendered at the end); the interrupt button and Esc stop a slow turn, which ends
//! `interrupted`, and the session goes on; a reload restores the conversation (messages and
//! tool cards, once each); a second window on the same session shows it too, and an approval
//! answered in one window closes the dialog in the other.

use std::time::Duration;

use golem_testkit::mock::{Chunk, MockServer};

use crate::harness::{LIMIT, Ui, WIRE, fs_worker, project, tid, write_args};
use golem_testkit::cli::TestEnv;

/// The selector of the tool cards of `tool`.
fn card(tool: &str) -> String {
    format!("{}[data-tool=\"{tool}\"]", tid("tool-card"))
}

#[test]
fn a_streamed_answer_appears() {
    const ANSWER: &str = "Hello from the **mock** model, streamed.";
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    // The answer comes in two deltas (`Hello from the **moc` and the rest) with a pause between
    // them, so the page shows the first while the stream is open.
    let mut reply = WIRE.text(ANSWER);
    reply
        .chunks
        .insert(2, Chunk::Delay(Duration::from_millis(1500)));
    let server = MockServer::start_blocking(vec![reply]);
    let ui = Ui::open("a_streamed_answer_appears", &env, &server, &worker, &[]);

    ui.send("say hello");
    let streaming = format!(
        "{}[data-role=\"assistant\"][data-streaming=\"true\"]",
        tid("message")
    );
    let partial = ui.wait_text(&streaming, "Hello from the");
    assert!(
        !partial.contains("streamed."),
        "only the first delta has come: {partial:?}"
    );
    let answer = ui.wait_message("assistant", "Hello from the mock model, streamed.");
    assert!(
        !answer.contains("**"),
        "the markdown is rendered, not shown: {answer:?}"
    );
    assert!(
        ui.exists(&format!(
            "{}[data-role=\"assistant\"] strong",
            tid("message")
        )),
        "**mock** is bold\n{}",
        ui.describe()
    );
    ui.wait_gone(&streaming);
    ui.wait_idle();
    assert_eq!(
        ui.last_turn().as_deref(),
        Some("completed"),
        "app[data-last-turn] is the last turnEnded's status\n{}",
        ui.describe()
    );
    assert_eq!(ui.messages("assistant").len(), 1, "{}", ui.describe());

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].body.to_string().contains("say hello"),
        "the typed text reaches the model: {}",
        requests[0].body
    );
}

/// A model whose first answer is held back for a minute; every later request gets
/// `Second answer.`.
fn slow_model() -> MockServer {
    let server = MockServer::start_blocking(vec![
        WIRE.text("Too late.").delayed(Duration::from_secs(60)),
    ]);
    server.set_fallback(WIRE.text("Second answer."));
    server
}

/// After an interrupt: the turn ended `interrupted` (on the page and in the transcript), the
/// late answer never shows, and the next message gets its answer.
fn assert_interrupted_and_going_on(env: &TestEnv, ui: &Ui, server: &MockServer) {
    ui.wait_idle();
    assert_eq!(
        ui.last_turn().as_deref(),
        Some("interrupted"),
        "the turn ends interrupted\n{}",
        ui.describe()
    );
    let ended: Vec<String> = env
        .transcripts("proj")
        .concat()
        .iter()
        .map(|line| line.to_string())
        .filter(|line| line.contains("\"turnEnded\""))
        .collect();
    assert!(
        ended.len() == 1 && ended[0].contains("\"interrupted\""),
        "the transcript records the turn as interrupted: {ended:?}"
    );
    ui.turn("are you still there?", "Second answer.");
    assert_eq!(ui.last_turn().as_deref(), Some("completed"));
    assert!(
        ui.messages("assistant")
            .iter()
            .all(|m| !m.contains("Too late.")),
        "{}",
        ui.describe()
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one request per turn");
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("are you still there?"),
        "{}",
        requests[1].body
    );
}

#[test]
fn the_interrupt_button_stops_a_slow_turn() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = slow_model();
    let ui = Ui::open(
        "the_interrupt_button_stops_a_slow_turn",
        &env,
        &server,
        &worker,
        &[],
    );
    ui.send("think hard");
    assert!(server.wait_for_requests(1, LIMIT), "{}", ui.describe());
    ui.wait_busy();
    ui.click(&tid("interrupt"));
    assert_interrupted_and_going_on(&env, &ui, &server);
}

#[test]
fn esc_stops_a_slow_turn_too() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = slow_model();
    let ui = Ui::open("esc_stops_a_slow_turn_too", &env, &server, &worker, &[]);
    ui.send("think hard");
    assert!(server.wait_for_requests(1, LIMIT), "{}", ui.describe());
    ui.wait_busy();
    // Esc where the user's focus is after sending: the message box.
    ui.type_into(&tid("input"), "\u{E00C}");
    assert_interrupted_and_going_on(&env, &ui, &server);
}

#[test]
fn a_reload_restores_the_conversation() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    env.write("proj/out/a.txt", "hello from the zone\n");
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[(
            "call_1",
            "read_file",
            serde_json::json!({"path": "/out/a.txt"}),
        )]),
        WIRE.text("It says hello."),
    ]);
    let ui = Ui::open(
        "a_reload_restores_the_conversation",
        &env,
        &server,
        &worker,
        &[],
    );
    ui.turn("what does a.txt say?", "It says hello.");
    let read = format!("{}[data-status=\"success\"]", card("read_file"));
    ui.wait_element(&read);
    let card_before = ui.text(&read);
    let answer_before = ui.messages("assistant");

    ui.reload();
    ui.wait_connected();
    ui.wait_message("user", "what does a.txt say?");
    ui.wait_message("assistant", "It says hello.");
    ui.wait_element(&read);
    ui.wait_idle();
    assert_eq!(
        ui.messages("user").len(),
        1,
        "each message once\n{}",
        ui.describe()
    );
    assert_eq!(
        ui.messages("assistant").len(),
        1,
        "each message once\n{}",
        ui.describe()
    );
    assert_eq!(
        ui.count(&tid("tool-card")),
        1,
        "the tool card once\n{}",
        ui.describe()
    );
    assert_eq!(
        ui.attr(&card("read_file"), "data-call-id").as_deref(),
        Some("call_1")
    );
    assert_eq!(ui.text(&read), card_before, "the card shows what it showed");
    assert_eq!(ui.messages("assistant"), answer_before);

    // The restored session goes on.
    server.set_fallback(WIRE.text("Still here."));
    ui.turn("and now?", "Still here.");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_second_window_sees_the_same_session() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        WIRE.text("Both windows see this."),
        WIRE.tool_calls(&[(
            "call_1",
            "write_file",
            write_args("/out/a.txt", "from the second window\n"),
        )]),
        WIRE.text("Written."),
    ]);
    let ui = Ui::open(
        "a_second_window_sees_the_same_session",
        &env,
        &server,
        &worker,
        &[],
    );
    ui.turn("hello", "Both windows see this.");

    let (first, second) = ui.open_second_window();
    ui.wait_connected();
    ui.wait_message("user", "hello");
    ui.wait_message("assistant", "Both windows see this.");

    // The second window starts a write; both windows ask.
    ui.send("write a.txt");
    let dialog = format!("{}[data-tool=\"write_file\"]", tid("approval"));
    ui.wait_element(&dialog);
    ui.switch_to(&first);
    ui.wait_message("user", "write a.txt");
    ui.wait_element(&dialog);
    assert_eq!(env.read("proj/out/a.txt"), None, "nothing ran yet");

    // The first window answers; the second one's dialog closes.
    ui.click(&tid("approve"));
    ui.wait_gone(&tid("approval"));
    ui.wait_message("assistant", "Written.");
    ui.switch_to(&second);
    ui.wait_gone(&tid("approval"));
    ui.wait_message("assistant", "Written.");
    ui.wait_element(&format!("{}[data-status=\"success\"]", card("write_file")));
    ui.wait_idle();
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some("from the second window\n")
    );
    assert_eq!(server.requests().len(), 3);
}

/// A model's answer cannot freeze the page: `*a ` 30,000 times (90 kB, which took about 12 s
/// when every unclosed `*` searched the rest of the text) and 5,000 nested links (which threw
/// "Maximum call stack size exceeded") render through the page's own markdown module, and
/// through the conversation. The bound is a hang guard, not a speed check; the times are printed.
#[test]
fn hostile_markdown_renders_without_freezing_the_page() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let nested = format!(
        "{}x{} END",
        "[".repeat(5000),
        "](https://example.com/)".repeat(5000)
    );
    let server = MockServer::start_blocking(vec![WIRE.text(&nested)]);
    let ui = Ui::open("hostile_markdown", &env, &server, &worker, &[]);
    ui.js(
        "window.__md = null;\n\
         import('/assets/lib/markdown.js').then((m) => {\n\
           const times = [];\n\
           try {\n\
             for (const text of [arguments[0], arguments[1]]) {\n\
               const start = performance.now();\n\
               m.markdown(text);\n\
               times.push(Math.round(performance.now() - start));\n\
             }\n\
             window.__md = { ok: true, times };\n\
           } catch (err) {\n\
             window.__md = { ok: false, error: String(err) };\n\
           }\n\
         });\n\
         return true;",
        vec![
            serde_json::Value::String("*a ".repeat(30_000)),
            serde_json::Value::String(nested.clone()),
        ],
    );
    let result = ui.wait_js("the markdown module's result", "window.__md", vec![]);
    assert_eq!(result["ok"], true, "rendering threw: {result}");
    let times: Vec<u64> = result["times"]
        .as_array()
        .map(|t| t.iter().filter_map(|v| v.as_u64()).collect())
        .unwrap_or_default();
    eprintln!("markdown render times (ms), 90 kB of `*a `, 5,000 nested links: {times:?}");
    assert!(
        times.len() == 2 && times.iter().all(|ms| *ms < 5_000),
        "a render hung: {times:?} ms"
    );
    ui.send("links");
    ui.wait_message("assistant", "END");
    ui.wait_idle();
}
