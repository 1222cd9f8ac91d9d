//! `golem-forge test`: run the test cases of workers (docs/testing.md) — each as a fresh session
//! in scratch zones with its scripted model replies — and report them: a progress line per
//! case, a summary table and the failures' messages; or the test events as JSON lines
//! (`--json`); and JUnit XML (`--junit FILE`). The cases and their checks are
//! `golem_worker_tests`'.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use comfy_table::{Table, presets};
use golem_protocol::{TestEvent, to_jsonl_line};
use golem_worker_tests::{CaseReport, RunOptions, find_test_files, load_suites, run_case};

use crate::cli_error::CommandError;
use crate::frontend::clean::clean_line;

/// Run the test cases of workers
///
/// A worker's cases are in NAME.test.yaml beside NAME.worker (or tests/*.yaml in the folder of
/// a main.worker). Each case runs as a fresh session in scratch zones, with the case's scripted
/// model replies, and its expectations are checked. Exit codes: 0 all passed, 1 a case failed,
/// 2 bad input (a bad test file, no cases, bad arguments).
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
}

/// Runs `golem-forge test`.
pub fn cmd_test(args: TestArgs) -> Result<ExitCode, CommandError> {
    let usage = |e: golem_worker_tests::TestError| CommandError::usage(e.to_string());
    let paths = if args.paths.is_empty() {
        let cwd = std::env::current_dir()
            .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
        vec![golem_runtime::config::program_root(&cwd)]
    } else {
        args.paths.clone()
    };
    let found = find_test_files(&paths).map_err(usage)?;
    let suites = load_suites(&found).map_err(usage)?;
    let selected: Vec<_> = suites
        .iter()
        .flat_map(|suite| suite.tests.cases.iter().map(move |case| (suite, case)))
        .filter(|(_, case)| {
            args.pattern
                .as_deref()
                .is_none_or(|pattern| case.name.contains(pattern))
        })
        .collect();
    if selected.is_empty() {
        let what = match &args.pattern {
            Some(pattern) => format!("no test case matches -k {pattern:?}"),
            None => "no test cases found".to_owned(),
        };
        return Err(CommandError::usage(what).with_hint(
            "put cases in NAME.test.yaml beside NAME.worker (docs/testing.md), or name a \
             worker or test file: golem-forge test PATH",
        ));
    }
    let options = RunOptions {
        jail_helper: std::env::current_exe().ok(),
    };
    let reports = super::run::block_on(async {
        let mut reports = Vec::new();
        for (suite, case) in selected {
            if args.json {
                emit(&TestEvent::TestStarted {
                    case: case.name.clone(),
                    worker: suite.worker_name.clone(),
                    run: 1,
                })?;
            }
            let report = run_case(suite, case, &options)
                .await
                .map_err(|e| CommandError::usage(e.to_string()))?;
            if args.json {
                emit(&TestEvent::TestFinished {
                    case: report.case.clone(),
                    worker: report.worker.clone(),
                    run: report.run,
                    passed: report.passed(),
                    failures: report.failures.iter().map(ToString::to_string).collect(),
                    usage: report.usage,
                    cost: report.cost,
                    duration_ms: u64::try_from(report.duration.as_millis()).unwrap_or(u64::MAX),
                })?;
            } else {
                print_progress(&report)?;
            }
            reports.push(report);
        }
        Ok::<_, CommandError>(reports)
    })??;
    let passed = reports.iter().filter(|r| r.passed()).count();
    let failed = reports.len() - passed;
    if args.json {
        emit(&TestEvent::TestsEnded {
            passed: u32::try_from(passed).unwrap_or(u32::MAX),
            failed: u32::try_from(failed).unwrap_or(u32::MAX),
        })?;
    } else {
        print_summary(&reports, passed, failed)?;
    }
    if let Some(path) = &args.junit {
        golem_worker_tests::write_junit(path, &reports)
            .map_err(|e| CommandError::usage(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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

/// The summary table, then each failure's messages, then the counts.
fn print_summary(reports: &[CaseReport], passed: usize, failed: usize) -> Result<(), CommandError> {
    let mut table = Table::new();
    table
        .load_style(presets::NOTHING)
        .set_header(["CASE", "RESULT", "CALLS", "TOKENS", "COST"]);
    for report in reports {
        let tokens = report.usage.input_tokens + report.usage.output_tokens;
        table.add_row([
            format!(
                "{} · {}",
                clean_line(&report.worker),
                clean_line(&report.case)
            ),
            if report.passed() { "passed" } else { "FAILED" }.to_owned(),
            report.calls.to_string(),
            tokens.to_string(),
            report
                .cost
                .map_or_else(|| "-".to_owned(), |cost| format!("${cost:.4}")),
        ]);
    }
    let mut text = format!("\n{table}\n");
    for report in reports.iter().filter(|r| !r.passed()) {
        text.push_str(&format!(
            "\nFAILED {} · {} ({})\n",
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
    text.push_str(&format!("\n{passed} passed, {failed} failed\n"));
    write(&text)
}
