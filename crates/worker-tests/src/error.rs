//! Why tests could not be found, read or run (each is bad input: `golem-forge test` exits 2).

use std::io;
use std::path::PathBuf;

use golem_runtime::worker::YamlProblem;

/// A test file or worker that cannot be used, or a scratch place that cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    /// A file cannot be read.
    #[error("cannot read test file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not a valid test file; `message` names the key when there is one.
    #[error("test file {}, line {line}: {message}", path.display())]
    Invalid {
        /// The test file.
        path: PathBuf,
        /// 1-based line in the file.
        line: u64,
        /// The dotted key path (`cases[0].expect.answer.regex`), when the problem has one.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A path argument is neither a worker, a test file nor a directory.
    #[error("{}: {why}", path.display())]
    BadPath {
        /// The argument.
        path: PathBuf,
        /// Why it cannot be tested.
        why: String,
    },
    /// The worker a test file tests cannot be read, or its program config is wrong.
    #[error("{0}")]
    Worker(String),
    /// Without a model to ask (`--model`), a case with no scripted replies cannot run.
    #[error(
        "test file {}: case `{case}` has no `model:` replies, so it cannot run offline; script \
         its replies, or run it against a model with --model provider:model",
        path.display()
    )]
    NoReplies {
        /// The test file.
        path: PathBuf,
        /// The case.
        case: String,
    },
    /// The scratch directory of a case cannot be made or filled.
    #[error("cannot prepare the scratch zones of case `{case}`: {message}")]
    Scratch {
        /// The case.
        case: String,
        /// What failed.
        message: String,
    },
}

impl TestError {
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
}
