//! The `Model` trait: the one interface through which the runtime talks to any model.

use std::pin::Pin;

use async_trait::async_trait;
use futures::Stream;
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::event::{ModelResponse, StreamEvent, collect};
use crate::message::ModelRequest;
use crate::spec::ModelSpec;

/// A stream of model events; it ends after `Finish` or at the first error.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ModelError>> + Send>>;

/// A model behind some provider.
#[async_trait]
pub trait Model: Send + Sync {
    /// The model's name.
    fn spec(&self) -> &ModelSpec;

    /// Its prices, when known (see [`crate::pricing`]); `None` by default.
    fn price(&self) -> Option<crate::pricing::Price> {
        None
    }

    /// Its context window in tokens, when known (see [`crate::context`]); `None` by default,
    /// which the runtime reads as [`crate::context::DEFAULT_CONTEXT_WINDOW`].
    fn context_window(&self) -> Option<u64> {
        None
    }

    /// Where its requests go (for traces): the host and port of its endpoint; `None` by
    /// default, for models answered in process.
    fn server(&self) -> Option<crate::http::ServerAddress> {
        None
    }

    /// Starts a response. Connection errors and HTTP errors before the stream starts are
    /// returned here (after retries); faults later arrive as an error item. Cancelling `cancel`
    /// (or dropping the stream) aborts the request promptly.
    async fn stream(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError>;

    /// The whole response at once.
    async fn complete(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        collect(self.stream(request, cancel).await?).await
    }
}
