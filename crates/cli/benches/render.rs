//! What the terminal chat spends drawing: a 10,000-line diff result (from the producer's hunks,
//! as `write_file` sends it, and computed from the two texts), whole and folded as the chat
//! shows it, with colour on and off; and streamed markdown, per token and per answer.
//! `cargo bench -p golem-forge --bench render`. The time from a token arriving on the socket to
//! it being on a real terminal is measured end to end by the `token_latency` bench.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark setup")]

use std::hint::black_box;
use std::sync::LazyLock;

use divan::Bencher;
use golem_forge::markdown::{MarkdownStream, MarkdownStyle};
use golem_forge::render::{RenderStyle, render_lines};
use golem_protocol::ToolResultValue;
use golem_protocol::result::DiffData;
use golem_tools::filesystem::{DiffLimits, diff_result};

fn main() {
    divan::main();
}

const LINES: usize = 10_000;
/// The chat's width in these runs, and how many rows of a result it shows before folding.
const WIDTH: usize = 120;
const CHAT_HEIGHT: usize = 24;

/// A 10,000-line source file, and the same file with every tenth line changed.
static TEXTS: LazyLock<(String, String)> = LazyLock::new(|| {
    let original: String = (0..LINES)
        .map(|i| format!("    let value_{i} = compute(input, {i}) + offset; // line {i}\n"))
        .collect();
    let modified: String = original
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i % 10 == 0 {
                format!("{} // changed\n", line.replace("offset", "delta"))
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    (original, modified)
});

/// The `diff` result `write_file` sends for this change (hunks from the filesystem toolset's
/// own diff), with its size limits lifted so that all 10,000 lines stay in it.
fn written(original: Option<&str>, modified: &str) -> ToolResultValue {
    let unbounded = DiffLimits {
        max_text_bytes: usize::MAX,
        max_hunk_lines: usize::MAX,
        ..DiffLimits::default()
    };
    diff_result(
        "/src/big.rs",
        original.map(str::as_bytes),
        modified.as_bytes(),
        Some(modified.len() as u64),
        &unbounded,
    )
}

/// The same change as a producer without hunks would send it: the renderer diffs the texts.
fn texts_only(original: &str, modified: &str) -> ToolResultValue {
    ToolResultValue::diff(DiffData {
        path: "/src/big.rs".into(),
        original: Some(original.to_owned()),
        modified: modified.to_owned(),
        is_new: false,
        bytes_written: Some(modified.len() as u64),
        hunks: None,
    })
}

/// Every tenth of 10,000 lines changed (2,000 changed lines and their context in 1,000 hunks).
static EDITED_WITH_HUNKS: LazyLock<ToolResultValue> =
    LazyLock::new(|| written(Some(&TEXTS.0), &TEXTS.1));
/// The same change without hunks: the renderer diffs the texts itself.
static EDITED_TEXTS_ONLY: LazyLock<ToolResultValue> =
    LazyLock::new(|| texts_only(&TEXTS.0, &TEXTS.1));
/// A new 10,000-line file: one hunk of 10,000 added lines.
static NEW_FILE: LazyLock<ToolResultValue> = LazyLock::new(|| written(None, &TEXTS.0));

fn style(color: bool, max_height: Option<usize>) -> RenderStyle {
    RenderStyle {
        color,
        width: WIDTH,
        max_height,
        inline_images: None,
    }
}

fn case(name: &str) -> &'static ToolResultValue {
    match name {
        "edited, hunks" => &EDITED_WITH_HUNKS,
        "edited, texts only" => &EDITED_TEXTS_ONLY,
        "new file" => &NEW_FILE,
        other => panic!("no case {other}"),
    }
}

const CASES: &[&str] = &["edited, hunks", "edited, texts only", "new file"];

/// The whole diff, every row drawn.
#[divan::bench(args = CASES, consts = [true, false], sample_count = 30)]
fn diff_10k_lines_whole<const COLOR: bool>(bencher: Bencher, name: &str) {
    let value = case(name);
    let style = style(COLOR, None);
    bencher.bench(|| {
        let lines = render_lines(black_box(value), &style);
        assert!(lines.len() > 1000);
        lines
    });
}

/// The diff as the chat shows it: folded to its first rows.
#[divan::bench(args = CASES, consts = [true, false], sample_count = 30)]
fn diff_10k_lines_folded<const COLOR: bool>(bencher: Bencher, name: &str) {
    let value = case(name);
    let style = style(COLOR, Some(CHAT_HEIGHT));
    bencher.bench(|| render_lines(black_box(value), &style));
}

/// An answer of about 2,000 tokens: paragraphs, a list and a highlighted code block.
static ANSWER: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut text = String::from("# Findings\n\n");
    for p in 0..20 {
        text.push_str(&format!(
            "Paragraph {p} explains **why** the change matters, with `inline code` and a [link](https://example.com/{p}) that wraps across the width of the terminal as the words keep arriving one by one.\n\n"
        ));
        text.push_str("- first point\n- second *point*\n\n");
    }
    text.push_str("```rust\n");
    for i in 0..40 {
        text.push_str(&format!("fn step_{i}(x: u32) -> u32 {{ x * {i} + 1 }}\n"));
    }
    text.push_str("```\n");
    // Tokens of a few characters, split at word boundaries as models send them.
    let mut tokens = Vec::new();
    let mut current = String::new();
    for ch in text.chars() {
        current.push(ch);
        if ch == ' ' || ch == '\n' {
            tokens.push(std::mem::take(&mut current));
        }
    }
    tokens.push(current);
    tokens
});

/// One token pushed in the middle of a paragraph line (what each streamed delta costs).
#[divan::bench(consts = [true, false])]
fn markdown_one_token<const COLOR: bool>(bencher: Bencher) {
    bencher
        .with_inputs(|| {
            let mut stream = MarkdownStream::new(MarkdownStyle {
                color: COLOR,
                width: WIDTH,
            });
            stream.push("Paragraph text that is already on the row, ");
            stream
        })
        .bench_local_refs(|stream| stream.push(black_box("arriving ")));
}

/// A whole answer of ~2,000 tokens, token by token.
#[divan::bench(consts = [true, false], sample_count = 30)]
fn markdown_whole_answer<const COLOR: bool>(bencher: Bencher) {
    let tokens = &*ANSWER;
    bencher.bench(|| {
        let mut stream = MarkdownStream::new(MarkdownStyle {
            color: COLOR,
            width: WIDTH,
        });
        let mut bytes = 0;
        for token in tokens {
            bytes += stream.push(token).len();
        }
        bytes + stream.finish().len()
    });
}

/// A hostile answer: 90 kB of `*a ` on one line (emphasis markers that never close), pushed
/// whole and in 3-byte tokens, coloured.
#[divan::bench(args = [false, true], sample_count = 5)]
fn markdown_hostile_emphasis(bencher: Bencher, streamed: bool) {
    let text = "*a ".repeat(30_000);
    bencher.bench(|| {
        let mut stream = MarkdownStream::new(MarkdownStyle {
            color: true,
            width: WIDTH,
        });
        let mut bytes = 0;
        if streamed {
            for token in text.as_bytes().chunks(3) {
                bytes += stream.push(std::str::from_utf8(token).unwrap_or("")).len();
            }
        } else {
            bytes += stream.push(&text).len();
        }
        bytes + stream.finish().len()
    });
}
