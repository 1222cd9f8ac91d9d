//! The names of what a batch keeps in Redis, all under `golem-forge:batch:<name>:`, and of the
//! queue's approval inbox, `golem-forge:inbox…`. One place, so that the scripts, the consumer
//! and the readers cannot disagree (docs/queue.md lists them).

use crate::error::QueueError;

/// The consumer group every `batch-worker` of every batch reads in.
pub const GROUP: &str = "golem-forge";

/// The queue's inbox: entry number → `InboxEntry` JSON (without its answer).
pub const INBOX: &str = "golem-forge:inbox";
/// Entry number → `InboxAnswer` JSON, set once.
pub const INBOX_ANSWERS: &str = "golem-forge:inbox:answers";
/// The counter entry numbers are taken from.
pub const INBOX_NEXT: &str = "golem-forge:inbox:next";

/// The keys of one batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchKeys {
    name: String,
    prefix: String,
}

impl BatchKeys {
    /// The keys of batch `name`, if the name can be used in keys.
    pub fn new(name: &str) -> Result<BatchKeys, QueueError> {
        let good = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !good {
            return Err(QueueError::BadName(name.to_owned()));
        }
        Ok(BatchKeys {
            name: name.to_owned(),
            prefix: format!("golem-forge:batch:{name}:"),
        })
    }

    /// The batch's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn key(&self, part: &str) -> String {
        format!("{}{part}", self.prefix)
    }

    /// `QueueMeta` JSON: the worker and how its items run.
    pub fn meta(&self) -> String {
        self.key("meta")
    }

    /// The stream consumers read: one entry per item (`id`, `item`, and `trace` when its
    /// producer traced: `crate::trace::ItemTrace` JSON), and one per answered parked item
    /// (`id`, `resume`: its session).
    pub fn items(&self) -> String {
        self.key("items")
    }

    /// Item id → its final `ItemResult` JSON, written once.
    pub fn results(&self) -> String {
        self.key("results")
    }

    /// Every final result as it is written (`id`, `result`), for watchers.
    pub fn results_stream(&self) -> String {
        self.key("results-stream")
    }

    /// Items given up after too many deliveries: `DeadLetter` JSON, oldest first.
    pub fn dead(&self) -> String {
        self.key("dead")
    }

    /// Item id → its run's last error, for the dead letter it may become.
    pub fn errors(&self) -> String {
        self.key("errors")
    }

    /// Item id → `ParkedItem` JSON, while the item waits for approvals.
    pub fn parked(&self) -> String {
        self.key("parked")
    }

    /// The parked items whose calls are all answered and whose `resume` entry is on the
    /// stream, until a consumer settles it (they wait for a consumer, not for an answer).
    pub fn resuming(&self) -> String {
        self.key("resuming")
    }

    /// The unanswered inbox entries of parked session `session`.
    pub fn waits(&self, session: &str) -> String {
        self.key(&format!("waits:{session}"))
    }

    /// Parked session `session`'s transcript.
    pub fn transcript(&self, session: &str) -> String {
        self.key(&format!("transcript:{session}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_change_the_key_space_are_refused() {
        assert_eq!(
            BatchKeys::new("nightly-2026.11").unwrap().items(),
            "golem-forge:batch:nightly-2026.11:items"
        );
        for bad in ["", "a:b", "a b", "*", "x/y", &"n".repeat(65)] {
            assert!(
                matches!(BatchKeys::new(bad), Err(QueueError::BadName(_))),
                "{bad}"
            );
        }
    }
}
