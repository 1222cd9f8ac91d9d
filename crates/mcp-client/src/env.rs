//! The environment of an MCP server's process: a minimal one (`PATH`, `HOME`, `LANG` from
//! ours, when set) plus the server's own `env`, whose `${VAR}` references are expanded from
//! our environment. Nothing else of ours reaches the server, so never our API keys.

use std::collections::BTreeMap;

/// The variables of ours a server gets.
const PASSED: [&str; 3] = ["PATH", "HOME", "LANG"];

/// The whole environment of a server configured with `own` (already expanded), with
/// `lookup` reading our variables.
pub fn server_env(
    own: &BTreeMap<String, String>,
    lookup: impl Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = PASSED
        .iter()
        .filter_map(|name| lookup(name).map(|value| ((*name).to_owned(), value)))
        .collect();
    env.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// Why a `${VAR}` reference could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// `${` without its `}`, in this value.
    #[error("`${{` without a closing `}}` in {0:?}")]
    Unclosed(String),
    /// `${…}` around something that is not a variable name.
    #[error("`${{{0}}}` is not a variable name")]
    BadName(String),
    /// A variable we do not have.
    #[error("`${{{0}}}` is not set in our environment")]
    Unset(String),
}

/// `value` with every `${VAR}` replaced by our `VAR` (read through `lookup`); an unset
/// variable or an unclosed `${` is an error naming it.
pub fn expand(value: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Unclosed(value.to_owned()));
        };
        let name = &after[..end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(ExpandError::BadName(name.to_owned()));
        }
        match lookup(name) {
            Some(found) => out.push_str(&found),
            None => return Err(ExpandError::Unset(name.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".to_owned()),
            "PATH" => Some("/usr/bin".to_owned()),
            "OPENAI_API_KEY" => Some("sk-never".to_owned()),
            _ => None,
        }
    }

    #[test]
    fn references_are_expanded_and_unset_ones_are_errors() {
        assert_eq!(
            expand("Bearer ${TOKEN}!", ours).as_deref(),
            Ok("Bearer s3cret!")
        );
        assert_eq!(expand("plain", ours).as_deref(), Ok("plain"));
        assert_eq!(
            expand("${MISSING}", ours).unwrap_err().to_string(),
            "`${MISSING}` is not set in our environment"
        );
        assert_eq!(
            expand("a ${TOKEN", ours).unwrap_err().to_string(),
            "`${` without a closing `}` in \"a ${TOKEN\""
        );
        assert_eq!(
            expand("${BAD-NAME}", ours).unwrap_err().to_string(),
            "`${BAD-NAME}` is not a variable name"
        );
    }

    #[test]
    fn the_environment_is_minimal() {
        let own = BTreeMap::from([("DEBUG".to_owned(), "1".to_owned())]);
        let env = server_env(&own, ours);
        assert_eq!(
            env.keys().map(String::as_str).collect::<Vec<_>>(),
            ["DEBUG", "PATH"]
        );
    }
}
