//! What a changing tool's plan carries from `prepare` to `execute` about its approval: the
//! requirement the call was approved under, the preview diff prepared for the prompt, and the
//! file content that diff showed the user. Right before the change, `execute` refuses a
//! requirement that became stricter than the approved one (a file that was new when `create`
//! was approved exists now and `write` would ask; a path waved through because it failed
//! suddenly works) and a file that is no longer what the preview showed. The user approves
//! exactly the change that is made.

use golem_core::approval::ApprovalRequirement;
use golem_protocol::{ToolError, ToolErrorCode, ToolResultValue};

/// The approval side of one changing call's plan.
#[derive(Debug)]
pub struct Approved {
    /// The requirement `prepare` worked out (for edited arguments, the edited call's).
    requirement: ApprovalRequirement,
    /// The diff for the approval prompt, prepared when the call asks, and the content it was
    /// computed from (`None` inside: no file).
    preview: Option<(ToolResultValue, Option<Vec<u8>>)>,
    /// The content the user was shown, once the preview was taken (`None` inside: no file).
    shown: Option<Option<Vec<u8>>>,
}

impl Approved {
    /// A call approved under `requirement`, with no preview.
    pub fn new(requirement: ApprovalRequirement) -> Self {
        Self {
            requirement,
            preview: None,
            shown: None,
        }
    }

    /// Adds the preview `diff`, computed from `original`.
    pub fn with_preview(mut self, diff: ToolResultValue, original: Option<Vec<u8>>) -> Self {
        self.preview = Some((diff, original));
        self
    }

    /// Hands out the preview for the approval prompt and remembers what it showed.
    pub fn show(&mut self) -> Option<ToolResultValue> {
        let (diff, original) = self.preview.take()?;
        self.shown = Some(original);
        Some(diff)
    }

    /// Takes over what the user was shown by `shown`, the plan of the proposed call, for this
    /// plan of edited arguments on the same path.
    pub fn follow(&mut self, shown: &Approved) {
        if shown.shown.is_some() {
            self.shown.clone_from(&shown.shown);
        }
    }

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
        if now.rank() > self.requirement.rank() {
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

    /// Refuses when the file at `path` (`current`, `None`: no file) is not what the preview
    /// showed the user; a call whose preview was not shown is not checked.
    pub fn check_original(
        &self,
        path: &str,
        current: Option<&[u8]>,
        tool: &str,
    ) -> Result<(), ToolError> {
        match &self.shown {
            Some(seen) if seen.as_deref() != current => Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "{path} changed after the user approved the change shown to them; \
                     nothing was written. Read the file again and repeat the {tool} call"
                ),
            )),
            Some(_) | None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stricter_requirement_at_execution_is_refused() {
        let approved = Approved::new(ApprovalRequirement::PreApproved);
        let err = approved
            .check_requirement(&ApprovalRequirement::Ask, "write_file", "/o/a")
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert!(
            err.message.contains("Call write_file again"),
            "{}",
            err.message
        );
        approved
            .check_requirement(&ApprovalRequirement::PreApproved, "write_file", "/o/a")
            .unwrap();
    }

    #[test]
    fn an_asked_and_approved_call_passes_unless_now_blocked() {
        let approved = Approved::new(ApprovalRequirement::Ask);
        approved
            .check_requirement(&ApprovalRequirement::Ask, "t", "/p")
            .unwrap();
        let err = approved
            .check_requirement(
                &ApprovalRequirement::blocked("write is blocked in zone o"),
                "t",
                "/p",
            )
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::Blocked);
    }

    #[test]
    fn a_file_changed_after_its_preview_was_shown_is_refused() {
        let diff = ToolResultValue::text("diff");
        let mut approved = Approved::new(ApprovalRequirement::Ask)
            .with_preview(diff.clone(), Some(b"old".to_vec()));
        // Not shown yet: not checked.
        approved
            .check_original("/s/a", Some(b"new"), "edit_file")
            .unwrap();
        assert_eq!(approved.show(), Some(diff));
        assert_eq!(approved.show(), None, "the preview is handed out once");
        approved
            .check_original("/s/a", Some(b"old"), "edit_file")
            .unwrap();
        let err = approved
            .check_original("/s/a", Some(b"new"), "edit_file")
            .unwrap_err();
        assert!(err.message.contains("changed after the user approved"));
        // A file that appeared after a "new file" preview is a change too.
        let mut fresh = Approved::new(ApprovalRequirement::Ask)
            .with_preview(ToolResultValue::text("new"), None);
        fresh.show();
        assert!(fresh.check_original("/s/b", Some(b""), "t").is_err());
        fresh.check_original("/s/b", None, "t").unwrap();
    }

    #[test]
    fn edited_arguments_follow_what_the_user_was_shown() {
        let mut shown = Approved::new(ApprovalRequirement::Ask)
            .with_preview(ToolResultValue::text("diff"), Some(b"seen".to_vec()));
        let mut edited = Approved::new(ApprovalRequirement::Ask);
        edited.follow(&shown);
        edited.check_original("/s/a", Some(b"x"), "t").unwrap();
        shown.show();
        edited.follow(&shown);
        edited.check_original("/s/a", Some(b"seen"), "t").unwrap();
        assert!(edited.check_original("/s/a", Some(b"x"), "t").is_err());
    }
}
