//! The `--queue URL` of the commands on queued batches (`batch --queue`, `batch-worker`,
//! `inbox --queue`): opening it, with the password from `GOLEM_FORGE_REDIS_PASSWORD` when the
//! URL has none, and its errors as the command's. Whatever stops a command from using the queue
//! at start (a bad URL, an unreachable server, a wrong password) is one line and exit 2.

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
    let hint = match &error {
        QueueError::Connect { reason, .. }
            if reason.contains("WRONGPASS")
                || reason.contains("NOAUTH")
                || reason.contains("uthentication") =>
        {
            Some(format!(
                "give the password in the URL (redis://user:password@host:port/db) or in {PASSWORD_VAR}"
            ))
        }
        QueueError::Connect { reason, .. } if reason.contains("certificate") => Some(
            "the server's certificate is not trusted here: add its authority to the system's \
             roots or name its file in SSL_CERT_FILE"
                .into(),
        ),
        QueueError::Connect { url, reason, .. }
            if url.starts_with("redis://") && reason.contains("reset by peer") =>
        {
            Some("if the server speaks TLS, use rediss://".into())
        }
        QueueError::Connect { .. } => Some("is the server running, and is the URL right?".into()),
        _ => None,
    };
    // One line, the way out included: a consumer's log may keep only that.
    CommandError::usage(match hint {
        Some(hint) => format!("{error}; {hint}"),
        None => error.to_string(),
    })
}
