//! A custom tool's own result kinds in the chat (docs/tools.md, Rendering results): a kind the
//! terminal does not know, whose `display.preferredView` says `table`, is drawn as a table; one
//! with no hints is drawn from its data's shape (an object as indented JSON). The tools come from a
//! Python module beside the worker and run in the jail.

use super::*;

const MODULE: &str = r#"
def report() -> dict:
    """A small report."""
    return {
        "kind": "acme.report",
        "data": {
            "columns": [{"key": "fruit", "label": "Fruit"}, {"key": "count", "label": "Count"}],
            "rows": [{"fruit": "apple", "count": 3}, {"fruit": "pear", "count": 7}],
        },
        "display": {"preferredView": "table"},
        "summary": "2 fruits",
    }


def stats() -> dict:
    """Some numbers."""
    return {"kind": "acme.stats", "data": {"alpha": 11, "nested": {"gamma": 22}}}
"#;

#[test]
fn custom_kinds_are_drawn_through_the_fallback_chain() {
    let wire = Wire::Anthropic;
    let env = TestEnv::new();
    project(
        &env,
        &worker(
            "toolsets:\n  custom:\n    module: ./tools.py\n    \
             approval: { default: preApproved }\n",
        ),
    );
    env.write("proj/tools.py", MODULE);
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            ("call_1", "report", json!({})),
            ("call_2", "stats", json!({})),
        ]),
        wire.text("Here they are."),
    ]);
    let mut chat = start(&env, wire, &server);
    chat.ready();
    let shown = chat.turn("show me");
    assert!(shown.contains("Here they are."), "{}", chat.dump());
    // The table view, chosen by `preferredView`: the column labels and the rows.
    for text in ["Fruit", "Count", "apple", "pear"] {
        assert!(shown.contains(text), "{text} missing:\n{}", chat.dump());
    }
    assert!(shown.contains("2 fruits"), "the summary: {}", chat.dump());
    // No hints: the data's shape (an object as indented JSON), every key and value shown.
    for text in ["alpha", "11", "nested", "gamma", "22"] {
        assert!(shown.contains(text), "{text} missing:\n{}", chat.dump());
    }
    assert!(
        !shown.contains("\"columns\""),
        "the table is drawn, not dumped as JSON:\n{}",
        chat.dump()
    );
}
