//! Retries with exponential backoff and full jitter, honouring the provider's `retry-after`,
//! and the one retry budget of a turn ([`RetryBudget`]) that HTTP retries and turn retries
//! both spend.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rand::RngExt;

use crate::error::ModelError;

/// When and how often to retry a failed request: the limits of one turn's [`RetryBudget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first request of a turn, HTTP retries and turn retries together.
    pub max_retries: u32,
    /// The backoff before the first retry (doubled each time, then jittered).
    pub base_delay: Duration,
    /// The longest wait between attempts, also the cap on `retry-after`.
    pub max_delay: Duration,
    /// No retry starts after this long since the turn's first request (its headers wait is
    /// cut short at this bound too); a stream that is making progress is never cut.
    pub wall_limit: Duration,
    /// How often a turn is retried after a stream went idle (stalled).
    pub stall_retries: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
            wall_limit: Duration::from_secs(180),
            stall_retries: 1,
        }
    }
}

impl RetryPolicy {
    /// No retries (for tests of the first failure).
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The wait before retry number `retry` (0-based): the provider's `retry-after` when given,
    /// otherwise a random duration in `[backoff / 2, backoff]` with `backoff = base * 2^retry`;
    /// both capped at `max_delay`.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_delay);
        }
        let backoff = self
            .base_delay
            .saturating_mul(1u32 << retry.min(20))
            .min(self.max_delay);
        let half = backoff / 2;
        let jitter_ms = u64::try_from(half.as_millis()).unwrap_or(u64::MAX);
        let extra = if jitter_ms == 0 {
            0
        } else {
            rand::rng().random_range(0..=jitter_ms)
        };
        half + Duration::from_millis(extra)
    }
}

/// One retry the budget allowed: what failed, which retry this is and how long it waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// The failure being retried.
    pub error: ModelError,
    /// This retry's number (1-based).
    pub retry: u32,
    /// The most retries of the turn.
    pub max_retries: u32,
    /// The wait before it.
    pub wait: Duration,
}

impl std::fmt::Display for RetryNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}; retrying in {:.1}s ({}/{})",
            self.error,
            self.wait.as_secs_f64(),
            self.retry,
            self.max_retries
        )
    }
}

/// What a budget's retries took so far (a model call's `retries` and waits, for traces).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryTally {
    /// Retries made: those the budget allowed, and those of rate-limit answers under the
    /// shared rate gate, which spend none of it.
    pub retries: u32,
    /// The waits before retries and at the shared rate gate.
    pub waited: Duration,
    /// The part of `waited` owed to rate limits ([`crate::rate::is_rate_limit`] answers and
    /// the gate's pauses).
    pub rate_limit_waited: Duration,
}

/// Told of every retry a budget allows (the runtime shows it as one `status` line).
pub type RetryNotifier = Arc<dyn Fn(&RetryNotice) + Send + Sync>;

#[derive(Debug)]
struct BudgetState {
    /// The limits; set by the runtime or by the first HTTP request of the turn.
    policy: Option<RetryPolicy>,
    /// When the budget was made (the turn began).
    started: Instant,
    /// Retries spent (HTTP and turn).
    retries: u32,
    /// Turn retries spent after a stall.
    stalls: u32,
    /// What the retries took, the gate's included.
    tally: RetryTally,
}

tokio::task_local! {
    static CURRENT: RetryBudget;
}

/// The retry budget of one turn, shared by the HTTP retries of each request
/// (`http::send_with_retry`) and the runtime's retries of the whole turn after a broken stream:
/// at most [`RetryPolicy::max_retries`] retries in all, none started after
/// [`RetryPolicy::wall_limit`], at most [`RetryPolicy::stall_retries`] after a stall, each
/// after the policy's backoff. Cloning shares the budget. The runtime runs a turn inside
/// [`RetryBudget::scope`], so the requests of that turn spend from it; a request outside any
/// scope gets a budget of its own.
#[derive(Clone)]
pub struct RetryBudget {
    state: Arc<Mutex<BudgetState>>,
    notify: Option<RetryNotifier>,
}

impl std::fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryBudget")
            .field("state", &self.state)
            .field("notify", &self.notify.is_some())
            .finish()
    }
}

impl Default for RetryBudget {
    fn default() -> Self {
        Self::new(None)
    }
}

impl RetryBudget {
    /// A fresh budget, its wall clock started, with `policy` as its limits, or, when `None`,
    /// the limits of the first HTTP request's settings (the defaults when there is none).
    pub fn new(policy: Option<RetryPolicy>) -> Self {
        Self {
            state: Arc::new(Mutex::new(BudgetState {
                policy,
                started: Instant::now(),
                retries: 0,
                stalls: 0,
                tally: RetryTally::default(),
            })),
            notify: None,
        }
    }

    /// Tells `notify` of every retry instead of logging a warning.
    pub fn with_notifier(mut self, notify: RetryNotifier) -> Self {
        self.notify = Some(notify);
        self
    }

    /// The budget of the turn this task runs, if any.
    pub fn current() -> Option<Self> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// Runs `future` with this budget as the current one.
    pub async fn scope<F: Future>(&self, future: F) -> F::Output {
        CURRENT.scope(self.clone(), future).await
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BudgetState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request is about to be sent under `policy` (its provider's settings): unless the
    /// budget has limits already, they are that policy's.
    pub fn start_request(&self, policy: RetryPolicy) {
        self.lock().policy.get_or_insert(policy);
    }

    /// The limits in force.
    pub fn policy(&self) -> RetryPolicy {
        self.lock().policy.unwrap_or_default()
    }

    /// Time left before the wall limit.
    pub fn remaining(&self) -> Duration {
        let state = self.lock();
        let limit = state.policy.unwrap_or_default().wall_limit;
        limit.saturating_sub(state.started.elapsed())
    }

    /// What the retries took so far.
    pub fn tally(&self) -> RetryTally {
        self.lock().tally
    }

    /// A rate-limit answer is tried again under the shared rate gate, without spending the
    /// budget: counted as a retry all the same.
    pub fn gate_retry(&self) {
        self.lock().tally.retries += 1;
    }

    /// A request waited `wait` at the shared rate gate (a rate-limit pause).
    pub fn gate_waited(&self, wait: Duration) {
        let mut state = self.lock();
        state.tally.waited += wait;
        state.tally.rate_limit_waited += wait;
    }

    /// Spends one retry after `error` if the budget allows it, and returns the wait before it;
    /// `None` when the budget is spent (retries, stalls or wall time). The caller decides
    /// whether `error` is retryable at all. An allowed retry is told to the notifier, or
    /// logged as a warning when there is none.
    pub fn next_retry(&self, error: &ModelError) -> Option<Duration> {
        let notice = {
            let mut state = self.lock();
            let policy = state.policy.unwrap_or_default();
            if state.retries >= policy.max_retries {
                return None;
            }
            let stalled = matches!(error, ModelError::IdleTimeout { .. });
            if stalled && state.stalls >= policy.stall_retries {
                return None;
            }
            let wait = policy.delay(state.retries, error.retry_after());
            if state.started.elapsed().saturating_add(wait) >= policy.wall_limit {
                return None;
            }
            state.retries += 1;
            if stalled {
                state.stalls += 1;
            }
            state.tally.retries += 1;
            state.tally.waited += wait;
            if crate::rate::is_rate_limit(error) {
                state.tally.rate_limit_waited += wait;
            }
            RetryNotice {
                error: error.clone(),
                retry: state.retries,
                max_retries: policy.max_retries,
                wait,
            }
        };
        match &self.notify {
            Some(notify) => {
                tracing::debug!(%notice, "retrying the model request");
                notify(&notice);
            }
            None => tracing::warn!(%notice, "retrying the model request"),
        }
        Some(notice.wait)
    }
}

/// Reads `retry-after` (seconds) or `retry-after-ms` headers.
pub fn parse_retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    text("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_caps() {
        let policy = RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            ..RetryPolicy::default()
        };
        for _ in 0..50 {
            let d0 = policy.delay(0, None);
            assert!(
                d0 >= Duration::from_millis(50) && d0 <= Duration::from_millis(100),
                "{d0:?}"
            );
            let d3 = policy.delay(3, None);
            assert!(
                d3 >= Duration::from_millis(400) && d3 <= Duration::from_millis(800),
                "{d3:?}"
            );
            let d10 = policy.delay(10, None);
            assert!(
                d10 >= Duration::from_millis(500) && d10 <= Duration::from_secs(1),
                "{d10:?}"
            );
        }
        assert_eq!(
            policy.delay(0, Some(Duration::from_millis(7))),
            Duration::from_millis(7)
        );
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(600))),
            Duration::from_secs(1)
        );
    }

    fn unavailable() -> ModelError {
        ModelError::Unavailable {
            provider: "p".into(),
            status: 500,
            message: "down".into(),
            retry_after: None,
        }
    }

    fn quick(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            ..RetryPolicy::default()
        }
    }

    #[test]
    fn a_budget_is_shared_and_spent_once() {
        let budget = RetryBudget::new(Some(quick(3)));
        let shared = budget.clone();
        assert!(budget.next_retry(&unavailable()).is_some());
        assert!(shared.next_retry(&unavailable()).is_some());
        assert!(budget.next_retry(&unavailable()).is_some());
        assert_eq!(shared.next_retry(&unavailable()), None);
        // The first request's settings do not replace limits already set.
        budget.start_request(quick(10));
        assert_eq!(budget.policy().max_retries, 3);
    }

    #[test]
    fn limits_come_from_the_first_request_when_unset() {
        let budget = RetryBudget::new(None);
        budget.start_request(quick(1));
        budget.start_request(quick(7));
        assert_eq!(budget.policy().max_retries, 1);
        assert!(budget.next_retry(&unavailable()).is_some());
        assert_eq!(budget.next_retry(&unavailable()), None);
    }

    #[test]
    fn a_stall_is_retried_once_and_the_wall_limit_stops_retries() {
        let idle = ModelError::IdleTimeout {
            provider: "p".into(),
            timeout: Duration::from_secs(1),
        };
        let budget = RetryBudget::new(Some(quick(4)));
        assert!(budget.next_retry(&idle).is_some());
        assert_eq!(budget.next_retry(&idle), None);
        assert!(budget.next_retry(&unavailable()).is_some());

        let walled = RetryBudget::new(Some(RetryPolicy {
            wall_limit: Duration::ZERO,
            ..quick(4)
        }));
        assert_eq!(walled.remaining(), Duration::ZERO);
        assert_eq!(walled.next_retry(&unavailable()), None);
    }

    #[test]
    fn each_retry_is_told_once_in_one_line() {
        let told = Arc::new(Mutex::new(Vec::new()));
        let sink = told.clone();
        let budget = RetryBudget::new(Some(quick(2))).with_notifier(Arc::new(
            move |notice: &RetryNotice| sink.lock().unwrap().push(notice.to_string()),
        ));
        budget.next_retry(&unavailable());
        budget.next_retry(&unavailable());
        budget.next_retry(&unavailable());
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 2, "{told:?}");
        assert!(
            told[1].starts_with("p is unavailable (HTTP 500): down; retrying in 0.0s (2/2)"),
            "{told:?}"
        );
    }

    #[test]
    fn the_tally_counts_retries_and_their_waits_rate_limits_apart() {
        let budget = RetryBudget::new(Some(quick(5)));
        assert_eq!(budget.tally(), RetryTally::default());
        let limited = ModelError::Unavailable {
            provider: "p".into(),
            status: 429,
            message: "slow down".into(),
            retry_after: Some(Duration::from_millis(2)),
        };
        let first = budget.next_retry(&limited).unwrap();
        let second = budget.next_retry(&unavailable()).unwrap();
        budget.gate_retry();
        budget.gate_waited(Duration::from_millis(3));
        let tally = budget.tally();
        assert_eq!(tally.retries, 3);
        assert_eq!(tally.waited, first + second + Duration::from_millis(3));
        assert_eq!(tally.rate_limit_waited, first + Duration::from_millis(3));
        // A retry the budget refuses takes nothing.
        let spent = RetryBudget::new(Some(quick(0)));
        assert_eq!(spent.next_retry(&limited), None);
        assert_eq!(spent.tally(), RetryTally::default());
    }

    #[tokio::test]
    async fn the_scope_makes_a_budget_current() {
        assert!(RetryBudget::current().is_none());
        let budget = RetryBudget::new(Some(quick(5)));
        let inside = budget
            .scope(async { RetryBudget::current().map(|b| b.policy().max_retries) })
            .await;
        assert_eq!(inside, Some(5));
    }

    #[test]
    fn reads_retry_after_headers() {
        let mut headers = reqwest::header::HeaderMap::new();
        assert_eq!(parse_retry_after(&headers), None);
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(parse_retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(
            parse_retry_after(&headers),
            Some(Duration::from_millis(150))
        );
        let mut bad = reqwest::header::HeaderMap::new();
        bad.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(parse_retry_after(&bad), None);
        bad.insert("retry-after", "-3".parse().unwrap());
        assert_eq!(parse_retry_after(&bad), None);
    }
}
