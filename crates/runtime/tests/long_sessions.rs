//! Long sessions against the mock provider, on each wire (OpenAI Chat Completions, OpenAI
//! Responses, Anthropic Messages), given a context limit (the mock answers its wire's real
//! overflow error above the limit, and counts each request's tokens in its usage): old tool
//! results are elided, so a session of hundreds of large results never reaches the window;
//! without elision the same session fails at the window with a message that says what to do.

use golem_protocol::{DisplayEvent, TurnStatus};
use golem_testkit::SentToolResult;
use golem_testkit::mock::{MockServer, Reply};
use golem_testkit::{anthropic, openai, responses};
use serde_json::{Value, json};

use crate::scenario::{Program, Scenario};

/// The model's window, and the mock's limit.
pub(crate) const WINDOW: u64 = 200_000;

/// The wire the `mock` provider speaks.
#[derive(Clone, Copy)]
pub(crate) enum Wire {
    Chat,
    Responses,
    Anthropic,
}

impl Wire {
    pub(crate) fn tool_call(self, id: &str) -> Reply {
        let call = [(id, "read_file", json!({"path": "/out/big.txt"}))];
        match self {
            Wire::Chat => openai::tool_calls(&call),
            Wire::Responses => responses::tool_calls(&call),
            Wire::Anthropic => anthropic::tool_calls(&call),
        }
    }

    pub(crate) fn text(self, text: &str) -> Reply {
        match self {
            Wire::Chat => openai::text(text),
            Wire::Responses => responses::text(text),
            Wire::Anthropic => anthropic::text(text),
        }
    }

    pub(crate) fn tool_results(self, body: &Value) -> Vec<SentToolResult> {
        match self {
            Wire::Chat => openai::tool_results(body),
            Wire::Responses => responses::tool_results(body),
            Wire::Anthropic => anthropic::tool_results(body),
        }
    }

    /// The `mock` provider's definition. The anthropic wire needs a key from the environment:
    /// `PATH` is always set, and the mock does not check keys.
    fn provider(self, server: &MockServer) -> String {
        match self {
            Wire::Chat => format!("  mock:\n    base_url: {}/v1\n", server.base_url),
            Wire::Responses => format!(
                "  mock:\n    base_url: {}/v1\n    wire: responses\n",
                server.base_url
            ),
            Wire::Anthropic => format!(
                "  mock:\n    base_url: {}/v1\n    wire: anthropic\n    api_key_env: PATH\n",
                server.base_url
            ),
        }
    }
}

/// `reads` turns that each read the 30 KB `/out/big.txt`, then a final answer.
fn replies(wire: Wire, reads: usize) -> Vec<Reply> {
    let mut replies: Vec<Reply> = (0..reads)
        .map(|n| wire.tool_call(&format!("call_{n}")))
        .collect();
    replies.push(wire.text("Read it all."));
    replies
}

pub(crate) async fn program(wire: Wire, reads: usize, config: &str) -> Program {
    program_sized(wire, reads, WINDOW, 500, config).await
}

/// Like [`program`], with a `window` (the model's, and the mock's limit) and a
/// `/out/big.txt` of `lines` lines of 60 bytes.
pub(crate) async fn program_sized(
    wire: Wire,
    reads: usize,
    window: u64,
    lines: usize,
    config: &str,
) -> Program {
    let config = format!("context_windows:\n  \"mock:*\": {window}\n{config}");
    let program = Scenario::new(replies(wire, reads))
        .program(move |server| {
            let (dir, worker) = golem_testkit::program::mock_program(server, "");
            std::fs::write(
                dir.path().join("golem-forge.config.yaml"),
                format!("providers:\n{}{config}", wire.provider(server)),
            )
            .unwrap();
            (dir, worker)
        })
        .build()
        .await;
    program.server.set_context_limit(window);
    let line = format!("{}\n", "x".repeat(59));
    std::fs::write(program.path("out/big.txt"), line.repeat(lines)).unwrap();
    program
}

/// Runs one input through `reads` model turns; returns `turnEnded` and the events before it.
pub(crate) async fn run(program: &Program, reads: usize) -> (DisplayEvent, Vec<DisplayEvent>) {
    let mut options = program.options();
    options.max_iterations = Some(u32::try_from(reads).unwrap() + 1);
    let mut s = program.start_with(options, true);
    s.input("read big.txt again and again");
    let ended = s.turn_ended().await;
    s.end().await;
    ended
}

/// 300 turns of 30 KB results on `wire` complete under the window, elided.
async fn three_hundred_turns_on(wire: Wire) {
    let program = program(wire, 300, "").await;
    let (ended, seen) = run(&program, 300).await;
    assert!(
        matches!(
            ended,
            DisplayEvent::TurnEnded {
                status: TurnStatus::Completed,
                ..
            }
        ),
        "{ended:?}"
    );
    let requests = program.server.requests();
    assert_eq!(requests.len(), 301, "every request fitted the window");
    let largest = requests
        .iter()
        .map(|r| (r.body.to_string().len() as u64).div_ceil(4))
        .max()
        .unwrap();
    // Elision keeps each request near 60 % of the window (the estimate errs by a few %).
    assert!(largest < WINDOW * 65 / 100, "{largest}");
    let last = wire.tool_results(&requests[300].body);
    assert_eq!(last.len(), 300);
    let elided = last
        .iter()
        .filter(|r| r.content.ends_with("elided; call it again to see it]"))
        .count();
    // The last four turns keep their results; the others are stubs.
    assert!(elided >= 280, "{elided}");
    assert!(last[296..].iter().all(|r| r.content.len() > 29_000));
    let fills: Vec<u64> = seen
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::Usage {
                context: Some(fill),
                ..
            } => Some(fill.used),
            _ => None,
        })
        .collect();
    assert!(fills.iter().all(|used| *used < WINDOW), "{fills:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_turns_of_30_kb_results_stay_under_the_window_on_openai_chat() {
    three_hundred_turns_on(Wire::Chat).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_turns_of_30_kb_results_stay_under_the_window_on_openai_responses() {
    three_hundred_turns_on(Wire::Responses).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_turns_of_30_kb_results_stay_under_the_window_on_anthropic() {
    three_hundred_turns_on(Wire::Anthropic).await;
}

/// Runs the 40-turn session on `wire` with `elide_at: never` and `compact_at: never`; the turn
/// must fail, and this is its error (with the program, whose mock recorded the requests).
async fn failed_without_elision(wire: Wire) -> (Program, String) {
    let program = program(wire, 40, "context: {elide_at: never, compact_at: never}\n").await;
    let (ended, _) = run(&program, 40).await;
    let DisplayEvent::TurnEnded {
        status: TurnStatus::Failed,
        error: Some(error),
        ..
    } = ended
    else {
        panic!("{ended:?}")
    };
    (program, error)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elision_the_same_session_fails_at_the_window() {
    let (program, error) = failed_without_elision(Wire::Chat).await;
    assert!(
        error.contains("maximum context length is 200000 tokens"),
        "{error}"
    );
    assert!(
        error.contains(
            "the context window of mock:m1 (200000 tokens as golem-forge knows it) (compacting \
             is off: `context.compact_at: never`)"
        ),
        "{error}"
    );
    assert!(program.server.requests().len() < 40);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elision_the_anthropic_wire_fails_at_the_window_too() {
    let (_program, error) = failed_without_elision(Wire::Anthropic).await;
    assert!(error.contains("prompt is too long"), "{error}");
    assert!(
        error.contains("(200000 tokens as golem-forge knows it)"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elision_the_openai_responses_wire_fails_at_the_window_too() {
    let (program, error) = failed_without_elision(Wire::Responses).await;
    assert!(
        error.contains("Your input exceeds the context window of this model"),
        "{error}"
    );
    assert!(
        error.contains("the context window of mock:m1 (200000 tokens as golem-forge knows it)"),
        "{error}"
    );
    let requests = program.server.requests();
    assert!(requests.len() < 40);
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
}
