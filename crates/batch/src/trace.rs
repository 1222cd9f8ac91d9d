//! A batch's own span, when tracing is on: `batch <id>` from the start of a run of the batch
//! to its end (or, for a queued batch, of its enqueueing), with the worker and the item
//! counts. Its items' sessions are traces of their own that link to it, so that a batch of a
//! thousand items is not one trace of a thousand runs. Tracing is started as the items'
//! sessions start it: from the OpenTelemetry environment over the `telemetry:` section of
//! the worker's program config.

use std::path::Path;
use std::time::SystemTime;

use golem_runtime::config::ProgramConfig;
use golem_telemetry::{FinishedSpan, SpanKind, Telemetry, TraceParent, attr};

use crate::runner::Progress;

/// The process's telemetry as the sessions of the worker file `worker` start it (the same
/// program config `SessionHost::open` reads); `None` when tracing is off, or when that config
/// cannot be read (every session of the worker would fail on it anyway).
pub fn telemetry_for_worker(worker: &Path) -> Option<Telemetry> {
    match ProgramConfig::for_worker(worker) {
        Ok(config) => Telemetry::for_process(config.telemetry.as_ref()),
        Err(error) => {
            tracing::debug!(%error, "no batch span: the program config cannot be read");
            None
        }
    }
}

/// The name a batch's spans give the worker file `worker`: its `name:`, else its file stem.
pub fn worker_name(worker: &Path) -> String {
    match golem_runtime::worker::load_worker(worker) {
        Ok(definition) => definition.name,
        Err(_) => worker
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

/// A batch's span while the batch runs; sent by [`BatchSpan::end`] (dropped unsent
/// otherwise).
#[derive(Debug)]
pub struct BatchSpan {
    telemetry: Telemetry,
    ids: TraceParent,
    started: SystemTime,
    batch_id: String,
    worker: String,
}

impl BatchSpan {
    /// Starts the span of batch `batch_id` of worker `worker` (its name), now, in a trace of
    /// its own.
    pub fn start(telemetry: Telemetry, batch_id: &str, worker: &str) -> BatchSpan {
        BatchSpan {
            telemetry,
            ids: TraceParent::new_trace(),
            started: SystemTime::now(),
            batch_id: batch_id.to_owned(),
            worker: worker.to_owned(),
        }
    }

    /// The span of batch `batch_id` of the worker file `worker`, when tracing is on.
    pub fn for_worker(worker: &Path, batch_id: &str) -> Option<BatchSpan> {
        let telemetry = telemetry_for_worker(worker)?;
        Some(BatchSpan::start(telemetry, batch_id, &worker_name(worker)))
    }

    /// The span's ids: what the items' spans link to.
    pub fn ids(&self) -> TraceParent {
        self.ids
    }

    /// The batch's id.
    pub fn batch_id(&self) -> &str {
        &self.batch_id
    }

    /// The worker's name.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// Where the span's spans go.
    pub fn telemetry(&self) -> &Telemetry {
        &self.telemetry
    }

    /// When the span started.
    pub fn started(&self) -> SystemTime {
        self.started
    }

    /// Ends the span now, with `items` counted, and sends it.
    pub fn end(self, items: usize) {
        let span = self.finished(items);
        self.telemetry.send_finished(span);
    }

    /// Ends the span of a run of the batch that came to `progress`, and sends it.
    pub fn end_run(self, progress: &Progress) {
        let mut span = self.finished(progress.total);
        span.set(attr::BATCH_COMPLETED, count(progress.completed));
        span.set(attr::BATCH_FAILED, count(progress.failed));
        span.set(
            attr::BATCH_WAITING_APPROVAL,
            count(progress.waiting_approval),
        );
        span.set(attr::BATCH_OTHER, count(progress.other));
        span.set(
            attr::BATCH_NOT_RUN,
            count(progress.total.saturating_sub(progress.finished())),
        );
        self.telemetry.send_finished(span);
    }

    /// The span as it ends now.
    fn finished(&self, items: usize) -> FinishedSpan {
        let mut span = FinishedSpan::new(
            format!("batch {}", self.batch_id),
            SpanKind::Internal,
            self.ids,
            self.started,
            SystemTime::now(),
        );
        span.set(attr::BATCH_ID, self.batch_id.clone());
        span.set(attr::WORKER, self.worker.clone());
        span.set(attr::BATCH_ITEMS, count(items));
        span
    }
}

/// A count as an attribute value.
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
