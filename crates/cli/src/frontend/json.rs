//! `--json`: every display event as one JSON object per line on stdout, and nothing else there
//! (`golem_protocol::to_jsonl_line`: no line break but the `\n` that ends each line).

use std::io::Write;

use golem_core::bus::DisplaySubscription;
use golem_protocol::DisplayEvent;

/// Prints events until `sessionEnded` (inclusive) or until the bus closes.
pub async fn print_events(mut events: DisplaySubscription) {
    while let Some(event) = events.recv().await {
        let last = matches!(event, DisplayEvent::SessionEnded { .. });
        match golem_protocol::to_jsonl_line(&event) {
            Ok(line) => {
                let mut out = std::io::stdout().lock();
                // A closed stdout (a reader that went away) ends the printing, not the run.
                if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
                    return;
                }
            }
            Err(e) => tracing::error!(error = %e, "cannot serialize an event"),
        }
        if last {
            return;
        }
    }
}
