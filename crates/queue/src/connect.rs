//! Where the queue is and how to talk to it: a `redis://` or `rediss://` (TLS) URL, with the
//! user and password in it or the password in `GOLEM_FORGE_REDIS_PASSWORD`. [`Queue::open`]
//! connects and checks the credentials at once, so that a wrong password or an unreachable
//! server is one clear error at start; after that, a lost connection is retried with backoff
//! ([`Queue::call`]) while the connection manager reconnects. The URL is only ever shown with
//! its password hidden, and given in commands to paste without it ([`QueueUrl::for_commands`]:
//! the password then comes from the variable).

use std::future::Future;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ConnectionAddr, IntoConnectionInfo, RedisError, RedisResult};

use crate::error::QueueError;

/// The variable a password is read from when the URL has none.
pub const PASSWORD_VAR: &str = "GOLEM_FORGE_REDIS_PASSWORD";

/// The longest wait between two tries of a command whose connection was lost.
const LONGEST_BACKOFF: Duration = Duration::from_secs(5);

/// A parsed queue URL.
#[derive(Debug, Clone)]
pub struct QueueUrl {
    info: redis::ConnectionInfo,
    shown: String,
    for_commands: String,
}

impl QueueUrl {
    /// Parses `url`; `password` (from [`PASSWORD_VAR`]) is used when the URL has none.
    pub fn parse(url: &str, password: Option<String>) -> Result<QueueUrl, QueueError> {
        let shown = hide_password(url);
        let for_commands = drop_password(url);
        let bad = |reason: String| QueueError::BadUrl {
            url: shown.clone(),
            reason,
        };
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
            return Err(bad("it must start with redis:// or rediss://".into()));
        }
        let mut info = url.into_connection_info().map_err(|e| bad(e.to_string()))?;
        if info.redis_settings().password().is_none()
            && let Some(password) = password.filter(|p| !p.is_empty())
        {
            let settings = info.redis_settings().clone().set_password(password);
            info = info.set_redis_settings(settings);
        }
        Ok(QueueUrl {
            info,
            shown,
            for_commands,
        })
    }

    /// The URL with its password hidden, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The URL without its password, for commands printed to be pasted: given it, a command
    /// takes the password from [`PASSWORD_VAR`].
    pub fn for_commands(&self) -> &str {
        &self.for_commands
    }

    /// Whether the connection uses a password (from the URL or [`PASSWORD_VAR`]).
    pub fn has_password(&self) -> bool {
        self.info.redis_settings().password().is_some()
    }

    /// Whether the connection is encrypted.
    pub fn is_tls(&self) -> bool {
        matches!(self.info.addr(), ConnectionAddr::TcpTls { .. })
    }
}

/// `url` with the password between `:` and `@` of its authority replaced by `***`.
fn hide_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{path}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// `url` without the password of its authority (`redis://user@host/0`, `redis://host/0`).
fn drop_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some(("", _)) => format!("{scheme}://{host}{path}"),
            Some((user, _)) => format!("{scheme}://{user}@{host}{path}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// A connection to the queue, shared by the tasks of one process (cheap to clone).
#[derive(Clone)]
pub struct Queue {
    connection: ConnectionManager,
    shown: String,
    for_commands: String,
    has_password: bool,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").field("url", &self.shown).finish()
    }
}

impl Queue {
    /// Connects to `url` and checks that commands are accepted (credentials, database).
    pub async fn open(url: &QueueUrl) -> Result<Queue, QueueError> {
        let refused = |e: RedisError| QueueError::Connect {
            url: url.shown.clone(),
            reason: one_line(&e),
            hint: way_out(&e, url.is_tls()),
        };
        let client = redis::Client::open(url.info.clone()).map_err(refused)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(3)))
            .set_response_timeout(Some(Duration::from_secs(10)))
            .set_max_delay(Duration::from_secs(2))
            .set_number_of_retries(3);
        let mut connection = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(refused)?;
        let _: String = redis::cmd("PING")
            .query_async(&mut connection)
            .await
            .map_err(refused)?;
        Ok(Queue {
            connection,
            shown: url.shown.clone(),
            for_commands: url.for_commands.clone(),
            has_password: url.has_password(),
        })
    }

    /// The URL, its password hidden.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The URL without its password, for commands to paste ([`QueueUrl::for_commands`]).
    pub fn for_commands(&self) -> &str {
        &self.for_commands
    }

    /// Whether the connection uses a password, which a pasted command takes from
    /// [`PASSWORD_VAR`].
    pub fn has_password(&self) -> bool {
        self.has_password
    }

    /// Runs `command` on the connection, trying again with growing pauses while the failure
    /// is a lost connection (or a server still loading its data), for at most `patience`
    /// (`None`: until it succeeds). `doing` names the step in errors and logs.
    pub async fn call<T, F, Fut>(
        &self,
        doing: &str,
        patience: Option<Duration>,
        mut command: F,
    ) -> Result<T, QueueError>
    where
        F: FnMut(ConnectionManager) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        let mut warned = false;
        loop {
            match command(self.connection.clone()).await {
                Ok(value) => {
                    if warned {
                        tracing::warn!(queue = %self.shown, "the queue is reachable again");
                    }
                    return Ok(value);
                }
                Err(e) if is_transient(&e) && patience.is_none_or(|p| started.elapsed() < p) => {
                    if !warned {
                        tracing::warn!(queue = %self.shown, doing, error = %one_line(&e),
                            "the queue connection was lost; trying again");
                        warned = true;
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(LONGEST_BACKOFF);
                }
                Err(e) => {
                    return Err(QueueError::Command {
                        url: self.shown.clone(),
                        doing: doing.to_owned(),
                        reason: one_line(&e),
                    });
                }
            }
        }
    }
}

/// Whether `error` is a lost or not yet restored connection, which a later try may get past.
fn is_transient(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_dropped()
        || error.is_timeout()
        || error.is_connection_refusal()
        || error.is_unrecoverable_error()
        || matches!(
            error.kind(),
            redis::ErrorKind::Server(
                redis::ServerErrorKind::BusyLoading | redis::ServerErrorKind::TryAgain
            )
        )
}

/// What to do about `error`, a failure to connect (`tls`: the URL asked for TLS).
fn way_out(error: &RedisError, tls: bool) -> String {
    let text = error.to_string();
    let refused_credentials = error.kind() == redis::ErrorKind::AuthenticationFailed
        || text.contains("WRONGPASS")
        || text.contains("NOAUTH");
    if refused_credentials {
        return format!(
            "give the password in the URL (redis://user:password@host:port/db) or in {PASSWORD_VAR}"
        );
    }
    let hint = if text.contains("certificate") {
        "the server's certificate is not trusted here: add its authority to the system's roots \
         or name its file in SSL_CERT_FILE"
    } else if !tls && text.contains("reset by peer") {
        "if the server speaks TLS, use rediss://"
    } else {
        "is the server running, and is the URL right?"
    };
    hint.to_owned()
}

/// `error` on one line.
fn one_line(error: &RedisError) -> String {
    error
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden_and_taken_from_the_variable_only_when_missing() {
        let url = QueueUrl::parse(
            "redis://app:s3cret@queue.local:6380/2",
            Some("other".into()),
        )
        .unwrap();
        assert_eq!(url.shown(), "redis://app:***@queue.local:6380/2");
        assert_eq!(url.for_commands(), "redis://app@queue.local:6380/2");
        assert!(url.has_password());
        let pasted = QueueUrl::parse(url.for_commands(), Some("s3cret".into())).unwrap();
        assert_eq!(pasted.info.redis_settings().password(), Some("s3cret"));
        assert_eq!(pasted.info.redis_settings().username(), Some("app"));
        let bare = QueueUrl::parse("redis://:pw@queue.local/0", None).unwrap();
        assert_eq!(bare.for_commands(), "redis://queue.local/0");
        assert!(
            !QueueUrl::parse("redis://queue.local/0", None)
                .unwrap()
                .has_password()
        );
        assert_eq!(url.info.redis_settings().password(), Some("s3cret"));
        assert_eq!(url.info.redis_settings().username(), Some("app"));
        let url = QueueUrl::parse("redis://queue.local/0", Some("fromenv".into())).unwrap();
        assert_eq!(url.info.redis_settings().password(), Some("fromenv"));
        assert_eq!(url.shown(), "redis://queue.local/0");
        assert!(!url.is_tls());
        assert!(
            QueueUrl::parse("rediss://queue.local:6380/0", None)
                .unwrap()
                .is_tls()
        );
    }

    #[test]
    fn other_schemes_are_refused_without_showing_the_password() {
        let err = QueueUrl::parse("http://u:pw@host/0", None).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("u:***@host"), "{text}");
        assert!(!text.contains("pw"), "{text}");
        assert!(QueueUrl::parse("redis://host:notaport/0", None).is_err());
    }
}
