//! `compatible_models`: which models a worker accepts, as globs where `*` matches any run of
//! characters (`:` and `/` included) and every other character is literal (dots too).
//!
//! The offline stand-ins — the `test` and `replay:` providers — are compatible with every
//! worker, so a worker that declares `compatible_models` can still run offline.

use super::definition::WorkerDefinition;
use super::error::WorkerFileError;

/// Providers whose models stand in for any model, for offline runs.
const STAND_IN_PROVIDERS: &[&str] = &["test", "replay"];

/// Whether `text` matches `pattern`, where `*` matches any run of characters (also none) and
/// every other character matches itself.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let (pattern, text) = (pattern.as_bytes(), text.as_bytes());
    let (mut p, mut t) = (0, 0);
    // After a `*`: the pattern position after it and the text position it last matched up to.
    let mut retry: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                retry = Some((p + 1, t));
                p += 1;
            }
            Some(&c) if c == text[t] => {
                p += 1;
                t += 1;
            }
            Some(_) | None => match retry {
                // Let the last `*` swallow one more character and try again.
                Some((after_star, matched_to)) => {
                    p = after_star;
                    t = matched_to + 1;
                    retry = Some((after_star, matched_to + 1));
                }
                None => return false,
            },
        }
    }
    pattern
        .get(p..)
        .is_some_and(|rest| rest.iter().all(|c| *c == b'*'))
}

impl WorkerDefinition {
    /// Whether `model` may run this worker: no `compatible_models`, a matching pattern, or a
    /// stand-in provider (`test`, `replay`).
    pub fn is_compatible(&self, model: &str) -> bool {
        let Some(patterns) = &self.compatible_models else {
            return true;
        };
        let provider = model
            .split_once(':')
            .map_or(model, |(provider, _)| provider);
        STAND_IN_PROVIDERS.contains(&provider)
            || patterns.iter().any(|pattern| glob_matches(pattern, model))
    }

    /// Fails with a message naming the model and the patterns when `model` may not run this
    /// worker (see [`Self::is_compatible`]).
    pub fn check_compatible(&self, model: &str) -> Result<(), WorkerFileError> {
        if self.is_compatible(model) {
            return Ok(());
        }
        Err(WorkerFileError::IncompatibleModel {
            model: model.to_owned(),
            worker: self.name.clone(),
            patterns: self.compatible_models.clone().unwrap_or_default(),
        })
    }
}
