//! The options a local batch was started with, kept in its `batch.json` so that every later
//! run of it (`batch resume ID`, the same command again, an inbox answer continuing a parked
//! item) runs its items alike. Most are fixed for the batch's life ([`FixedOption`]): the
//! model, the approval mode, the turns of each run, the output file, the retries and the
//! budgets (what a budget has spent is read from the batch's results, so a resumed batch
//! cannot spend it twice). How many items run at once may change from run to run.

use std::path::PathBuf;

use golem_protocol::ApprovalMode;
use serde::{Deserialize, Serialize};

/// How the items of a batch run (`batch.json`'s `options`; absent in a batch written before
/// they were recorded, which then runs with whatever options are given).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchOptions {
    /// `--model` for every item (`None`: the worker's, or the config's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `--approval` (`None`: the config's `approval.mode`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalMode>,
    /// `--max-iterations` of each item's run (`None`: the worker's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// `--output`: the file every result is also appended to, absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<PathBuf>,
    /// `--retry`: how many more times a failed item is run.
    #[serde(default)]
    pub retry: u32,
    /// `--budget-tokens`: tokens of all items together, over every run of the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// `--budget-cost`: US dollars of all items together, over every run of the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_cost: Option<f64>,
    /// `--concurrency` the batch was started with; a later run may give another.
    pub concurrency: u16,
}

/// An option every run of a batch shares: given again with another value, it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedOption {
    /// `--model`.
    Model,
    /// `--approval`.
    Approval,
    /// `--max-iterations`.
    MaxIterations,
    /// `--output`.
    Output,
    /// `--retry`.
    Retry,
    /// `--budget-tokens`.
    BudgetTokens,
    /// `--budget-cost`.
    BudgetCost,
}

impl FixedOption {
    /// Every fixed option, in the order a refusal names them.
    pub const ALL: [FixedOption; 7] = [
        FixedOption::Model,
        FixedOption::Approval,
        FixedOption::MaxIterations,
        FixedOption::Output,
        FixedOption::Retry,
        FixedOption::BudgetTokens,
        FixedOption::BudgetCost,
    ];

    /// Its flag on the command line.
    pub fn flag(self) -> &'static str {
        match self {
            FixedOption::Model => "--model",
            FixedOption::Approval => "--approval",
            FixedOption::MaxIterations => "--max-iterations",
            FixedOption::Output => "--output",
            FixedOption::Retry => "--retry",
            FixedOption::BudgetTokens => "--budget-tokens",
            FixedOption::BudgetCost => "--budget-cost",
        }
    }
}

/// A fixed option given with another value than the batch was started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Which option.
    pub option: FixedOption,
    /// Its value when the batch started (`None`: not given then).
    pub recorded: Option<String>,
    /// The value given now.
    pub given: String,
}

/// The options given to one run of a batch: `None` for each one not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GivenOptions {
    /// `--model`.
    pub model: Option<String>,
    /// `--approval`.
    pub approval: Option<ApprovalMode>,
    /// `--max-iterations`.
    pub max_iterations: Option<u32>,
    /// `--output`, absolute.
    pub output: Option<PathBuf>,
    /// `--retry`.
    pub retry: Option<u32>,
    /// `--budget-tokens`.
    pub budget_tokens: Option<u64>,
    /// `--budget-cost`.
    pub budget_cost: Option<f64>,
    /// `--concurrency`.
    pub concurrency: Option<u16>,
}

/// Items running at once when `--concurrency` was never given.
pub const DEFAULT_CONCURRENCY: u16 = 4;

impl GivenOptions {
    /// The options of a batch started with these (defaults for what is not given).
    pub fn to_options(&self) -> BatchOptions {
        BatchOptions {
            model: self.model.clone(),
            approval: self.approval,
            max_iterations: self.max_iterations,
            output: self.output.clone(),
            retry: self.retry.unwrap_or(0),
            budget_tokens: self.budget_tokens,
            budget_cost: self.budget_cost,
            concurrency: self.concurrency.unwrap_or(DEFAULT_CONCURRENCY),
        }
    }
}

impl BatchOptions {
    /// The fixed options `given` sets to another value than these, in [`FixedOption::ALL`]'s
    /// order (an option not given is no difference: the recorded value holds).
    pub fn differences(&self, given: &GivenOptions) -> Vec<Difference> {
        fn differs<T: PartialEq + ToString>(
            option: FixedOption,
            recorded: Option<&T>,
            given: Option<&T>,
        ) -> Option<Difference> {
            let given = given?;
            if recorded == Some(given) {
                return None;
            }
            Some(Difference {
                option,
                recorded: recorded.map(ToString::to_string),
                given: given.to_string(),
            })
        }
        let output = |path: &Option<PathBuf>| path.as_ref().map(|p| p.display().to_string());
        FixedOption::ALL
            .iter()
            .filter_map(|&option| match option {
                FixedOption::Model => differs(option, self.model.as_ref(), given.model.as_ref()),
                FixedOption::Approval => {
                    differs(option, self.approval.as_ref(), given.approval.as_ref())
                }
                FixedOption::MaxIterations => differs(
                    option,
                    self.max_iterations.as_ref(),
                    given.max_iterations.as_ref(),
                ),
                FixedOption::Output => differs(
                    option,
                    output(&self.output).as_ref(),
                    output(&given.output).as_ref(),
                ),
                FixedOption::Retry => differs(option, Some(&self.retry), given.retry.as_ref()),
                FixedOption::BudgetTokens => differs(
                    option,
                    self.budget_tokens.as_ref(),
                    given.budget_tokens.as_ref(),
                ),
                FixedOption::BudgetCost => differs(
                    option,
                    self.budget_cost.as_ref(),
                    given.budget_cost.as_ref(),
                ),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started() -> BatchOptions {
        GivenOptions {
            model: Some("openai:gpt-4o-mini".into()),
            output: Some("/p/r.jsonl".into()),
            budget_tokens: Some(1000),
            ..GivenOptions::default()
        }
        .to_options()
    }

    #[test]
    fn only_a_fixed_option_given_with_another_value_differs() {
        let options = started();
        assert_eq!(options.concurrency, DEFAULT_CONCURRENCY);
        assert!(options.differences(&GivenOptions::default()).is_empty());
        let same = GivenOptions {
            model: Some("openai:gpt-4o-mini".into()),
            retry: Some(0),
            concurrency: Some(16),
            ..GivenOptions::default()
        };
        assert!(options.differences(&same).is_empty());
        let other = GivenOptions {
            model: Some("test:default".into()),
            approval: Some(ApprovalMode::Defer),
            budget_tokens: Some(1000),
            budget_cost: Some(0.5),
            ..GivenOptions::default()
        };
        assert_eq!(
            options.differences(&other),
            [
                Difference {
                    option: FixedOption::Model,
                    recorded: Some("openai:gpt-4o-mini".into()),
                    given: "test:default".into(),
                },
                Difference {
                    option: FixedOption::Approval,
                    recorded: None,
                    given: "defer".into(),
                },
                Difference {
                    option: FixedOption::BudgetCost,
                    recorded: None,
                    given: "0.5".into(),
                },
            ]
        );
    }

    #[test]
    fn options_read_back_as_written_and_absent_ones_stay_absent() {
        let options = started();
        let text = serde_json::to_string(&options).unwrap();
        assert!(!text.contains("approval"), "{text}");
        assert_eq!(
            serde_json::from_str::<BatchOptions>(&text).unwrap(),
            options
        );
    }
}
