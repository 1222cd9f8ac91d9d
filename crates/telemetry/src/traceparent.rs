//! A span's identity as it travels between processes and machines: the W3C Trace Context
//! `traceparent` text (`00-<trace id>-<span id>-<flags>`), carried by queued batch items and
//! written into transcripts of parked sessions, so that work continued elsewhere joins the
//! trace that started it. New ids come from here too.

use std::fmt;

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};

/// A span's trace and span id, as `traceparent` writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace.
    pub trace_id: TraceId,
    /// The span (the parent of what continues from it).
    pub span_id: SpanId,
}

impl TraceParent {
    /// A new trace, whose first span has a new id.
    pub fn new_trace() -> TraceParent {
        let ids = RandomIdGenerator::default();
        TraceParent {
            trace_id: ids.new_trace_id(),
            span_id: ids.new_span_id(),
        }
    }

    /// A new span id in the same trace.
    pub fn child(&self) -> TraceParent {
        TraceParent {
            trace_id: self.trace_id,
            span_id: new_span_id(),
        }
    }

    /// Reads `00-<32 hex>-<16 hex>-<2 hex>` (version 00; a later version's extra fields are
    /// ignored, as the specification asks). All-zero ids are invalid.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let mut parts = text.trim().split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let span = parts.next()?;
        let flags = parts.next()?;
        let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex(version, 2)
            || version == "ff"
            || !hex(trace, 32)
            || !hex(span, 16)
            || !hex(flags, 2)
        {
            return None;
        }
        if version == "00" && parts.next().is_some() {
            return None;
        }
        let trace_id = TraceId::from_hex(trace).ok()?;
        let span_id = SpanId::from_hex(span).ok()?;
        (trace_id != TraceId::INVALID && span_id != SpanId::INVALID)
            .then_some(TraceParent { trace_id, span_id })
    }

    /// The span context of this parent as received from elsewhere (remote, sampled).
    pub(crate) fn remote_context(&self) -> SpanContext {
        SpanContext::new(
            self.trace_id,
            self.span_id,
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        )
    }

    /// The span context of a span of ours with these ids.
    pub(crate) fn local_context(&self) -> SpanContext {
        SpanContext::new(
            self.trace_id,
            self.span_id,
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        )
    }
}

impl fmt::Display for TraceParent {
    /// The `traceparent` text, always sampled (flags `01`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "00-{}-{}-01", self.trace_id, self.span_id)
    }
}

/// A new random span id.
pub(crate) fn new_span_id() -> SpanId {
    RandomIdGenerator::default().new_span_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_reads_back_what_it_writes() {
        let parent = TraceParent::new_trace();
        let text = parent.to_string();
        assert_eq!(text.len(), 55);
        assert!(text.starts_with("00-") && text.ends_with("-01"));
        assert_eq!(TraceParent::parse(&text), Some(parent));
        let child = parent.child();
        assert_eq!(child.trace_id, parent.trace_id);
        assert_ne!(child.span_id, parent.span_id);
    }

    #[test]
    fn malformed_traceparents_are_refused() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert!(TraceParent::parse(good).is_some());
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e47zz-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
        assert!(
            TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later")
                .is_some()
        );
    }
}
