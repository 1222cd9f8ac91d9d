//! Running one request (`describe`, `call NAME`, `policy NAME`) of a module in the jail: the
//! script each kind of module runs as, and how a run that did not succeed becomes an error
//! naming the module and the tool.
//!
//! A one-shot run gives the program no stdin, so the module travels in the run's script
//! (written into the private `/tmp`): a Python or JavaScript module is embedded, as a string,
//! in its adapter, with the request; an executable is written out by a small `sh` script
//! (base64, so any bytes survive) and started with the arguments on its stdin from a
//! here-document (compact JSON holds no newline, so the arguments can never end it early).
//! `describe` is always such a run, and so is every request of an executable. The `call` and
//! `policy` requests of a Python or JavaScript module go to its long-lived process instead
//! (`session.rs`: the adapter with the module embedded, in `serve` mode).

use std::path::{Path, PathBuf};

use base64::Engine;
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::jail::{Jail, JailExit, JailScript};
use golem_toolset::process::Runner;
use golem_toolset::process::changes::{Pending, discarded};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::session::Session;

/// A module's answer to a request, and what the request changed in the zones, not yet applied
/// (`None`: nothing), for the caller to settle or discard.
#[derive(Debug)]
pub struct Answer {
    /// The answer as JSON text (for an executable: what it printed).
    pub text: String,
    /// The zones' changes.
    pub changes: Option<Pending>,
}

/// The adapter for Python modules.
const PYTHON_ADAPTER: &str = include_str!("adapters/adapter.py");
/// The adapter for JavaScript modules.
const JAVASCRIPT_ADAPTER: &str = include_str!("adapters/adapter.mjs");

/// How a module is run, from its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleKind {
    /// `.py`: `python3` with the Python adapter.
    Python,
    /// `.mjs` or `.js`: `node` with the JavaScript adapter.
    JavaScript,
    /// Anything else: the file itself, speaking the protocol.
    Executable,
}

impl ModuleKind {
    /// The kind of the module at `path`.
    pub fn of(path: &Path) -> ModuleKind {
        match path.extension().and_then(|e| e.to_str()) {
            Some("py") => ModuleKind::Python,
            Some("mjs" | "js") => ModuleKind::JavaScript,
            _ => ModuleKind::Executable,
        }
    }
}

/// The adapter a module of `kind` runs in, as shipped in this binary (none for an
/// executable).
pub fn adapter(kind: ModuleKind) -> &'static str {
    match kind {
        ModuleKind::Python => PYTHON_ADAPTER,
        ModuleKind::JavaScript => JAVASCRIPT_ADAPTER,
        ModuleKind::Executable => "",
    }
}

/// A module, the runner its one-shot requests go through, and for Python and JavaScript its
/// long-lived process.
#[derive(Debug)]
pub struct Module {
    shown: String,
    path: PathBuf,
    kind: ModuleKind,
    source: Vec<u8>,
    /// The files next to it that it may import, as a JSON object of file name → source.
    siblings: String,
    runner: Runner,
    session: Option<Session>,
}

impl Module {
    /// A module read from `path` (its bytes are `source`, the files next to it that it may
    /// import `siblings`), named `shown` in messages, run through `runner` (whose jail is
    /// `jail`).
    pub fn new(
        shown: String,
        path: PathBuf,
        kind: ModuleKind,
        (source, siblings): (Vec<u8>, &[(String, String)]),
        runner: Runner,
        jail: Jail,
    ) -> Module {
        let siblings: serde_json::Map<String, Value> = siblings
            .iter()
            .map(|(name, text)| (name.clone(), Value::String(text.clone())))
            .collect();
        let mut module = Module {
            shown,
            path,
            kind,
            source,
            siblings: Value::Object(siblings).to_string(),
            runner,
            session: None,
        };
        module.session = match kind {
            ModuleKind::Python | ModuleKind::JavaScript => {
                let (program, script, argv) = module.script("serve", "", "{}");
                let mut command = module.runner.command(program, argv, None);
                command.script = Some(script);
                Some(Session::new(jail, command))
            }
            ModuleKind::Executable => None,
        };
        module
    }

    /// Asks the module `op` (`call` or `policy`) for `tool` with `args`: through its
    /// long-lived process, or for an executable in a run of its own.
    pub async fn ask(
        &self,
        op: &str,
        tool: &str,
        args: &Value,
        cancel: &CancellationToken,
    ) -> Result<Answer, ToolError> {
        match &self.session {
            Some(session) => {
                let what = format!("custom tool `{tool}` (module {})", self.shown);
                let timeout = self.runner.timeouts().effective(None);
                let (value, changes) = session
                    .request(&what, op, tool, args, timeout, cancel)
                    .await?;
                Ok(Answer {
                    text: value.to_string(),
                    changes,
                })
            }
            None => self.request(op, Some(tool), Some(args), cancel).await,
        }
    }

    /// The module as the worker file names it.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The runner (for the risk and the surroundings of its tools).
    pub fn runner(&self) -> &Runner {
        &self.runner
    }

    /// Runs `op` (for `tool`, with `args`) and gives back what the module printed with what
    /// it changed in the zones, or the error its run stands for: `TIMEOUT`, `INTERRUPTED`, or
    /// `EXECUTION_ERROR` carrying its stderr for a non-zero exit or a crash (its changes then
    /// discarded).
    pub async fn request(
        &self,
        op: &str,
        tool: Option<&str>,
        args: Option<&Value>,
        cancel: &CancellationToken,
    ) -> Result<Answer, ToolError> {
        let what = match tool {
            Some(tool) => format!("custom tool `{tool}` (module {})", self.shown),
            None => format!("custom tool module {}", self.shown),
        };
        let args_json = args.map_or_else(|| "{}".to_owned(), Value::to_string);
        let (program, script, argv) = self.script(op, tool.unwrap_or(""), &args_json);
        let mut command = self.runner.command(program, argv, None);
        command.script = Some(script);
        let (output, changes) = self
            .runner
            .run_captured_changes(&command, &what, cancel)
            .await?;
        let stderr = output.stderr.text.trim_end();
        let failed = |how: String| {
            let mut message = format!("{what} {how}");
            if !stderr.is_empty() {
                message.push_str(":\n");
                message.push_str(stderr);
            }
            ToolError::new(ToolErrorCode::ExecutionError, message)
        };
        let error = match output.exit {
            JailExit::Code(0) => {
                return Ok(Answer {
                    text: output.stdout.text,
                    changes,
                });
            }
            JailExit::Code(127) if stderr.is_empty() => failed(format!(
                "could not start: `{program}` was not found in the jail"
            )),
            JailExit::Code(code) => failed(format!("failed (exit {code})")),
            JailExit::Signal(signal) => failed(format!("crashed (killed by signal {signal})")),
            // `run_captured_changes` turned every other end into its error already.
            other => failed(format!("ended as {other:?}")),
        };
        Err(match changes {
            Some(changes) => discarded(changes, error).await,
            None => error,
        })
    }

    /// The program, the script and the arguments of one request.
    fn script(&self, op: &str, tool: &str, args: &str) -> (&'static str, JailScript, Vec<String>) {
        let path = self.path.display().to_string();
        let source = String::from_utf8_lossy(&self.source);
        let literal = |text: &str| Value::String(text.to_owned()).to_string();
        match self.kind {
            ModuleKind::Python => {
                let contents = format!(
                    "GOLEM_MODULE_PATH = {}\nGOLEM_MODULE_SOURCE = {}\n\
                     GOLEM_MODULE_SIBLINGS = {}\nGOLEM_OP = {}\n\
                     GOLEM_TOOL = {}\nGOLEM_ARGS = {}\n{PYTHON_ADAPTER}",
                    literal(&path),
                    literal(&source),
                    self.siblings,
                    literal(op),
                    literal(tool),
                    literal(args),
                );
                let script = JailScript {
                    file_name: "golem_adapter.py".to_owned(),
                    contents: contents.into_bytes(),
                };
                ("python3", script, Vec::new())
            }
            ModuleKind::JavaScript => {
                let contents = format!(
                    "const GOLEM_MODULE_PATH = {};\nconst GOLEM_MODULE_SOURCE = {};\n\
                     const GOLEM_MODULE_SIBLINGS = {};\n\
                     const GOLEM_OP = {};\nconst GOLEM_TOOL = {};\nconst GOLEM_ARGS = {};\n\
                     {JAVASCRIPT_ADAPTER}",
                    literal(&path),
                    literal(&source),
                    self.siblings,
                    literal(op),
                    literal(tool),
                    literal(args),
                );
                let script = JailScript {
                    file_name: "golem_adapter.mjs".to_owned(),
                    contents: contents.into_bytes(),
                };
                ("node", script, Vec::new())
            }
            ModuleKind::Executable => {
                let encoded = base64::engine::general_purpose::STANDARD.encode(&self.source);
                let mut lines = String::with_capacity(encoded.len() + encoded.len() / 76 + 1);
                for chunk in encoded.as_bytes().chunks(76) {
                    lines.push_str(&String::from_utf8_lossy(chunk));
                    lines.push('\n');
                }
                let contents = format!(
                    "base64 -d > /tmp/golem_module <<'GOLEM_MODULE_END'\n{lines}GOLEM_MODULE_END\n\
                     chmod 700 /tmp/golem_module || exit 126\n\
                     exec /tmp/golem_module \"$@\" <<'GOLEM_ARGS_END'\n{args}\nGOLEM_ARGS_END\n"
                );
                let script = JailScript {
                    file_name: "golem_module.sh".to_owned(),
                    contents: contents.into_bytes(),
                };
                let mut argv = vec![op.to_owned()];
                if !tool.is_empty() {
                    argv.push(tool.to_owned());
                }
                ("sh", script, argv)
            }
        }
    }
}
