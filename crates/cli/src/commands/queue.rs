//! The `--queue URL` of the commands on queued batches (`batch --queue`, `batch-worker`,
//! `inbox --queue`): opening it, with the password from `GOLEM_FORGE_REDIS_PASSWORD` when the
//! URL has none, and its errors as the command's. Whatever stops a command from using the queue
//! at start (a bad URL, an unreachable server, a wrong password) is one line, saying what to
//! do (`golem_queue::connect` knows why), and exit 2. Commands printed as hints name the
//! queue so that they can be pasted as they stand ([`queue_words`]).

use golem_queue::connect::PASSWORD_VAR;
use golem_queue::{Queue, QueueError, QueueUrl};

use crate::cli_error::CommandError;
use crate::shell_word::shell_word;

/// Connects to the queue at `url`, checking the credentials.
pub(super) async fn open_queue(url: &str) -> Result<Queue, CommandError> {
    let url = QueueUrl::parse(url, std::env::var(PASSWORD_VAR).ok()).map_err(queue_error)?;
    Queue::open(&url).await.map_err(queue_error)
}

/// `--queue URL` as words of a command to paste: the URL without its password (the command
/// then takes it from `GOLEM_FORGE_REDIS_PASSWORD`), quoted for a shell when it must be.
pub(super) fn queue_words(queue: &Queue) -> String {
    format!("--queue {}", shell_word(queue.for_commands()))
}

/// [`queue_words`] for the URL `url` as given, before connecting (`None`: not a queue URL).
pub(super) fn url_words(url: &str) -> Option<String> {
    let url = QueueUrl::parse(url, std::env::var(PASSWORD_VAR).ok()).ok()?;
    Some(format!("--queue {}", shell_word(url.for_commands())))
}

/// What a hint adds after a pasteable command when the queue needs a password.
pub(super) fn password_note(queue: &Queue) -> String {
    if queue.has_password() {
        format!(" (with the password in {PASSWORD_VAR})")
    } else {
        String::new()
    }
}

/// A queue error as the command's (usage: exit 2; nothing was changed that the error hides).
pub(super) fn queue_error(error: QueueError) -> CommandError {
    CommandError::usage(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_with_shell_characters_is_one_quoted_word() {
        assert_eq!(
            shell_word("redis://127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert_eq!(
            shell_word("redis://h/0?protocol=resp3&x=1"),
            "'redis://h/0?protocol=resp3&x=1'"
        );
        assert_eq!(shell_word("a'b"), r"'a'\''b'");
    }
}
