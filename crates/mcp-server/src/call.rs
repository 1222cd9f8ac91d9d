//! One call of a worker: a fresh session of it (`SessionHost::open`, its transcript under
//! `.golem-forge/sessions/` as for `run`), attached to as the front end that answers its
//! approvals; the input sent as one `userInput`; then its display events read until the turn
//! ends — streamed text and tool calls sent on as progress notifications (when the client gave
//! a progress token), approvals asked through elicitation, the client's cancellation sent on
//! as an `interrupt` — and the session ended, its transcript closed, before the result goes
//! back. For a client that can ask its user, the session is attached interactively, so that
//! its tools may ask questions too (`inputRequired`), asked through elicitation like
//! approvals; otherwise the tools decline such questions themselves.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use golem_core::bus::DisplaySubscription;
use golem_protocol::{ActionEvent, SessionEndReason};
use golem_runtime::host::{ActionSender, HostOptions, Presence, RunningSession, SessionHost};
use rmcp::model::{
    CallToolResult, CancelledNotificationParam, ClientResult, ContentBlock, ElicitRequest,
    ProgressNotificationParam, ProgressToken, RequestId, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext, RoleServer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::catalog::WorkerEntry;
use crate::outcome::{Collector, Step, TurnEnd};
use crate::question::Question;

/// How long an interrupted turn may take to wind down (the runtime asks the model for a
/// summary, for at most 10 s) before its session is ended outright.
const WIND_DOWN: Duration = Duration::from_secs(15);

/// How long a session may take to close after its turn ended.
const CLOSING: Duration = Duration::from_secs(10);

/// How long the progress notifications still queued may take to reach the client once the
/// call has its answer.
const FLUSHING: Duration = Duration::from_secs(2);

/// Why a call that needs consent is denied when the MCP client cannot ask its user (it did
/// not declare elicitation), completing "TOOL was denied: …"; it names the flags that decide
/// without asking.
pub(crate) const UNATTENDED: &str = "this MCP client cannot ask a person for approval (it did not \
     declare the elicitation capability). To decide such calls without asking, start the \
     server with `golem-forge mcp --approval approve_all` (allow them) or `--approval defer` \
     (park them in the approval inbox: `golem-forge inbox`)";

/// An elicitation request on its way: the action that settles its question, with the
/// request's id.
type Asking = Pin<Box<dyn Future<Output = (Option<RequestId>, ActionEvent)> + Send>>;

/// Where a call reports: the client, its progress notifications, and its cancellation.
pub(crate) struct CallIo {
    peer: Peer<RoleServer>,
    progress: Progress,
    cancelled: CancellationToken,
    hurry: CancellationToken,
}

impl CallIo {
    /// The client of the request `context`, which arrived at `received`; `hurry` ends the
    /// call's session at once (the server is stopping).
    pub(crate) fn new(
        context: &RequestContext<RoleServer>,
        received: Instant,
        hurry: CancellationToken,
    ) -> Self {
        Self {
            peer: context.peer.clone(),
            progress: Progress::start(&context.peer, context.meta.get_progress_token(), received),
            cancelled: context.ct.clone(),
            hurry,
        }
    }

    /// From the request to its first progress notification, once one was sent.
    pub(crate) fn first_progress(&self) -> Option<Duration> {
        self.progress.first.get().copied()
    }
}

/// The progress notifications of one request, sent in order by a task of their own, so that
/// a slow client, or one that is gone, never holds the call up.
struct Progress {
    queue: Option<mpsc::UnboundedSender<String>>,
    sender: Option<tokio::task::JoinHandle<()>>,
    first: Arc<OnceLock<Duration>>,
}

impl Progress {
    /// Starts sending, when the client gave a progress token; the time of the first is
    /// counted from `since`.
    fn start(peer: &Peer<RoleServer>, token: Option<ProgressToken>, since: Instant) -> Self {
        let first = Arc::new(OnceLock::new());
        let Some(token) = token else {
            return Self {
                queue: None,
                sender: None,
                first,
            };
        };
        let (queue, mut messages) = mpsc::unbounded_channel::<String>();
        let (peer, sent_first) = (peer.clone(), first.clone());
        let sender = tokio::spawn(async move {
            let mut count = 0u64;
            while let Some(message) = messages.recv().await {
                count += 1;
                let param = ProgressNotificationParam::new(token.clone(), count as f64)
                    .with_message(message);
                if let Err(e) = peer.notify_progress(param).await {
                    tracing::debug!(error = %e, "a progress notification was not sent");
                    break;
                }
                let _ = sent_first.set(since.elapsed());
            }
        });
        Self {
            queue: Some(queue),
            sender: Some(sender),
            first,
        }
    }

    /// Queues `message`.
    fn send(&self, message: String) {
        if let Some(queue) = &self.queue {
            let _ = queue.send(message);
        }
    }

    /// Stops sending: the client no longer waits for this request.
    fn stop(&mut self) {
        self.queue = None;
        if let Some(sender) = self.sender.take() {
            sender.abort();
        }
    }

    /// Sends what is queued (for at most [`FLUSHING`]), so that it reaches the client before
    /// the request's answer.
    async fn flush(&mut self) {
        self.queue = None;
        if let Some(mut sender) = self.sender.take()
            && tokio::time::timeout(FLUSHING, &mut sender).await.is_err()
        {
            sender.abort();
        }
    }
}

/// How a stretch of a call ended.
pub(crate) enum Driven {
    /// The call is over.
    Finished(CallToolResult),
    /// A tool call waits for the user's consent, or a tool for the user's answer, and
    /// questions are not asked inline (a client of protocol 2026-07-28, which asks through an
    /// input-required result).
    Question(Question),
}

/// A running call: its session, and what it did so far.
pub(crate) struct CallRun {
    entry: Arc<WorkerEntry>,
    session_id: String,
    events: DisplaySubscription,
    actions: ActionSender,
    _presence: Presence,
    running: Option<RunningSession>,
    collector: Collector,
    interrupted_at: Option<Instant>,
    ended_early: bool,
    started: Instant,
}

/// What a finished call did, for the server's log.
#[derive(Debug, Clone)]
#[allow(missing_docs)] // fields are named for what they hold
pub struct CallReport {
    pub worker: String,
    /// Its session (transcript).
    pub session_id: String,
    /// `completed`, `failed`, `interrupted` or `budgetExceeded`.
    pub status: String,
    /// How long the call took.
    pub duration: Duration,
    /// How many tool calls the worker made.
    pub tool_calls: usize,
    /// From the request to the first progress notification, when one was sent.
    pub first_progress: Option<Duration>,
}

impl CallRun {
    /// Opens a session of `entry` with `options` and sends it `input`; `interactive` (the
    /// client can ask its user) lets its tools ask questions. The error is the message for an
    /// error result (the worker could not be started).
    pub(crate) async fn start(
        entry: Arc<WorkerEntry>,
        options: HostOptions,
        input: String,
        interactive: bool,
    ) -> Result<CallRun, String> {
        let started = Instant::now();
        let host = tokio::task::spawn_blocking(move || SessionHost::open(options))
            .await
            .map_err(|e| format!("the session could not be opened: {e}"))?
            .map_err(|e| format!("worker {} could not be started: {e}", entry.name))?
            .with_unattended_reason(UNATTENDED);
        let session_id = host.session_id();
        // A client that cannot elicit answers no approvals: a call that would ask is denied
        // with [`UNATTENDED`].
        let attachment = if interactive {
            host.attach_interactive()
        } else {
            host.attach(false)
        };
        let (events, actions, presence) = attachment.into_parts();
        let running = host.start();
        actions.send(ActionEvent::UserInput {
            request_id: None,
            content: input,
        });
        Ok(CallRun {
            collector: Collector::new(&entry.name, &session_id),
            entry,
            session_id,
            events,
            actions,
            _presence: presence,
            running: Some(running),
            interrupted_at: None,
            ended_early: false,
            started,
        })
    }

    /// The worker's name.
    pub(crate) fn worker(&self) -> &str {
        &self.entry.name
    }

    /// Settles the question the call waited for (after an input-required round).
    pub(crate) fn answer(&self, response: ActionEvent) {
        self.actions.send(response);
    }

    /// Runs the call on until it is over, or (unless `ask_inline`) until a question (an
    /// approval, or a tool's) waits. With `ask_inline`, questions are elicitation requests to
    /// the client, asked while the call goes on reporting progress; the client's cancellation
    /// interrupts the turn.
    pub(crate) async fn drive(&mut self, io: &mut CallIo, ask_inline: bool) -> Driven {
        let mut asking: FuturesUnordered<Asking> = FuturesUnordered::new();
        let mut unanswered: Vec<(RequestId, String)> = Vec::new();
        let driven = self
            .drive_asking(io, ask_inline, &mut asking, &mut unanswered)
            .await;
        io.progress.flush().await;
        // Elicitation requests the call no longer needs are withdrawn.
        for (id, _) in unanswered {
            withdraw(
                &io.peer,
                id,
                "the tool call this question was for has ended",
            )
            .await;
        }
        driven
    }

    async fn drive_asking(
        &mut self,
        io: &mut CallIo,
        ask_inline: bool,
        asking: &mut FuturesUnordered<Asking>,
        unanswered: &mut Vec<(RequestId, String)>,
    ) -> Driven {
        loop {
            let wind_down = self
                .interrupted_at
                .filter(|_| !self.ended_early)
                .map(|at| at + WIND_DOWN);
            tokio::select! {
                event = self.events.recv() => {
                    let Some(event) = event else {
                        return Driven::Finished(self.lost().await);
                    };
                    let question = match self.collector.on_event(event) {
                        Step::Nothing => None,
                        Step::Progress(text) => {
                            io.progress.send(text);
                            None
                        }
                        Step::Approval(request) => Some(Question::Approval(request)),
                        Step::Input(question) => Some(Question::Form(question)),
                        Step::Resolved(settled) => {
                            // Settled without the client's answer (an interrupt): withdrawn.
                            if let Some(at) = unanswered.iter().position(|(_, q)| *q == settled) {
                                let (id, _) = unanswered.remove(at);
                                withdraw(&io.peer, id, "the question was withdrawn").await;
                            }
                            None
                        }
                        Step::Ended(end) => {
                            return Driven::Finished(self.finish(&end).await);
                        }
                    };
                    if let Some(question) = question {
                        io.progress.send(question.waiting());
                        if !ask_inline {
                            return Driven::Question(question);
                        }
                        let (id, answer) = ask(&io.peer, &self.entry.name, question).await;
                        unanswered.extend(id);
                        asking.push(answer);
                    }
                }
                Some((id, answer)) = asking.next(), if !asking.is_empty() => {
                    let Some(id) = id else {
                        self.actions.send(answer);
                        continue;
                    };
                    // A question withdrawn already was settled by the runtime.
                    if let Some(at) = unanswered.iter().position(|(pending, _)| *pending == id) {
                        unanswered.remove(at);
                        self.actions.send(answer);
                    }
                }
                () = io.cancelled.cancelled(), if self.interrupted_at.is_none() => {
                    io.progress.stop();
                    self.interrupt("the MCP client cancelled the call");
                }
                () = sleep_until(wind_down), if wind_down.is_some() => self.end_now(),
                () = io.hurry.cancelled(), if !self.ended_early => self.end_now(),
            }
        }
    }

    /// Sends `interrupt` to the session: the model request, approval or tool in progress ends
    /// and the turn is answered.
    pub(crate) fn interrupt(&mut self, why: &str) {
        if self.interrupted_at.is_none() {
            self.interrupted_at = Some(Instant::now());
            self.actions.send(ActionEvent::Interrupt {
                reason: Some(why.to_owned()),
            });
        }
    }

    /// Ends the session at once, as interrupted, without waiting for its turn to wind down.
    fn end_now(&mut self) {
        self.interrupted_at.get_or_insert_with(Instant::now);
        self.ended_early = true;
        self.actions.send(ActionEvent::EndSession {
            reason: Some(SessionEndReason::Interrupted),
        });
    }

    /// Ends a call nobody waits for any more (an unanswered approval round): the session ends
    /// as interrupted and its transcript is closed.
    pub(crate) async fn abandon(mut self) {
        self.actions.send(ActionEvent::EndSession {
            reason: Some(SessionEndReason::Interrupted),
        });
        self.close().await;
    }

    /// What the call reports for the log.
    pub(crate) fn report(&self, status: &str, io: &CallIo) -> CallReport {
        CallReport {
            worker: self.entry.name.clone(),
            session_id: self.session_id.clone(),
            status: status.to_owned(),
            duration: self.started.elapsed(),
            tool_calls: self.collector.tool_calls().len(),
            first_progress: io.first_progress(),
        }
    }

    /// The turn ended: ends the session, waits for its transcript to close, and makes the
    /// result.
    async fn finish(&mut self, end: &TurnEnd) -> CallToolResult {
        self.actions.send(ActionEvent::EndSession { reason: None });
        self.close().await;
        self.collector.result(end)
    }

    /// The session ended without ending its turn.
    async fn lost(&mut self) -> CallToolResult {
        self.close().await;
        CallToolResult::error(vec![ContentBlock::text(format!(
            "the session of worker {} ended before it answered (transcript {})",
            self.entry.name, self.session_id
        ))])
    }

    /// Reads the session's last events and waits for it to close.
    async fn close(&mut self) {
        let Some(running) = self.running.take() else {
            return;
        };
        let drain = async {
            while let Some(event) = self.events.recv().await {
                if matches!(event, golem_protocol::DisplayEvent::SessionEnded { .. }) {
                    break;
                }
            }
            running.closed().await;
        };
        if tokio::time::timeout(CLOSING, drain).await.is_err() {
            tracing::warn!(
                session = %self.session_id,
                "the session did not close within {CLOSING:?}"
            );
        }
    }
}

/// Asks the client's user `question` (of a call of `worker`) through an elicitation request:
/// the request's id with the question's (to withdraw it if the call ends first) and the
/// settling action to come, with the request's id. A client that cannot answer gets the
/// question refused (an approval denied, with the reason as the note).
async fn ask(
    peer: &Peer<RoleServer>,
    worker: &str,
    question: Question,
) -> (Option<(RequestId, String)>, Asking) {
    let params = question.request_params(worker);
    let sent = peer
        .send_cancellable_request(
            ServerRequest::ElicitRequest(ElicitRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await;
    match sent {
        Ok(handle) => {
            let id = handle.id.clone();
            let settled = question.request_id().to_owned();
            let answer: Asking = Box::pin(async move {
                let id = handle.id.clone();
                let response = match handle.await_response().await {
                    Ok(ClientResult::ElicitResult(answer)) => question.response(&answer),
                    Ok(_) => question.unavailable("it answered something else"),
                    Err(e) => question.unavailable(&e.to_string()),
                };
                (Some(id), response)
            });
            (Some((id, settled)), answer)
        }
        Err(e) => {
            let response = question.unavailable(&e.to_string());
            (None, Box::pin(std::future::ready((None, response))))
        }
    }
}

/// Withdraws the elicitation request `id` (`why`), for at most [`FLUSHING`].
async fn withdraw(peer: &Peer<RoleServer>, id: RequestId, why: &str) {
    let withdrawn = CancelledNotificationParam::new(Some(id), Some(why.to_owned()));
    let sent = tokio::time::timeout(FLUSHING, peer.notify_cancelled(withdrawn)).await;
    if !matches!(sent, Ok(Ok(()))) {
        tracing::debug!("an elicitation request was not withdrawn");
    }
}

/// Sleeps until `deadline` (forever without one).
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}
