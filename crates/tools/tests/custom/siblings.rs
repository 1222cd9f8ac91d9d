//! A module imports the files next to it: Python `import helpers`, JavaScript
//! `import … from "./helpers.mjs"`, both at load (describe) and in the long-lived process; only
//! source files of the module's language travel into the jail, never a `.env` beside them.

use super::*;

const PYTHON: &str = r#"
import os
import helpers

def shout(text: str) -> str:
    """Shouts, with the helper next to this module."""
    return helpers.loud(text)

def beside() -> list:
    """The files that travelled with the module."""
    return sorted(os.listdir(os.path.dirname(helpers.__file__)))
"#;

const JAVASCRIPT: &str = r#"
import { loud } from "./helpers.mjs";
import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
export function shout({ text }) { return loud(text); }
export const shoutSchema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
export function beside() { return readdirSync(dirname(fileURLToPath(import.meta.url))).sort(); }
export const besideSchema = { type: "object" };
"#;

pub fn a_module_imports_the_files_next_to_it() {
    for (name, helper, source, travelled) in [
        (
            "tools.py",
            (
                "helpers.py",
                "def loud(text):\n    return text.upper() + '!'\n",
            ),
            PYTHON,
            json!(["helpers.py"]),
        ),
        (
            "tools.mjs",
            (
                "helpers.mjs",
                "export function loud(text) { return text.toUpperCase() + '!'; }\n",
            ),
            JAVASCRIPT,
            json!(["helpers.mjs", "tools.mjs"]),
        ),
    ] {
        let f = Fixture::new();
        f.module(helper.0, helper.1);
        f.module(".env", "OPENAI_API_KEY=sk-never\n");
        f.module("notes.txt", "not source\n");
        let approval = config(Some(ApprovalDecisionType::PreApproved), &[]);
        let tools = f.tools(name, source, None, approval, SECS).unwrap();
        let session = Session::new(tools);
        block_on(async {
            let outcome = session.ok("shout", json!({"text": "hi"})).await;
            assert_eq!(
                serde_json::to_value(&outcome.value).unwrap()["data"]["content"],
                "HI!",
                "{name}"
            );
            let outcome = session.ok("beside", json!({})).await;
            assert_eq!(
                serde_json::to_value(&outcome.value).unwrap()["data"],
                travelled,
                "{name}: only the module's own kind of source travels"
            );
        });
    }
}
