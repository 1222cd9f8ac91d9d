//! One gate for every model request of the process, when a pool of sessions shares a rate
//! limit (a batch installs it; nothing else does). A rate-limit answer (429, or overloaded)
//! pauses every new request for its `retry-after` (else a short backoff) and halves how many
//! sessions the pool should run at once; each success raises that again, by about one per
//! full round (additive increase, multiplicative decrease). Under a gate, retrying such an
//! answer does not spend the turn's retry budget (only its wall time): an item of a batch
//! never fails because of rate limiting alone.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::error::ModelError;

/// The pause after a rate-limit answer without `retry-after`.
const DEFAULT_PAUSE: Duration = Duration::from_millis(500);

/// The longest pause one answer can ask for.
const LONGEST_PAUSE: Duration = Duration::from_secs(60);

static GATE: OnceLock<Arc<RateGate>> = OnceLock::new();

/// The process's gate: installs one for a pool of at most `most` sessions the first time, and
/// returns the installed one after.
pub fn install(most: usize) -> Arc<RateGate> {
    GATE.get_or_init(|| Arc::new(RateGate::new(most))).clone()
}

/// The installed gate, if any.
pub fn installed() -> Option<Arc<RateGate>> {
    GATE.get().cloned()
}

/// Whether `error` is a provider's "slow down": a 429, or an overloaded answer.
pub fn is_rate_limit(error: &ModelError) -> bool {
    matches!(
        error,
        ModelError::Unavailable {
            status: 429 | 529,
            ..
        }
    )
}

/// Shared pacing of a pool's requests (see the module header).
#[derive(Debug)]
pub struct RateGate {
    state: Mutex<GateState>,
}

#[derive(Debug)]
struct GateState {
    /// How many sessions the pool should run now (at least 1, at most `most`).
    limit: f64,
    most: f64,
    /// No new request before this.
    paused_until: Option<Instant>,
    /// Rate-limit answers so far.
    limited: u64,
}

impl RateGate {
    /// A gate for a pool of at most `most` sessions, open and at full width.
    pub fn new(most: usize) -> RateGate {
        let most = most.max(1) as f64;
        RateGate {
            state: Mutex::new(GateState {
                limit: most,
                most,
                paused_until: None,
                limited: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many sessions the pool should run at once now.
    pub fn width(&self) -> usize {
        self.lock().limit.floor() as usize
    }

    /// Rate-limit answers so far.
    pub fn limited_count(&self) -> u64 {
        self.lock().limited
    }

    /// How long a new request must wait before it is sent.
    pub fn wait(&self) -> Duration {
        self.lock().paused_until.map_or(Duration::ZERO, |until| {
            until.saturating_duration_since(Instant::now())
        })
    }

    /// A rate-limit answer came: pause every new request and halve the width.
    pub fn rate_limited(&self, retry_after: Option<Duration>) {
        let pause = retry_after.unwrap_or(DEFAULT_PAUSE).min(LONGEST_PAUSE);
        let mut state = self.lock();
        let until = Instant::now() + pause;
        state.paused_until = Some(state.paused_until.map_or(until, |now| now.max(until)));
        state.limit = (state.limit / 2.0).max(1.0);
        state.limited += 1;
        tracing::info!(
            width = state.limit,
            ?pause,
            "rate limited: the pool slows down"
        );
    }

    /// A request got through: the width climbs back, by one per full round.
    pub fn succeeded(&self) {
        let mut state = self.lock();
        state.limit = (state.limit + 1.0 / state.limit).min(state.most);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_halve_the_width_and_successes_bring_it_back() {
        let gate = RateGate::new(8);
        assert_eq!(gate.width(), 8);
        assert_eq!(gate.wait(), Duration::ZERO);
        gate.rate_limited(Some(Duration::from_millis(300)));
        assert_eq!(gate.width(), 4);
        assert!(gate.wait() > Duration::from_millis(200));
        gate.rate_limited(None);
        gate.rate_limited(None);
        gate.rate_limited(None);
        assert_eq!(gate.width(), 1, "never below one");
        assert_eq!(gate.limited_count(), 4);
        for _ in 0..200 {
            gate.succeeded();
        }
        assert_eq!(gate.width(), 8, "back to full width, never above");
        assert!(is_rate_limit(&ModelError::Unavailable {
            provider: "p".into(),
            status: 429,
            message: String::new(),
            retry_after: None,
        }));
        assert!(!is_rate_limit(&ModelError::Unavailable {
            provider: "p".into(),
            status: 503,
            message: String::new(),
            retry_after: None,
        }));
    }
}
