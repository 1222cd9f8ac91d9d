//! Where a run's input comes from: `--input`, then `--file`, then the words after the worker,
//! then standard input when it is not a terminal.

use std::io::{IsTerminal, Read};
use std::path::Path;

use crate::cli_error::CommandError;

/// Reads the input by the precedence of docs/cli.md (Input).
pub fn read_input(
    text: Option<&str>,
    file: Option<&Path>,
    words: &[String],
) -> Result<String, CommandError> {
    if let Some(text) = text {
        return Ok(text.to_owned());
    }
    if let Some(file) = file {
        return std::fs::read_to_string(file).map_err(|e| {
            CommandError::usage(format!(
                "cannot read the input file {}: {e}",
                file.display()
            ))
        });
    }
    if !words.is_empty() {
        return Ok(words.join(" "));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(CommandError::usage("no input given")
            .with_hint("Pass the input as words after the worker, with --input TEXT or --file PATH, or pipe it on stdin"));
    }
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .map_err(|e| CommandError::usage(format!("cannot read the input from stdin: {e}")))?;
    if text.trim().is_empty() {
        return Err(CommandError::usage("the input on stdin is empty")
            .with_hint("Pass the input as words after the worker, or with --input TEXT"));
    }
    Ok(text)
}
