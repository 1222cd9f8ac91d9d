//! The gate for what a jailed run changed: its [`Changeset`] is judged change by change like a
//! file tool's call (protection, then the zone's approval table for the change's operation),
//! and taken or left as a whole.
//!
//! - One `blocked` change (or a refused one: protected paths, special files, set-id bits,
//!   links that leave the zone, which the scan already refused) refuses the whole changeset:
//!   nothing is applied and the error names the change and the reason.
//! - All pre-approved: applied at once.
//! - Otherwise **one** request through the call's [`EffectGate`]: its scopes are the `{zone,
//!   operation}` pairs that ask (so "for the session" approves that kind of change in that
//!   zone, whatever the command), its preview the multi-file diff, its description "run_code
//!   changed 3 files in /work". A change to an unprotected path (a zone's `unprotect`) makes it
//!   a request only a person may approve. Denied or interrupted, the changes are discarded and
//!   the model is told what was discarded.
//!
//! Applying goes through the sandbox (beneath its zone handles, each file replaced atomically),
//! in the changeset's order. The [`Settled`] changes come back as a `diff` value with `files`
//! (one entry per changed path), for the tool's result.

use std::collections::BTreeSet;

use golem_core::approval::ApprovalRequirement;
use golem_core::effects::{EffectDecision, EffectRequest};
use golem_core::tool::ToolContext;
use golem_protocol::result::DiffData;
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use golem_sandbox::changeset::{Change, ChangeKind, Changeset, ChangesetError, Content, Preview};
use golem_sandbox::{Sandbox, ZoneOperation};
use serde_json::{Value, json};

use crate::diff::{DiffLimits, text_diff};

/// What a jailed program changed, not yet applied, or why it cannot be read (refused).
pub type Pending = Result<Changeset, ChangesetError>;

/// `changes` as something to settle: `None` when the program changed nothing (its layers are
/// removed).
pub async fn pending(changes: Pending) -> Option<Pending> {
    match changes {
        Ok(changeset) if changeset.is_empty() => {
            discard(changeset).await;
            None
        }
        other => Some(other),
    }
}

/// `error` for a run whose `changes` are not taken (it did not end by itself, or its call
/// failed): they are discarded, and the error says so when there were any.
pub async fn discarded(changes: Pending, mut error: ToolError) -> ToolError {
    if let Ok(changeset) = changes {
        let count = changeset.changes().len();
        discard(changeset).await;
        if count > 0 {
            error.message.push_str(&format!(
                " ({count} change(s) it made to the zones were discarded)"
            ));
        }
    }
    error
}

/// What was applied, for the tool's result.
#[derive(Debug, Clone)]
pub struct Settled {
    /// One line per change ("create /work/a.txt (file, 0644, 12 bytes)").
    pub lines: Vec<String>,
    /// The changes as a `diff` value with `files`.
    pub diff: ToolResultValue,
}

/// Takes or leaves the changes of a run of `tool`, asking through `ctx`, as described above.
/// `Ok(None)`: the run changed nothing.
pub async fn settle(
    changeset: Pending,
    sandbox: &Sandbox,
    ctx: &ToolContext,
    tool: &str,
) -> Result<Option<Settled>, ToolError> {
    let changeset = changeset.map_err(|err| match err {
        ChangesetError::Refused { .. } => ToolError::new(
            ToolErrorCode::Blocked,
            format!("{err}; nothing the command changed was applied"),
        ),
        ChangesetError::Scan(_) => ToolError::new(
            ToolErrorCode::ExecutionError,
            format!("{err}; nothing the command changed was applied"),
        ),
    })?;
    if changeset.is_empty() {
        discard(changeset).await;
        return Ok(None);
    }
    // Judging resolves paths beneath the zones and previews read files: off the async threads.
    let work = sandbox.clone();
    let (changeset, judged) = blocking(move || {
        let judged = judge(&work, changeset.changes());
        (changeset, judged)
    })
    .await?;
    let asks = match judged {
        Judged::Refused(error) => {
            discard(changeset).await;
            return Err(error);
        }
        Judged::PreApproved => None,
        Judged::Asks { scopes, for_user } => Some((scopes, for_user)),
    };
    let work = sandbox.clone();
    let (changeset, previews) = blocking(move || {
        let previews: Result<Vec<Preview>, ToolError> = changeset
            .changes()
            .iter()
            .map(|change| changeset.preview(&work, change))
            .collect();
        (changeset, previews)
    })
    .await?;
    let previews = match previews {
        Ok(previews) => previews,
        Err(error) => {
            discard(changeset).await;
            return Err(error);
        }
    };
    let settled = settled(changeset.changes(), &previews);
    let request = asks.map(|(scopes, for_user)| {
        let scopes: Vec<Value> = scopes
            .iter()
            .map(|(zone, operation)| json!({"zone": zone, "operation": operation}))
            .collect();
        EffectRequest {
            args: json!({"changes": settled.lines, "scopes": scopes}),
            scopes,
            description: describe(tool, changeset.changes()),
            preview: Some(settled.diff.clone()),
            risk: Risk::Medium,
            for_user,
        }
    });
    if let Some(request) = request {
        let decision = match &ctx.effects {
            Some(gate) => gate.decide(request, &ctx.cancel).await,
            None => EffectDecision::Denied {
                decided_by: golem_protocol::DecidedBy::Mode,
                message: format!("{tool}'s changes need approval and no one can give it"),
            },
        };
        let refusal = match decision {
            EffectDecision::Approved { .. } => None,
            EffectDecision::Denied { message, .. } => Some(ToolError::new(
                ToolErrorCode::Denied,
                format!(
                    "{message}. Discarded, the zones are unchanged: {}",
                    settled.lines.join("; ")
                ),
            )),
            EffectDecision::Interrupted => Some(ToolError::new(
                ToolErrorCode::Interrupted,
                format!(
                    "{tool} was interrupted before its changes were approved; they were discarded"
                ),
            )),
        };
        if let Some(error) = refusal {
            discard(changeset).await;
            return Err(error);
        }
    }
    let sandbox = sandbox.clone();
    blocking(move || changeset.apply(&sandbox))
        .await?
        .map_err(|err| {
            ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("{err} (the changes before it were applied)"),
            )
        })?;
    Ok(Some(settled))
}

/// How a changeset's changes stand before anyone is asked.
enum Judged {
    /// One change may not be made (the error says which and why).
    Refused(ToolError),
    /// Every change is pre-approved.
    PreApproved,
    /// Some changes need consent: the `(zone, operation)` pairs that ask, and the warning when
    /// only a person may give it.
    Asks {
        scopes: BTreeSet<(String, &'static str)>,
        for_user: Option<String>,
    },
}

/// Each change through its path's protection and its zone's approval table.
fn judge(sandbox: &Sandbox, changes: &[Change]) -> Judged {
    let mut scopes = BTreeSet::new();
    let mut warnings: Vec<String> = Vec::new();
    for change in changes {
        let operation = change.operation();
        let protection = match change.kind() {
            ChangeKind::Delete { .. } => sandbox.removal_protection(change.path()),
            ChangeKind::CreateDir { .. }
            | ChangeKind::CreateFile { .. }
            | ChangeKind::WriteFile { .. }
            | ChangeKind::SetMode { .. }
            | ChangeKind::Symlink { .. } => sandbox.protection(change.path()),
        };
        let zone = change.path().zone_name().unwrap_or_default().to_owned();
        match protection.requirement(sandbox.requirement(change.path(), operation)) {
            ApprovalRequirement::PreApproved => {}
            ApprovalRequirement::Blocked { reason } => {
                return Judged::Refused(ToolError::new(
                    ToolErrorCode::Blocked,
                    format!(
                        "the changes were refused: {change}: {reason}; nothing the command \
                         changed was applied"
                    ),
                ));
            }
            ApprovalRequirement::Ask => {
                scopes.insert((zone, operation_name(operation)));
            }
            ApprovalRequirement::AskUser { warning } => {
                scopes.insert((zone, operation_name(operation)));
                if !warnings.contains(&warning) {
                    warnings.push(warning);
                }
            }
        }
    }
    if scopes.is_empty() {
        Judged::PreApproved
    } else {
        Judged::Asks {
            scopes,
            for_user: (!warnings.is_empty()).then(|| warnings.join("\n")),
        }
    }
}

/// The operation as the zone's approval table names it.
fn operation_name(operation: ZoneOperation) -> &'static str {
    match operation {
        ZoneOperation::Create => "create",
        ZoneOperation::Write => "write",
        ZoneOperation::Delete => "delete",
    }
}

/// "run_code changed 3 files in /work" (and "/data" …).
fn describe(tool: &str, changes: &[Change]) -> String {
    let zones: BTreeSet<String> = changes
        .iter()
        .filter_map(|change| change.path().zone_name().map(|zone| format!("/{zone}")))
        .collect();
    let paths: BTreeSet<String> = changes.iter().map(Change::virtual_path).collect();
    let count = match paths.len() {
        1 => "1 file".to_owned(),
        n => format!("{n} files"),
    };
    let zones: Vec<String> = zones.into_iter().collect();
    format!("{tool} changed {count} in {}", zones.join(", "))
}

/// The lines and the `diff` value of `changes` with their `previews` (same order).
fn settled(changes: &[Change], previews: &[Preview]) -> Settled {
    let limits = DiffLimits::default();
    let mut files = Vec::new();
    let mut all_hunks = Vec::new();
    let (mut added, mut removed) = (0, 0);
    for (change, preview) in changes.iter().zip(previews) {
        let (original, modified, hunks) = match (text_of(&preview.before), text_of(&preview.after))
        {
            (Shown::Text(old), Shown::Text(new)) => {
                let diff = text_diff(&old, &new, &limits);
                added += diff.counts.added;
                removed += diff.counts.removed;
                (old, new, Some(diff.hunks))
            }
            (old, new) => (old.into_string(), new.into_string(), None),
        };
        if let Some(hunks) = &hunks {
            all_hunks.extend(hunks.iter().cloned());
        }
        let is_new = preview.before == Content::Absent;
        let data = DiffData {
            path: change.virtual_path(),
            original: (!is_new).then_some(original),
            modified,
            is_new,
            bytes_written: None,
            hunks,
        };
        let mut entry = serde_json::to_value(data).unwrap_or_else(|_| json!({}));
        if let Value::Object(map) = &mut entry {
            map.insert("change".into(), Value::String(change.to_string()));
            if preview.after == Content::Absent {
                map.insert("isDeleted".into(), Value::Bool(true));
            }
        }
        files.push(entry);
    }
    let lines: Vec<String> = changes.iter().map(Change::to_string).collect();
    let path = match changes {
        [only] => only.virtual_path(),
        _ => changes
            .first()
            .and_then(|c| c.path().zone_name())
            .map(|zone| format!("/{zone}"))
            .unwrap_or_else(|| "/".to_owned()),
    };
    let whole = DiffData {
        path,
        original: None,
        modified: String::new(),
        is_new: false,
        bytes_written: None,
        hunks: Some(all_hunks),
    };
    let mut data = serde_json::to_value(whole).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut data {
        map.insert("files".into(), Value::Array(files));
    }
    let count = match changes.len() {
        1 => "1 change".to_owned(),
        n => format!("{n} changes"),
    };
    let summary = format!("{count}, +{added} \u{2212}{removed} lines");
    Settled {
        lines,
        diff: ToolResultValue::new("diff", data).with_summary(summary),
    }
}

/// One side of a change as a diff shows it.
enum Shown {
    /// Text to diff by lines.
    Text(String),
    /// Anything else, in words.
    Other(String),
}

impl Shown {
    fn into_string(self) -> String {
        match self {
            Shown::Text(text) | Shown::Other(text) => text,
        }
    }
}

fn text_of(content: &Content) -> Shown {
    match content {
        Content::Absent => Shown::Text(String::new()),
        Content::Text { text, .. } => Shown::Text(text.clone()),
        Content::Directory { mode } => Shown::Other(format!("[directory, {mode:04o}]")),
        Content::Binary { size, sha256, .. } => {
            Shown::Other(format!("[binary content, {size} bytes, sha256 {sha256}]"))
        }
        Content::Symlink { target } => Shown::Other(format!("[link to {}]", target.display())),
        Content::Special => Shown::Other("[special file]".to_owned()),
    }
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work).await.map_err(|err| {
        ToolError::new(
            ToolErrorCode::ExecutionError,
            format!("handling the command's changes failed unexpectedly: {err}"),
        )
    })
}

/// Removes the changes' layers (the zones are untouched).
pub async fn discard(changeset: Changeset) {
    let removed = tokio::task::spawn_blocking(move || changeset.discard()).await;
    if let Ok(Err(err)) = removed {
        tracing::warn!(%err, "could not remove a run's copy-on-write layers");
    }
}
