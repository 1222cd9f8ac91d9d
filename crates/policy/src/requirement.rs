//! What a tool call requires before it may run: the gate's input, ordered by strictness.

/// The gate's input for one call, decided by the tool from its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalRequirement {
    /// Runs without asking.
    PreApproved,
    /// Runs only with consent (session memory, a project rule, the mode, or the user).
    Ask,
    /// Runs only when a person approves this very call: never by session memory, a project
    /// rule or `approve_all`, and an answer "for the session" or "for the project" is not
    /// kept. Used for protected files that a zone's `unprotect` lets through.
    AskUser {
        /// A line added to the request's description (why a person must look).
        warning: String,
    },
    /// Never runs and is never offered for approval.
    Blocked {
        /// Why, shown to the model.
        reason: String,
    },
}

impl ApprovalRequirement {
    /// A blocked requirement with a reason.
    pub fn blocked(reason: impl Into<String>) -> Self {
        ApprovalRequirement::Blocked {
            reason: reason.into(),
        }
    }

    /// A requirement only a person may answer, with `warning` in the prompt.
    pub fn ask_user(warning: impl Into<String>) -> Self {
        ApprovalRequirement::AskUser {
            warning: warning.into(),
        }
    }

    /// How strict it is: pre-approved 0, ask 1, ask the user 2, blocked 3.
    pub fn rank(&self) -> u8 {
        match self {
            ApprovalRequirement::PreApproved => 0,
            ApprovalRequirement::Ask => 1,
            ApprovalRequirement::AskUser { .. } => 2,
            ApprovalRequirement::Blocked { .. } => 3,
        }
    }

    /// The stricter of two requirements (blocked > ask the user > ask > pre-approved); the
    /// first reason (or warning) wins when both are of the same kind.
    pub fn strictest(self, other: ApprovalRequirement) -> ApprovalRequirement {
        match (self, other) {
            (blocked @ ApprovalRequirement::Blocked { .. }, _) => blocked,
            (_, blocked @ ApprovalRequirement::Blocked { .. }) => blocked,
            (user @ ApprovalRequirement::AskUser { .. }, _) => user,
            (_, user @ ApprovalRequirement::AskUser { .. }) => user,
            (ApprovalRequirement::Ask, _) | (_, ApprovalRequirement::Ask) => {
                ApprovalRequirement::Ask
            }
            (ApprovalRequirement::PreApproved, ApprovalRequirement::PreApproved) => {
                ApprovalRequirement::PreApproved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictest_orders_requirements() {
        use ApprovalRequirement::*;
        assert_eq!(PreApproved.strictest(PreApproved), PreApproved);
        assert_eq!(PreApproved.strictest(Ask), Ask);
        assert_eq!(Ask.strictest(PreApproved), Ask);
        assert_eq!(
            Ask.strictest(ApprovalRequirement::blocked("x")),
            ApprovalRequirement::blocked("x")
        );
        assert_eq!(
            ApprovalRequirement::blocked("a").strictest(ApprovalRequirement::blocked("b")),
            ApprovalRequirement::blocked("a")
        );
        let user = ApprovalRequirement::ask_user("look");
        assert_eq!(Ask.strictest(user.clone()), user);
        assert_eq!(user.clone().strictest(PreApproved), user);
        assert_eq!(
            user.clone().strictest(ApprovalRequirement::blocked("x")),
            ApprovalRequirement::blocked("x")
        );
        assert!(PreApproved.rank() < Ask.rank() && Ask.rank() < user.rank());
    }
}
