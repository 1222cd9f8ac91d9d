//! The trace context a queued item carries between machines, when the producer traces: the
//! item's own trace (a `traceparent` naming the `enqueue <item>` span the producer sent) and
//! the batch's span. It is stored beside the item in its stream entry (field `trace`) and in
//! the parked item (`crate::travel::ParkedItem`), so that every run of the item, on whichever
//! consumer and however long after an approval, is a child of that span and links to the
//! batch's. Entries without it (from an older producer, or one that did not trace) run as
//! before: each run of the item is a trace of its own.

use std::time::SystemTime;

use golem_batch::{BatchItem, BatchSpan};
use golem_runtime::host::TraceOrigin;
use golem_telemetry::{FinishedSpan, SpanKind, TraceParent, attr};
use serde::{Deserialize, Serialize};

/// What an item's runs hang under, as `traceparent` texts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemTrace {
    /// The item's span: every run of the item is its child.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The batch's span, which every run of the item links to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<String>,
}

impl ItemTrace {
    /// Whether it carries nothing.
    pub fn is_empty(&self) -> bool {
        self.parent.is_none() && self.batch.is_none()
    }

    /// Reads the `trace` field of a stream entry: absent, or not an item trace, is empty (the
    /// item runs untraced by its producer, never not at all).
    pub fn from_field(field: Option<&str>) -> ItemTrace {
        match field.map(serde_json::from_str::<ItemTrace>) {
            Some(Ok(trace)) => trace,
            Some(Err(error)) => {
                tracing::debug!(%error, "an item's trace context is unreadable; it runs without");
                ItemTrace::default()
            }
            None => ItemTrace::default(),
        }
    }

    /// `base` with this item's parent and batch link added (ids that do not parse are left
    /// out).
    pub fn origin(&self, base: &TraceOrigin) -> TraceOrigin {
        let mut origin = base.clone();
        if let Some(parent) = self.parent.as_deref().and_then(TraceParent::parse) {
            origin.parent = Some(parent);
        }
        if let Some(batch) = self.batch.as_deref().and_then(TraceParent::parse)
            && !origin.links.contains(&batch)
        {
            origin.links.push(batch);
        }
        origin
    }
}

/// The traces of a batch being enqueued: its span, and a new trace for each item.
#[derive(Debug)]
pub struct EnqueueTraces {
    span: BatchSpan,
    items: Vec<TraceParent>,
}

impl EnqueueTraces {
    /// A new trace for each of `count` items, linked to `span`.
    pub fn new(span: BatchSpan, count: usize) -> EnqueueTraces {
        EnqueueTraces {
            span,
            items: (0..count).map(|_| TraceParent::new_trace()).collect(),
        }
    }

    /// What the `index`th item carries.
    pub fn item(&self, index: usize) -> ItemTrace {
        ItemTrace {
            parent: self.items.get(index).map(ToString::to_string),
            batch: Some(self.span.ids().to_string()),
        }
    }

    /// Sends each item's `enqueue <id>` span (the root of its trace, linked to the batch) and
    /// the batch's span, which end now.
    pub fn send(self, items: &[BatchItem]) {
        let now = SystemTime::now();
        let telemetry = self.span.telemetry().clone();
        for (item, ids) in items.iter().zip(&self.items) {
            let mut span = FinishedSpan::new(
                format!("enqueue {}", item.id),
                SpanKind::Producer,
                *ids,
                self.span.started(),
                now,
            );
            span.set(attr::BATCH_ID, self.span.batch_id().to_owned());
            span.set(attr::ITEM_ID, item.id.clone());
            span.set(attr::WORKER, self.span.worker().to_owned());
            span.links.push(self.span.ids());
            telemetry.send_finished(span);
        }
        self.span.end(items.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_trace_adds_its_parent_and_batch_to_the_origin() {
        let parent = TraceParent::new_trace();
        let batch = TraceParent::new_trace();
        let other = TraceParent::new_trace();
        let trace = ItemTrace {
            parent: Some(parent.to_string()),
            batch: Some(batch.to_string()),
        };
        let json = serde_json::to_string(&trace).unwrap();
        assert_eq!(ItemTrace::from_field(Some(&json)), trace);
        let base = TraceOrigin {
            links: vec![other],
            ..TraceOrigin::default()
        };
        let origin = trace.origin(&base);
        assert_eq!(origin.parent, Some(parent));
        assert_eq!(origin.links, vec![other, batch]);
        assert_eq!(trace.origin(&origin), origin, "the batch is linked once");
    }

    #[test]
    fn a_missing_or_unreadable_trace_is_empty_and_changes_nothing() {
        for field in [
            None,
            Some("not json"),
            Some("{}"),
            Some(r#"{"parent":"zz"}"#),
        ] {
            let trace = ItemTrace::from_field(field);
            assert_eq!(
                trace.origin(&TraceOrigin::default()),
                TraceOrigin::default(),
                "{field:?}"
            );
        }
        assert!(ItemTrace::default().is_empty());
        assert_eq!(serde_json::to_string(&ItemTrace::default()).unwrap(), "{}");
    }
}
