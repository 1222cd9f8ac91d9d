//! Retries with exponential backoff and full jitter, honouring the provider's `retry-after`.

use std::time::Duration;

use rand::RngExt;

/// When and how often to retry a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The backoff before the first retry (doubled each time, then jittered).
    pub base_delay: Duration,
    /// The longest wait between attempts, also the cap on `retry-after`.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
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
