//! What a `run_code` call may add to the jail's environment: variables with valid names that do
//! not replace the ones the jail sets up for the process to work (`PATH`, `HOME`, `TMPDIR`) or
//! that change how every program loads (`LD_PRELOAD`, `LD_LIBRARY_PATH`), and values that can
//! be in an environment (no NUL).

use std::collections::BTreeMap;

use golem_protocol::{ToolError, ToolErrorCode};

use crate::shell::is_name;

/// Variables a call may not set.
pub const RESERVED: &[&str] = &["PATH", "HOME", "TMPDIR", "LD_PRELOAD", "LD_LIBRARY_PATH"];

/// `INVALID_ARGUMENTS` for the first variable that may not be set, naming it and why.
pub fn check_env(env: &BTreeMap<String, String>) -> Result<(), ToolError> {
    for (name, value) in env {
        let problem = if !is_name(name) {
            format!(
                "env: `{name}` is not a valid variable name (letters, digits and _, not \
                 starting with a digit)"
            )
        } else if RESERVED.contains(&name.as_str()) {
            format!(
                "env: `{name}` may not be set by a call (reserved: {})",
                RESERVED.join(", ")
            )
        } else if value.contains('\0') {
            format!("env: the value of `{name}` contains a NUL character")
        } else {
            continue;
        };
        return Err(ToolError::new(ToolErrorCode::InvalidArguments, problem));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn problem(pairs: &[(&str, &str)]) -> String {
        match check_env(&env(pairs)) {
            Ok(()) => panic!("{pairs:?} was accepted"),
            Err(err) => {
                assert_eq!(err.code, ToolErrorCode::InvalidArguments);
                err.message
            }
        }
    }

    #[test]
    fn ordinary_variables_pass() {
        let ok = env(&[
            ("A", "1"),
            ("_x", ""),
            ("PYTHONHASHSEED", "0"),
            ("path", "/x"),
        ]);
        assert!(check_env(&ok).is_ok());
        assert!(check_env(&BTreeMap::new()).is_ok());
    }

    #[test]
    fn bad_names_are_refused() {
        for name in ["", "1A", "A-B", "A B", "A=B", "É", "A\0"] {
            let message = problem(&[(name, "v")]);
            assert!(
                message.contains("is not a valid variable name"),
                "{name:?}: {message}"
            );
        }
    }

    #[test]
    fn reserved_names_are_refused() {
        for name in RESERVED {
            let message = problem(&[(name, "v")]);
            assert_eq!(
                message,
                format!(
                    "env: `{name}` may not be set by a call (reserved: PATH, HOME, TMPDIR, \
                     LD_PRELOAD, LD_LIBRARY_PATH)"
                )
            );
        }
    }

    #[test]
    fn values_with_nul_are_refused() {
        assert_eq!(
            problem(&[("A", "a\0b")]),
            "env: the value of `A` contains a NUL character"
        );
    }
}
