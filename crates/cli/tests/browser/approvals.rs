//! Approvals that last, through the page: approvals remembered for the session are listed in
//! the session menu and forgotten from it (one, then all of the session's), after which an
//! identical call asks again; "always in this project" writes a rule to the program's
//! `.golem-forge/approvals.yaml` that approves the next write of the path without asking, is
//! listed as a project rule, and leaves the file when forgotten.

use golem_testkit::mock::MockServer;
use serde_json::json;

use crate::harness::{Ui, WIRE, fs_worker, project, tid, write_args};
use golem_testkit::cli::TestEnv;

/// The selector of the tool cards of `tool` with `status`.
fn card(tool: &str, status: &str) -> String {
    format!(
        "{}[data-tool=\"{tool}\"][data-status=\"{status}\"]",
        tid("tool-card")
    )
}

/// The remembered approvals of `scope` listed in the session menu.
fn listed(scope: &str) -> String {
    format!("{}[data-scope=\"{scope}\"]", tid("remembered-approval"))
}

/// Opens the session menu and waits for its list of remembered approvals.
fn open_approvals(ui: &Ui) {
    ui.click(&tid("session-button"));
    ui.wait_element(&tid("approvals-panel"));
    ui.wait("the remembered approvals to be listed", |ui| {
        (!ui.text(&tid("approvals-panel")).contains("Loading")).then_some(())
    });
}

/// Answers the approval dialog for `path` with the button `answer`.
fn answer_for(ui: &Ui, path: &str, answer: &str) {
    ui.wait_text(&tid("approval"), path);
    ui.click(&tid(answer));
}

#[test]
fn approvals_remembered_for_the_session_are_listed_and_forgotten() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[
            ("call_1", "write_file", write_args("/out/a.txt", "one\n")),
            ("call_2", "write_file", write_args("/out/b.txt", "two\n")),
        ]),
        WIRE.text("Both written."),
        WIRE.tool_calls(&[("call_3", "write_file", write_args("/out/a.txt", "one\n"))]),
        WIRE.text("Asked again."),
    ]);
    let ui = Ui::open(
        "approvals_remembered_for_the_session_are_listed_and_forgotten",
        &env,
        &server,
        &worker,
        &[],
    );
    ui.send("write both");
    for _ in 0..2 {
        ui.wait_element(&tid("approval"));
        let dialog = ui.text(&tid("approval"));
        let path = if dialog.contains("/out/a.txt") {
            "/out/a.txt"
        } else {
            "/out/b.txt"
        };
        answer_for(&ui, path, "approve-session");
        ui.wait(&format!("the dialog for {path} to close"), |ui| {
            (!ui.text(&tid("approval")).contains(path)).then_some(())
        });
    }
    ui.wait_message("assistant", "Both written.");
    ui.wait_idle();

    open_approvals(&ui);
    let entries = ui.texts(&listed("session"));
    assert_eq!(entries.len(), 2, "{entries:?}\n{}", ui.describe());
    assert!(
        entries
            .iter()
            .any(|e| e.contains("write_file") && e.contains("/out/a.txt"))
            && entries.iter().any(|e| e.contains("/out/b.txt")),
        "{entries:?}"
    );
    assert_eq!(ui.count(&listed("project")), 0);

    // Forget the one for b.txt, then all of the session's.
    let index = ui.js(
        "return [...document.querySelectorAll(arguments[0])].find(e => e.innerText.includes('/out/b.txt')).dataset.index;",
        vec![json!(listed("session"))],
    );
    ui.click(&format!(
        "{}[data-index={index}] {}",
        tid("remembered-approval"),
        tid("forget-approval")
    ));
    ui.wait_text(&tid("approvals-panel"), "forgot write_file");
    ui.wait("one approval to be left", |ui| {
        let left = ui.texts(&listed("session"));
        (left.len() == 1).then_some(left)
    })
    .iter()
    .for_each(|left| assert!(left.contains("/out/a.txt"), "{left:?}"));
    ui.click(&tid("forget-session-approvals"));
    ui.wait_gone(&tid("remembered-approval"));
    ui.wait_text(&tid("approvals-panel"), "None");
    ui.wait_gone(&tid("forget-session-approvals"));

    // Forgotten: the same call asks again.
    ui.click(&format!("{} .dialog-head button", tid("session-menu")));
    ui.wait_gone(&tid("session-menu"));
    ui.send("write a.txt again");
    answer_for(&ui, "/out/a.txt", "approve");
    ui.wait_message("assistant", "Asked again.");
    ui.wait_idle();
    assert_eq!(
        ui.count(&card("write_file", "success")),
        3,
        "{}",
        ui.describe()
    );
}

#[test]
fn always_in_this_project_writes_a_rule() {
    let env = TestEnv::new();
    let worker = project(&env, &fs_worker());
    let server = MockServer::start_blocking(vec![
        WIRE.tool_calls(&[("call_1", "write_file", write_args("/out/a.txt", "first\n"))]),
        WIRE.text("Written."),
        WIRE.tool_calls(&[("call_2", "write_file", write_args("/out/a.txt", "second\n"))]),
        WIRE.text("Written again."),
    ]);
    let ui = Ui::open(
        "always_in_this_project_writes_a_rule",
        &env,
        &server,
        &worker,
        &[],
    );
    ui.send("write a.txt");
    answer_for(&ui, "/out/a.txt", "approve-project");
    ui.wait_message("assistant", "Written.");
    ui.wait_idle();
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("first\n"));
    let rules = env
        .read("proj/.golem-forge/approvals.yaml")
        .expect("the rules file in the program's root");
    assert!(
        rules.contains("tool: write_file")
            && rules.contains("/out/a.txt")
            && !rules.contains("first"),
        "a rule for the path (not the content): {rules}"
    );

    // The rule approves the next write of the path: no dialog, decided by the rule.
    ui.send("write it again");
    ui.wait_message("assistant", "Written again.");
    ui.wait_idle();
    assert_eq!(env.read("proj/out/a.txt").as_deref(), Some("second\n"));
    let cards = ui.texts(&card("write_file", "success"));
    assert_eq!(cards.len(), 2, "{cards:?}");
    assert!(cards[1].contains("a project rule"), "{cards:?}");
    assert!(!ui.exists(&tid("approval")));

    // Listed as a project rule; forgotten, it leaves the file.
    open_approvals(&ui);
    let entries = ui.texts(&listed("project"));
    assert_eq!(entries.len(), 1, "{entries:?}\n{}", ui.describe());
    assert!(entries[0].contains("/out/a.txt"), "{entries:?}");
    assert!(
        !ui.exists(&tid("forget-session-approvals")),
        "nothing of the session to forget"
    );
    ui.click(&format!("{} {}", listed("project"), tid("forget-approval")));
    ui.wait_text(&tid("approvals-panel"), "removed the project rule");
    ui.wait_gone(&tid("remembered-approval"));
    let rules = env
        .read("proj/.golem-forge/approvals.yaml")
        .unwrap_or_default();
    assert!(!rules.contains("write_file"), "{rules}");
}
