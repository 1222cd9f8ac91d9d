//! The UI event bus: the one channel between the runtime and every front end
//! (docs/protocol.md).
//!
//! Display events (runtime → UI) are broadcast to every display subscriber. Action events
//! (UI → runtime) that answer a pending request (`approvalResponse`, correlated `userInput`) go
//! to the one task awaiting that request, exactly once; every other action (`interrupt`,
//! `manualToolInvoke`, uncorrelated `userInput`) is broadcast to action subscribers.
//!
//! This module only moves events. It must not render anything, decide anything (approval,
//! interruption) or do I/O, and [`UiEventBus::emit`] must stay cheap: it runs on every tool call,
//! so it takes no lock of ours and allocates nothing but the event's own place behind an `Arc`.
//! The channels hold events behind an `Arc` because a channel's ring of slots is allocated and
//! written in full when the bus is made: slots the size of a pointer keep the two 1024-slot
//! rings at tens of kilobytes, where inline events took 600 KiB that every session paid for at
//! start.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use golem_protocol::{ActionEvent, DisplayEvent};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

/// Default capacity of the display and action channels, in events per subscriber.
pub const DEFAULT_CAPACITY: usize = 1024;

/// Why a correlated request ([`UiEventBus::request`]) ended without an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// No answer arrived within the timeout.
    #[error("no response within {0:?}")]
    Timeout(Duration),
    /// The cancellation token fired (an interrupt) before an answer arrived.
    #[error("request cancelled")]
    Cancelled,
    /// The bus dropped the request without an answer.
    #[error("event bus closed before the request was answered")]
    Closed,
    /// Another request with the same id is still pending; nothing was emitted.
    #[error("request id {0} is already pending")]
    DuplicateId(String),
    /// The request was answered by an action of the wrong type (for example a `userInput`
    /// carrying the id of an approval request). The request is over: the caller must treat
    /// it as failed (an approval gate denies).
    #[error("request {request_id} was answered by an unexpected {action} action")]
    UnexpectedResponse {
        /// The request answered.
        request_id: String,
        /// The wire name of the action that answered it (`userInput`, `approvalResponse`, ...).
        action: &'static str,
    },
}

/// The wire name (`type` tag) of an action event, for logs and errors.
pub fn action_type_name(action: &ActionEvent) -> &'static str {
    match action {
        ActionEvent::UserInput { .. } => "userInput",
        ActionEvent::ApprovalResponse(_) => "approvalResponse",
        ActionEvent::InputResponse { .. } => "inputResponse",
        ActionEvent::Interrupt { .. } => "interrupt",
        ActionEvent::ManualToolInvoke { .. } => "manualToolInvoke",
        ActionEvent::SetModel { .. } => "setModel",
        ActionEvent::SetApprovalMode { .. } => "setApprovalMode",
        ActionEvent::NewSession { .. } => "newSession",
        ActionEvent::ClearHistory { .. } => "clearHistory",
        ActionEvent::Compact { .. } => "compact",
        ActionEvent::ContinueTurn { .. } => "continueTurn",
        ActionEvent::Undo { .. } => "undo",
        ActionEvent::ListManualTools { .. } => "listManualTools",
        ActionEvent::ListApprovals { .. } => "listApprovals",
        ActionEvent::ForgetApprovals { .. } => "forgetApprovals",
        ActionEvent::GetStatus { .. } => "getStatus",
        ActionEvent::EndSession { .. } => "endSession",
    }
}

type PendingMap = HashMap<String, oneshot::Sender<ActionEvent>>;

#[derive(Debug)]
struct Inner {
    display: broadcast::Sender<Arc<DisplayEvent>>,
    actions: broadcast::Sender<Arc<ActionEvent>>,
    pending: Mutex<PendingMap>,
    next_id: AtomicU64,
    /// How many attached front ends answer `inputRequired` forms.
    input_answerers: AtomicUsize,
}

impl Inner {
    /// Locks the pending map; a poisoned lock is recovered (the map stays consistent because
    /// no code panics while holding it).
    fn pending(&self) -> MutexGuard<'_, PendingMap> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The event bus between the runtime and its UIs. Cloning is cheap and every clone is the same
/// bus; the bus closes (subscribers' `recv` returns `None`) when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct UiEventBus {
    inner: Arc<Inner>,
}

impl Default for UiEventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl UiEventBus {
    /// A bus with [`DEFAULT_CAPACITY`].
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }

    /// A bus whose channels buffer `capacity` events per subscriber (at least 1) before a slow
    /// subscriber starts to lag.
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let (display, _) = broadcast::channel(capacity);
        let (actions, _) = broadcast::channel(capacity);
        Self {
            inner: Arc::new(Inner {
                display,
                actions,
                pending: Mutex::new(HashMap::new()),
                next_id: AtomicU64::new(0),
                input_answerers: AtomicUsize::new(0),
            }),
        }
    }

    /// Sends a display event to every current display subscriber. Never blocks and never
    /// fails: with no subscriber the event is dropped.
    pub fn emit(&self, event: DisplayEvent) {
        // An error only means that nobody listens, which is fine.
        let _ = self.inner.display.send(Arc::new(event));
    }

    /// Subscribes to display events emitted from now on (earlier events are not replayed, so a
    /// UI subscribes before the runtime starts).
    pub fn subscribe(&self) -> DisplaySubscription {
        Subscription::new(self.inner.display.subscribe())
    }

    /// Subscribes to uncorrelated action events (`interrupt`, `manualToolInvoke`, `userInput`
    /// without a request id) sent from now on. Responses to pending requests never reach
    /// action subscribers.
    pub fn subscribe_actions(&self) -> ActionSubscription {
        Subscription::new(self.inner.actions.subscribe())
    }

    /// Sends an action event from a UI. An answer to a pending request goes to its waiter only,
    /// exactly once; an answer to an unknown or already answered request is dropped (logged at
    /// debug level). Other actions are broadcast to action subscribers.
    pub fn send_action(&self, action: ActionEvent) {
        if let Some(request_id) = action.answers_request() {
            let waiter = self.inner.pending().remove(request_id);
            match waiter {
                Some(waiter) => {
                    if let Err(action) = waiter.send(action) {
                        tracing::debug!(
                            request_id = action.answers_request(),
                            "dropping response: its waiter is gone"
                        );
                    }
                }
                None => tracing::debug!(
                    request_id,
                    action = action_type_name(&action),
                    "dropping response to an unknown or already answered request"
                ),
            }
            return;
        }
        if self.inner.actions.send(Arc::new(action)).is_err() {
            tracing::debug!("dropping action: no action subscriber");
        }
    }

    /// Emits `event` and waits for the action that answers `request_id`.
    ///
    /// The id is registered as pending before the event is emitted, so an answer that comes
    /// back at once is not lost. Ends with the answer, or [`RequestError::Timeout`] after
    /// `timeout` (`None`: no limit), or [`RequestError::Cancelled`] when `cancel` fires (an
    /// already cancelled token returns at once without emitting). An answer that is ready at
    /// the same time as a timeout or a cancellation wins. The pending entry is removed on
    /// every exit path, including when the returned future is dropped.
    pub async fn request(
        &self,
        event: DisplayEvent,
        request_id: &str,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<ActionEvent, RequestError> {
        if cancel.is_cancelled() {
            return Err(RequestError::Cancelled);
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.inner.pending();
            if pending.contains_key(request_id) {
                return Err(RequestError::DuplicateId(request_id.to_owned()));
            }
            pending.insert(request_id.to_owned(), tx);
        }
        let _guard = PendingGuard {
            inner: &self.inner,
            request_id,
        };
        self.emit(event);

        let deadline = async {
            match timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            biased;
            answer = rx => answer.map_err(|_| RequestError::Closed),
            () = cancel.cancelled() => Err(RequestError::Cancelled),
            () = deadline => Err(RequestError::Timeout(timeout.unwrap_or_default())),
        }
    }

    /// A fresh id, `"{prefix}-{n}"`, unique on this bus (`n` counts from 1).
    pub fn next_request_id(&self, prefix: &str) -> String {
        let n = self.inner.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}-{n}")
    }

    /// How many requests are waiting for an answer.
    pub fn pending_requests(&self) -> usize {
        self.inner.pending().len()
    }

    /// Registers a front end that answers `inputRequired` forms (a terminal or a browser tab
    /// with someone at it), for as long as the returned guard lives.
    pub fn register_input_answerer(&self) -> InputAnswerer {
        self.inner.input_answerers.fetch_add(1, Ordering::SeqCst);
        InputAnswerer {
            inner: self.inner.clone(),
        }
    }

    /// Whether some front end can answer an `inputRequired` form now; when none can (a
    /// headless run), tools must not ask.
    pub fn has_input_answerer(&self) -> bool {
        self.inner.input_answerers.load(Ordering::SeqCst) > 0
    }
}

/// A front end that answers `inputRequired` forms, counted while this guard lives
/// ([`UiEventBus::register_input_answerer`]).
#[derive(Debug)]
pub struct InputAnswerer {
    inner: Arc<Inner>,
}

impl Drop for InputAnswerer {
    fn drop(&mut self) {
        self.inner.input_answerers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Removes a pending entry when its request ends, however it ends.
struct PendingGuard<'a> {
    inner: &'a Inner,
    request_id: &'a str,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        // Already gone when the request was answered.
        self.inner.pending().remove(self.request_id);
    }
}

/// A subscriber's end of a bus channel. A subscriber that falls more than the bus capacity
/// behind skips the events it missed and counts them in [`Subscription::lagged`].
#[derive(Debug)]
pub struct Subscription<T> {
    rx: broadcast::Receiver<Arc<T>>,
    lagged: u64,
}

/// A display-event subscriber ([`UiEventBus::subscribe`]).
pub type DisplaySubscription = Subscription<DisplayEvent>;

/// An action-event subscriber ([`UiEventBus::subscribe_actions`]).
pub type ActionSubscription = Subscription<ActionEvent>;

impl<T: Clone> Subscription<T> {
    fn new(rx: broadcast::Receiver<Arc<T>>) -> Self {
        Self { rx, lagged: 0 }
    }

    /// The next event, or `None` once the bus is gone and every buffered event was read.
    pub async fn recv(&mut self) -> Option<T> {
        loop {
            match self.rx.recv().await {
                Ok(event) => return Some(Arc::unwrap_or_clone(event)),
                Err(broadcast::error::RecvError::Lagged(missed)) => self.record_lag(missed),
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next buffered event without waiting; `None` when nothing is buffered or the bus is
    /// gone.
    pub fn try_recv(&mut self) -> Option<T> {
        loop {
            match self.rx.try_recv() {
                Ok(event) => return Some(Arc::unwrap_or_clone(event)),
                Err(broadcast::error::TryRecvError::Lagged(missed)) => self.record_lag(missed),
                Err(
                    broadcast::error::TryRecvError::Empty | broadcast::error::TryRecvError::Closed,
                ) => return None,
            }
        }
    }

    /// How many events this subscriber missed in total because it lagged.
    pub fn lagged(&self) -> u64 {
        self.lagged
    }

    fn record_lag(&mut self, missed: u64) {
        self.lagged = self.lagged.saturating_add(missed);
        tracing::debug!(
            missed,
            total = self.lagged,
            "event subscriber lagged; skipping ahead"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_protocol::{ApprovalResponse, StatusLevel};

    fn status(n: usize) -> DisplayEvent {
        DisplayEvent::Status {
            level: StatusLevel::Info,
            message: format!("s{n}"),
        }
    }

    fn input_required(id: &str) -> DisplayEvent {
        DisplayEvent::InputRequired {
            request_id: id.to_owned(),
            prompt: "?".to_owned(),
            source: None,
            fields: Vec::new(),
        }
    }

    fn answer(id: &str, content: &str) -> ActionEvent {
        ActionEvent::UserInput {
            request_id: Some(id.to_owned()),
            content: content.to_owned(),
        }
    }

    fn requested_id(event: &DisplayEvent) -> Option<String> {
        if let DisplayEvent::InputRequired { request_id, .. } = event {
            Some(request_id.clone())
        } else if let DisplayEvent::ApprovalRequired(request) = event {
            Some(request.request_id.clone())
        } else {
            None
        }
    }

    #[tokio::test]
    async fn emit_without_subscriber_is_fine() {
        let bus = UiEventBus::default();
        for n in 0..10_000 {
            bus.emit(status(n));
        }
        // A late subscriber sees only what comes after it.
        let mut sub = bus.subscribe();
        assert_eq!(sub.try_recv(), None);
        bus.emit(status(1));
        assert_eq!(sub.try_recv(), Some(status(1)));
    }

    #[tokio::test]
    async fn two_subscribers_get_every_event_in_order() {
        let bus = UiEventBus::new();
        let mut a = bus.subscribe();
        let mut b = bus.subscribe();
        for n in 0..100 {
            bus.emit(status(n));
        }
        for n in 0..100 {
            assert_eq!(a.recv().await, Some(status(n)));
            assert_eq!(b.recv().await, Some(status(n)));
        }
        assert_eq!(a.lagged(), 0);
        assert_eq!(b.try_recv(), None);
    }

    #[tokio::test]
    async fn recv_returns_none_when_bus_is_gone() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let mut actions = bus.subscribe_actions();
        bus.emit(status(1));
        drop(bus);
        assert_eq!(sub.recv().await, Some(status(1)));
        assert_eq!(sub.recv().await, None);
        assert_eq!(actions.recv().await, None);
    }

    #[tokio::test]
    async fn lag_is_counted_not_an_error() {
        let bus = UiEventBus::with_capacity(4);
        let mut sub = bus.subscribe();
        for n in 0..10 {
            bus.emit(status(n));
        }
        // The 6 oldest are gone; the rest arrive in order.
        for n in 6..10 {
            assert_eq!(sub.recv().await, Some(status(n)));
        }
        assert_eq!(sub.lagged(), 6);
        for n in 10..20 {
            bus.emit(status(n));
        }
        assert_eq!(sub.try_recv(), Some(status(16)));
        assert_eq!(sub.lagged(), 12);
    }

    #[tokio::test]
    async fn action_subscriber_lag_is_counted() {
        let bus = UiEventBus::with_capacity(2);
        let mut actions = bus.subscribe_actions();
        for _ in 0..5 {
            bus.send_action(ActionEvent::Interrupt { reason: None });
        }
        let mut got = 0;
        while actions.try_recv().is_some() {
            got += 1;
        }
        assert_eq!(got, 2);
        assert_eq!(actions.lagged(), 3);
    }

    #[tokio::test]
    async fn request_ids_are_unique() {
        let bus = UiEventBus::new();
        let clone = bus.clone();
        assert_eq!(bus.next_request_id("input"), "input-1");
        assert_eq!(clone.next_request_id("approval"), "approval-2");
        assert_eq!(UiEventBus::new().next_request_id("input"), "input-1");
    }

    #[tokio::test]
    async fn immediate_answer_is_not_lost() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let ui_bus = bus.clone();
        let ui = tokio::spawn(async move {
            while let Some(event) = sub.recv().await {
                if let Some(id) = requested_id(&event) {
                    ui_bus.send_action(answer(&id, "fast"));
                    return;
                }
            }
        });
        let cancel = CancellationToken::new();
        let got = bus.request(input_required("i1"), "i1", None, &cancel).await;
        assert_eq!(got, Ok(answer("i1", "fast")));
        assert_eq!(bus.pending_requests(), 0);
        ui.await.unwrap();
    }

    #[tokio::test]
    async fn answer_sent_synchronously_before_waiting_is_delivered() {
        let bus = UiEventBus::new();
        let cancel = CancellationToken::new();
        let fut = bus.request(input_required("i1"), "i1", None, &cancel);
        tokio::pin!(fut);
        // Poll once: registers and emits, then waits.
        assert!(poll_once(fut.as_mut()).await.is_none());
        assert_eq!(bus.pending_requests(), 1);
        bus.send_action(answer("i1", "x"));
        assert_eq!(fut.await, Ok(answer("i1", "x")));
    }

    async fn poll_once<F: std::future::Future + Unpin>(fut: F) -> Option<F::Output> {
        let mut fut = fut;
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut fut).poll(cx) {
                std::task::Poll::Ready(out) => Some(out),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }

    #[tokio::test]
    async fn responses_reach_the_right_waiter() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let cancel = CancellationToken::new();
        let mut waiters = Vec::new();
        for n in 0..5 {
            let bus = bus.clone();
            let cancel = cancel.clone();
            waiters.push(tokio::spawn(async move {
                let id = format!("r{n}");
                bus.request(input_required(&id), &id, None, &cancel).await
            }));
        }
        // Collect all five requests, then answer them in reverse order.
        let mut ids = Vec::new();
        while ids.len() < 5 {
            let event = sub.recv().await.unwrap();
            ids.push(requested_id(&event).unwrap());
        }
        assert_eq!(bus.pending_requests(), 5);
        ids.sort();
        for id in ids.iter().rev() {
            bus.send_action(answer(id, &format!("for {id}")));
        }
        for (n, waiter) in waiters.into_iter().enumerate() {
            let id = format!("r{n}");
            assert_eq!(waiter.await.unwrap(), Ok(answer(&id, &format!("for {id}"))));
        }
        assert_eq!(bus.pending_requests(), 0);
    }

    #[tokio::test]
    async fn approval_response_is_correlated() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let ui_bus = bus.clone();
        tokio::spawn(async move {
            sub.recv().await;
            ui_bus.send_action(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
                "a1",
            )));
        });
        let cancel = CancellationToken::new();
        let got = bus.request(input_required("a1"), "a1", None, &cancel).await;
        assert_eq!(
            got,
            Ok(ActionEvent::ApprovalResponse(ApprovalResponse::approve(
                "a1"
            )))
        );
    }

    #[tokio::test]
    async fn timeout_ends_the_request() {
        tokio::time::pause();
        let bus = UiEventBus::new();
        let cancel = CancellationToken::new();
        let limit = Duration::from_secs(30);
        let waiter = {
            let bus = bus.clone();
            tokio::spawn(async move {
                bus.request(input_required("t"), "t", Some(limit), &cancel)
                    .await
            })
        };
        tokio::task::yield_now().await;
        assert_eq!(bus.pending_requests(), 1);
        tokio::time::advance(Duration::from_secs(29)).await;
        assert!(!waiter.is_finished());
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(waiter.await.unwrap(), Err(RequestError::Timeout(limit)));
        assert_eq!(bus.pending_requests(), 0);
        // A late answer is dropped safely.
        bus.send_action(answer("t", "late"));
        assert_eq!(bus.pending_requests(), 0);
    }

    #[tokio::test]
    async fn cancellation_ends_the_request() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let cancel = CancellationToken::new();
        let waiter = {
            let bus = bus.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { bus.request(input_required("c"), "c", None, &cancel).await })
        };
        assert!(sub.recv().await.is_some());
        assert_eq!(bus.pending_requests(), 1);
        cancel.cancel();
        assert_eq!(waiter.await.unwrap(), Err(RequestError::Cancelled));
        assert_eq!(bus.pending_requests(), 0);
    }

    #[tokio::test]
    async fn already_cancelled_token_emits_nothing() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let got = bus.request(input_required("c"), "c", None, &cancel).await;
        assert_eq!(got, Err(RequestError::Cancelled));
        assert_eq!(sub.try_recv(), None);
        assert_eq!(bus.pending_requests(), 0);
    }

    #[tokio::test]
    async fn dropped_request_cleans_up() {
        let bus = UiEventBus::new();
        let cancel = CancellationToken::new();
        {
            let fut = bus.request(input_required("d"), "d", None, &cancel);
            tokio::pin!(fut);
            assert!(poll_once(fut.as_mut()).await.is_none());
            assert_eq!(bus.pending_requests(), 1);
        }
        assert_eq!(bus.pending_requests(), 0);
        // Aborting a spawned request cleans up too.
        let waiter = {
            let bus = bus.clone();
            tokio::spawn(async move { bus.request(input_required("e"), "e", None, &cancel).await })
        };
        tokio::task::yield_now().await;
        assert_eq!(bus.pending_requests(), 1);
        waiter.abort();
        assert!(waiter.await.unwrap_err().is_cancelled());
        assert_eq!(bus.pending_requests(), 0);
        bus.send_action(answer("e", "nobody waits"));
    }

    #[tokio::test]
    async fn duplicate_id_is_refused() {
        let bus = UiEventBus::new();
        let mut sub = bus.subscribe();
        let cancel = CancellationToken::new();
        let first = bus.request(input_required("x"), "x", None, &cancel);
        tokio::pin!(first);
        assert!(poll_once(first.as_mut()).await.is_none());
        assert!(sub.try_recv().is_some());
        let second = bus.request(input_required("x"), "x", None, &cancel).await;
        assert_eq!(second, Err(RequestError::DuplicateId("x".to_owned())));
        // Nothing emitted for the refused request, and the first still gets its answer.
        assert_eq!(sub.try_recv(), None);
        bus.send_action(answer("x", "one"));
        assert_eq!(first.await, Ok(answer("x", "one")));
    }

    #[tokio::test]
    async fn duplicate_late_and_unknown_responses_are_ignored() {
        let bus = UiEventBus::new();
        let mut actions = bus.subscribe_actions();
        let mut sub = bus.subscribe();
        let ui_bus = bus.clone();
        tokio::spawn(async move {
            sub.recv().await;
            ui_bus.send_action(answer("q", "first"));
            ui_bus.send_action(answer("q", "second"));
        });
        let cancel = CancellationToken::new();
        let got = bus.request(input_required("q"), "q", None, &cancel).await;
        assert_eq!(got, Ok(answer("q", "first")));
        tokio::task::yield_now().await;
        bus.send_action(answer("nope", "unknown"));
        bus.send_action(ActionEvent::ApprovalResponse(ApprovalResponse::deny(
            "zzz", None,
        )));
        // Correlated responses never leak to action subscribers.
        assert_eq!(actions.try_recv(), None);
        assert_eq!(bus.pending_requests(), 0);
    }

    #[tokio::test]
    async fn uncorrelated_actions_reach_action_subscribers() {
        let bus = UiEventBus::new();
        let mut a = bus.subscribe_actions();
        let mut b = bus.subscribe_actions();
        let chat = ActionEvent::UserInput {
            request_id: None,
            content: "hello".to_owned(),
        };
        let interrupt = ActionEvent::Interrupt {
            reason: Some("ctrl-c".to_owned()),
        };
        let manual = ActionEvent::ManualToolInvoke {
            request_id: Some("m1".to_owned()),
            tool_name: "deploy".to_owned(),
            args: serde_json::json!({}),
        };
        bus.send_action(chat.clone());
        bus.send_action(interrupt.clone());
        bus.send_action(manual.clone());
        for sub in [&mut a, &mut b] {
            assert_eq!(sub.recv().await, Some(chat.clone()));
            assert_eq!(sub.recv().await, Some(interrupt.clone()));
            assert_eq!(sub.recv().await, Some(manual.clone()));
            assert_eq!(sub.try_recv(), None);
        }
        // Nobody listening is fine too.
        drop((a, b));
        bus.send_action(chat);
    }

    #[test]
    fn input_answerers_are_counted_while_registered() {
        let bus = UiEventBus::new();
        assert!(!bus.has_input_answerer());
        let first = bus.register_input_answerer();
        let second = bus.clone().register_input_answerer();
        assert!(bus.has_input_answerer());
        drop(first);
        assert!(bus.has_input_answerer());
        drop(second);
        assert!(!bus.has_input_answerer());
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            RequestError::Timeout(Duration::from_secs(5)).to_string(),
            "no response within 5s"
        );
        assert_eq!(RequestError::Cancelled.to_string(), "request cancelled");
        assert_eq!(
            RequestError::DuplicateId("a-1".into()).to_string(),
            "request id a-1 is already pending"
        );
        let unexpected = RequestError::UnexpectedResponse {
            request_id: "a-1".into(),
            action: "userInput",
        };
        assert_eq!(
            unexpected.to_string(),
            "request a-1 was answered by an unexpected userInput action"
        );
    }
}
