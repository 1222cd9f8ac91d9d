//! The approval ledger: what `approval` decided and what `preview` showed for each call id, so
//! that `execute` can refuse a change the user did not approve — because the requirement became
//! stricter in between (a new file appeared, a failing path started to work) or because the
//! file changed after its preview diff was shown.
//!
//! Entries are keyed by tool-call id, written by `approval`/`preview` and taken by `execute`.
//! Calls that never execute (denied, blocked, interrupted) leave an entry behind; only the most
//! recent [`CAPACITY`] are kept.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::Hasher;
use std::sync::{Mutex, PoisonError};

use golem_core::approval::ApprovalRequirement;
use golem_protocol::{ToolError, ToolErrorCode};

/// How many calls the ledger remembers.
const CAPACITY: usize = 1024;

/// A file's content as seen by a preview: its length and a hash (`None`: it did not exist).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(Option<(usize, u64)>);

impl Fingerprint {
    /// The fingerprint of `content` (`None`: no file).
    pub fn of(content: Option<&[u8]>) -> Self {
        Fingerprint(content.map(|bytes| {
            let mut hasher = DefaultHasher::new();
            hasher.write(bytes);
            (bytes.len(), hasher.finish())
        }))
    }
}

/// What was decided and shown for one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// The requirement `approval` returned last (for edited arguments, the edited call's).
    approved: Option<ApprovalRequirement>,
    /// The virtual path and content the preview diff was computed from.
    previewed: Option<(String, Fingerprint)>,
}

impl Entry {
    /// Refuses when `now` (the zone's requirement for the call as things stand) is stricter
    /// than what was approved; `tool` and `path` name the call in the message.
    pub fn check_requirement(
        &self,
        now: &ApprovalRequirement,
        tool: &str,
        path: &str,
    ) -> Result<(), ToolError> {
        if let ApprovalRequirement::Blocked { reason } = now {
            return Err(ToolError::new(ToolErrorCode::Blocked, reason.clone()));
        }
        let Some(approved) = &self.approved else {
            return Ok(());
        };
        if rank(now) > rank(approved) {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "{path} changed between the approval check and the {tool} call (for \
                     example, it exists now), so the call needs a different approval; nothing \
                     was changed. Call {tool} again"
                ),
            ));
        }
        Ok(())
    }

    /// Refuses when the file at `path` is not what the preview showed the user.
    pub fn check_original(
        &self,
        path: &str,
        current: Option<&[u8]>,
        tool: &str,
    ) -> Result<(), ToolError> {
        match &self.previewed {
            Some((seen_path, seen)) if seen_path == path && *seen != Fingerprint::of(current) => {
                Err(ToolError::new(
                    ToolErrorCode::ExecutionError,
                    format!(
                        "{path} changed after the user approved the change shown to them; \
                         nothing was written. Read the file again and repeat the {tool} call"
                    ),
                ))
            }
            Some(_) | None => Ok(()),
        }
    }
}

fn rank(requirement: &ApprovalRequirement) -> u8 {
    match requirement {
        ApprovalRequirement::PreApproved => 0,
        ApprovalRequirement::Ask => 1,
        ApprovalRequirement::Blocked { .. } => 2,
    }
}

/// Entries by call id, most recent last.
#[derive(Debug, Default)]
pub struct Ledger {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    order: VecDeque<String>,
}

impl Inner {
    fn entry(&mut self, call_id: &str) -> &mut Entry {
        if !self.entries.contains_key(call_id) {
            self.order.push_back(call_id.to_owned());
            while self.order.len() > CAPACITY {
                if let Some(old) = self.order.pop_front() {
                    self.entries.remove(&old);
                }
            }
        }
        self.entries.entry(call_id.to_owned()).or_default()
    }
}

impl Ledger {
    /// Records the requirement `approval` returned for `call_id`.
    pub fn approved(&self, call_id: &str, requirement: &ApprovalRequirement) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.entry(call_id).approved = Some(requirement.clone());
    }

    /// Records the file content a preview for `call_id` was computed from.
    pub fn previewed(&self, call_id: &str, path: &str, original: Option<&[u8]>) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.entry(call_id).previewed = Some((path.to_owned(), Fingerprint::of(original)));
    }

    /// Takes the entry of `call_id` (empty when the call was never checked).
    pub fn take(&self, call_id: &str) -> Entry {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match inner.entries.remove(call_id) {
            Some(entry) => {
                inner.order.retain(|id| id != call_id);
                entry
            }
            None => Entry::default(),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stricter_requirement_at_execution_is_refused() {
        let ledger = Ledger::default();
        ledger.approved("c1", &ApprovalRequirement::PreApproved);
        let entry = ledger.take("c1");
        let err = entry
            .check_requirement(&ApprovalRequirement::Ask, "write_file", "/o/a")
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert!(
            err.message.contains("Call write_file again"),
            "{}",
            err.message
        );
        entry
            .check_requirement(&ApprovalRequirement::PreApproved, "write_file", "/o/a")
            .unwrap();
    }

    #[test]
    fn an_asked_and_approved_call_passes_unless_now_blocked() {
        let ledger = Ledger::default();
        ledger.approved("c1", &ApprovalRequirement::Ask);
        let entry = ledger.take("c1");
        entry
            .check_requirement(&ApprovalRequirement::Ask, "t", "/p")
            .unwrap();
        let err = entry
            .check_requirement(
                &ApprovalRequirement::blocked("write is blocked in zone o"),
                "t",
                "/p",
            )
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::Blocked);
    }

    #[test]
    fn a_call_without_entry_is_not_checked() {
        let entry = Ledger::default().take("unknown");
        entry
            .check_requirement(&ApprovalRequirement::Ask, "t", "/p")
            .unwrap();
        entry.check_original("/p", Some(b"x"), "t").unwrap();
    }

    #[test]
    fn a_file_changed_after_its_preview_is_refused() {
        let ledger = Ledger::default();
        ledger.previewed("c1", "/s/a", Some(b"old"));
        let entry = ledger.take("c1");
        entry
            .check_original("/s/a", Some(b"old"), "edit_file")
            .unwrap();
        let err = entry
            .check_original("/s/a", Some(b"new"), "edit_file")
            .unwrap_err();
        assert!(err.message.contains("changed after the user approved"));
        // A file that appeared after a "new file" preview is a change too.
        ledger.previewed("c2", "/s/b", None);
        assert!(
            ledger
                .take("c2")
                .check_original("/s/b", Some(b""), "t")
                .is_err()
        );
        // Edited arguments naming another path are not compared with the old preview.
        ledger.previewed("c3", "/s/c", Some(b"x"));
        ledger
            .take("c3")
            .check_original("/s/d", Some(b"y"), "t")
            .unwrap();
    }

    #[test]
    fn entries_are_taken_once_and_bounded() {
        let ledger = Ledger::default();
        ledger.approved("c1", &ApprovalRequirement::Ask);
        assert_ne!(ledger.take("c1"), Entry::default());
        assert_eq!(ledger.take("c1"), Entry::default());
        for i in 0..CAPACITY + 10 {
            ledger.approved(&format!("c{i}"), &ApprovalRequirement::Ask);
        }
        assert_eq!(ledger.len(), CAPACITY);
        assert_eq!(ledger.take("c0"), Entry::default());
        assert_ne!(ledger.take(&format!("c{}", CAPACITY + 9)), Entry::default());
    }
}
