//! What can go wrong between this program and the queue.

/// Why a queue operation failed.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The URL is not a Redis URL this program can use.
    #[error(
        "`{url}` is not a queue URL ({reason}); expected redis://[user:password@]host:port/db or rediss://… for TLS"
    )]
    BadUrl {
        /// The URL as given, its password hidden.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The server could not be reached, or refused the credentials, at start. One line, the
    /// way out included: a consumer's log may keep only that.
    #[error("cannot use the queue at {url}: {reason}; {hint}")]
    Connect {
        /// The URL, its password hidden.
        url: String,
        /// Why, in one line.
        reason: String,
        /// What to do about it.
        hint: String,
    },
    /// A command failed for a reason retrying does not mend (or the retries ran out).
    #[error("the queue at {url} failed while {doing}: {reason}")]
    Command {
        /// The URL, its password hidden.
        url: String,
        /// What was being done.
        doing: String,
        /// Why.
        reason: String,
    },
    /// A batch name that cannot be used in key names.
    #[error("`{0}` is not a batch name: use 1 to 64 letters, digits, `.`, `_` or `-`")]
    BadName(String),
    /// No batch of this name on this queue.
    #[error("no batch `{0}` on this queue")]
    UnknownBatch(String),
    /// The name is taken by a batch of another worker or other items.
    #[error("batch `{name}` is on the queue already with {what}; pick another --name")]
    NameTaken {
        /// The batch's name.
        name: String,
        /// What differs.
        what: String,
    },
    /// Something in Redis is not what this program writes.
    #[error("the queue holds a damaged {what}: {reason}")]
    Damaged {
        /// Which value.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The inbox has no entry of this number.
    #[error("no approval {0} waits in the queue's inbox")]
    NoEntry(u64),
    /// The entry was answered before.
    #[error("approval {0} was already answered; a consumer continues its item")]
    AlreadyAnswered(u64),
    /// A batch asks for an approval mode that lets more through without a person than the
    /// consumer's own (`crate::consent`). Nothing was taken from the queue.
    #[error(
        "batch `{batch}` asks for approval mode {asked}, which lets more through without a \
         person than this consumer's {ceiling} ({set_by}); nothing was taken, its items stay \
         queued: to allow it, run this consumer with --approval {asked}; else queue the items \
         under a new name with --approval {within}"
    )]
    WiderConsent {
        /// The batch.
        batch: String,
        /// The mode its settings on the queue ask for.
        asked: golem_protocol::ApprovalMode,
        /// The consumer's own mode.
        ceiling: golem_protocol::ApprovalMode,
        /// Where the consumer's mode was set.
        set_by: String,
        /// The modes the consumer would take, in words.
        within: String,
    },
    /// An approval cannot be given: the call the entry shows is not the one its parked
    /// session would run (`crate::consent::binding`).
    #[error("approval {id} cannot be given: {reason}; nothing was answered and it still waits")]
    NotBound {
        /// The entry.
        id: u64,
        /// Why.
        reason: String,
    },
    /// The call of an entry is not the one `inbox --queue show` showed (`--call`).
    #[error(
        "the parked session of approval {id} changed since it was shown: {reason}; nothing \
         was answered and it still waits (show it again before answering)"
    )]
    ChangedSinceShown {
        /// The entry.
        id: u64,
        /// What differs.
        reason: String,
    },
    /// A parked session could not be carried (too big, unreadable here, not writable there).
    #[error("the parked session {session} cannot travel: {reason}")]
    Travel {
        /// The session.
        session: String,
        /// Why.
        reason: String,
    },
}

impl QueueError {
    /// A value read from Redis that does not parse.
    pub(crate) fn damaged(what: impl Into<String>, reason: impl std::fmt::Display) -> QueueError {
        QueueError::Damaged {
            what: what.into(),
            reason: reason.to_string(),
        }
    }
}
