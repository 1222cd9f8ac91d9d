//! A standalone jail helper: the same code `golem-forge __jail` runs, as its own small binary
//! for the sandbox crate's tests and for embedding the jail elsewhere. Usage:
//! `golem-jail __jail SPEC` (the parent in `golem_sandbox::jail` writes the spec).

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    match args.next() {
        Some(first) if first == golem_sandbox::jail::HELPER_ARG => {
            let code = golem_sandbox::jail::helper_main(args.collect());
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
        _ => {
            eprintln!("golem-jail: the process jail's helper; run by golem-forge, not by hand");
            ExitCode::from(2)
        }
    }
}
