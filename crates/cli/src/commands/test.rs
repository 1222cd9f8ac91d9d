//! `golem-forge test`: run the test cases of workers (docs/testing.md) — each as a fresh session
//! in scratch zones with its scripted model replies, or with `--model` a real model's, `--runs`
//! times each under a `--budget-cost` — and report them: a progress line per run, a summary
//! table of each case's pass rate and the failures' messages; or the test events as JSON lines
//! (`--json`); and JUnit XML (`--junit FILE`). `--update` writes a model's replies into the
//! cases. The cases, their checks, the pool and the file edit are `golem_worker_tests`'.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use comfy_table::{Table, presets};
use golem_protocol::{TestEvent, to_jsonl_line};
use golem_worker_tests::{
    CaseReport, Planned, PoolEvent, PoolSettings, RunOptions, Suite, TestError, find_test_files,
    load_suites, run_pool, write_replies,
};

use crate::cli_error::CommandError;
use crate::frontend::clean::clean_line;

/// Run the test cases of workers
///
/// A worker's cases are in NAME.test.yaml beside NAME.worker (or tests/*.yaml in the folder of
/// a main.worker). Each case runs as a fresh session in scratch zones, with the case's scripted
/// model replies (or, with --model, a real model's), and its expectations are checked. Exit
/// codes: 0 all passed, 1 a case failed (its pass rate under --min-pass), 2 bad input (a bad
/// test file, no cases, bad arguments), 3 the --budget-cost ran out before every run started.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Workers, test files or directories (default: the program root)
    pub paths: Vec<PathBuf>,

    /// Run only the cases whose name contains PATTERN
    #[arg(short = 'k', value_name = "PATTERN")]
    pub pattern: Option<String>,

    /// Print the test events as JSON lines on stdout, and nothing else
    #[arg(long)]
    pub json: bool,

    /// Also write the results as JUnit XML to FILE
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Ask this model (provider:model) instead of replaying the cases' `model:` replies
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,

    /// Run each case N times (a few runs at once)
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,

    /// Fail a case whose share of passing runs is under RATE (0 to 1)
    #[arg(long, value_name = "RATE", default_value_t = 1.0, value_parser = parse_rate)]
    pub min_pass: f64,

    /// Start no new run once the runs together have cost USD (US dollars)
    #[arg(long, value_name = "USD", value_parser = parse_dollars)]
    pub budget_cost: Option<f64>,

    /// Write what the model (--model) replied into each case's `model:` replies
    #[arg(long)]
    pub update: bool,
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        Ok(_) | Err(_) => Err(format!(
            "must be a pass rate between 0 and 1 (0.8 is 80%), found {text:?}"
        )),
    }
}

fn parse_dollars(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd > 0.0 => Ok(usd),
        Ok(_) | Err(_) => Err(format!(
            "must be a positive amount of US dollars, found {text:?}"
        )),
    }
}

/// The runs of one case, with what they add up to.
struct CaseRuns<'a> {
    first: &'a CaseReport,
    runs: Vec<&'a CaseReport>,
}

impl CaseRuns<'_> {
    fn passed(&self) -> usize {
        self.runs.iter().filter(|r| r.passed()).count()
    }

    /// Passing runs over runs (1 when none ran).
    fn rate(&self) -> f64 {
        match self.runs.len() {
            0 => 1.0,
            n => self.passed() as f64 / n as f64,
        }
    }
}

/// The reports by case, in the order they were planned.
fn by_case(reports: &[CaseReport]) -> Vec<CaseRuns<'_>> {
    let mut cases: Vec<CaseRuns<'_>> = Vec::new();
    for report in reports {
        match cases
            .iter_mut()
            .find(|c| c.first.file == report.file && c.first.case == report.case)
        {
            Some(case) => case.runs.push(report),
            None => cases.push(CaseRuns {
                first: report,
                runs: vec![report],
            }),
        }
    }
    cases
}

/// Runs `golem-forge test`.
pub fn cmd_test(args: TestArgs) -> Result<ExitCode, CommandError> {
    let usage = |e: TestError| CommandError::usage(e.to_string());
    if args.update && args.model.is_none() {
        return Err(CommandError::usage(
            "--update needs --model: it writes what that model replies into the cases",
        )
        .with_hint("golem-forge test --update --model provider:model [PATH]..."));
    }
    if args.update && args.runs != 1 {
        return Err(CommandError::usage(format!(
            "--update runs each case once, but --runs is {}",
            args.runs
        )));
    }
    let paths = if args.paths.is_empty() {
        let cwd = std::env::current_dir()
            .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
        vec![golem_runtime::config::program_root(&cwd)]
    } else {
        args.paths.clone()
    };
    let found = find_test_files(&paths).map_err(usage)?;
    let suites: Vec<Arc<Suite>> = load_suites(&found)
        .map_err(usage)?
        .into_iter()
        .map(Arc::new)
        .collect();
    let planned: Vec<Planned> = suites
        .iter()
        .flat_map(|suite| {
            suite
                .tests
                .cases
                .iter()
                .enumerate()
                .filter(|(_, case)| {
                    args.pattern
                        .as_deref()
                        .is_none_or(|pattern| case.name.contains(pattern))
                })
                .map(|(case, _)| Planned {
                    suite: suite.clone(),
                    case,
                })
        })
        .collect();
    if planned.is_empty() {
        let what = match &args.pattern {
            Some(pattern) => format!("no test case matches -k {pattern:?}"),
            None => "no test cases found".to_owned(),
        };
        return Err(CommandError::usage(what).with_hint(
            "put cases in NAME.test.yaml beside NAME.worker (docs/testing.md), or name a \
             worker or test file: golem-forge test PATH",
        ));
    }
    if args.model.is_none()
        && let Some((suite, case)) = planned
            .iter()
            .filter_map(|p| Some((&p.suite, p.suite.tests.cases.get(p.case)?)))
            .find(|(_, case)| case.model.is_empty())
    {
        return Err(usage(TestError::NoReplies {
            path: suite.file.clone(),
            case: case.name.clone(),
        }));
    }
    let options = RunOptions {
        jail_helper: std::env::current_exe().ok(),
        model: args.model.clone(),
        cost_limit: args.budget_cost,
        record: args.update,
    };
    // Offline runs are quick and their output is in order, one at a time; runs that ask a
    // model wait on it, a few at once.
    let total = planned.len().saturating_mul(args.runs as usize);
    let settings = PoolSettings {
        runs: args.runs,
        width: match args.model {
            Some(_) => total.min(golem_worker_tests::pool::MOST_AT_ONCE),
            None => 1,
        },
        budget_cost: args.budget_cost,
    };
    let mut output_error: Option<CommandError> = None;
    let outcome = super::run::block_on(run_pool(&planned, settings, &options, |event| {
        if output_error.is_some() {
            return;
        }
        let written = match event {
            PoolEvent::Started { suite, case, run } if args.json => emit(&TestEvent::TestStarted {
                case: case.name.clone(),
                worker: suite.worker_name.clone(),
                run,
            }),
            PoolEvent::Started { .. } => Ok(()),
            PoolEvent::Finished(report) if args.json => emit(&TestEvent::TestFinished {
                case: report.case.clone(),
                worker: report.worker.clone(),
                run: report.run,
                passed: report.passed(),
                failures: report.failures.iter().map(ToString::to_string).collect(),
                usage: report.usage,
                cost: report.cost,
                duration_ms: u64::try_from(report.duration.as_millis()).unwrap_or(u64::MAX),
            }),
            PoolEvent::Finished(report) => print_progress(report),
        };
        if let Err(e) = written {
            output_error = Some(e);
        }
    }))?
    .map_err(usage)?;
    if let Some(e) = output_error {
        return Err(e);
    }
    let reports = &outcome.reports;
    let cases = by_case(reports);
    let passed = reports.iter().filter(|r| r.passed()).count();
    let failed = reports.len() - passed;
    let budget_note = (outcome.not_started > 0).then(|| {
        format!(
            "the cost budget of ${:.4} is spent (${:.4} so far): {} of {total} runs did not start",
            args.budget_cost.unwrap_or(0.0),
            outcome.cost,
            outcome.not_started
        )
    });
    if args.json {
        emit(&TestEvent::TestsEnded {
            passed: u32::try_from(passed).unwrap_or(u32::MAX),
            failed: u32::try_from(failed).unwrap_or(u32::MAX),
        })?;
        if let Some(note) = &budget_note {
            eprintln!("{note}");
        }
    } else {
        print_summary(&cases, args.min_pass, budget_note.as_deref())?;
    }
    if let Some(path) = &args.junit {
        golem_worker_tests::write_junit(path, reports)
            .map_err(|e| CommandError::usage(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.update {
        update_files(&suites, reports)?;
    }
    let under = cases.iter().any(|c| c.rate() < args.min_pass);
    Ok(if budget_note.is_some() {
        ExitCode::from(3)
    } else if under {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--update`: writes each run's recorded replies into its case's `model:` block, file by
/// file. A run that recorded nothing (its session did not start) leaves its case as it was.
fn update_files(suites: &[Arc<Suite>], reports: &[CaseReport]) -> Result<(), CommandError> {
    for suite in suites {
        let mut replies = Vec::new();
        for report in reports.iter().filter(|r| r.file == suite.file) {
            let Some(index) = suite
                .tests
                .cases
                .iter()
                .position(|case| case.name == report.case)
            else {
                continue;
            };
            match &report.replies {
                Some(Ok(recorded)) => replies.push((index, recorded.clone())),
                Some(Err(why)) => {
                    return Err(CommandError::usage(format!(
                        "cannot update case `{}` of {}: {why}",
                        report.case,
                        suite.file.display()
                    )));
                }
                None => eprintln!(
                    "case `{}` of {}: the model was never asked, its replies are left as they were",
                    clean_line(&report.case),
                    suite.file.display()
                ),
            }
        }
        if !replies.is_empty() {
            write_replies(&suite.file, &suite.zones, &replies)
                .map_err(|e| CommandError::usage(e.to_string()))?;
            eprintln!("updated {}", display(&suite.file));
        }
    }
    Ok(())
}

fn display(path: &Path) -> String {
    clean_line(&path.display().to_string()).into_owned()
}

/// Writes one test event as a JSON line.
fn emit(event: &TestEvent) -> Result<(), CommandError> {
    let line = to_jsonl_line(event)
        .map_err(|e| CommandError::usage(format!("cannot write a test event: {e}")))?;
    write(&format!("{line}\n"))
}

fn write(text: &str) -> Result<(), CommandError> {
    super::write_stdout(text)
        .map_err(|e| CommandError::usage(format!("cannot write to stdout: {e}")))
}

/// `✓ name (12 ms)` or `✗ name (12 ms)`.
fn print_progress(report: &CaseReport) -> Result<(), CommandError> {
    let mark = if report.passed() { "✓" } else { "✗" };
    write(&format!(
        "{mark} {} · {} ({} ms)\n",
        clean_line(&report.worker),
        clean_line(&report.case),
        report.duration.as_millis()
    ))
}

/// The summary table (a row per case: its passing runs, rate, tokens and cost over its runs),
/// then each failed run's messages, then the counts.
fn print_summary(
    cases: &[CaseRuns<'_>],
    min_pass: f64,
    budget_note: Option<&str>,
) -> Result<(), CommandError> {
    let mut table = Table::new();
    table
        .load_style(presets::NOTHING)
        .set_header(["CASE", "RESULT", "PASSED", "RATE", "TOKENS", "COST"]);
    for case in cases {
        let tokens: u64 = case
            .runs
            .iter()
            .map(|r| r.usage.input_tokens + r.usage.output_tokens)
            .sum();
        let cost = case.runs.iter().filter_map(|r| r.cost).reduce(|a, b| a + b);
        table.add_row([
            format!(
                "{} · {}",
                clean_line(&case.first.worker),
                clean_line(&case.first.case)
            ),
            if case.rate() >= min_pass {
                "passed"
            } else {
                "FAILED"
            }
            .to_owned(),
            format!("{}/{}", case.passed(), case.runs.len()),
            format!("{:.0}%", case.rate() * 100.0),
            tokens.to_string(),
            cost.map_or_else(|| "-".to_owned(), |cost| format!("${cost:.4}")),
        ]);
    }
    let mut text = format!("\n{table}\n");
    for report in cases.iter().flat_map(|c| &c.runs).filter(|r| !r.passed()) {
        let run = if cases
            .iter()
            .any(|c| c.first.case == report.case && c.first.file == report.file && c.runs.len() > 1)
        {
            format!(" (run {})", report.run)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "\nFAILED {} · {}{run} ({})\n",
            clean_line(&report.worker),
            clean_line(&report.case),
            report.file.display()
        ));
        for failure in &report.failures {
            // A message of several lines (the calls, a diff) is indented under its first.
            let message = failure.to_string();
            for (at, line) in message.trim_end().lines().enumerate() {
                let indent = if at == 0 { "  " } else { "    " };
                text.push_str(&format!("{indent}{}\n", clean_line(line)));
            }
        }
    }
    if let Some(note) = budget_note {
        text.push_str(&format!("\n{note}\n"));
    }
    let failed = cases.iter().filter(|c| c.rate() < min_pass).count();
    let runs: usize = cases.iter().map(|c| c.runs.len()).sum();
    if runs > cases.len() {
        let passed_runs: usize = cases.iter().map(CaseRuns::passed).sum();
        text.push_str(&format!("\n{passed_runs} of {runs} runs passed"));
        text.push_str(&format!(
            "; {} passed, {failed} failed (at least {:.0}% of runs)\n",
            cases.len() - failed,
            min_pass * 100.0
        ));
    } else {
        text.push_str(&format!(
            "\n{} passed, {failed} failed\n",
            cases.len() - failed
        ));
    }
    write(&text)
}
