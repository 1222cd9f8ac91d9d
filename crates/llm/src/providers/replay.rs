//! The `replay:FILE` model: plays back a recording made with `--record FILE`, exchange by
//! exchange, offline. A request that differs from the recorded one fails with
//! [`ModelError::ReplayDiverged`], naming the exchange and the first difference.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::message::ModelRequest;
use crate::model::{EventStream, Model};
use crate::providers::ProviderEntry;
use crate::record::{
    Exchange, RECORDING_VERSION, RecordingHeader, first_difference, request_fingerprint,
};
use crate::spec::ModelSpec;

/// `replay:FILE`: offline, plays the recording at FILE.
pub const ENTRY: ProviderEntry = ProviderEntry {
    name: "replay",
    wire: None,
    build: |spec, _| Ok(std::sync::Arc::new(ReplayModel::open(spec)?)),
    api_key_env: None,
    base_url: None,
    bare_model: None,
    models_of: None,
    models: &[],
};

/// A model that replays a recording.
#[derive(Debug)]
pub struct ReplayModel {
    spec: ModelSpec,
    path: PathBuf,
    recorded_model: String,
    exchanges: Vec<Exchange>,
    next: AtomicUsize,
}

impl ReplayModel {
    /// Loads the recording at `path` (the model name of `spec`, relative paths taken from the
    /// current directory).
    pub fn open(spec: ModelSpec) -> Result<Self, ModelError> {
        let path = PathBuf::from(&spec.model);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ModelError::Config(format!("cannot read the recording {}: {e}", path.display()))
        })?;
        let bad = |line: usize, what: String| {
            ModelError::Config(format!("{}, line {line}: {what}", path.display()))
        };
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((_, first)) = lines.next() else {
            return Err(bad(1, "the recording is empty".into()));
        };
        let header: RecordingHeader = serde_json::from_str(first)
            .map_err(|e| bad(1, format!("not a golem-forge recording ({e})")))?;
        if header.golem_forge_recording != RECORDING_VERSION {
            return Err(bad(
                1,
                format!(
                    "recording format {} is not supported (expected {RECORDING_VERSION})",
                    header.golem_forge_recording
                ),
            ));
        }
        let exchanges = lines
            .map(|(i, line)| {
                serde_json::from_str::<Exchange>(line).map_err(|e| bad(i + 1, e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            spec,
            path,
            recorded_model: header.model,
            exchanges,
            next: AtomicUsize::new(0),
        })
    }

    /// The model the recording was made with.
    pub fn recorded_model(&self) -> &str {
        &self.recorded_model
    }

    /// The recording's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn diverged(&self, exchange: usize, message: String) -> ModelError {
        ModelError::ReplayDiverged {
            file: self.path.display().to_string(),
            exchange,
            message,
        }
    }
}

#[async_trait]
impl Model for ReplayModel {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let Some(exchange) = self.exchanges.get(index) else {
            return Err(self.diverged(
                index + 1,
                format!(
                    "the recording has only {} exchanges, and the run asked for another",
                    self.exchanges.len()
                ),
            ));
        };
        let actual = request_fingerprint(request);
        if let Some((at, recorded, got)) = first_difference(&exchange.request, &actual) {
            return Err(self.diverged(
                index + 1,
                format!(
                    "the request differs at {at}: recorded {}, got {}",
                    golem_protocol::text::fold(&recorded.to_string(), 120),
                    golem_protocol::text::fold(&got.to_string(), 120)
                ),
            ));
        }
        let events = exchange.events.clone().into_iter().map(Ok);
        Ok(Box::pin(futures::stream::iter(events)))
    }
}
