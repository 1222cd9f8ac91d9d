//! A call whose result is not a valid tool result (a kind that is not a string or breaks the
//! naming rule, data that is not what a well-known kind holds) succeeds: the object the tool
//! returned reaches the model as `structured`, kind and all, and the user is told once per
//! tool, naming the tool, the module and what is wrong.

use super::*;

const PYTHON: &str = r#"
def invalid() -> dict:
    """Returns a kind in capitals."""
    return {"kind": "Invalid", "data": {"rows": [1, 2]}}

def numeric() -> dict:
    """Returns a number as its kind."""
    return {"kind": 123, "data": {"rows": [1, 2]}}

def dashed() -> dict:
    """Returns a kind with a dash."""
    return {"kind": "test-kind", "data": {"rows": [1, 2]}, "summary": "2 rows"}

def wrong_text() -> dict:
    """Returns a text result without its content."""
    return {"kind": "text", "data": {"text": "hi"}}

def fine() -> dict:
    """Returns a custom kind."""
    return {"kind": "acme.rows", "data": {"rows": [1, 2]}}
"#;

pub fn an_invalid_kind_is_passed_on_as_structured() {
    let f = Fixture::new();
    let told = Arc::new(Mutex::new(Vec::<String>::new()));
    let notice = {
        let told = told.clone();
        CustomNotice(Arc::new(move |message: &str| {
            told.lock().unwrap().push(message.to_owned());
        }))
    };
    let approval = config(Some(ApprovalDecisionType::PreApproved), &[]);
    let tools = f
        .tools_telling("kinds.py", PYTHON, None, approval, SECS, Some(notice))
        .unwrap();
    let session = Session::new(tools);
    let cases = [
        (
            "invalid",
            json!({"kind": "Invalid", "data": {"rows": [1, 2]}}),
            "`Invalid`",
        ),
        (
            "numeric",
            json!({"kind": 123, "data": {"rows": [1, 2]}}),
            "not 123",
        ),
        (
            "dashed",
            json!({"kind": "test-kind", "data": {"rows": [1, 2]}, "summary": "2 rows"}),
            "`test-kind`",
        ),
        (
            "wrong_text",
            json!({"kind": "text", "data": {"text": "hi"}}),
            "missing field `content`",
        ),
    ];
    let mut failed = Vec::new();
    block_on(async {
        // Twice each: the user is told the first time only.
        for _ in 0..2 {
            for (tool, printed, _) in &cases {
                let outcome = session.call(tool, json!({})).await;
                let got = (
                    outcome.status,
                    outcome.value.kind.as_str(),
                    &outcome.value.data,
                );
                if got != (ToolStatus::Success, "structured", printed) {
                    failed.push(format!("{tool}: {got:?} {:?}", outcome.error));
                }
            }
        }
        let outcome = session.ok("fine", json!({})).await;
        assert_eq!(outcome.value.kind, "acme.rows");
    });
    assert!(failed.is_empty(), "{failed:#?}");
    let told = told.lock().unwrap().clone();
    assert_eq!(told.len(), cases.len(), "{told:#?}");
    for ((tool, _, why), message) in cases.iter().zip(&told) {
        assert!(
            message.contains(&format!("custom tool `{tool}` (module ./kinds.py)"))
                && message.contains(why)
                && message.contains("passed on as `structured`"),
            "{message}"
        );
    }
}
