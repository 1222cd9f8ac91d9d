//! The `main` of a test binary that is its own jail helper (`harness = false`): the jail runs
//! its helper as `<this binary> __jail …`, so [`main`] answers those arguments first, and
//! otherwise runs the binary's tests with a small runner (a filter argument runs the tests whose
//! names contain it; `--list` lists them), closing with cargo's `test result:` line.

use std::ffi::{OsStr, OsString};
use std::process::ExitCode;

/// One test: a name and a function that panics on failure.
pub type Test = fn();

/// The jail's helper mode of a test binary: the argument that selects it (`HELPER_ARG` of
/// golem-sandbox's jail) and its `main` (`helper_main`), passed in so that this crate stays
/// below every crate of ours.
pub type Helper = (&'static str, fn(Vec<OsString>) -> i32);

/// Runs the jail's helper or the `tests`, as the arguments say.
pub fn main(tests: &[(&str, Test)], (helper_arg, helper_main): Helper) -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let first = args.next();
    if first.as_deref() == Some(OsStr::new(helper_arg)) {
        let code = helper_main(args.collect());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let words: Vec<String> = first
        .into_iter()
        .chain(args)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if words.iter().any(|w| w == "--list") {
        for (name, _) in tests {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = words.iter().filter(|w| !w.starts_with('-')).collect();
    let chosen: Vec<&(&str, Test)> = tests
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(*f)))
        .collect();
    println!("\nrunning {} tests", chosen.len());
    let mut failed = Vec::new();
    for (name, test) in &chosen {
        let outcome = std::panic::catch_unwind(test);
        println!(
            "test {name} ... {}",
            if outcome.is_ok() { "ok" } else { "FAILED" }
        );
        if outcome.is_err() {
            failed.push(*name);
        }
    }
    let passed = chosen.len() - failed.len();
    let filtered = tests.len() - chosen.len();
    let counts = format!(
        "{passed} passed; {} failed; 0 ignored; 0 measured; {filtered} filtered out",
        failed.len()
    );
    if failed.is_empty() {
        println!("\ntest result: ok. {counts}");
        ExitCode::SUCCESS
    } else {
        println!("\nfailures: {failed:?}\n\ntest result: FAILED. {counts}");
        ExitCode::FAILURE
    }
}

/// Runs `future` to its end on a runtime of its own.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}
