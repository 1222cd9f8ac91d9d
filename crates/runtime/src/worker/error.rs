//! Errors from loading a worker file or checking a model against it.

use std::io;
use std::path::PathBuf;

use super::yaml::YamlProblem;

/// A worker file that cannot be read, is invalid, or does not fit the chosen model.
#[derive(Debug, thiserror::Error)]
pub enum WorkerFileError {
    /// The file cannot be read.
    #[error("cannot read worker file {}: {source}", path.display())]
    Read {
        /// The worker file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not a valid worker file; `message` names the key when there is one.
    #[error("worker file {}, line {line}: {message}", path.display())]
    Invalid {
        /// The worker file.
        path: PathBuf,
        /// 1-based line in the file.
        line: u64,
        /// The dotted key path (`toolsets.shell.rules[2].approval`), when the problem has one.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// The chosen model matches none of the worker's `compatible_models`.
    #[error(
        "model {model} is not compatible with worker {worker} (compatible_models: {})",
        patterns.join(", ")
    )]
    IncompatibleModel {
        /// The chosen model.
        model: String,
        /// The worker's name.
        worker: String,
        /// Its `compatible_models`.
        patterns: Vec<String>,
    },
}

impl WorkerFileError {
    /// An invalid-file error at `line`, about `key` if given.
    pub(crate) fn invalid(
        path: impl Into<PathBuf>,
        line: u64,
        key: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            path: path.into(),
            line,
            key: key.map(str::to_owned),
            message: message.into(),
        }
    }

    pub(crate) fn from_yaml(path: impl Into<PathBuf>, problem: YamlProblem) -> Self {
        Self::Invalid {
            path: path.into(),
            line: problem.line,
            key: problem.key,
            message: problem.message,
        }
    }

    /// The line of an invalid-file error.
    pub fn line(&self) -> Option<u64> {
        match self {
            Self::Invalid { line, .. } => Some(*line),
            Self::Read { .. } | Self::IncompatibleModel { .. } => None,
        }
    }
}
