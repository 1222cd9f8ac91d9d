//! The options one run of a local batch uses. A new batch records the ones it is started with
//! (`golem_batch::BatchOptions` in its `batch.json`); `batch resume ID`, the same command
//! again and an inbox answer continuing a parked item run with those. A fixed option given
//! again with another value is refused, naming each difference; `--concurrency` may change
//! from run to run, which is said on stderr. A batch written before options were recorded
//! runs with what is given, which is then recorded as its options.

use std::path::{Path, PathBuf};

use golem_batch::{Batch, BatchOptions, Difference, GivenOptions};

use crate::cli_error::CommandError;

/// What a command line gives for `path` (`--output`): absolute, from `cwd`.
pub(super) fn absolute_from(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        cwd.join(path)
    }
}

/// The options this run of `batch` uses, from its recorded ones and `given`; records `given`
/// in a batch that has none recorded. `quiet`: nothing for people on stderr (`--json`).
pub(super) fn choose(
    batch: &mut Batch,
    given: &GivenOptions,
    quiet: bool,
) -> Result<BatchOptions, CommandError> {
    let Some(recorded) = batch.meta.options.clone() else {
        let options = given.to_options();
        batch
            .record_options(options.clone())
            .map_err(|e| CommandError::usage(e.to_string()))?;
        if !quiet {
            eprintln!(
                "batch {}: its options were not recorded when it started; this run's are \
                 recorded as its options from now on",
                batch.id
            );
        }
        return Ok(options);
    };
    let differences = recorded.differences(given);
    if !differences.is_empty() {
        return Err(refusal(&batch.id, &differences));
    }
    let concurrency = given.concurrency.unwrap_or(recorded.concurrency);
    if concurrency != recorded.concurrency && !quiet {
        eprintln!(
            "batch {}: --concurrency {concurrency} for this run (it was started with {})",
            batch.id, recorded.concurrency
        );
    }
    Ok(BatchOptions {
        concurrency,
        ..recorded
    })
}

/// The refusal of options that differ from the batch's.
fn refusal(id: &str, differences: &[Difference]) -> CommandError {
    let lines: Vec<String> = differences
        .iter()
        .map(|d| {
            format!(
                "{}: {} when it started, {} now",
                d.option.flag(),
                d.recorded.as_deref().unwrap_or("not given"),
                d.given
            )
        })
        .collect();
    CommandError::usage(format!(
        "batch {id} runs every item with the options it was started with, and {} differ{}: {}",
        if differences.len() == 1 {
            "this one"
        } else {
            "these"
        },
        if differences.len() == 1 { "s" } else { "" },
        lines.join("; ")
    ))
    .with_hint(format!(
        "continue it as it was started: golem-forge batch resume {id}"
    ))
}

/// The options as words of a command line (`--model X --concurrency 4`), for `batch status`.
pub(super) fn words(options: &BatchOptions) -> String {
    let mut words = Vec::new();
    if let Some(model) = &options.model {
        words.push(format!("--model {model}"));
    }
    if let Some(approval) = options.approval {
        words.push(format!("--approval {approval}"));
    }
    if let Some(n) = options.max_iterations {
        words.push(format!("--max-iterations {n}"));
    }
    if let Some(output) = &options.output {
        words.push(format!("--output {}", output.display()));
    }
    if options.retry > 0 {
        words.push(format!("--retry {}", options.retry));
    }
    if let Some(n) = options.budget_tokens {
        words.push(format!("--budget-tokens {n}"));
    }
    if let Some(usd) = options.budget_cost {
        words.push(format!("--budget-cost {usd}"));
    }
    words.push(format!("--concurrency {}", options.concurrency));
    words.join(" ")
}
