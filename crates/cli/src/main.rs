//! The `golem-forge` binary. Everything lives in the library (`lib.rs`): the command line,
//! the front ends and the jail helper mode.

use std::process::ExitCode;

fn main() -> ExitCode {
    golem_forge::main()
}
