//! Checks on the values a call gives git, made in `prepare` before anything runs. Every value
//! is passed as one word of its own, never through a shell; these checks refuse what git would
//! read as something else: an option (`-…`, `--upload-pack=…`), a refspec (`a:b`, `+a`, `:a`)
//! instead of a branch, or a control character. Refusals are `INVALID_ARGUMENTS`.

use golem_protocol::{ToolError, ToolErrorCode};

/// The longest branch name or revision accepted, in bytes.
const MAX_NAME_BYTES: usize = 255;

fn invalid(message: String) -> ToolError {
    ToolError::new(ToolErrorCode::InvalidArguments, message)
}

/// `value` as shown in messages: quoted, with control characters escaped.
fn quoted(value: &str) -> String {
    format!("\"{}\"", value.escape_debug())
}

/// Refuses a value git would read as an option.
pub(super) fn not_an_option(what: &str, value: &str) -> Result<(), ToolError> {
    if value.starts_with('-') {
        return Err(invalid(format!(
            "{what} {} starts with `-`, which git would read as an option",
            quoted(value)
        )));
    }
    Ok(())
}

fn no_control_characters(what: &str, value: &str) -> Result<(), ToolError> {
    if value.chars().any(char::is_control) {
        return Err(invalid(format!(
            "{what} {} holds a control character",
            quoted(value)
        )));
    }
    Ok(())
}

/// A branch name as git's `check-ref-format --branch` accepts it, and nothing a refspec would
/// read differently: not empty, no option, no `:` or leading `+`, no spaces, control characters
/// or `~ ^ ? * [ \`, no `..` or `@{`, not `@`, no empty, leading-dot or `.lock` component, no
/// trailing `.`.
pub(super) fn branch_name(what: &str, value: &str) -> Result<(), ToolError> {
    if value.is_empty() {
        return Err(invalid(format!("{what} is empty")));
    }
    if value.len() > MAX_NAME_BYTES {
        return Err(invalid(format!(
            "{what} is longer than {MAX_NAME_BYTES} bytes"
        )));
    }
    not_an_option(what, value)?;
    no_control_characters(what, value)?;
    let bad = |why: &str| {
        Err(invalid(format!(
            "{what} {} is not a valid branch name: {why}",
            quoted(value)
        )))
    };
    if value.starts_with('+') {
        return bad("a leading `+` would force the update");
    }
    if let Some(c) = value
        .chars()
        .find(|c| c.is_whitespace() || matches!(c, ':' | '~' | '^' | '?' | '*' | '[' | '\\'))
    {
        return bad(&format!("it holds {}", quoted(&c.to_string())));
    }
    if value.contains("..") || value.contains("@{") || value == "@" {
        return bad("it holds `..` or `@{`, or is `@`");
    }
    if value.ends_with('.') {
        return bad("it ends with `.`");
    }
    for component in value.split('/') {
        if component.is_empty() {
            return bad("it has an empty component (a leading, trailing or double `/`)");
        }
        if component.starts_with('.') || component.ends_with(".lock") {
            return bad("a component starts with `.` or ends with `.lock`");
        }
    }
    Ok(())
}

/// A revision for `git show`: not empty, not an option, no control characters, at most
/// [`MAX_NAME_BYTES`] bytes. Anything else (`HEAD~2`, `v1.0`, `abc123:src/a.rs`) is git's to
/// resolve.
pub(super) fn revision(value: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() {
        return Err(invalid("rev is empty".into()));
    }
    if value.len() > MAX_NAME_BYTES {
        return Err(invalid(format!(
            "rev is longer than {MAX_NAME_BYTES} bytes"
        )));
    }
    not_an_option("rev", value)?;
    no_control_characters("rev", value)
}

/// A commit message: not blank, no NUL (line breaks and tabs are text).
pub(super) fn message(value: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() {
        return Err(invalid("message is empty".into()));
    }
    if value.contains('\0') {
        return Err(invalid("message holds a NUL character".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names() {
        for good in [
            "main",
            "feature/login",
            "fix-1.2",
            "v1",
            "a.b/c_d",
            "ünïcode",
        ] {
            assert!(branch_name("branch", good).is_ok(), "{good}");
        }
        for (bad, why) in [
            ("", "is empty"),
            ("-f", "starts with `-`"),
            ("--upload-pack=touch /x", "starts with `-`"),
            ("+main", "leading `+`"),
            ("main:other", "\":\""),
            (":main", "\":\""),
            ("a b", "\" \""),
            ("a\nb", "control character"),
            ("a..b", "`..`"),
            ("HEAD@{1}", "`@{`"),
            ("@", "`@`"),
            ("a/", "empty component"),
            ("/a", "empty component"),
            ("a//b", "empty component"),
            (".hidden", "starts with `.`"),
            ("a/b.lock", "`.lock`"),
            ("a.", "ends with `.`"),
            ("a~1", "\"~\""),
            ("a^", "\"^\""),
            ("a*", "\"*\""),
        ] {
            let err = branch_name("branch", bad)
                .err()
                .unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert_eq!(err.code, ToolErrorCode::InvalidArguments);
            assert!(err.message.contains(why), "{bad:?}: {}", err.message);
        }
    }

    #[test]
    fn revisions_and_messages() {
        for good in [
            "HEAD",
            "HEAD~2",
            "abc1234",
            "v1.0^{commit}",
            "main:src/a.rs",
        ] {
            assert!(revision(good).is_ok(), "{good}");
        }
        for bad in ["", " ", "-p", "--output=/x", "a\0b", "HEAD\n"] {
            assert!(revision(bad).is_err(), "{bad:?}");
        }
        assert!(message("fix: a\n\nbody\twith tab").is_ok());
        assert!(message("  \n").is_err());
        assert!(message("a\0").is_err());
        // A message may start with `-`: it is the value of `-m`, never an option.
        assert!(message("- bullet").is_ok());
    }
}
