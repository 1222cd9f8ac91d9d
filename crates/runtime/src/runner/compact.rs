//! Compacting a worker's history: the messages before its last `keep_turns` turns are
//! summarised by the worker's own model (one call, charged like any other) and replaced by one
//! user message holding the summary. The system prompt and the tools are sent unchanged, with
//! the summary call too, so the provider's prompt cache keeps matching.
//!
//! It happens past `context.compact_at` of the window (after elision, which is tried first),
//! when the provider answers that a request does not fit (once, then the request is sent
//! again), and when the user asks (`/compact [focus]`, the `compact` action). The root
//! worker's transcript records each compaction, so that a resumed session continues from the
//! compacted history.
//!
//! A compaction replaces the previous summary rather than adding one: the previous summary is
//! among the messages summarised, the model is asked to fold it in, and the user's last input
//! it kept word for word is carried into the new one. A threshold compaction that would free
//! less than 10 % of the window (what the summarised part takes as it is sent, less the
//! previous summary's size, which the new one is expected to take again) is skipped.

use std::time::Instant;

use golem_llm::context::{
    estimate_message, estimate_messages, estimate_request, estimate_text, window_of,
};
use golem_llm::{Message, ModelError, ModelRequest};
use golem_protocol::text::fold;
use golem_protocol::{
    CompactionReason, ContextFill, DisplayEvent, ModelCallPurpose, StatusLevel, TokenUsage,
    ToolDefinition,
};
use tokio_util::sync::CancellationToken;

use super::WorkerRuntime;
use super::context_state::ContextState;
use super::elide::Elision;
use super::turn::{self, Echo};
use crate::tree::WorkerNode;

/// A threshold compaction is skipped when what it would free is smaller than this share of
/// the window: it would be a model call at every turn for next to nothing.
pub(crate) const LEAST_WORTH_COMPACTING: f64 = 0.1;

/// The request for the summary is kept under this share of the window; past it, every large
/// tool result of the summarised part is sent as its stub.
const SUMMARY_REQUEST_AT_MOST: f64 = 0.9;

/// The user's last input is kept word for word in the summary message up to this many bytes.
const INPUT_KEPT_BYTES: usize = 8 * 1024;

/// What the model is asked, after the history to summarise.
const SUMMARY_PROMPT: &str = "\
[The conversation above is about to be replaced by your summary of it, to make room in the \
context window. Do not call tools. Write a summary that lets you continue the work without \
the conversation, with these sections:
1. Goals: what the user asked for, with their exact constraints and preferences quoted word \
for word.
2. Decisions: what was decided and why.
3. Files: every file read, created or changed, by path, with what matters about each.
4. Findings: tool results and facts that are still needed.
5. Open tasks: what remains to be done, and the next step.
Be specific and complete; leave out only what no longer matters.]";

/// Added to [`SUMMARY_PROMPT`] when the history to summarise starts with an earlier summary.
const FOLD_PROMPT: &str = "[The conversation above starts with the summary of an earlier part \
of it. Your summary replaces that one too: fold in what still matters of it.]";

/// The first line of the message that replaces the compacted history.
const SUMMARY_HEADER: &str = "[The conversation before this point was compacted to fit the \
context window. This is the summary of it written for you to continue the work:]";

/// Before the user's last input, in the message that replaces the compacted history.
const INPUT_MARK: &str = "\n\n[The user's last message, word for word:]\n";

/// Why a compaction did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    /// Everything before the last turns is too little to summarise.
    #[error("there is nothing to compact before the last {keep_turns} turns")]
    NothingToCompact {
        /// The turns that are always kept.
        keep_turns: u32,
    },
    /// A threshold compaction would free too little of the window to be worth its call.
    #[error(
        "compacting would free about {frees} tokens, less than the {worth} (10 % of the \
         window) worth a summary call"
    )]
    NotWorthIt {
        /// The estimated tokens it would free.
        frees: u64,
        /// The least it must free.
        worth: u64,
    },
    /// The summary call failed.
    #[error("the summary call failed: {0}")]
    Model(ModelError),
    /// The model answered without a summary.
    #[error("the model answered the summary call without a summary")]
    EmptySummary,
    /// The summary call was interrupted, or a budget ran out during it.
    #[error("compacting was interrupted")]
    Cancelled,
}

/// Why the user's `compact` action left the conversation as it was.
#[derive(Debug, thiserror::Error)]
pub enum CompactHistoryError {
    /// The worker starts each run afresh: there is nothing kept to compact.
    #[error("this worker keeps no conversation between runs")]
    NoHistory,
    /// The compaction itself did not happen.
    #[error("the conversation was not compacted: {0}")]
    NotCompacted(#[source] CompactError),
}

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Compacted {
    /// Messages the summary replaced.
    pub(crate) replaced: usize,
    /// The estimated tokens of the next request before and after.
    pub(crate) tokens_before: u64,
    pub(crate) tokens_after: u64,
}

/// One compaction to do.
pub(crate) struct CompactRequest<'a> {
    pub(crate) reason: CompactionReason,
    /// What the summary should keep in focus, in the user's words.
    pub(crate) focus: Option<&'a str>,
    /// The estimated tokens of the next request as it stands.
    pub(crate) tokens_before: u64,
    pub(crate) tools: &'a [ToolDefinition],
    /// The window of the worker's model.
    pub(crate) window: u64,
}

impl WorkerRuntime {
    /// Replaces the history before the last turns by a summary (see the module header), and
    /// resets what the context tracks about it. Spends on `usage` and `node` like any call.
    pub(crate) async fn compact(
        &self,
        messages: &mut Vec<Message>,
        context: &mut ContextState,
        job: CompactRequest<'_>,
        usage: &mut TokenUsage,
        node: &WorkerNode,
        cancel: &CancellationToken,
    ) -> Result<Compacted, CompactError> {
        let parts = &self.parts;
        let keep_turns = parts.context.keep_turns;
        let nothing = CompactError::NothingToCompact { keep_turns };
        let cut = cut_point(messages, keep_turns as usize).ok_or(nothing)?;
        let summarised = &messages[..cut];
        if job.reason == CompactionReason::Threshold {
            let worth = (job.window as f64 * LEAST_WORTH_COMPACTING) as u64;
            let frees = frees(summarised, &context.elision);
            if frees < worth {
                return Err(CompactError::NotWorthIt { frees, worth });
            }
        }
        let started = Instant::now();
        parts.ui.emit(DisplayEvent::Status {
            level: StatusLevel::Info,
            message: format!(
                "compacting the conversation: summarising {cut} message{} ({})…",
                if cut == 1 { "" } else { "s" },
                job.reason.as_str()
            ),
        });
        let mut prompt = SUMMARY_PROMPT.to_owned();
        if summarised.first().is_some_and(is_summary) {
            prompt.push('\n');
            prompt.push_str(FOLD_PROMPT);
        }
        if let Some(focus) = job.focus.map(str::trim).filter(|f| !f.is_empty()) {
            prompt.push_str(&format!("\n[Keep in focus: {focus}]"));
        }
        let request_with = |elision: &Elision| {
            let mut sent = elision.sent(summarised);
            sent.push(Message::user(prompt.as_str()));
            ModelRequest::new(&parts.instructions, sent, job.tools.to_vec())
                .with_cache_key(self.cache_key.clone())
        };
        let mut request = request_with(&context.elision);
        let mut everything_elided = false;
        if estimate_request(&request) as f64 > job.window as f64 * SUMMARY_REQUEST_AT_MOST {
            request = request_with(&Elision::everything());
            everything_elided = true;
        }
        let origin = self.origin();
        let (response, call) = loop {
            let called = turn::model_call(
                parts.model.as_ref(),
                &request,
                &parts.ui,
                origin.as_ref(),
                cancel,
                Echo::Quiet,
                ModelCallPurpose::Summary,
            )
            .await;
            match self.settled(called, usage, node) {
                Ok(done) => break done,
                Err(ModelError::ContextOverflow { .. }) if !everything_elided => {
                    request = request_with(&Elision::everything());
                    everything_elided = true;
                }
                Err(ModelError::Cancelled) => return Err(CompactError::Cancelled),
                Err(error) => return Err(CompactError::Model(error)),
            }
        };
        self.account(usage, node, &response.usage, None, call);
        let text = response.text.trim();
        if text.is_empty() {
            return Err(CompactError::EmptySummary);
        }
        let summary = summary_message(text, last_input(messages, cut));
        let kept = messages.len() - cut;
        let mut compacted = Vec::with_capacity(kept + 1);
        compacted.push(summary.clone());
        compacted.extend(messages.drain(cut..));
        *messages = compacted;
        *context = ContextState::default();
        let after = ModelRequest::new(&parts.instructions, messages.clone(), job.tools.to_vec());
        let done = Compacted {
            replaced: cut,
            tokens_before: job.tokens_before,
            tokens_after: estimate_request(&after),
        };
        if let Some(observer) = self.root_observer() {
            observer.compacted(&summary, kept, job.reason);
            observer.context(ContextFill {
                used: done.tokens_after,
                window: job.window,
            });
        }
        parts.ui.emit(DisplayEvent::ContextCompacted {
            reason: job.reason,
            tokens_before: done.tokens_before,
            tokens_after: done.tokens_after,
            summary_tokens: match response.usage.output_tokens {
                0 => estimate_text(text),
                counted => counted,
            },
            messages_replaced: cut as u64,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            worker: origin,
        });
        Ok(done)
    }
}

impl WorkerRuntime {
    /// Compacts the kept conversation now, between runs (the `compact` action), keeping
    /// `focus` in the summary; the summary call is charged like a run's. Returns the line for
    /// the user.
    pub async fn compact_history(
        &mut self,
        focus: Option<&str>,
    ) -> Result<String, CompactHistoryError> {
        if !self.parts.keeps_history {
            return Err(CompactHistoryError::NoHistory);
        }
        self.parts.interrupt.reset();
        let parts = &self.parts;
        let node = self.start_node();
        let window = window_of(parts.model.as_ref());
        let tools = parts.orchestrator.registry().llm_definitions();
        let mut messages = self.history.clone();
        let mut context = self.context.clone();
        let now = ModelRequest::new(
            &parts.instructions,
            context.elision.sent(&messages),
            tools.clone(),
        );
        let job = CompactRequest {
            reason: CompactionReason::Requested,
            focus,
            tokens_before: context.meter.estimate(&now),
            tools: &tools,
            window,
        };
        let mut usage = TokenUsage::default();
        let cancel = node.stop_token();
        let result = self
            .compact(&mut messages, &mut context, job, &mut usage, &node, &cancel)
            .await;
        node.finish(
            result.is_ok(),
            result.as_ref().err().map(ToString::to_string),
        );
        let done = result.map_err(CompactHistoryError::NotCompacted)?;
        self.history = messages;
        self.context = context;
        Ok(format!(
            "compacted: {} message{} summarised; the next request is about {} tokens instead of {}",
            done.replaced,
            if done.replaced == 1 { "" } else { "s" },
            golem_core::text::thousands(done.tokens_after),
            golem_core::text::thousands(done.tokens_before)
        ))
    }
}

/// Where `messages` is cut: those before the index are summarised, the rest kept. The kept
/// part starts at the assistant message of the `keep_turns`-th last turn (a turn is a model
/// call and its tool results), together with the user messages just before it; `None` when
/// fewer than two messages would be summarised.
pub(crate) fn cut_point(messages: &[Message], keep_turns: usize) -> Option<usize> {
    let mut cut = messages.len();
    let mut turns = 0;
    while turns < keep_turns.max(1) {
        let Some(at) = messages[..cut]
            .iter()
            .rposition(|m| matches!(m, Message::Assistant { .. }))
        else {
            // Fewer turns than are kept: nothing before them.
            return None;
        };
        cut = at;
        turns += 1;
    }
    // A kept turn never leaves its question behind.
    while cut > 0 && matches!(messages[cut - 1], Message::User { .. }) {
        cut -= 1;
    }
    (cut >= 2).then_some(cut)
}

/// What a compaction of `summarised` (sent with `elision`) frees, estimated: the tokens the
/// part takes as it is sent, less those of the summary it starts with (the new summary folds
/// that one in, so it is expected to take about as much again).
pub(crate) fn frees(summarised: &[Message], elision: &Elision) -> u64 {
    let sent = estimate_messages(&elision.sent(summarised));
    let previous = summarised
        .first()
        .filter(|m| is_summary(m))
        .map_or(0, estimate_message);
    sent.saturating_sub(previous)
}

/// Whether `message` is the summary of an earlier compaction.
fn is_summary(message: &Message) -> bool {
    matches!(message, Message::User { content } if content.starts_with(SUMMARY_HEADER))
}

/// The user's last input, when the summary replaces it (no user message is kept after it). An
/// earlier summary is not an input: the input it kept word for word is carried on.
fn last_input(messages: &[Message], cut: usize) -> Option<&str> {
    if messages[cut..]
        .iter()
        .any(|m| matches!(m, Message::User { .. }))
    {
        return None;
    }
    let content = messages[..cut].iter().rev().find_map(|m| match m {
        Message::User { content } => Some(content.as_str()),
        Message::Assistant { .. } | Message::Tool { .. } => None,
    })?;
    if !content.starts_with(SUMMARY_HEADER) {
        return Some(content);
    }
    content
        .rfind(INPUT_MARK)
        .map(|at| &content[at + INPUT_MARK.len()..])
}

/// The message that replaces the compacted history.
fn summary_message(summary: &str, last_input: Option<&str>) -> Message {
    let mut content = format!("{SUMMARY_HEADER}\n\n{summary}");
    if let Some(input) = last_input {
        let input = if input.len() > INPUT_KEPT_BYTES {
            fold(input, INPUT_KEPT_BYTES)
        } else {
            input.to_owned()
        };
        content.push_str(INPUT_MARK);
        content.push_str(&input);
    }
    Message::user(content)
}

#[cfg(test)]
mod tests {
    use golem_llm::{ModelToolCall, ToolResultMessage};

    use super::*;

    fn call(id: &str) -> Message {
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ModelToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        }
    }

    fn result(id: &str) -> Message {
        Message::Tool {
            results: vec![ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "read_file".into(),
                content: "text".into(),
                is_error: false,
            }],
        }
    }

    /// `user, (call, result) × turns`.
    fn session(turns: usize) -> Vec<Message> {
        let mut messages = vec![Message::user("read them all")];
        for n in 0..turns {
            messages.push(call(&format!("c{n}")));
            messages.push(result(&format!("c{n}")));
        }
        messages
    }

    #[test]
    fn the_last_turns_are_kept_with_their_question() {
        // 1 input + 6 turns: keeping 2 cuts before the fifth call.
        assert_eq!(cut_point(&session(6), 2), Some(9));
        assert!(matches!(session(6)[9], Message::Assistant { .. }));
        // Too few turns to summarise anything.
        assert_eq!(cut_point(&session(2), 2), None);
        assert_eq!(cut_point(&session(3), 2), Some(3));
        // A chat: the user's question stays with the answer that is kept.
        let chat = vec![
            Message::user("a"),
            Message::assistant("A"),
            Message::user("b"),
            Message::assistant("B"),
            Message::user("c"),
            Message::assistant("C"),
        ];
        assert_eq!(cut_point(&chat, 1), Some(4));
        assert_eq!(cut_point(&chat, 2), Some(2));
        assert_eq!(cut_point(&chat, 3), None);
        // Keeping no turns still keeps the last one: the summary needs something after it.
        assert_eq!(cut_point(&chat, 0), Some(4));
    }

    #[test]
    fn the_summary_keeps_the_users_last_input_when_it_is_summarised() {
        let messages = session(6);
        let cut = cut_point(&messages, 2).unwrap();
        let input = last_input(&messages, cut);
        assert_eq!(input, Some("read them all"));
        let Message::User { content } = summary_message("- read 6 files", input) else {
            panic!("a user message")
        };
        assert!(content.starts_with(SUMMARY_HEADER), "{content}");
        assert!(content.contains("- read 6 files"), "{content}");
        assert!(
            content.ends_with("word for word:]\nread them all"),
            "{content}"
        );
        // A question that is kept is not repeated.
        let chat = vec![
            Message::user("a"),
            Message::assistant("A"),
            Message::user("b"),
            Message::assistant("B"),
        ];
        assert_eq!(last_input(&chat, 2), None);
    }

    #[test]
    fn an_earlier_summary_is_not_an_input_but_the_input_it_kept_is_carried_on() {
        let first = summary_message("- read 6 files", Some("read them all"));
        let mut messages = vec![first.clone()];
        messages.extend(session(6).into_iter().skip(1));
        let cut = cut_point(&messages, 2).unwrap();
        assert_eq!(last_input(&messages, cut), Some("read them all"));
        let Message::User { content } = summary_message("- read 12 files", Some("read them all"))
        else {
            unreachable!()
        };
        assert_eq!(content.matches(SUMMARY_HEADER).count(), 1, "{content}");
        // A summary that kept no input carries none on.
        messages[0] = summary_message("- read 6 files", None);
        assert_eq!(last_input(&messages, cut), None);
        // A user's text that only mentions the mark is an input like any other.
        messages[0] = Message::user("what does [The user's last message, word for word:] mean?");
        assert_eq!(
            last_input(&messages, cut),
            Some("what does [The user's last message, word for word:] mean?")
        );
    }

    #[test]
    fn what_a_compaction_frees_is_the_part_as_sent_less_the_summary_it_replaces() {
        let mut messages = vec![summary_message(&"s".repeat(4000), None)];
        messages.extend(session(3).into_iter().skip(1));
        let previous = estimate_message(&messages[0]);
        assert!(previous > 1000, "{previous}");
        let sent = estimate_messages(&messages);
        assert_eq!(frees(&messages, &Elision::default()), sent - previous);
        // Without an earlier summary, all of it.
        let plain = session(3);
        assert_eq!(
            frees(&plain, &Elision::default()),
            estimate_messages(&plain)
        );
        // Elided results free only their stubs.
        let mut big = vec![Message::user("read")];
        big.push(call("c0"));
        big.push(Message::Tool {
            results: vec![ToolResultMessage {
                tool_call_id: "c0".into(),
                tool_name: "read_file".into(),
                content: "x".repeat(8000),
                is_error: false,
            }],
        });
        let whole = frees(&big, &Elision::default());
        let elided = frees(&big, &Elision::everything());
        assert!(whole > 2000 && elided < 100, "{whole} {elided}");
    }
}
