//! A plain function's own policy: Python's `<name>_needs_approval` and JavaScript's
//! `<name>NeedsApproval` export, a bool (static: `false` beats the configured `default`) or a
//! function of the arguments (dynamic: asked per call, in the module's long-lived process);
//! what the user configured for a tool by name (`blocked`, `ask`) beats the tool's own.

use super::*;

const PYTHON_POLICIES: &str = r#"
def remove(path: str) -> str:
    """Removes a file."""
    return "removed " + path

def remove_needs_approval(args):
    return args["path"].startswith("/etc")

def peek(path: str) -> str:
    """Peeks at a file."""
    return "peeked " + path

peek_needs_approval = False

def poke() -> str:
    """Pokes."""
    return "poked"

poke_needs_approval = True
"#;

const JAVASCRIPT_POLICIES: &str = r#"
export function remove({ path }) { return "removed " + path; }
export const removeSchema = { type: "object", properties: { path: { type: "string" } } };
export function removeNeedsApproval(args) { return args.path.startsWith("/etc"); }
export function peek({ path }) { return "peeked " + path; }
export const peekSchema = { type: "object", properties: { path: { type: "string" } } };
export const peekNeedsApproval = false;
export function poke() { return "poked"; }
export const pokeSchema = { type: "object" };
export const pokeNeedsApproval = true;
"#;

pub fn python_and_javascript_function_policies() {
    for (name, source) in [
        ("policies.py", PYTHON_POLICIES),
        ("policies.mjs", JAVASCRIPT_POLICIES),
    ] {
        let f = Fixture::new();
        // The default asks: `remove`'s own policy beats it. `peek` (own: never asks) is named
        // `ask`, `poke` (own: asks) is named `blocked`: the user's word wins.
        let approval = config(
            Some(ApprovalDecisionType::Ask),
            &[
                ("peek", ApprovalDecisionType::Ask),
                ("poke", ApprovalDecisionType::Blocked),
            ],
        );
        let tools = f.tools(name, source, None, approval, SECS).unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        // The policies are not tools of their own.
        assert_eq!(names, ["peek", "poke", "remove"], "{name}");
        let policy = |tool: &str| {
            tools
                .iter()
                .find(|t| t.name() == tool)
                .unwrap()
                .approval_policy()
                .unwrap()
        };
        assert_eq!(policy("remove"), "dynamic (tool's own)", "{name}");
        assert_eq!(
            policy("peek"),
            "ask (configured, over the tool's own)",
            "{name}"
        );
        assert_eq!(
            policy("poke"),
            "blocked (configured, over the tool's own)",
            "{name}"
        );
        let session = Session::new(tools);
        block_on(async {
            session.ok("remove", json!({"path": "/work/a"})).await;
            assert!(session.asked().is_empty(), "{name}: dynamic false");
            let out = session.ok("remove", json!({"path": "/etc/passwd"})).await;
            assert_eq!(
                out.value,
                golem_protocol::ToolResultValue::text("removed /etc/passwd")
            );
            assert_eq!(session.asked(), ["remove"], "{name}: dynamic true");
            let out = session.ok("peek", json!({"path": "/etc/passwd"})).await;
            assert_eq!(
                out.value,
                golem_protocol::ToolResultValue::text("peeked /etc/passwd")
            );
            assert_eq!(session.asked(), ["peek"], "{name}: named ask");
            let out = session.call("poke", json!({})).await;
            assert_eq!(out.status, golem_protocol::ToolStatus::Blocked, "{name}");
            assert!(session.asked().is_empty(), "{name}: blocked, never asked");
        });
    }
}
