//! The session as the page needs it: every display event so far, compacted so that a tab that
//! connects (or reconnects) can rebuild its view from them — each stream's `streaming` deltas
//! merged into one event holding the text so far, only the latest `workerProgress` of each
//! worker, no answers to other tabs' questions, a form question (`inputRequired`) only while it
//! waits (its `inputResolved` takes it out), and nothing from before the last
//! `sessionStarted` (`newSession` starts afresh) — and the live events fanned out to every
//! connected tab. A tab gets the snapshot and its live feed under one lock, so it misses
//! nothing and sees nothing twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use golem_protocol::DisplayEvent;
use tokio::sync::mpsc;

/// One event as a WebSocket text frame: its JSON, serialized once for every tab.
pub type Frame = Arc<str>;

/// The compacted session and the connected tabs.
#[derive(Default)]
pub struct SessionLog {
    state: Mutex<LogState>,
}

#[derive(Default)]
struct LogState {
    events: Vec<DisplayEvent>,
    /// Where each stream's merged `streaming` event is in `events`.
    streams: HashMap<String, usize>,
    /// Where each worker's latest `workerProgress` is in `events`.
    progress: HashMap<String, usize>,
    tabs: Vec<mpsc::UnboundedSender<Frame>>,
    ended: bool,
}

/// What a tab gets when it connects: the session so far, then live events.
pub struct TabFeed {
    /// The session so far, one frame per event.
    pub snapshot: Vec<Frame>,
    /// Live events from now on; closed when the session has ended.
    pub live: mpsc::UnboundedReceiver<Frame>,
}

/// Serializes `event` as one frame (protocol events always serialize; an error is logged and
/// the event skipped).
pub fn frame(event: &DisplayEvent) -> Option<Frame> {
    match golem_protocol::to_jsonl_line(event) {
        Ok(line) => Some(Arc::from(line.trim_end())),
        Err(e) => {
            tracing::error!(error = %e, "a display event did not serialize");
            None
        }
    }
}

impl SessionLog {
    fn state(&self) -> MutexGuard<'_, LogState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `event` and sends it to every connected tab.
    pub fn push(&self, event: DisplayEvent) {
        let Some(frame) = frame(&event) else {
            return;
        };
        let mut state = self.state();
        state.ended |= matches!(event, DisplayEvent::SessionEnded { .. });
        state.record(event);
        state.tabs.retain(|tab| tab.send(frame.clone()).is_ok());
        if state.ended {
            // Closing the feeds tells the tabs the session is over.
            state.tabs.clear();
        }
    }

    /// Connects a tab: the session so far and a live feed.
    pub fn connect(&self) -> TabFeed {
        let mut state = self.state();
        let snapshot = state.events.iter().filter_map(frame).collect();
        let (tx, live) = mpsc::unbounded_channel();
        if !state.ended {
            state.tabs.push(tx);
        }
        TabFeed { snapshot, live }
    }

    /// How many events the snapshot holds (for tests and measurements).
    pub fn len(&self) -> usize {
        self.state().events.len()
    }

    /// Whether nothing was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many tabs are connected.
    pub fn tabs(&self) -> usize {
        self.state().tabs.len()
    }
}

impl LogState {
    /// Takes the question `request_id` out of the story, keeping the indexes of the merged
    /// events right.
    fn forget_question(&mut self, request_id: &str) {
        let asked = self.events.iter().rposition(|event| {
            matches!(event, DisplayEvent::InputRequired { request_id: id, .. } if id == request_id)
        });
        let Some(at) = asked else {
            return;
        };
        self.events.remove(at);
        for index in self.streams.values_mut().chain(self.progress.values_mut()) {
            if *index > at {
                *index -= 1;
            }
        }
    }

    fn record(&mut self, event: DisplayEvent) {
        match event {
            DisplayEvent::Streaming {
                request_id,
                delta,
                done,
                worker,
            } => match self.streams.get(&request_id).copied() {
                Some(at) => {
                    if let Some(DisplayEvent::Streaming {
                        delta: text,
                        done: finished,
                        ..
                    }) = self.events.get_mut(at)
                    {
                        text.push_str(&delta);
                        *finished = done;
                    }
                }
                None => {
                    self.streams.insert(request_id.clone(), self.events.len());
                    self.events.push(DisplayEvent::Streaming {
                        request_id,
                        delta,
                        done,
                        worker,
                    });
                }
            },
            DisplayEvent::WorkerProgress(progress) => {
                match self.progress.get(&progress.worker_id).copied() {
                    Some(at) => {
                        if let Some(slot) = self.events.get_mut(at) {
                            *slot = DisplayEvent::WorkerProgress(progress);
                        }
                    }
                    None => {
                        self.progress
                            .insert(progress.worker_id.clone(), self.events.len());
                        self.events.push(DisplayEvent::WorkerProgress(progress));
                    }
                }
            }
            // An answered question is no longer asked: a late tab must not show its dialog.
            DisplayEvent::InputResolved { request_id, .. } => self.forget_question(&request_id),
            // A new session (`newSession`) starts a new story.
            event @ DisplayEvent::SessionStarted { .. } => {
                self.events.clear();
                self.streams.clear();
                self.progress.clear();
                self.events.push(event);
            }
            // Answers to one tab's question are not part of the session's story.
            DisplayEvent::SessionStatus(_)
            | DisplayEvent::ManualToolsAvailable { .. }
            | DisplayEvent::ApprovalsRemembered { .. } => {}
            event @ (DisplayEvent::Message { .. }
            | DisplayEvent::ToolStarted { .. }
            | DisplayEvent::ToolResult { .. }
            | DisplayEvent::ApprovalRequired(_)
            | DisplayEvent::ApprovalResolved(_)
            | DisplayEvent::ApprovalDeferred { .. }
            | DisplayEvent::InputRequired { .. }
            | DisplayEvent::Status { .. }
            | DisplayEvent::WorkerStarted { .. }
            | DisplayEvent::WorkerFinished { .. }
            | DisplayEvent::Usage { .. }
            | DisplayEvent::ContextCompacted { .. }
            | DisplayEvent::ContextElided { .. }
            | DisplayEvent::TurnEnded { .. }
            | DisplayEvent::ActionResult(_)
            | DisplayEvent::SessionEnded { .. }) => self.events.push(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use golem_protocol::{StatusLevel, TokenUsage, WorkerProgress};

    use super::*;

    fn delta(id: &str, text: &str, done: bool) -> DisplayEvent {
        DisplayEvent::Streaming {
            request_id: id.into(),
            delta: text.into(),
            done,
            worker: None,
        }
    }

    fn progress(worker: &str, input: u64) -> DisplayEvent {
        DisplayEvent::WorkerProgress(WorkerProgress {
            worker_id: worker.into(),
            parent_id: None,
            worker_name: "main".into(),
            depth: 0,
            model: None,
            usage: TokenUsage {
                input_tokens: input,
                ..TokenUsage::default()
            },
            cost: None,
            current_tool: None,
            awaiting_approval: false,
            budget: None,
        })
    }

    fn parsed(frames: &[Frame]) -> Vec<DisplayEvent> {
        frames
            .iter()
            .map(|f| serde_json::from_str(f).unwrap())
            .collect()
    }

    #[test]
    fn streams_merge_progress_keeps_the_latest_and_answers_are_left_out() {
        let log = SessionLog::default();
        log.push(delta("s1", "Hel", false));
        log.push(progress("w1", 1));
        log.push(delta("s1", "lo", false));
        log.push(DisplayEvent::SessionStatus(golem_protocol::SessionStatus {
            request_id: None,
            session_id: "s".into(),
            worker: "main".into(),
            model: "test:default".into(),
            zones: Vec::new(),
            usage: TokenUsage::default(),
            cost: None,
            messages: 0,
            context: None,
            approvals_remembered: 0,
            approval_mode: None,
            busy: false,
            budget: None,
        }));
        log.push(progress("w1", 7));
        log.push(delta("s1", ".", true));
        log.push(delta("s2", "Bye", false));
        let feed = log.connect();
        assert_eq!(
            parsed(&feed.snapshot),
            [
                delta("s1", "Hello.", true),
                progress("w1", 7),
                delta("s2", "Bye", false)
            ]
        );
    }

    #[tokio::test]
    async fn a_tab_gets_the_snapshot_then_live_events_and_the_end_closes_its_feed() {
        let log = SessionLog::default();
        log.push(delta("s1", "Hi", true));
        let mut feed = log.connect();
        assert_eq!(feed.snapshot.len(), 1);
        assert_eq!(log.tabs(), 1);
        let status = DisplayEvent::Status {
            level: StatusLevel::Info,
            message: "live".into(),
        };
        log.push(status.clone());
        let live = feed.live.recv().await.unwrap();
        assert_eq!(serde_json::from_str::<DisplayEvent>(&live).unwrap(), status);
        log.push(DisplayEvent::SessionEnded {
            reason: golem_protocol::SessionEndReason::Completed,
            message: None,
            usage: None,
            cost: None,
        });
        assert!(feed.live.recv().await.is_some(), "the end itself is sent");
        assert!(feed.live.recv().await.is_none(), "then the feed closes");
        let late = log.connect();
        assert_eq!(late.snapshot.len(), 3);
        assert_eq!(log.tabs(), 0, "no live feed once the session ended");
    }

    #[test]
    fn a_new_session_starts_the_story_afresh() {
        let log = SessionLog::default();
        let started = |id: &str| DisplayEvent::SessionStarted {
            protocol_version: golem_protocol::PROTOCOL_VERSION.into(),
            session_id: id.into(),
            worker: "main".into(),
            model: "test:default".into(),
        };
        log.push(started("one"));
        log.push(delta("s1", "old answer", true));
        log.push(progress("w1", 3));
        log.push(started("two"));
        log.push(delta("s1", "new", true));
        assert_eq!(
            parsed(&log.connect().snapshot),
            [started("two"), delta("s1", "new", true)]
        );
    }

    #[test]
    fn a_tab_that_went_away_is_dropped() {
        let log = SessionLog::default();
        drop(log.connect());
        log.push(delta("s1", "x", true));
        assert_eq!(log.tabs(), 0);
        assert_eq!(log.len(), 1);
    }

    #[test]
    fn a_question_is_replayed_while_it_waits_and_not_once_answered() {
        let log = SessionLog::default();
        let asked = |id: &str| DisplayEvent::InputRequired {
            request_id: id.into(),
            prompt: "Name?".into(),
            source: Some("MCP server `everything`".into()),
            fields: Vec::new(),
        };
        log.push(delta("s1", "Hel", false));
        log.push(asked("input-1"));
        log.push(progress("w1", 1));
        assert_eq!(
            parsed(&log.connect().snapshot),
            [
                delta("s1", "Hel", false),
                asked("input-1"),
                progress("w1", 1)
            ]
        );
        log.push(DisplayEvent::InputResolved {
            request_id: "input-1".into(),
            action: golem_protocol::InputAction::Decline,
        });
        // The merged events after it are still found.
        log.push(delta("s1", "lo", true));
        log.push(progress("w1", 2));
        log.push(asked("input-2"));
        assert_eq!(
            parsed(&log.connect().snapshot),
            [
                delta("s1", "Hello", true),
                progress("w1", 2),
                asked("input-2")
            ]
        );
    }
}
