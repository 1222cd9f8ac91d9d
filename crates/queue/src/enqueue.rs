//! Putting a batch on the queue: its settings and every item, in one atomic step, under a name
//! that is free or already holds exactly these items (then nothing is added: enqueueing is
//! safe to repeat, as a Kubernetes Job's init step may). A traced producer gives each item a
//! trace of its own (`crate::trace`).

use std::time::Duration;

use golem_batch::{BatchItem, BatchSpan};

use crate::connect::Queue;
use crate::error::QueueError;
use crate::keys::{BatchKeys, GROUP};
use crate::meta::QueueMeta;
use crate::scripts::ENQUEUE;
use crate::trace::EnqueueTraces;

/// How long a short command waits for a lost connection to come back.
pub(crate) const PATIENCE: Option<Duration> = Some(Duration::from_secs(30));

/// What enqueueing did.
#[derive(Debug, Clone, PartialEq)]
pub enum Enqueued {
    /// The batch is new: its items are on the queue.
    Added,
    /// The batch was there with the same worker and items: nothing was added.
    AlreadyThere(QueueMeta),
}

/// Puts batch `name` (`meta`, `items`) on `queue`, untraced.
pub async fn enqueue(
    queue: &Queue,
    name: &str,
    meta: &QueueMeta,
    items: &[BatchItem],
) -> Result<Enqueued, QueueError> {
    enqueue_traced(queue, name, meta, items, None).await
}

/// Puts batch `name` (`meta`, `items`) on `queue`; with `span` (tracing is on), each item
/// carries a trace of its own, linked to the batch's span (`crate::trace`), and once the
/// items are added the producer's spans are sent: `enqueue <item>` for each, the root of its
/// item's trace, and the batch's. When the batch was there already nothing is sent.
pub async fn enqueue_traced(
    queue: &Queue,
    name: &str,
    meta: &QueueMeta,
    items: &[BatchItem],
    span: Option<BatchSpan>,
) -> Result<Enqueued, QueueError> {
    let keys = BatchKeys::new(name)?;
    let traces = span.map(|span| EnqueueTraces::new(span, items.len()));
    let meta_json = serde_json::to_string(meta).map_err(|e| QueueError::damaged("meta", e))?;
    let mut args = vec![GROUP.to_owned(), meta_json];
    for (index, item) in items.iter().enumerate() {
        args.push(item.id.clone());
        args.push(serde_json::to_string(item).map_err(|e| QueueError::damaged("item", e))?);
        args.push(match &traces {
            Some(traces) => serde_json::to_string(&traces.item(index))
                .map_err(|e| QueueError::damaged("item trace", e))?,
            None => String::new(),
        });
    }
    let existing: Option<String> = queue
        .call("enqueueing the batch", PATIENCE, |mut con| {
            let mut invocation = ENQUEUE.key(keys.meta());
            invocation.key(keys.items());
            for arg in &args {
                invocation.arg(arg);
            }
            async move { invocation.invoke_async(&mut con).await }
        })
        .await?;
    let Some(existing) = existing else {
        if let Some(traces) = traces {
            traces.send(items);
        }
        return Ok(Enqueued::Added);
    };
    let existing: QueueMeta =
        serde_json::from_str(&existing).map_err(|e| QueueError::damaged("batch meta", e))?;
    if existing.worker != meta.worker {
        return Err(QueueError::NameTaken {
            name: name.to_owned(),
            what: format!("worker {}", existing.worker),
        });
    }
    if existing.input_hash != meta.input_hash {
        return Err(QueueError::NameTaken {
            name: name.to_owned(),
            what: format!("other items ({})", existing.items),
        });
    }
    Ok(Enqueued::AlreadyThere(existing))
}

/// The settings of batch `name`.
pub async fn load_meta(queue: &Queue, name: &str) -> Result<QueueMeta, QueueError> {
    let keys = BatchKeys::new(name)?;
    let text: Option<String> = queue
        .call("reading the batch", PATIENCE, |mut con| {
            let key = keys.meta();
            async move { redis::cmd("GET").arg(key).query_async(&mut con).await }
        })
        .await?;
    let text = text.ok_or_else(|| QueueError::UnknownBatch(name.to_owned()))?;
    serde_json::from_str(&text).map_err(|e| QueueError::damaged("batch meta", e))
}
