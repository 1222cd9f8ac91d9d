//! Options shared by the commands that run a worker (docs/cli.md, Common options).

use clap::{Args, ValueEnum};
use golem_core::approval::ApprovalMode;
use golem_runtime::budget::BudgetLimits;

/// How calls that need consent are decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum ApprovalArg {
    /// Ask at the terminal (denied when no terminal is attached)
    Interactive,
    /// Approve every call that would ask
    ApproveAll,
    /// Deny every call that would ask
    AutoDeny,
    /// Park a call that would ask in the approval inbox and stop there (exit 4); answer with
    /// `golem-forge inbox`
    Defer,
}

impl From<ApprovalArg> for ApprovalMode {
    fn from(arg: ApprovalArg) -> Self {
        match arg {
            ApprovalArg::Interactive => ApprovalMode::Interactive,
            ApprovalArg::ApproveAll => ApprovalMode::ApproveAll,
            ApprovalArg::AutoDeny => ApprovalMode::AutoDeny,
            ApprovalArg::Defer => ApprovalMode::Defer,
        }
    }
}

/// How much progress to show on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceLevel {
    /// Only the answer and errors
    Quiet,
    /// One line per tool call
    Summary,
    /// Tool calls with their results
    Normal,
    /// Everything, including model requests
    Debug,
}

/// Options of every command that runs a worker.
#[derive(Debug, Clone, Args)]
pub struct WorkerOptions {
    /// Model as provider:model, e.g. anthropic:claude-haiku-4-5 or test:default
    ///
    /// Overrides the worker's `model`, which overrides GOLEM_FORGE_MODEL, which overrides the
    /// program config's `model`.
    #[arg(short, long, value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,

    /// How calls that need consent are decided [default: the config's approval.mode, else
    /// interactive]
    #[arg(short, long, value_enum)]
    pub approval: Option<ApprovalArg>,

    /// How much progress to show on stderr
    #[arg(short, long, value_enum, default_value = "normal")]
    pub trace: TraceLevel,

    /// Record the model exchanges to FILE (replay them with --model replay:FILE)
    #[arg(long, value_name = "FILE")]
    pub record: Option<std::path::PathBuf>,

    /// Most tokens a turn may use, every worker's (with the worker's `budget:`, the tighter
    /// wins)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub budget_tokens: Option<u64>,

    /// Most US dollars a turn may cost, every worker's (needs the models' prices)
    #[arg(long, value_name = "USD", value_parser = parse_dollars)]
    pub budget_cost: Option<f64>,

    /// Longest a turn may run, e.g. 90, 90s, 5m or 1h
    #[arg(long, value_name = "DURATION", value_parser = parse_seconds)]
    pub budget_time: Option<u64>,
}

impl WorkerOptions {
    /// The limits the `--budget-*` options set.
    pub fn budget(&self) -> BudgetLimits {
        BudgetLimits {
            tokens: self.budget_tokens,
            cost_usd: self.budget_cost,
            wall_seconds: self.budget_time,
            max_workers: None,
        }
    }
}

/// `--budget-cost`: a positive amount of US dollars (`0.50`, `$2`).
fn parse_dollars(text: &str) -> Result<f64, String> {
    let amount: f64 = text
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("`{text}` is not an amount of US dollars (e.g. 0.50)"))?;
    if amount.is_finite() && amount > 0.0 {
        Ok(amount)
    } else {
        Err(format!("`{text}`: the budget must be more than $0"))
    }
}

/// `--budget-time`: whole seconds, or a number with `s`, `m` or `h` (`90`, `90s`, `5m`, `1h`).
fn parse_seconds(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let (number, unit) = match trimmed.char_indices().last() {
        Some((at, 's')) => (&trimmed[..at], 1),
        Some((at, 'm')) => (&trimmed[..at], 60),
        Some((at, 'h')) => (&trimmed[..at], 3600),
        _ => (trimmed, 1),
    };
    let count: u64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (e.g. 90, 90s, 5m, 1h)"))?;
    match count.checked_mul(unit) {
        Some(0) => Err(format!("`{text}`: the budget must be at least 1 second")),
        Some(secs) => Ok(secs),
        None => Err(format!("`{text}` is too long")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_dollars_parse_with_their_units() {
        assert_eq!(parse_seconds("90"), Ok(90));
        assert_eq!(parse_seconds("90s"), Ok(90));
        assert_eq!(parse_seconds("5m"), Ok(300));
        assert_eq!(parse_seconds(" 1h "), Ok(3600));
        assert!(
            parse_seconds("0")
                .unwrap_err()
                .contains("at least 1 second")
        );
        assert!(
            parse_seconds("soon")
                .unwrap_err()
                .contains("not a duration")
        );
        assert!(parse_seconds("5d").is_err());
        assert_eq!(parse_dollars("0.50"), Ok(0.5));
        assert_eq!(parse_dollars("$2"), Ok(2.0));
        assert!(parse_dollars("0").unwrap_err().contains("more than $0"));
        assert!(parse_dollars("NaN").is_err());
        assert!(
            parse_dollars("cheap")
                .unwrap_err()
                .contains("not an amount")
        );
    }
}
