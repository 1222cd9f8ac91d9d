//! What consent the queue may decide for a consumer, and what a person's answer from the
//! queue's inbox is bound to. Whoever can write to the queue can rewrite anything a batch keeps
//! there, so nothing read from it gives a consumer more consent than its own configuration:
//! the consumer's approval mode (its `--approval`, else its program config's `approval.mode`,
//! else `interactive`) is a [`Ceiling`] that a batch's mode may only narrow
//! ([`session_mode`]); an approval given with `inbox --queue` names the digest of the exact
//! call it approved ([`call_digest`], [`binding`]); and the consumer that continues the item
//! checks every answer against the parked transcript before anything runs
//! ([`check_continuation`]).

use std::path::Path;

use golem_llm::ModelToolCall;
use golem_protocol::{ApprovalMode, ApprovalRequest, InboxAnswer, InboxEntry, RememberScope};
use golem_session::Transcript;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::QueueError;

/// How much `mode` lets through without a person: 0 nothing (`auto_deny`), 1 only what a
/// person approves (`interactive`, `defer`), 2 everything (`approve_all`). A mode is within a
/// ceiling when it reaches no further.
pub fn reach(mode: ApprovalMode) -> u8 {
    match mode {
        ApprovalMode::AutoDeny => 0,
        ApprovalMode::Interactive | ApprovalMode::Defer => 1,
        ApprovalMode::ApproveAll => 2,
    }
}

/// A consumer's own approval mode, the most consent anything from the queue may give its
/// sessions, and where it was set (for the messages that name it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceiling {
    /// The mode.
    pub mode: ApprovalMode,
    /// Where it comes from, in words: `its --approval`, `approval.mode in FILE`, …
    pub source: String,
}

impl Ceiling {
    /// Whether `asked` lets no more through without a person than this ceiling.
    pub fn admits(&self, asked: ApprovalMode) -> bool {
        reach(asked) <= reach(self.mode)
    }

    /// Whether a person's approval from the queue's inbox may let a call run here (not under
    /// `auto_deny`, which lets nothing that needs consent run).
    pub fn takes_answers(&self) -> bool {
        reach(self.mode) >= reach(ApprovalMode::Defer)
    }

    /// The modes within this ceiling, in words (`auto_deny, interactive or defer`).
    fn within(&self) -> String {
        let modes: Vec<&str> = [
            ApprovalMode::AutoDeny,
            ApprovalMode::Interactive,
            ApprovalMode::Defer,
            ApprovalMode::ApproveAll,
        ]
        .into_iter()
        .filter(|mode| self.admits(*mode))
        .map(ApprovalMode::as_str)
        .collect();
        match modes.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

/// The approval mode batch `batch`'s sessions run in on a consumer with `ceiling`: the
/// batch's own (`asked`, from the queue) when it is within the ceiling, the ceiling's when the
/// batch names none; a batch asking for more is refused.
pub fn session_mode(
    batch: &str,
    asked: Option<ApprovalMode>,
    ceiling: &Ceiling,
) -> Result<ApprovalMode, QueueError> {
    match asked {
        None => Ok(ceiling.mode),
        Some(asked) if ceiling.admits(asked) => Ok(asked),
        Some(asked) => Err(QueueError::WiderConsent {
            batch: batch.to_owned(),
            asked,
            ceiling: ceiling.mode,
            set_by: ceiling.source.clone(),
            within: ceiling.within(),
        }),
    }
}

/// An answer as the queue's inbox keeps it: a person's answer and, for an approval, the digest
/// of the call it approved ([`call_digest`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueAnswer {
    /// The answer.
    #[serde(flatten)]
    pub answer: InboxAnswer,
    /// For an approval: the digest of the call shown when it was given (absent: none was
    /// bound, and a consumer refuses the approval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
}

/// The SHA-256 (hex) that names one call of parked session `session`: its id, its tool and its
/// arguments, as canonical JSON (object keys sorted, no spaces), so that the same call gives
/// the same digest on every machine and any other call another.
pub fn call_digest(session: &str, call_id: &str, tool: &str, arguments: &Value) -> String {
    let named = serde_json::json!({
        "arguments": canonical(arguments),
        "call": call_id,
        "session": session,
        "tool": tool,
    });
    let mut hasher = Sha256::new();
    hasher.update(canonical(&named).to_string().as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `value` with every object's keys in sorted order (what `to_string` then writes is the
/// canonical form: the map keeps the order keys were inserted in).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|key| (key.clone(), canonical(&map[key])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The calls parked session `session` runs first when it is continued, read from its
/// transcript's bytes the way a resumed session reads them (`Transcript::resume_point`).
pub fn pending_calls(session: &str, transcript: &[u8]) -> Result<Vec<ModelToolCall>, QueueError> {
    let parsed = Transcript::parse(session, Path::new(session), transcript).map_err(|e| {
        QueueError::Travel {
            session: session.to_owned(),
            reason: e.to_string(),
        }
    })?;
    Ok(parsed.resume_point().pending.calls)
}

/// Why an inbox entry's call is not the one its parked session would run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unbound {
    /// The session waits for no call of this id.
    #[error("the parked session no longer waits for its call {call}")]
    NotWaiting {
        /// The call's id.
        call: String,
    },
    /// The session would run another call under the same id.
    #[error("the parked session would run {runs}, not the call this entry shows")]
    Differs {
        /// What it would run: the tool and its arguments, as JSON.
        runs: String,
    },
}

/// The digest of the call `request` shows (of parked session `session`), when `pending` (the
/// calls the session runs first when continued) holds exactly that call.
pub fn binding(
    session: &str,
    request: &ApprovalRequest,
    pending: &[ModelToolCall],
) -> Result<String, Unbound> {
    let Some(call) = pending.iter().find(|c| c.id == request.tool_call_id) else {
        return Err(Unbound::NotWaiting {
            call: request.tool_call_id.clone(),
        });
    };
    let arguments = call
        .parsed_arguments()
        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
    let runs = call_digest(session, &call.id, &call.name, &arguments);
    let shown = call_digest(
        session,
        &request.tool_call_id,
        &request.tool_name,
        &request.args,
    );
    if runs != shown {
        return Err(Unbound::Differs {
            runs: format!("{}({})", call.name, canonical(&arguments)),
        });
    }
    Ok(runs)
}

/// Answers a consumer will not take for a parked item, and why: their entries go back to
/// waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The inbox entries whose answers are withdrawn.
    pub entries: Vec<u64>,
    /// Why, in one line.
    pub reason: String,
}

/// Checks the answers of parked session `session` (its inbox `entries`) before a consumer
/// with `ceiling` continues it: every approval must be bound to the call the session would run
/// (`pending`), none may add a project rule, and a consumer under `auto_deny` takes no
/// approval. Denials run nothing and are taken as they are.
pub fn check_continuation(
    ceiling: &Ceiling,
    session: &str,
    entries: &[(InboxEntry, Option<QueueAnswer>)],
    pending: &[ModelToolCall],
) -> Result<(), Refusal> {
    let mut refused = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    for (entry, answer) in entries {
        let Some(answer) = answer else { continue };
        let why = if !answer.answer.approved {
            None
        } else if !ceiling.takes_answers() {
            Some(format!(
                "this consumer's approval mode is {} ({}), which takes no approval from the queue",
                ceiling.mode, ceiling.source
            ))
        } else if answer.answer.remember == RememberScope::Project {
            Some("an answer from the queue cannot add a project rule".to_owned())
        } else if entry.session != session {
            Some(format!(
                "approval {} is of another session than the parked one",
                entry.id
            ))
        } else {
            match (&answer.call, binding(session, &entry.request, pending)) {
                (None, _) => Some(format!(
                    "approval {} names no call (it was given without one)",
                    entry.id
                )),
                (Some(_), Err(unbound)) => Some(format!(
                    "the parked session changed since approval {} was given: {unbound}",
                    entry.id
                )),
                (Some(given), Ok(runs)) if *given != runs => Some(format!(
                    "the parked session changed since approval {} was given: its call is not \
                     the one approved",
                    entry.id
                )),
                (Some(_), Ok(_)) => None,
            }
        };
        if let Some(why) = why {
            refused.push(entry.id);
            if !reasons.contains(&why) {
                reasons.push(why);
            }
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(Refusal {
            entries: refused,
            reason: reasons.join("; "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_protocol::{InvokedBy, Risk};
    use serde_json::json;

    fn ceiling(mode: ApprovalMode) -> Ceiling {
        Ceiling {
            mode,
            source: "its --approval".into(),
        }
    }

    #[test]
    fn a_batch_may_narrow_the_consumers_mode_never_widen_it() {
        use ApprovalMode::*;
        let all = [AutoDeny, Interactive, Defer, ApproveAll];
        for consumer in all {
            for asked in all {
                let got = session_mode("b", Some(asked), &ceiling(consumer));
                if reach(asked) <= reach(consumer) {
                    assert_eq!(got.unwrap(), asked, "{asked} under {consumer}");
                } else {
                    let error = got.unwrap_err().to_string();
                    for words in [
                        "batch `b`",
                        asked.as_str(),
                        consumer.as_str(),
                        "its --approval",
                        "stay queued",
                    ] {
                        assert!(error.contains(words), "{words}: {error}");
                    }
                }
            }
            assert_eq!(
                session_mode("b", None, &ceiling(consumer)).unwrap(),
                consumer
            );
        }
        let error = session_mode("b", Some(ApproveAll), &ceiling(Defer))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--approval auto_deny, interactive or defer"),
            "{error}"
        );
    }

    #[test]
    fn the_digest_is_of_the_call_not_of_how_its_json_is_written() {
        let a = call_digest(
            "s",
            "c1",
            "write_file",
            &json!({"path": "/x", "content": "y"}),
        );
        let b = call_digest(
            "s",
            "c1",
            "write_file",
            &json!({"content": "y", "path": "/x"}),
        );
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        for other in [
            call_digest(
                "s",
                "c1",
                "write_file",
                &json!({"path": "/z", "content": "y"}),
            ),
            call_digest(
                "s",
                "c2",
                "write_file",
                &json!({"path": "/x", "content": "y"}),
            ),
            call_digest(
                "t",
                "c1",
                "write_file",
                &json!({"path": "/x", "content": "y"}),
            ),
            call_digest(
                "s",
                "c1",
                "delete_file",
                &json!({"path": "/x", "content": "y"}),
            ),
        ] {
            assert_ne!(a, other);
        }
    }

    fn request(args: Value) -> ApprovalRequest {
        ApprovalRequest {
            request_id: "r".into(),
            tool_call_id: "c1".into(),
            tool_name: "write_file".into(),
            tool_kind: golem_protocol::ToolKind::Other,
            args,
            description: String::new(),
            risk: Risk::Medium,
            preview: None,
            invoked_by: InvokedBy::Model,
            worker: None,
            fields: Vec::new(),
            editable: true,
        }
    }

    fn call(arguments: &str) -> ModelToolCall {
        ModelToolCall {
            id: "c1".into(),
            name: "write_file".into(),
            arguments: arguments.into(),
        }
    }

    fn entry(id: u64, args: Value) -> InboxEntry {
        InboxEntry {
            id,
            session: "s".into(),
            worker: "w".into(),
            created: String::new(),
            batch: None,
            request: request(args),
            answer: None,
        }
    }

    fn approval(call: Option<String>, remember: RememberScope) -> QueueAnswer {
        QueueAnswer {
            answer: InboxAnswer {
                approved: true,
                remember,
                note: None,
                answered: String::new(),
            },
            call,
        }
    }

    #[test]
    fn only_an_approval_of_the_call_the_session_runs_is_taken() {
        let shown = json!({"path": "/out/b.txt", "content": "b"});
        let pending = [call(r#"{"path":"/out/b.txt","content":"b"}"#)];
        let digest = binding("s", &request(shown.clone()), &pending).unwrap();
        let open = ceiling(ApprovalMode::Defer);
        let answered = [(
            entry(1, shown.clone()),
            Some(approval(Some(digest.clone()), RememberScope::None)),
        )];
        assert_eq!(check_continuation(&open, "s", &answered, &pending), Ok(()));

        let changed = [call(r#"{"path":"/out/evil.txt","content":"b"}"#)];
        assert!(matches!(
            binding("s", &request(shown.clone()), &changed),
            Err(Unbound::Differs { .. })
        ));
        let refusal = check_continuation(&open, "s", &answered, &changed).unwrap_err();
        assert_eq!(refusal.entries, vec![1]);
        assert!(
            refusal.reason.contains("changed since"),
            "{}",
            refusal.reason
        );
        assert!(refusal.reason.contains("evil"), "{}", refusal.reason);
        assert!(matches!(
            binding("s", &request(shown.clone()), &[]),
            Err(Unbound::NotWaiting { .. })
        ));

        // Unbound, a project rule, another session's entry, an auto_deny consumer: refused.
        let unbound = [(
            entry(2, shown.clone()),
            Some(approval(None, RememberScope::None)),
        )];
        assert_eq!(
            check_continuation(&open, "s", &unbound, &pending)
                .unwrap_err()
                .entries,
            vec![2]
        );
        let rule = [(
            entry(3, shown.clone()),
            Some(approval(Some(digest.clone()), RememberScope::Project)),
        )];
        assert!(
            check_continuation(&open, "s", &rule, &pending)
                .unwrap_err()
                .reason
                .contains("project rule")
        );
        let mut elsewhere = entry(4, shown.clone());
        elsewhere.session = "t".into();
        let other = [(
            elsewhere,
            Some(approval(Some(digest.clone()), RememberScope::None)),
        )];
        assert!(check_continuation(&open, "s", &other, &pending).is_err());
        let closed = ceiling(ApprovalMode::AutoDeny);
        assert!(
            check_continuation(&closed, "s", &answered, &pending)
                .unwrap_err()
                .reason
                .contains("auto_deny")
        );

        // A denial runs nothing: taken whatever the session holds and whatever the ceiling.
        let mut denial = approval(None, RememberScope::None);
        denial.answer.approved = false;
        let denied = [(entry(5, shown), Some(denial))];
        assert_eq!(check_continuation(&open, "s", &denied, &changed), Ok(()));
        assert_eq!(check_continuation(&closed, "s", &denied, &changed), Ok(()));
    }
}
