//! Tool calls through the page: a write approved in the dialog changes the file; a denial with
//! a note reaches the model and leaves the file alone; arguments edited in the dialog's form
//! are the ones that run; a manual tool runs from the palette's form (and the model is told),
//! and its form refuses a missing required field before sending anything; what a jailed run
//! changed is one dialog with its diff and nothing to edit, and approving it lands the change.

use golem_testkit::mock::MockServer;
use serde_json::json;

use crate::harness::{LIMIT, Ui, WIRE, fs_worker, project, tid, worker, write_args};
use golem_testkit::cli::TestEnv;

const ORIGINAL: &str = "original\n";

/// The selector of the tool cards of `tool` with `status`.
fn card(tool: &str, status: &str) -> String {
    format!(
        "{}[data-tool=\"{tool}\"][data-status=\"{status}\"]",
        tid("tool-card")
    )
}

/// The approval dialog for `write_file`.
fn write_dialog() -> String {
    format!("{}[data-tool=\"write_file\"]", tid("approval"))
}

/// A session over `proj/out/a.txt` (holding [`ORIGINAL`]) whose model writes `content` to it,
/// then answers `answer`; the page shows the approval dialog.
fn asked_to_write(name: &str, content: &str, answer: &str) -> (TestEnv, MockServer, Ui) {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    env.write("proj/out/a.txt", ORIGINAL);
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[("call_1", "write_file", write_args("/out/a.txt", content))]),
        WIRE.text(answer),
    ]);
    let ui = Ui::open(name, &env, &server, &worker, &[]);
    ui.send("change a.txt");
    ui.wait_element(&write_dialog());
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some(ORIGINAL),
        "nothing runs before the answer"
    );
    (env, server, ui)
}

#[test]
fn a_write_approved_in_the_dialog_changes_the_file() {
    let (env, server, ui) = asked_to_write(
        "a_write_approved_in_the_dialog_changes_the_file",
        "approved in the browser\n",
        "Done.",
    );
    let dialog = ui.text(&write_dialog());
    assert!(
        dialog.contains("/out/a.txt"),
        "the dialog names the file: {dialog:?}"
    );
    assert!(
        dialog.contains("approved in the browser"),
        "the dialog previews the change: {dialog:?}"
    );
    ui.click(&tid("approve"));
    ui.wait_gone(&tid("approval"));
    ui.wait_message("assistant", "Done.");
    ui.wait_element(&card("write_file", "success"));
    ui.wait_idle();
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some("approved in the browser\n")
    );
    let results = WIRE.tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(!WIRE.is_error(&results[0]), "{results:?}");
}

#[test]
fn a_denial_with_a_note_reaches_the_model() {
    const NOTE: &str = "please write b.txt instead";
    let (env, server, ui) = asked_to_write(
        "a_denial_with_a_note_reaches_the_model",
        "overwritten\n",
        "Understood, I will not.",
    );
    ui.click(&tid("deny"));
    ui.type_into(&tid("deny-note"), NOTE);
    ui.click(&tid("deny-confirm"));
    ui.wait_gone(&tid("approval"));
    ui.wait_message("assistant", "Understood, I will not.");
    ui.wait_element(&card("write_file", "denied"));
    ui.wait_idle();
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some(ORIGINAL));

    assert!(server.wait_for_requests(2, LIMIT));
    let results = WIRE.tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(WIRE.is_error(&results[0]), "{results:?}");
    let text = WIRE.result_text(&results[0]);
    assert!(text.starts_with("[DENIED]"), "{text}");
    assert!(text.contains(NOTE), "the note reaches the model: {text}");
}

#[test]
fn arguments_edited_in_the_form_are_what_runs() {
    const EDITED: &str = "final text from the form";
    let (env, server, ui) = asked_to_write(
        "arguments_edited_in_the_form_are_what_runs",
        "draft text\n",
        "Done.",
    );
    ui.click(&tid("edit"));
    let form = tid("approval-form");
    ui.wait_element(&form);
    let content = format!("{form} [name=\"content\"]");
    let path = format!("{form} [name=\"path\"]");
    assert_eq!(
        ui.js(
            "return document.querySelector(arguments[0]).value;",
            vec![json!(path)]
        ),
        json!("/out/a.txt"),
        "the form holds the model's arguments\n{}",
        ui.describe()
    );
    ui.fill(&content, EDITED);
    ui.click(&tid("approval-submit"));
    ui.wait_gone(&tid("approval"));
    ui.wait_message("assistant", "Done.");
    ui.wait_element(&card("write_file", "success"));
    ui.wait_idle();
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some(EDITED),
        "the edited arguments ran"
    );
    let results = WIRE.tool_results(&server.requests()[1]);
    assert!(!WIRE.is_error(&results[0]), "{results:?}");
}

/// A session over `proj/out/a.txt` (holding `hello from the zone`) whose model answers
/// `I see.` to anything, with the read_file form of the tools palette open.
fn read_file_form(name: &str) -> (TestEnv, MockServer, Ui) {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    env.write("proj/out/a.txt", "hello from the zone\n");
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("I see."));
    let ui = Ui::open(name, &env, &server, &worker, &[]);
    ui.click(&tid("tools-button"));
    ui.wait_element(&tid("tool-palette"));
    let palette = ui.text(&tid("tool-palette"));
    assert!(
        !palette.contains("write_file"),
        "model-only tools are not offered: {palette:?}"
    );
    ui.click(&format!("{}[data-tool=\"read_file\"]", tid("manual-tool")));
    ui.wait_element(&tid("tool-form"));
    (env, server, ui)
}

#[test]
fn a_manual_tool_runs_from_its_form() {
    let (_env, server, ui) = read_file_form("a_manual_tool_runs_from_its_form");
    ui.fill(
        &format!("{} [name=\"path\"]", tid("tool-form")),
        "/out/a.txt",
    );
    ui.click(&tid("run-tool"));
    let done = card("read_file", "success");
    ui.wait_element(&done);
    ui.wait_text(&done, "hello from the zone");
    assert!(
        server.requests().is_empty(),
        "running a tool does not ask the model"
    );

    // The model is told what the user ran.
    ui.turn("what did I see?", "I see.");
    let sent = server.requests()[0].body.to_string();
    assert!(sent.contains("[The user ran the tool"), "{sent}");
    assert!(sent.contains("read_file"), "{sent}");
}

#[test]
fn a_manual_tool_form_refuses_a_missing_required_field() {
    let (_env, server, ui) = read_file_form("a_manual_tool_form_refuses_a_missing_required_field");
    ui.click(&tid("run-tool"));
    let error = ui.wait_text(&tid("field-error"), "");
    assert!(!error.trim().is_empty(), "the error says something");
    assert_eq!(
        ui.count(&tid("tool-card")),
        0,
        "nothing ran\n{}",
        ui.describe()
    );
    // Once the field is filled, it runs.
    ui.fill(
        &format!("{} [name=\"path\"]", tid("tool-form")),
        "/out/a.txt",
    );
    ui.click(&tid("run-tool"));
    ui.wait_element(&card("read_file", "success"));
    assert!(server.requests().is_empty());
}

#[test]
fn a_runs_changes_are_one_dialog_with_their_diff_and_nothing_to_edit() {
    let env = TestEnv::new();
    let text = worker(
        "sandbox:\n  zones:\n    - name: out\n      mode: rw\n      \
         approval: { create: preApproved, write: ask }\ntoolsets:\n  code: {}\n",
    );
    let worker_file = project(&env, &text);
    env.write("proj/out/a.txt", ORIGINAL);
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[(
            "call_1",
            "run_code",
            json!({"language": "bash", "code": "echo 'changed by the script' > a.txt"}),
        )]),
        WIRE.text("Done."),
    ]);
    let ui = Ui::open(
        "a_runs_changes_are_one_dialog_with_their_diff_and_nothing_to_edit",
        &env,
        &server,
        &worker_file,
        &[],
    );
    ui.send("change a.txt with a script");
    let dialog = format!("{}[data-tool=\"run_code\"]", tid("approval"));
    ui.wait_element(&dialog);
    let shown = ui.text(&dialog);
    for expected in [
        "run_code changed 1 file in /out",
        "/out/a.txt",
        "changed by the script",
    ] {
        assert!(shown.contains(expected), "{expected}: {shown:?}");
    }
    assert!(
        ui.attr(&format!("{dialog} {}", tid("edit")), "disabled")
            .is_some(),
        "nothing to edit\n{}",
        ui.describe()
    );
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some(ORIGINAL),
        "nothing lands before the answer"
    );
    ui.click(&tid("approve"));
    ui.wait_gone(&tid("approval"));
    ui.wait_message("assistant", "Done.");
    ui.wait_idle();
    assert_eq!(
        env.read("proj/out/a.txt").as_deref(),
        Some("changed by the script\n")
    );
}
