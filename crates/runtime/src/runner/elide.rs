//! Eliding old tool results (no model call): past `elide_at` of the window, the results of
//! tool calls older than the last `keep_turns` turns are replaced, in what is *sent*, by a
//! short stub (`[read_file /notes/a.md: 41 KB, elided; call it again to see it]`). The history
//! and the transcript keep everything.
//!
//! What is kept whole is bounded by the window, not only by the count: when the last
//! `keep_turns` turns alone (with the system prompt and the tools) still pass the target, the
//! results inside them are elided too, oldest first; the newest result is never elided, so the
//! model always sees what it just asked for.
//!
//! Deterministic and stable: results are elided oldest first, and once a result is elided it
//! stays elided in every later request, so each request's prompt is the previous one's up to
//! the first newly elided result (and the provider's prompt cache keeps matching that far).

use golem_llm::context::{estimate_message, estimate_messages};
use golem_llm::{Message, ModelToolCall, ToolResultMessage};
use golem_protocol::text::fold;

/// Results no longer than this are never elided: a stub would save nothing.
const SMALLEST_ELIDED: usize = 400;

/// How far below the threshold one elision goes, as a share of the window, so that a session
/// that keeps growing elides in batches rather than at every request (each elision changes the
/// prompt from that result on, and the prompt cache with it).
pub(crate) const ELIDE_HEADROOM: f64 = 0.1;

/// Which tool results are elided: every large one among the first `through` results of the
/// history (in order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Elision {
    through: usize,
}

/// What one [`Elision::extend`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Elided {
    /// Results newly replaced by stubs.
    pub(crate) results: usize,
    /// The estimated tokens that saved.
    pub(crate) tokens: u64,
}

impl Elision {
    /// Every large result elided (what is summarised when even its elided form is too large).
    pub(crate) fn everything() -> Elision {
        Elision {
            through: usize::MAX,
        }
    }

    /// `messages` as they are sent: with the results elided so far replaced by stubs.
    pub(crate) fn sent(&self, messages: &[Message]) -> Vec<Message> {
        let mut sent = messages.to_vec();
        let mut seen = 0;
        let mut calls: Vec<ModelToolCall> = Vec::new();
        for message in &mut sent {
            let results = match message {
                Message::Assistant { tool_calls, .. } => {
                    calls.clone_from(tool_calls);
                    continue;
                }
                Message::User { .. } => continue,
                Message::Tool { results } => results,
            };
            for result in results {
                if seen >= self.through {
                    return sent;
                }
                seen += 1;
                elide(result, &calls);
            }
        }
        sent
    }

    /// Elides more results of `sent` (as [`Self::sent`] made it), oldest first, while the
    /// request's `estimate` is above `target`. The results of the last `keep_turns` turns
    /// (messages of tool results) are elided only while those turns alone, with the rest of
    /// the request that is not history (the estimate less the older messages), are above
    /// `target`; the newest result never is.
    pub(crate) fn extend(
        &mut self,
        sent: &mut [Message],
        keep_turns: usize,
        estimate: u64,
        target: u64,
    ) -> Elided {
        let tool_messages: Vec<usize> = sent
            .iter()
            .enumerate()
            .filter_map(|(at, m)| matches!(m, Message::Tool { .. }).then_some(at))
            .collect();
        let eligible = tool_messages.len().saturating_sub(keep_turns);
        // Where the kept turns start: the model call of the first kept tool message.
        let kept_from = tool_messages
            .get(eligible)
            .map_or(sent.len(), |&at| at.saturating_sub(1));
        let mut kept_alone = estimate.saturating_sub(estimate_messages(&sent[..kept_from]));
        let newest = tool_messages.last().copied();
        let mut estimate = estimate;
        let mut done = Elided::default();
        let mut seen = 0;
        let mut calls: Vec<ModelToolCall> = Vec::new();
        for (at, message) in sent.iter_mut().enumerate() {
            let results = match message {
                Message::Assistant { tool_calls, .. } => {
                    calls.clone_from(tool_calls);
                    continue;
                }
                Message::User { .. } => continue,
                Message::Tool { results } => results,
            };
            let kept = at >= kept_from;
            let last = results.len().saturating_sub(1);
            for (index, result) in results.iter_mut().enumerate() {
                seen += 1;
                if seen <= self.through {
                    continue;
                }
                if estimate <= target || (kept && kept_alone <= target) {
                    return done;
                }
                if Some(at) == newest && index == last {
                    return done;
                }
                let before = estimate_result(result);
                if elide(result, &calls) {
                    let saved = before.saturating_sub(estimate_result(result));
                    estimate = estimate.saturating_sub(saved);
                    if kept {
                        kept_alone = kept_alone.saturating_sub(saved);
                    }
                    done.results += 1;
                    done.tokens += saved;
                }
                self.through = seen;
            }
        }
        done
    }
}

fn estimate_result(result: &ToolResultMessage) -> u64 {
    estimate_message(&Message::Tool {
        results: vec![result.clone()],
    })
}

/// Replaces a large result by its stub; says whether it did. `calls` are those of the
/// assistant message the result answers.
fn elide(result: &mut ToolResultMessage, calls: &[ModelToolCall]) -> bool {
    if result.content.len() <= SMALLEST_ELIDED {
        return false;
    }
    let call = calls.iter().find(|call| call.id == result.tool_call_id);
    result.content = stub(result, call);
    true
}

/// `[read_file /notes/a.md: 41 KB, elided; call it again to see it]`.
fn stub(result: &ToolResultMessage, call: Option<&ModelToolCall>) -> String {
    let target = call
        .and_then(target)
        .map(|t| format!(" {t}"))
        .unwrap_or_default();
    format!(
        "[{}{target}: {}, elided; call it again to see it]",
        result.tool_name,
        size(result.content.len())
    )
}

/// What a call was about, from its arguments: a path, address, command or query.
fn target(call: &ModelToolCall) -> Option<String> {
    let args = call.parsed_arguments().ok()?;
    let text = ["path", "file", "url", "command", "query", "pattern", "name"]
        .iter()
        .find_map(|key| match args.get(key)? {
            serde_json::Value::String(text) => Some(text.clone()),
            serde_json::Value::Array(items) => {
                let words: Vec<&str> = items.iter().filter_map(|v| v.as_str()).collect();
                (!words.is_empty()).then(|| words.join(" "))
            }
            _ => None,
        })?;
    let line = text.lines().next().unwrap_or_default().trim();
    (!line.is_empty()).then(|| fold(line, 80))
}

fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{} KB", (bytes + 512) / 1024)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, path: &str) -> Message {
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ModelToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: serde_json::json!({ "path": path }).to_string(),
            }],
        }
    }

    fn result(id: &str, bytes: usize) -> Message {
        Message::Tool {
            results: vec![ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "read_file".into(),
                content: "x".repeat(bytes),
                is_error: false,
            }],
        }
    }

    /// A conversation of `turns` reads of `bytes` each.
    fn conversation(turns: usize, bytes: usize) -> Vec<Message> {
        let mut messages = vec![Message::user("read them all")];
        for n in 0..turns {
            let id = format!("c{n}");
            messages.push(call(&id, &format!("/notes/{n}.md")));
            messages.push(result(&id, bytes));
        }
        messages
    }

    fn contents(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .filter_map(|m| match m {
                Message::Tool { results } => Some(results[0].content.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_stub_names_the_tool_its_target_and_the_size() {
        let mut messages = conversation(2, 41 * 1024);
        let mut elision = Elision::default();
        let done = elision.extend(&mut messages, 0, u64::MAX, 0);
        assert_eq!(done.results, 1);
        // The newest result is never elided, whatever the target.
        assert_eq!(
            contents(&messages),
            [
                "[read_file /notes/0.md: 41 KB, elided; call it again to see it]".to_owned(),
                "x".repeat(41 * 1024)
            ]
        );
        assert!(done.tokens > 10_000, "{done:?}");
    }

    #[test]
    fn oldest_first_only_as_much_as_needed_and_never_the_last_turns() {
        let history = conversation(6, 4000);
        let mut elision = Elision::default();
        let mut sent = elision.sent(&history);
        assert_eq!(sent, history);
        // Each result is about 1000 tokens; 2500 to save takes three.
        let done = elision.extend(&mut sent, 2, 10_000, 7_500);
        assert_eq!(done.results, 3);
        let elided: Vec<bool> = contents(&sent)
            .iter()
            .map(|c| c.ends_with("call it again to see it]"))
            .collect();
        assert_eq!(elided, [true, true, true, false, false, false]);
        // However much the older ones are elided, the last two turns stay while they alone
        // (about 2000 tokens) are under the target.
        let estimate = estimate_messages(&sent);
        let done = elision.extend(&mut sent, 2, estimate, 2_500);
        assert_eq!(done.results, 1);
        let elided: Vec<bool> = contents(&sent)
            .iter()
            .map(|c| c.ends_with("call it again to see it]"))
            .collect();
        assert_eq!(elided, [true, true, true, true, false, false]);
    }

    #[test]
    fn kept_turns_that_alone_pass_the_target_are_elided_oldest_first_but_the_newest() {
        let history = conversation(6, 4000);
        let mut elision = Elision::default();
        let mut sent = elision.sent(&history);
        // Four kept turns take about 4100 tokens, past the target of 1500: the two older
        // results go, then the kept ones oldest first until the kept part fits.
        let estimate = estimate_messages(&sent);
        let done = elision.extend(&mut sent, 4, estimate, 1_500);
        assert_eq!(done.results, 5);
        let elided: Vec<bool> = contents(&sent)
            .iter()
            .map(|c| c.ends_with("call it again to see it]"))
            .collect();
        assert_eq!(elided, [true, true, true, true, true, false]);
        // Nothing is small enough to make the newest go.
        let now = estimate_messages(&sent);
        let done = elision.extend(&mut sent, 4, now, 0);
        assert_eq!(done.results, 0);
        assert_eq!(contents(&sent)[5].len(), 4000);
        // Kept turns that fit (about 4100 tokens) stay whole; the older ones go first.
        let mut elision = Elision::default();
        let mut sent = elision.sent(&history);
        let done = elision.extend(&mut sent, 4, estimate, 4_500);
        assert_eq!(done.results, 2);
        assert!(contents(&sent)[2..].iter().all(|c| c.len() == 4000));
    }

    #[test]
    fn what_was_elided_stays_elided_and_the_history_keeps_everything() {
        let mut history = conversation(4, 4000);
        let mut elision = Elision::default();
        let mut first = elision.sent(&history);
        elision.extend(&mut first, 1, 5_000, 3_000);
        assert_eq!(contents(&history)[0].len(), 4000);
        // The next request repeats the first one's messages exactly, elisions included.
        history.push(call("c9", "/notes/9.md"));
        history.push(result("c9", 4000));
        let second = elision.sent(&history);
        assert_eq!(second[..first.len()], first[..]);
        // Small results are never replaced.
        let mut small = conversation(3, 100);
        let mut elision = Elision::default();
        assert_eq!(elision.extend(&mut small, 0, u64::MAX, 0).results, 0);
        assert_eq!(small, conversation(3, 100));
    }
}
