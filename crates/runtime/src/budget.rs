//! Budgets: what one run of a worker may spend. `budget:` in a worker's front matter and the
//! `--budget-*` options give [`BudgetLimits`] (tokens, cost, wall-clock time, sub-workers); the
//! tree of workers (`tree.rs`) charges every model call to the worker that made it and to each
//! of its callers, so a child's spending counts against every ancestor and a child never gets
//! more than its callers have left. A budget that runs out is a [`BudgetExceeded`]: the worker
//! whose budget it is stops (a sub-worker's caller gets an error result; the root's turn ends
//! as `budgetExceeded`, exit code 3 for `run`).

use std::fmt;

use golem_protocol::{BudgetAmounts, TokenUsage};
use serde::{Deserialize, Deserializer};

/// The limits of one run of a worker. Each absent limit is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetLimits {
    /// Tokens of every kind (input, output, cache reads and writes), its sub-workers' included.
    #[serde(default, deserialize_with = "positive_count")]
    #[schemars(range(min = 1))]
    pub tokens: Option<u64>,
    /// US dollars at the models' prices, its sub-workers' included (needs a price for every
    /// model it uses).
    #[serde(default, deserialize_with = "positive_dollars")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub cost_usd: Option<f64>,
    /// Seconds of wall-clock time.
    #[serde(default, deserialize_with = "positive_count")]
    #[schemars(range(min = 1))]
    pub wall_seconds: Option<u64>,
    /// How many sub-workers may be started below this worker, in total (at any depth; calls
    /// run one at a time, so this bounds how many run at once too). `0` allows none.
    #[serde(default)]
    pub max_workers: Option<u32>,
}

/// Cost limits are checked when read (positive and finite), so comparing them is total.
impl Eq for BudgetLimits {}

impl BudgetLimits {
    /// The tighter of `self` and `other`, limit by limit.
    pub fn tighter(self, other: BudgetLimits) -> BudgetLimits {
        fn min<T: PartialOrd>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(if b < a { b } else { a }),
                (a, None) => a,
                (None, b) => b,
            }
        }
        BudgetLimits {
            tokens: min(self.tokens, other.tokens),
            cost_usd: min(self.cost_usd, other.cost_usd),
            wall_seconds: min(self.wall_seconds, other.wall_seconds),
            max_workers: min(self.max_workers, other.max_workers),
        }
    }

    /// Whether nothing is limited.
    pub fn is_unlimited(&self) -> bool {
        self.amounts().is_unlimited()
    }

    /// The limits as protocol amounts.
    pub fn amounts(&self) -> BudgetAmounts {
        BudgetAmounts {
            tokens: self.tokens,
            cost_usd: self.cost_usd,
            wall_seconds: self.wall_seconds.map(|s| s as f64),
            workers: self.max_workers,
        }
    }

    /// The limits in words, for `check` (`10,000 tokens · $0.50 · 120 s · 2 sub-workers`).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(tokens) = self.tokens {
            parts.push(format!("{} tokens", thousands(tokens)));
        }
        if let Some(cost) = self.cost_usd {
            parts.push(dollars(cost));
        }
        if let Some(secs) = self.wall_seconds {
            parts.push(format!("{secs} s"));
        }
        if let Some(workers) = self.max_workers {
            parts.push(format!(
                "{workers} sub-worker{}",
                if workers == 1 { "" } else { "s" }
            ));
        }
        if parts.is_empty() {
            "unlimited".to_owned()
        } else {
            parts.join(" · ")
        }
    }
}

/// Every token a usage counts: what a token budget is charged.
pub fn total_tokens(usage: &TokenUsage) -> u64 {
    usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens
}

/// Which limit of a budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetKind {
    /// `tokens`.
    Tokens,
    /// `cost_usd`.
    Cost,
    /// `wall_seconds`.
    Time,
}

/// A budget that ran out: whose, which limit, and by how much.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetExceeded {
    /// The id of the worker whose budget it is.
    pub worker_id: String,
    /// That worker's name.
    pub worker: String,
    /// The limit that ran out.
    pub kind: BudgetKind,
    /// The limit (tokens, dollars or seconds).
    pub limit: f64,
    /// What was used when it was found out.
    pub used: f64,
}

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let worker = &self.worker;
        let over = (self.used - self.limit).max(0.0);
        match self.kind {
            BudgetKind::Tokens => write!(
                f,
                "the token budget of worker {worker} is spent: {} tokens used of {} ({} over)",
                thousands(self.used as u64),
                thousands(self.limit as u64),
                thousands(over as u64),
            ),
            BudgetKind::Cost => write!(
                f,
                "the cost budget of worker {worker} is spent: {} used of {} ({} over)",
                dollars(self.used),
                dollars(self.limit),
                dollars(over),
            ),
            BudgetKind::Time => write!(
                f,
                "the time budget of worker {worker} ran out: {} s of {} s",
                self.used.round() as u64,
                self.limit as u64,
            ),
        }
    }
}

pub use golem_core::text::thousands;

/// Dollars with enough places to show small amounts (`$0.50`, `$0.0031`).
fn dollars(amount: f64) -> String {
    if amount != 0.0 && amount.abs() < 0.01 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

fn positive_count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<u64>::deserialize(deserializer)?;
    if value == Some(0) {
        return Err(serde::de::Error::custom("must be at least 1, found \"0\""));
    }
    Ok(value)
}

fn positive_dollars<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    let value = Option::<f64>::deserialize(deserializer)?;
    match value {
        Some(v) if !(v.is_finite() && v > 0.0) => Err(serde::de::Error::custom(format!(
            "must be a positive number of US dollars, found \"{v}\""
        ))),
        value => Ok(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tighter_limit_wins_each_way() {
        let worker = BudgetLimits {
            tokens: Some(1000),
            cost_usd: Some(0.5),
            wall_seconds: None,
            max_workers: Some(3),
        };
        let cli = BudgetLimits {
            tokens: Some(5000),
            cost_usd: Some(0.25),
            wall_seconds: Some(60),
            max_workers: None,
        };
        let both = BudgetLimits {
            tokens: Some(1000),
            cost_usd: Some(0.25),
            wall_seconds: Some(60),
            max_workers: Some(3),
        };
        assert_eq!(worker.tighter(cli), both);
        assert_eq!(cli.tighter(worker), both);
        assert!(BudgetLimits::default().is_unlimited());
        assert!(!both.is_unlimited());
        assert_eq!(
            both.describe(),
            "1,000 tokens · $0.25 · 60 s · 3 sub-workers"
        );
    }

    #[test]
    fn exceeded_budgets_say_whose_which_and_by_how_much() {
        let tokens = BudgetExceeded {
            worker_id: "w1".into(),
            worker: "planner".into(),
            kind: BudgetKind::Tokens,
            limit: 1000.0,
            used: 1234.0,
        };
        assert_eq!(
            tokens.to_string(),
            "the token budget of worker planner is spent: 1,234 tokens used of 1,000 (234 over)"
        );
        let cost = BudgetExceeded {
            kind: BudgetKind::Cost,
            limit: 0.5,
            used: 0.5031,
            ..tokens.clone()
        };
        assert_eq!(
            cost.to_string(),
            "the cost budget of worker planner is spent: $0.50 used of $0.50 ($0.0031 over)"
        );
        let time = BudgetExceeded {
            kind: BudgetKind::Time,
            limit: 30.0,
            used: 30.2,
            ..tokens
        };
        assert_eq!(
            time.to_string(),
            "the time budget of worker planner ran out: 30 s of 30 s"
        );
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
