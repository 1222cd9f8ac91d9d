//! `context:` settings, in a worker's front matter and in the program config: when to elide
//! old tool results (`elide_at`, a share of the model's window, or `never`), when to compact
//! the history into a summary (`compact_at`, likewise), and how many of the last turns are
//! always sent as they are (`keep_turns`). A worker's own values come first, then the
//! program's, then the defaults.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

/// The default of `elide_at`: 60 % of the window.
pub const DEFAULT_ELIDE_AT: Threshold = Threshold::Permille(600);

/// The default of `compact_at`: 80 % of the window.
pub const DEFAULT_COMPACT_AT: Threshold = Threshold::Permille(800);

/// The default of `keep_turns`.
pub const DEFAULT_KEEP_TURNS: u32 = 4;

/// A share of the context window, or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    /// At this many thousandths of the window (1 to 1000; `0.6` is 600).
    Permille(u32),
    /// Never.
    Never,
}

impl Threshold {
    /// The threshold in tokens of `window`, or `None` for never.
    pub fn tokens(self, window: u64) -> Option<u64> {
        match self {
            Threshold::Permille(permille) => {
                Some(window.saturating_mul(u64::from(permille)) / 1000)
            }
            Threshold::Never => None,
        }
    }
}

/// `context:` as written: every key optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextSettings {
    /// When to elide old tool results: a share of the context window (0.6), or `never`.
    #[serde(default, deserialize_with = "threshold")]
    #[schemars(schema_with = "threshold_schema")]
    pub elide_at: Option<Threshold>,
    /// When to summarise the history before the last turns into one message: a share of the
    /// context window (0.8), or `never` (then a request that does not fit is an error).
    #[serde(default, deserialize_with = "threshold")]
    #[schemars(schema_with = "threshold_schema")]
    pub compact_at: Option<Threshold>,
    /// How many of the last turns (model calls and their tool results) are never elided nor
    /// compacted.
    #[serde(default)]
    pub keep_turns: Option<u32>,
}

impl ContextSettings {
    /// These settings, each absent one taken from `base` (the program's, for a worker's).
    pub fn or(self, base: ContextSettings) -> ContextSettings {
        ContextSettings {
            elide_at: self.elide_at.or(base.elide_at),
            compact_at: self.compact_at.or(base.compact_at),
            keep_turns: self.keep_turns.or(base.keep_turns),
        }
    }

    /// The policy, defaults filled in.
    pub fn policy(self) -> ContextPolicy {
        ContextPolicy {
            elide_at: self.elide_at.unwrap_or(DEFAULT_ELIDE_AT),
            compact_at: self.compact_at.unwrap_or(DEFAULT_COMPACT_AT),
            keep_turns: self.keep_turns.unwrap_or(DEFAULT_KEEP_TURNS),
        }
    }
}

/// How a worker manages its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextPolicy {
    /// When to elide old tool results.
    pub elide_at: Threshold,
    /// When to compact the history.
    pub compact_at: Threshold,
    /// How many of the last turns keep their tool results and are never compacted.
    pub keep_turns: u32,
}

impl Default for ContextPolicy {
    fn default() -> Self {
        ContextSettings::default().policy()
    }
}

/// The schema of a threshold as written: what [`threshold`] accepts.
fn threshold_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "anyOf": [
            {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            {"const": "never"},
            {"type": "null"}
        ]
    })
}

fn threshold<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Threshold>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Share(f64),
        Word(String),
    }
    let problem = || {
        serde::de::Error::custom(
            "must be a share of the context window above 0 and at most 1 (0.6), or `never`",
        )
    };
    match Option::<Written>::deserialize(deserializer)? {
        None => Ok(None),
        Some(Written::Word(word)) if word == "never" => Ok(Some(Threshold::Never)),
        Some(Written::Share(share)) if share > 0.0 && share <= 1.0 => Ok(Some(
            Threshold::Permille(((share * 1000.0).round() as u32).max(1)),
        )),
        Some(Written::Word(_) | Written::Share(_)) => Err(problem()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workers_values_come_before_the_programs_and_the_defaults() {
        let program = ContextSettings {
            elide_at: Some(Threshold::Permille(500)),
            compact_at: Some(Threshold::Permille(700)),
            keep_turns: Some(2),
        };
        let worker = ContextSettings {
            elide_at: Some(Threshold::Never),
            compact_at: None,
            keep_turns: None,
        };
        let policy = worker.or(program).policy();
        assert_eq!(policy.elide_at, Threshold::Never);
        assert_eq!(policy.compact_at, Threshold::Permille(700));
        assert_eq!(policy.keep_turns, 2);
        let policy = ContextSettings::default().policy();
        assert_eq!(policy.elide_at, DEFAULT_ELIDE_AT);
        assert_eq!(policy.compact_at, DEFAULT_COMPACT_AT);
        assert_eq!(policy.keep_turns, DEFAULT_KEEP_TURNS);
        assert_eq!(Threshold::Permille(600).tokens(200_000), Some(120_000));
        assert_eq!(Threshold::Never.tokens(1000), None);
    }
}
