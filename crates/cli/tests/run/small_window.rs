//! One long turn against a small window through `golem-forge run`: one input, then 60 reads
//! of a 4 KB file, against a model whose window (in the program config) and provider limit
//! (the mock's) are 8000 tokens. The turn completes, every request fits, summary calls are rare
//! and no request holds more than one summary.

use super::*;

/// A text only the runtime's summary requests hold.
const SUMMARY_ASKED: &str = "[The conversation above is about to be replaced";

/// The first line of a summary message.
const SUMMARY_HEADER: &str = "[The conversation before this point was compacted";

const WINDOW: u64 = 8_000;
const READS: usize = 60;

#[test]
fn sixty_reads_of_4_kb_complete_in_an_8000_token_window() {
    for wire in Wire::ALL {
        let env = TestEnv::new();
        project(&env, &[("main.worker", fs_worker(""))]);
        env.write(
            "proj/golem-forge.config.yaml",
            &format!("context_windows:\n  \"{}\": {WINDOW}\n", model_for(wire)),
        );
        let line = format!("{}\n", "x".repeat(59));
        env.write("proj/out/big.txt", &line.repeat(68));
        let mut replies: Vec<Reply> = (0..READS)
            .map(|n| {
                wire.tool_calls(&[(
                    &format!("call_{n}"),
                    "read_file",
                    json!({"path": "/out/big.txt"}),
                )])
            })
            .collect();
        replies.push(wire.text("Read it all."));
        let server = MockServer::start_blocking(replies);
        server.set_context_limit(WINDOW);
        server.answer_when(SUMMARY_ASKED, wire.text("SUMMARY: big.txt is lines of x."));
        let output = run(
            &env,
            wire,
            &server,
            &[
                "proj/main.worker",
                "read big.txt again and again",
                "--max-iterations",
                "61",
                "--json",
            ],
        );
        assert_exit(&output, 0);
        let requests = server.requests();
        let summaries = requests
            .iter()
            .filter(|r| r.body.to_string().contains(SUMMARY_ASKED))
            .count();
        assert_eq!(
            requests.len(),
            READS + 1 + summaries,
            "every request fitted"
        );
        assert!(
            summaries <= 3,
            "{summaries} summary calls for {READS} tool turns"
        );
        for request in &requests {
            let body = request.body.to_string();
            assert!((body.len() as u64).div_ceil(4) <= WINDOW);
            assert!(body.matches(SUMMARY_HEADER).count() <= 1, "{body}");
        }
        let last = requests.last().unwrap();
        let results = wire.tool_results(last);
        assert!(
            results.last().is_some_and(|r| r.content.len() > 4_000),
            "the newest result is whole: {results:?}"
        );
    }
}
