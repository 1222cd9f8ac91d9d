//! The numbers of the MCP front end, measured on every run and printed (`--nocapture` shows
//! them): the time from `tools/call` to the first progress notification, and the server's
//! memory (VmRSS) idle and during a call, over stdio with the initialize handshake. The
//! bounds are loose; they catch a regression by an order of magnitude. To measure a release
//! build: `GOLEM_FORGE_MCP_BIN=target/release/golem-forge cargo test -p golem-forge --test mcp
//! measure -- --nocapture`.

use std::time::Duration;

use golem_testkit::mock::Chunk;
use serde_json::{Value, json};

use crate::calls::call;
use crate::harness::{Protocol, Transport, WIRE, writer};
use golem_testkit::cli::Project;

const CALLS: usize = 10;

#[test]
fn first_progress_and_memory() {
    // Each answer streams its first words, pauses, then ends: the memory "during" a call is
    // read at its first progress notification, while the model still streams.
    let replies = (0..CALLS)
        .map(|_| {
            let mut reply = WIRE.text("Here is the answer you asked for, in full.");
            reply
                .chunks
                .insert(2, Chunk::Delay(Duration::from_millis(300)));
            reply
        })
        .collect();
    let project = Project::new(&[("main.worker", writer(""))], replies);
    let calls: Vec<Value> = (0..CALLS)
        .map(|i| json!({"tool": "main", "arguments": {"input": format!("question {i}")}}))
        .collect();
    let (report, _) = call(
        &project,
        (Transport::Stdio, Protocol::Handshake),
        &["main.worker"],
        &[],
        json!(calls),
        true,
    );
    let mut first: Vec<f64> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["progress"][0]["ms"].as_f64().unwrap())
        .collect();
    first.sort_by(f64::total_cmp);
    let median = first[first.len() / 2];
    let kb = |v: &Value| v.as_u64().unwrap_or(0);
    let idle = kb(&report["rss_idle_kb"]);
    let during: Vec<u64> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| kb(&c["rss_during_kb"]))
        .collect();
    let during_max = during.iter().copied().max().unwrap_or(0);
    let after = kb(&report["rss_after_kb"]);
    println!(
        "mcp: tools/call → first progress: median {median:.1} ms, min {:.1} ms, max {:.1} ms \
         over {CALLS} calls; VmRSS idle {:.1} MiB, during a call up to {:.1} MiB, after \
         {CALLS} calls {:.1} MiB",
        first[0],
        first[first.len() - 1],
        idle as f64 / 1024.0,
        during_max as f64 / 1024.0,
        after as f64 / 1024.0
    );
    assert!(
        idle > 0 && during_max > 0,
        "the server's memory was read: {report}"
    );
    assert!(median < 1000.0, "first progress took {median} ms");
    assert!(
        during_max < 256 * 1024,
        "VmRSS during a call: {during_max} KiB"
    );
}
