//! The `code_result` view (a command run in the jail): `$ command · exit 0 · 41 ms` (red when
//! the command failed, was killed or timed out), its stdout, its stderr in red, and a warning
//! naming the jail layers that could not be applied, then what the run changed in the zones
//! once that passed the gate (one line per change, `+ create /out/a.txt (file, 0644, 3
//! bytes)`; the diff itself was the approval's preview). Reads `data` loosely with serde, so
//! it does not depend on the protocol's Rust type.

use serde::Deserialize;
use serde_json::Value;

use super::Ctx;
use super::canvas::{Line, palette};
use super::layout::{human_duration, wrap};
use super::text::text_lines;

/// The `data` of a `code_result`, as far as the view needs it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CodeResult {
    command: String,
    #[serde(default)]
    stdout: String,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    exit_code: Option<i64>,
    #[serde(default)]
    signal: Option<i64>,
    #[serde(default)]
    duration_ms: Option<u64>,
    #[serde(default)]
    timed_out: Option<bool>,
    #[serde(default)]
    weakened: Vec<String>,
    /// The `diff` value of the changes applied to the zones.
    #[serde(default)]
    changes: Option<Value>,
}

impl CodeResult {
    /// The `change` line of each file of `changes` (its path when it has none).
    fn change_lines(&self) -> Vec<String> {
        let files = self
            .changes
            .as_ref()
            .and_then(|changes| changes.pointer("/data/files"))
            .and_then(Value::as_array);
        files
            .into_iter()
            .flatten()
            .filter_map(|file| file.get("change").or_else(|| file.get("path")))
            .filter_map(|line| line.as_str().map(str::to_owned))
            .collect()
    }
}

impl CodeResult {
    /// `exit 0`, `exit 2`, `signal 9`, `timed out`, and whether that is a failure.
    fn status(&self) -> (String, bool) {
        if self.timed_out == Some(true) {
            return ("timed out".to_owned(), true);
        }
        match (self.exit_code, self.signal) {
            (Some(code), _) => (format!("exit {code}"), code != 0),
            (None, Some(signal)) => (format!("signal {signal}"), true),
            (None, None) => ("no exit code".to_owned(), true),
        }
    }
}

/// `$ command · exit 0`, or `None` when `data` is not a code result.
pub(super) fn summary(data: &Value) -> Option<String> {
    let result = CodeResult::deserialize(data).ok()?;
    let (status, _) = result.status();
    Some(format!("$ {} · {status}", result.command))
}

/// A `code_result`, or `None` when `data` does not have its shape.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let result = CodeResult::deserialize(data).ok()?;
    let (status, failed) = result.status();
    let mut header = Line::styled(palette::bold(), "$ ");
    header
        .push(palette::bold(), &result.command)
        .push(palette::dim(), " · ")
        .push(
            if failed {
                palette::error()
            } else {
                palette::added()
            },
            &status,
        );
    if let Some(ms) = result.duration_ms {
        header.push(palette::dim(), &format!(" · {}", human_duration(ms)));
    }
    let mut out = wrap(&header, ctx.width);
    out.extend(text_lines(&result.stdout, ctx, palette::plain()));
    out.extend(text_lines(&result.stderr, ctx, palette::stderr()));
    if result.stdout.is_empty() && result.stderr.is_empty() {
        out.push(Line::styled(palette::dim(), "(no output)"));
    }
    if !result.weakened.is_empty() {
        let warning = format!("⚠ jail weakened: {}", result.weakened.join(", "));
        out.extend(wrap(&Line::styled(palette::warning(), &warning), ctx.width));
    }
    let changes = result.change_lines();
    if !changes.is_empty() {
        out.push(Line::styled(
            palette::dim(),
            "changes applied to the zones:",
        ));
        for change in changes {
            let style = if change.starts_with("delete ") {
                palette::removed()
            } else {
                palette::added()
            };
            out.extend(wrap(
                &Line::styled(style, &format!("  {change}")),
                ctx.width,
            ));
        }
    }
    Some(out)
}
