//! The session's spans: when tracing is on (golem-telemetry), a subscriber of the display
//! events feeds the session's [`SessionTracer`] until `sessionEnded`, each event stamped with
//! the time it is received, and hands the spans to the process's exporter. Off the hot path:
//! the worker never waits for it.

use std::time::SystemTime;

use golem_core::bus::DisplaySubscription;
use golem_protocol::DisplayEvent;
use golem_session::TranscriptEntry;
use golem_telemetry::{SessionTracer, Telemetry, TraceOrigin, TraceParent};

/// The span of the last root run a transcript recorded (`workerStarted.traceContext`).
pub(crate) fn last_root_trace(entries: &[TranscriptEntry]) -> Option<TraceParent> {
    entries.iter().rev().find_map(|entry| match entry {
        TranscriptEntry::Event {
            event:
                DisplayEvent::WorkerStarted {
                    depth: 0,
                    trace_context: Some(context),
                    ..
                },
            ..
        } => TraceParent::parse(context),
        _ => None,
    })
}

/// What the session traces with, from `open` to the end of `serve`.
pub(crate) struct SessionTraces {
    events: DisplaySubscription,
    tracer: SessionTracer,
}

impl SessionTraces {
    /// Tracing for a session whose events `events` sees from its start.
    pub(crate) fn new(
        telemetry: Telemetry,
        origin: TraceOrigin,
        events: DisplaySubscription,
    ) -> SessionTraces {
        let capture = telemetry.capture_content();
        let tracer =
            SessionTracer::new(origin, capture, Box::new(move |span| telemetry.send(span)));
        SessionTraces { events, tracer }
    }

    /// Feeds the tracer until `sessionEnded` (included).
    pub(crate) async fn run(mut self) {
        while let Some(event) = self.events.recv().await {
            self.tracer.observe(SystemTime::now(), &event);
            if matches!(event, DisplayEvent::SessionEnded { .. }) {
                return;
            }
        }
        self.tracer.finish(SystemTime::now());
    }
}
