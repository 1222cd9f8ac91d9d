//! The shape of a session test, once: a [`Scenario`] (the mock model's scripted replies, the
//! worker program they answer, its config) builds a [`Program`] on disk; the program opens a
//! [`Session`] through the session host (attached, started); the test sends action events
//! (inputs, answers, questions) and waits for display events, each within [`WAIT`].
//!
//! It lives here, not in `golem-testkit`, because it drives `golem_runtime::host` and speaks
//! `golem_protocol`'s events, and the testkit may depend on no product crate
//! (`crates/cli/tests/architecture.rs`). The product-free parts it stands on are the
//! testkit's: the mock server, its scripted replies, and the program on disk
//! (`golem_testkit::program`).

use std::path::PathBuf;
use std::time::Duration;

use golem_protocol::{
    ActionEvent, ActionResult, ApprovalRequest, ApprovalResponse, DisplayEvent, SessionEndReason,
    SessionStatus,
};
use golem_runtime::host::{Attachment, HostOptions, HostWorker, RunningSession, SessionHost};
use golem_session::{SessionStore, Transcript};
use golem_testkit::mock::{MockServer, Reply};
use golem_testkit::program::{append_config, mock_program};
use tempfile::TempDir;

/// How long any one expected event may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// Writes a program for the mock server at hand: its directory (kept alive by the caller)
/// and its worker file.
type WriteProgram = Box<dyn FnOnce(&MockServer) -> (TempDir, PathBuf)>;

/// What a session test starts from: the model's replies, in order, and the program.
pub struct Scenario {
    replies: Vec<Reply>,
    zone_approval: &'static str,
    config: String,
    write: Option<WriteProgram>,
}

impl Scenario {
    /// The model answers with `replies`, one per request; the program is the testkit's mock
    /// program (`main.worker` with the filesystem tools on the `rw` zone `out`).
    pub fn new(replies: Vec<Reply>) -> Scenario {
        Scenario {
            replies,
            zone_approval: "",
            config: String::new(),
            write: None,
        }
    }

    /// The zone `out` asks before a file is created (`approval: { create: ask }`).
    pub fn ask_to_create(mut self) -> Scenario {
        self.zone_approval = "      approval: { create: ask }\n";
        self
    }

    /// Appends `text` to the program config.
    pub fn config(mut self, text: &str) -> Scenario {
        self.config.push_str(text);
        self
    }

    /// A program of the test's own instead of the mock program.
    pub fn program(
        mut self,
        write: impl FnOnce(&MockServer) -> (TempDir, PathBuf) + 'static,
    ) -> Scenario {
        self.write = Some(Box::new(write));
        self
    }

    /// Starts the mock server and writes the program.
    pub async fn build(mut self) -> Program {
        let server = MockServer::start(std::mem::take(&mut self.replies)).await;
        self.write_for(server)
    }

    /// [`Scenario::build`] outside an async runtime, for a test that runs its own.
    pub fn build_blocking(mut self) -> Program {
        let server = MockServer::start_blocking(std::mem::take(&mut self.replies));
        self.write_for(server)
    }

    fn write_for(self, server: MockServer) -> Program {
        let (dir, worker) = match self.write {
            Some(write) => write(&server),
            None => mock_program(&server, self.zone_approval),
        };
        if !self.config.is_empty() {
            append_config(dir.path(), &self.config);
        }
        Program {
            server,
            dir,
            worker,
        }
    }
}

/// A worker program on disk and the mock model it talks to.
pub struct Program {
    /// The mock model, with the requests it got.
    pub server: MockServer,
    /// The program's directory.
    pub dir: TempDir,
    /// The worker file.
    pub worker: PathBuf,
}

impl Program {
    /// Options for a session of the worker that keeps its conversation between turns.
    pub fn options(&self) -> HostOptions {
        HostOptions {
            keeps_history: true,
            ..HostOptions::new(HostWorker::File(self.worker.clone()))
        }
    }

    /// A new session, attached by a front end that answers approvals, and started.
    pub fn start(&self) -> Session {
        self.start_with(self.options(), true)
    }

    /// A new session whose only front end answers no approvals (a headless run).
    pub fn start_headless(&self) -> Session {
        self.start_with(self.options(), false)
    }

    /// A session opened with `options`, attached (answering approvals or not), and started.
    pub fn start_with(&self, options: HostOptions, answers_approvals: bool) -> Session {
        let host = SessionHost::open(options).unwrap();
        let id = host.session_id();
        let ui = host.attach(answers_approvals);
        let running = host.start();
        Session { ui, running, id }
    }

    /// A path inside the program's directory.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Appends `text` to the program config.
    pub fn append_config(&self, text: &str) {
        append_config(self.dir.path(), text);
    }

    /// The transcript of the session `id`.
    pub fn transcript(&self, id: &str) -> Transcript {
        SessionStore::new(self.dir.path()).load(id).unwrap()
    }
}

/// A running session, seen from one attached front end.
pub struct Session {
    ui: Attachment,
    running: RunningSession,
    id: String,
}

impl Session {
    /// The session's id as it was opened.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends an action event.
    pub fn send(&self, action: ActionEvent) {
        self.ui.send(action);
    }

    /// Sends a user input (a turn).
    pub fn input(&self, text: &str) {
        self.send(ActionEvent::UserInput {
            request_id: None,
            content: text.into(),
        });
    }

    /// Reads events until one matches `want`; returns it and every event before it.
    pub async fn until(
        &mut self,
        want: impl Fn(&DisplayEvent) -> bool,
    ) -> (DisplayEvent, Vec<DisplayEvent>) {
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(WAIT, self.ui.recv())
                .await
                .unwrap_or_else(|_| panic!("no such event in time; saw {seen:#?}"))
                .unwrap_or_else(|| panic!("the session closed; saw {seen:#?}"));
            if want(&event) {
                return (event, seen);
            }
            seen.push(event);
        }
    }

    /// Waits for the next approval request.
    pub async fn approval(&mut self) -> ApprovalRequest {
        match self
            .until(|e| matches!(e, DisplayEvent::ApprovalRequired(_)))
            .await
        {
            (DisplayEvent::ApprovalRequired(request), _) => request,
            _ => unreachable!(),
        }
    }

    /// Approves the request `request_id`, once, without remembering it.
    pub fn approve(&self, request_id: &str) {
        self.send(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
            request_id,
        )));
    }

    /// Waits for the end of the turn; returns `turnEnded` and every event before it.
    pub async fn turn_ended(&mut self) -> (DisplayEvent, Vec<DisplayEvent>) {
        self.until(|e| matches!(e, DisplayEvent::TurnEnded { .. }))
            .await
    }

    /// Waits for the next `actionResult`.
    pub async fn action_result(&mut self) -> ActionResult {
        match self
            .until(|e| matches!(e, DisplayEvent::ActionResult(_)))
            .await
        {
            (DisplayEvent::ActionResult(result), _) => result,
            _ => unreachable!(),
        }
    }

    /// Asks for the session's status (`getStatus` without a request id) and waits for it.
    pub async fn status(&mut self) -> SessionStatus {
        self.send(ActionEvent::GetStatus { request_id: None });
        match self
            .until(|e| matches!(e, DisplayEvent::SessionStatus(_)))
            .await
        {
            (DisplayEvent::SessionStatus(status), _) => status,
            _ => unreachable!(),
        }
    }

    /// Ends the session (`endSession` with `reason`) and waits for `sessionEnded`; returns it
    /// and every event before it.
    pub async fn end_with(
        &mut self,
        reason: Option<SessionEndReason>,
    ) -> (DisplayEvent, Vec<DisplayEvent>) {
        self.send(ActionEvent::EndSession { reason });
        self.until(|e| matches!(e, DisplayEvent::SessionEnded { .. }))
            .await
    }

    /// Ends the session without a reason and waits until it closed.
    pub async fn end(self) {
        self.send(ActionEvent::EndSession { reason: None });
        self.closed().await;
    }

    /// Waits until the session closed (after `endSession`).
    pub async fn closed(self) {
        self.running.closed().await;
    }
}
