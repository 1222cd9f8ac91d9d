//! Model errors: configuration problems, HTTP failures classified for retrying, stream faults,
//! and cancellation. Messages name the provider and, for keys, the environment variable.

use std::time::Duration;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum ModelError {
    /// The model name is unusable (empty, unknown provider, bad config).
    #[error("{0}")]
    Config(String),
    /// The provider's API key is not set.
    #[error("no API key for {provider}: set the {env} environment variable")]
    MissingApiKey {
        provider: String,
        /// The variable to set.
        env: String,
    },
    /// The provider refused the key (401/403). Not retried.
    #[error("invalid API key for {provider} ({env}): {message}")]
    Auth {
        provider: String,
        /// The variable the key came from.
        env: String,
        /// The provider's message.
        message: String,
    },
    /// The provider rejected the request (400, 404, 422). Not retried.
    #[error("{provider} rejected the request (HTTP {status}): {message}")]
    Rejected {
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The request does not fit the model's context window (Anthropic's `prompt is too long`,
    /// OpenAI's `context_length_exceeded`, over HTTP or inside a stream). Not retried: the
    /// same request would not fit again.
    #[error("the request does not fit {provider}'s context window: {message}")]
    ContextOverflow {
        provider: String,
        /// The provider's message.
        message: String,
    },
    /// Rate limited, overloaded or a server error (429, 5xx, 529, `overloaded_error` in an
    /// error body). Retried.
    #[error("{provider} is unavailable (HTTP {status}): {message}")]
    Unavailable {
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// How long the provider asked us to wait.
        retry_after: Option<Duration>,
    },
    /// The connection failed or broke before a response started. Retried.
    #[error("cannot reach {provider}: {message}")]
    Transport {
        provider: String,
        /// What failed.
        message: String,
    },
    /// The stream broke off before the response was complete. The runtime may retry the turn.
    #[error("the {provider} stream ended early: {message}")]
    StreamCut {
        provider: String,
        /// What happened.
        message: String,
    },
    /// The provider reported a transient failure inside a stream that had started with HTTP 200
    /// (an `error` event saying overloaded, rate limited or failing, `response.failed`). The
    /// runtime may retry the turn, with the same backoff as an HTTP error.
    #[error("{provider} reported an error in the stream: {message}")]
    StreamError {
        provider: String,
        /// The provider's error type and message.
        message: String,
    },
    /// No content arrived on the stream for too long (pings and keep-alives do not count).
    #[error("the {provider} stream sent no content for {0:?}", .timeout)]
    IdleTimeout {
        provider: String,
        /// The idle limit.
        timeout: Duration,
    },
    /// The provider sent something we cannot read.
    #[error("unexpected data from {provider}: {message}")]
    Protocol {
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// A replayed conversation differs from the recording.
    #[error("replay diverged from {file} at exchange {exchange}: {message}")]
    ReplayDiverged {
        /// The recording.
        file: String,
        /// Which exchange (1-based).
        exchange: usize,
        /// How it differs.
        message: String,
    },
    /// The call was cancelled (interrupt).
    #[error("the model call was cancelled")]
    Cancelled,
}

impl ModelError {
    /// Whether the same request may succeed if sent again.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Unavailable { .. } | ModelError::Transport { .. } => true,
            ModelError::Config(_)
            | ModelError::MissingApiKey { .. }
            | ModelError::Auth { .. }
            | ModelError::Rejected { .. }
            | ModelError::ContextOverflow { .. }
            | ModelError::StreamCut { .. }
            | ModelError::StreamError { .. }
            | ModelError::IdleTimeout { .. }
            | ModelError::Protocol { .. }
            | ModelError::ReplayDiverged { .. }
            | ModelError::Cancelled => false,
        }
    }

    /// Whether the turn may be retried from the start after the stream had begun.
    pub fn is_retryable_turn(&self) -> bool {
        self.is_retryable()
            || matches!(
                self,
                ModelError::StreamCut { .. }
                    | ModelError::StreamError { .. }
                    | ModelError::IdleTimeout { .. }
            )
    }

    /// Whether an error text from a provider (a body, an error event) says that the request
    /// does not fit the model's context window, in any of the wire formats' words.
    pub fn says_context_overflow(text: &str) -> bool {
        let text = text.to_lowercase();
        [
            "prompt is too long",
            "context_length_exceeded",
            "maximum context length",
            "exceeds the context window",
            "context window exceeded",
        ]
        .iter()
        .any(|needle| text.contains(needle))
    }

    /// How long the provider asked us to wait, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::Unavailable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
