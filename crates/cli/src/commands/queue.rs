//! The `--queue URL` of the commands on queued batches (`batch --queue`, `batch-worker`,
//! `inbox --queue`): opening it, with the password from `GOLEM_FORGE_REDIS_PASSWORD` when the
//! URL has none, and its errors as the command's. Whatever stops a command from using the queue
//! at start (a bad URL, an unreachable server, a wrong password) is one line, saying what to
//! do (`golem_queue::connect` knows why), and exit 2.

use golem_queue::connect::PASSWORD_VAR;
use golem_queue::{Queue, QueueError, QueueUrl};

use crate::cli_error::CommandError;

/// Connects to the queue at `url`, checking the credentials.
pub(super) async fn open_queue(url: &str) -> Result<Queue, CommandError> {
    let url = QueueUrl::parse(url, std::env::var(PASSWORD_VAR).ok()).map_err(queue_error)?;
    Queue::open(&url).await.map_err(queue_error)
}

/// A queue error as the command's (usage: exit 2; nothing was changed that the error hides).
pub(super) fn queue_error(error: QueueError) -> CommandError {
    CommandError::usage(error.to_string())
}
