//! The wall-clock limit of one run: a call's `timeout` (whole seconds, at least 1) capped at the
//! toolset's maximum, else the toolset's default; and the words that tell the model so in the
//! input schema.

use std::time::Duration;

use serde_json::Value;

/// The default wall-clock limit of `run_code` and `shell` (docs/worker-file.md, code and shell).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest limit a call may ask for, unless the toolset says otherwise.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// The toolset's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Used when a call gives none.
    pub default: Duration,
    /// The most a call may ask for; larger requests are capped.
    pub max: Duration,
}

const ONE_SECOND: Duration = Duration::from_secs(1);

impl Timeouts {
    /// Limits of at least a second each, with the default no larger than the maximum.
    pub fn new(default: Duration, max: Duration) -> Timeouts {
        let max = max.max(ONE_SECOND);
        Timeouts {
            default: default.clamp(ONE_SECOND, max),
            max,
        }
    }

    /// The limit of a call that asked for `requested` seconds.
    pub fn effective(&self, requested: Option<u64>) -> Duration {
        match requested {
            Some(secs) => Duration::from_secs(secs.max(1)).min(self.max),
            None => self.default,
        }
    }

    /// The description of the `timeout` argument.
    pub fn description(&self) -> String {
        format!(
            "Seconds before the program and all it started are killed (default {}, at most {}; \
             more is capped), the output so far coming with a TIMEOUT error",
            seconds(self.default),
            seconds(self.max)
        )
    }

    /// Sets the description of the `timeout` property of an input schema.
    pub fn describe_in(&self, schema: &mut Value) {
        if let Some(property) = schema.pointer_mut("/properties/timeout")
            && let Value::Object(map) = property
        {
            map.insert("description".into(), Value::String(self.description()));
        }
    }
}

/// `60 s`, `1.5 s`: a limit as a person writes it.
pub fn seconds(limit: Duration) -> String {
    if limit.subsec_millis() == 0 {
        format!("{} s", limit.as_secs())
    } else {
        format!("{:.1} s", limit.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn a_call_gets_its_own_limit_capped_at_the_maximum_else_the_default() {
        let t = Timeouts::new(secs(60), secs(300));
        assert_eq!(t.effective(None), secs(60));
        assert_eq!(t.effective(Some(5)), secs(5));
        assert_eq!(t.effective(Some(300)), secs(300));
        assert_eq!(t.effective(Some(301)), secs(300));
        assert_eq!(t.effective(Some(u64::MAX)), secs(300));
        // The schema says at least 1; a 0 that got through anyway still gets a second.
        assert_eq!(t.effective(Some(0)), secs(1));
    }

    #[test]
    fn limits_are_kept_sane() {
        let t = Timeouts::new(secs(900), secs(300));
        assert_eq!((t.default, t.max), (secs(300), secs(300)));
        let t = Timeouts::new(Duration::ZERO, Duration::ZERO);
        assert_eq!((t.default, t.max), (secs(1), secs(1)));
        assert_eq!(t.effective(Some(10)), secs(1));
    }

    #[test]
    fn the_schema_states_the_limits() {
        let mut schema = json!({"properties": {"timeout": {"type": "integer"}}});
        Timeouts::new(secs(60), Duration::from_millis(90_500)).describe_in(&mut schema);
        assert_eq!(
            schema["properties"]["timeout"]["description"],
            "Seconds before the program and all it started are killed (default 60 s, at most \
             90.5 s; more is capped), the output so far coming with a TIMEOUT error"
        );
        assert_eq!(schema["properties"]["timeout"]["type"], "integer");
        // No such property: nothing happens.
        let mut other = json!({"properties": {}});
        Timeouts::new(secs(1), secs(2)).describe_in(&mut other);
        assert_eq!(other, json!({"properties": {}}));
    }
}
