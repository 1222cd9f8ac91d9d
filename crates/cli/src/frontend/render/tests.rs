//! Snapshot tests of the result renderers: every kind and every fallback path, each snapshot
//! holding the output with colour off and on (escape codes written `\e`), plus adversarial
//! data (control sequences, wide and long lines, empty and misshapen data).

use golem_protocol::result::{
    ColumnAlign, ColumnDef, ColumnType, DiffData, DiffHunk, FileContentData, FileEntry,
    FileEntryType, FileListData, ImageData, TableData,
};
use golem_protocol::{DisplayHints, PreferredView, ToolError, ToolErrorCode, ToolResultValue};
use serde_json::{Value, json};

use super::*;

mod fallback;
mod git;

const WIDTH: usize = 60;

/// Both renderings of `value`: colour off, then colour on; ESC is shown as `\e` (an ESC from
/// the data itself would show as `␛`).
fn both(value: &ToolResultValue, style: RenderStyle) -> String {
    let off = render_result(
        value,
        &RenderStyle {
            color: false,
            ..style
        },
    )
    .replace('\x1b', "\\e");
    let on = render_result(
        value,
        &RenderStyle {
            color: true,
            ..style
        },
    )
    .replace('\x1b', "\\e");
    format!("── colour off ──\n{off}── colour on ──\n{on}")
}

fn check(name: &str, value: &ToolResultValue) {
    check_with(name, value, RenderStyle::plain(WIDTH));
}

fn check_with(name: &str, value: &ToolResultValue, style: RenderStyle) {
    snap(name, both(value, style));
}

/// Asserts the snapshot `name` in `render/snapshots/` (shared by the test submodules).
fn snap(name: &str, content: String) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/frontend/render/snapshots"
    ));
    settings.bind(|| insta::assert_snapshot!(name, content));
}

fn hints(f: impl FnOnce(&mut DisplayHints)) -> DisplayHints {
    let mut hints = DisplayHints::default();
    f(&mut hints);
    hints
}

fn view(view: PreferredView) -> DisplayHints {
    hints(|h| h.preferred_view = Some(view))
}

fn max_height(n: u32) -> DisplayHints {
    hints(|h| h.max_height = Some(n))
}

// ── text and markdown ────────────────────────────────────────────────────────────────────

#[test]
fn text() {
    check(
        "text",
        &ToolResultValue::text("hello\n\tindented\nthird line\n"),
    );
}

#[test]
fn text_empty() {
    check("text_empty", &ToolResultValue::text(""));
}

#[test]
fn text_wraps_wide_lines_including_wide_characters() {
    let line = format!("{}|{}", "x".repeat(70), "日本語".repeat(12));
    check("text_wide", &ToolResultValue::text(line));
}

#[test]
fn text_folds_past_max_height() {
    let body: Vec<String> = (1..=40).map(|i| format!("line {i}")).collect();
    let value = ToolResultValue::text(body.join("\n")).with_display(max_height(7));
    check("text_folded", &value);
}

#[test]
fn text_style_max_height_applies_when_the_result_has_none() {
    let body: Vec<String> = (1..=10).map(|i| format!("line {i}")).collect();
    let style = RenderStyle {
        max_height: Some(4),
        ..RenderStyle::plain(WIDTH)
    };
    let out = render_result(&ToolResultValue::text(body.join("\n")), &style);
    assert_eq!(out, "line 1\nline 2\n… 7 more lines\nline 10\n");
    // The result's own limit wins.
    let value = ToolResultValue::text(body.join("\n")).with_display(max_height(20));
    assert_eq!(render_lines(&value, &style).len(), 10);
}

#[test]
fn one_huge_line_still_folds_to_max_height() {
    let huge = "y".repeat(10_000);
    let style = RenderStyle {
        max_height: Some(5),
        ..RenderStyle::plain(WIDTH)
    };
    let text = ToolResultValue::text(huge.clone());
    assert_eq!(render_lines(&text, &style).len(), 5);
    // Header line plus five rows.
    assert_eq!(render_lines(&file("/min.js", &huge), &style).len(), 6);
    let change = diff(
        Some("a\n"),
        &huge,
        Some(vec![hunk((1, 1), (1, 1), &["-a", &format!("+{huge}")])]),
    );
    assert_eq!(
        render_lines(&ToolResultValue::diff(change), &style).len(),
        6
    );
}

#[test]
fn text_neutralises_terminal_control_sequences() {
    let nasty = "ok\x1b[2J\x1b]0;title\x07\r\nover\rwrite\x08\u{9b}31m\u{202e}evil\x7f\n";
    let value = ToolResultValue::text(nasty);
    check("text_control_sequences", &value);
    for color in [false, true] {
        let style = RenderStyle {
            color,
            ..RenderStyle::plain(WIDTH)
        };
        assert_only_our_escapes(&render_result(&value, &style));
    }
}

/// Every ESC in `out` starts one of our SGR sequences (`ESC [ digits;… m`); no other C0/C1
/// control but `\n` appears.
fn assert_only_our_escapes(out: &str) {
    let mut rest = out;
    while let Some(i) = rest.find('\x1b') {
        let after = &rest[i + 1..];
        let end = after
            .find('m')
            .unwrap_or_else(|| panic!("unterminated escape in {out:?}"));
        let params = &after[..end];
        assert!(params.starts_with('['), "non-SGR escape in {out:?}");
        assert!(
            params[1..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == ';' || c == ':'),
            "odd SGR {params:?}"
        );
        rest = &after[end + 1..];
    }
    let stripped = strip_sgr(out);
    assert!(
        !stripped
            .chars()
            .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c)),
        "control character left in {stripped:?}"
    );
}

fn strip_sgr(out: &str) -> String {
    let mut text = String::new();
    let mut rest = out;
    while let Some(i) = rest.find('\x1b') {
        text.push_str(&rest[..i]);
        rest = rest[i..].split_once('m').map_or("", |(_, r)| r);
    }
    text.push_str(rest);
    text
}

#[test]
fn markdown() {
    let md = "# Title\n\nSome **bold** and `code`.\n\n## List\n- one\n* two\n  - nested\n> quoted\n\n---\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n";
    check("markdown", &ToolResultValue::markdown(md));
}

// ── diff ─────────────────────────────────────────────────────────────────────────────────

fn hunk(old: (u32, u32), new: (u32, u32), lines: &[&str]) -> DiffHunk {
    DiffHunk {
        old_start: old.0,
        old_lines: old.1,
        new_start: new.0,
        new_lines: new.1,
        lines: lines.iter().map(|l| (*l).to_owned()).collect(),
    }
}

fn diff(original: Option<&str>, modified: &str, hunks: Option<Vec<DiffHunk>>) -> DiffData {
    DiffData {
        path: "/work/src/lib.rs".to_owned(),
        original: original.map(str::to_owned),
        modified: modified.to_owned(),
        is_new: original.is_none(),
        bytes_written: None,
        hunks,
    }
}

#[test]
fn diff_from_hunks() {
    let hunks = vec![
        hunk(
            (1, 3),
            (1, 4),
            &[
                " use std::io;",
                "-fn old() {}",
                "+fn new() {}",
                "+fn more() {}",
                " // end",
            ],
        ),
        hunk((98, 2), (99, 2), &[" a", "-b", "+B"]),
    ];
    check(
        "diff_hunks",
        &ToolResultValue::diff(diff(Some(""), "", Some(hunks))),
    );
}

#[test]
fn diff_computed_from_texts() {
    let old = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";
    let new = "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n";
    check(
        "diff_texts",
        &ToolResultValue::diff(diff(Some(old), new, None)),
    );
}

#[test]
fn diff_new_file() {
    check(
        "diff_new_file",
        &ToolResultValue::diff(diff(None, "a\nb\n", None)),
    );
}

#[test]
fn diff_without_changes() {
    check(
        "diff_no_changes",
        &ToolResultValue::diff(diff(Some("same\n"), "same\n", None)),
    );
}

#[test]
fn diff_folded_wrapped_and_truncated() {
    let mut lines = vec![format!("+{}", "long ".repeat(20))];
    lines.extend((0..30).map(|i| format!("+added {i}")));
    lines.push("-gone\x1b[31m".to_owned());
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut value = ToolResultValue::diff(diff(
        Some("x"),
        "y",
        Some(vec![hunk((9, 1), (9, 31), &refs)]),
    ))
    .with_display(max_height(8));
    if let Value::Object(map) = &mut value.data {
        map.insert("truncated".to_owned(), json!(true));
    }
    check("diff_folded", &value);
}

// ── file_content ─────────────────────────────────────────────────────────────────────────

fn file(path: &str, content: &str) -> ToolResultValue {
    ToolResultValue::file_content(FileContentData {
        path: path.to_owned(),
        content: content.to_owned(),
        size: content.len() as u64,
        encoding: None,
    })
}

const RUST: &str = "//! Demo.\nfn main() {\n\tlet x = \"a\\tb\";\n    println!(\"{x}\");\n}\n";

#[test]
fn file_content_highlighted_by_extension() {
    check("file_content_rust", &file("/src/main.rs", RUST));
}

#[test]
fn file_content_language_hint_beats_extension() {
    let value = file("/notes.txt", "def f(x):\n    return x * 2  # double\n")
        .with_display(hints(|h| h.language = Some("python".to_owned())));
    check("file_content_language", &value);
}

#[test]
fn file_content_folded_head_and_tail() {
    let body: Vec<String> = (1..=120).map(|i| format!("let v{i} = {i};")).collect();
    let value = file("/big.rs", &body.join("\n")).with_display(max_height(7));
    check("file_content_folded", &value);
}

#[test]
fn file_content_binary_empty_and_hostile() {
    let mut binary = file("/logo.png", "iVBORw0KGgo=");
    binary.data["encoding"] = json!("base64");
    binary.data["size"] = json!(9000);
    check("file_content_binary", &binary);
    check("file_content_empty", &file("/empty.txt", ""));
    let hostile = file(
        "/evil.sh",
        "echo hi\x1b]52;c;cGF3bmVk\x07\nrm -rf / \x1b[8m hidden\n",
    );
    check("file_content_control_sequences", &hostile);
    assert_only_our_escapes(&render_result(
        &hostile,
        &RenderStyle {
            color: true,
            ..RenderStyle::plain(WIDTH)
        },
    ));
}

// ── file_list ────────────────────────────────────────────────────────────────────────────

fn entry(
    name: &str,
    entry_type: FileEntryType,
    size: Option<u64>,
    modified: Option<&str>,
) -> FileEntry {
    FileEntry {
        name: name.to_owned(),
        entry_type,
        size,
        modified: modified.map(str::to_owned),
    }
}

fn listing(entries: Vec<FileEntry>, truncated: bool) -> ToolResultValue {
    ToolResultValue::file_list(FileListData {
        path: "/work".to_owned(),
        entries,
        truncated: truncated.then_some(true),
    })
}

#[test]
fn file_list_table() {
    let value = listing(
        vec![
            entry(
                "src",
                FileEntryType::Directory,
                None,
                Some("2024-05-01T12:30:00Z"),
            ),
            entry(
                "Cargo.toml",
                FileEntryType::File,
                Some(1234),
                Some("2024-05-02T08:00:00Z"),
            ),
            entry(
                "big.bin",
                FileEntryType::File,
                Some(5 * 1024 * 1024 * 1024),
                None,
            ),
            entry("link", FileEntryType::Symlink, None, None),
        ],
        false,
    );
    check("file_list_table", &value);
}

#[test]
fn file_list_tree() {
    let value = listing(
        vec![
            entry("Cargo.toml", FileEntryType::File, Some(321), None),
            entry("src", FileEntryType::Directory, None, None),
            entry("src/main.rs", FileEntryType::File, Some(2048), None),
            entry("src/render", FileEntryType::Directory, None, None),
            entry("src/render/diff.rs", FileEntryType::File, Some(9000), None),
            entry("src/render/mod.rs", FileEntryType::File, Some(4000), None),
            entry("tests/runner.rs", FileEntryType::File, Some(10), None),
        ],
        true,
    );
    check("file_list_tree", &value);
}

#[test]
fn file_list_empty_and_folded() {
    check("file_list_empty", &listing(Vec::new(), false));
    let many = (0..50)
        .map(|i| entry(&format!("f{i:02}.txt"), FileEntryType::File, Some(i), None))
        .collect();
    check(
        "file_list_folded",
        &listing(many, false).with_display(max_height(6)),
    );
}

// ── table ────────────────────────────────────────────────────────────────────────────────

fn column(
    key: &str,
    label: Option<&str>,
    column_type: Option<ColumnType>,
    align: Option<ColumnAlign>,
) -> ColumnDef {
    ColumnDef {
        key: key.to_owned(),
        label: label.map(str::to_owned),
        column_type,
        align,
    }
}

fn sample_table() -> ToolResultValue {
    let rows = [
        json!({"name": "alpha", "n": 1, "ok": true, "mid": "x"}),
        json!({"name": "beta", "n": 12345, "ok": false, "mid": "wide cell"}),
        json!({"name": "日本", "n": 3.5, "mid": null, "extra": "ignored"}),
    ];
    ToolResultValue::table(TableData {
        columns: vec![
            column("name", Some("Name"), None, None),
            column("n", Some("Count"), Some(ColumnType::Number), None),
            column("mid", Some("Centre"), None, Some(ColumnAlign::Center)),
            column(
                "ok",
                None,
                Some(ColumnType::Boolean),
                Some(ColumnAlign::Right),
            ),
        ],
        rows: rows.iter().filter_map(|r| r.as_object().cloned()).collect(),
    })
}

#[test]
fn table_aligned() {
    check("table", &sample_table());
}

#[test]
fn table_squeezed_to_a_narrow_width() {
    let mut value = sample_table();
    value.data["rows"][0]["name"] =
        json!("a very long name that cannot possibly fit in the narrow width");
    check_with("table_narrow", &value, RenderStyle::plain(30));
}

#[test]
fn table_folded_and_empty() {
    let rows = (0..30)
        .map(|i| json!({"i": i}).as_object().cloned().unwrap_or_default())
        .collect();
    let value = ToolResultValue::table(TableData {
        columns: vec![column("i", None, Some(ColumnType::Number), None)],
        rows,
    })
    .with_display(max_height(5));
    check("table_folded", &value);
    let empty = ToolResultValue::table(TableData {
        columns: vec![column("a", None, None, None)],
        rows: Vec::new(),
    });
    check("table_empty", &empty);
}

// ── image ────────────────────────────────────────────────────────────────────────────────

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn image() -> ToolResultValue {
    ToolResultValue::image(
        ImageData {
            base64: Some(PNG.to_owned()),
            alt: Some("a red dot".to_owned()),
            path: Some("/shots/dot.png".to_owned()),
            width: Some(1),
            height: Some(1),
            ..ImageData::default()
        },
        "image/png",
    )
}

#[test]
fn image_summary_without_inline_support() {
    check("image", &image());
}

#[test]
fn image_inline_kitty_and_iterm2() {
    for (name, protocol) in [
        ("image_kitty", ImageProtocol::Kitty),
        ("image_iterm2", ImageProtocol::Iterm2),
    ] {
        let style = RenderStyle {
            inline_images: Some(protocol),
            ..RenderStyle::plain(WIDTH)
        };
        check_with(name, &image(), style);
    }
}

#[test]
fn image_with_hostile_base64_is_not_sent_to_the_terminal() {
    let mut value = image();
    value.data["base64"] = json!("iVBORw0KGgo\x1b]0;pwned\x07");
    let style = RenderStyle {
        inline_images: Some(ImageProtocol::Kitty),
        ..RenderStyle::plain(WIDTH)
    };
    check_with("image_bad_base64", &value, style);
    assert_only_our_escapes(&render_result(&value, &style));
}

#[test]
fn detect_image_protocol_is_reexported() {
    assert_eq!(detect_image_protocol(|_| None), None);
}

// ── structured / json ────────────────────────────────────────────────────────────────────

fn nested() -> Value {
    json!({
        "name": "golem",
        "version": 3,
        "ratio": 0.5,
        "ok": true,
        "none": null,
        "empty": {},
        "tags": ["a", "b"],
        "people": [{"name": "ann", "age": 31}, {"name": "bob", "langs": ["rust", "go"]}],
        "deep": {"l2": {"l3": {"l4": {"l5": 1}, "list": [1, 2, 3]}}},
        "text": "line\nbreak \u{1b}[31m",
    })
}

#[test]
fn structured_tree() {
    check("structured", &ToolResultValue::structured(nested()));
}

#[test]
fn json_kind_scalar_and_raw() {
    check("json_scalar", &ToolResultValue::json(json!(42)));
    check(
        "structured_raw",
        &ToolResultValue::structured(json!({"a": [1, {"b": null}]}))
            .with_display(view(PreferredView::Raw)),
    );
}

#[test]
fn structured_long_arrays_end_in_a_count() {
    let items: Vec<Value> = (0..105).map(|i| json!(i)).collect();
    let value = ToolResultValue::structured(json!({ "items": items }));
    let out = render_result(&value, &RenderStyle::plain(WIDTH));
    assert!(out.ends_with("  - 99\n  … 5 more items\n"), "{out}");
}

// ── code_result and tool_error ───────────────────────────────────────────────────────────

fn code_result(data: Value) -> ToolResultValue {
    ToolResultValue::new("code_result", data)
}

#[test]
fn code_result_success() {
    let value = code_result(json!({
        "command": "cargo test", "stdout": "running 3 tests\nok\n", "stderr": "",
        "exitCode": 0, "durationMs": 41
    }));
    check("code_result_ok", &value);
}

#[test]
fn code_result_failure_with_stderr_and_weakened_jail() {
    let value = code_result(json!({
        "command": "python3 x.py", "stdout": "partial\n", "stderr": "Traceback\nValueError: bad\n",
        "exitCode": 1, "durationMs": 1234, "weakened": ["landlock", "seccomp"]
    }));
    check("code_result_failed", &value);
}

#[test]
fn code_result_timed_out_and_killed() {
    let timed_out = code_result(json!({
        "command": "sleep 100", "stdout": "", "stderr": "", "exitCode": null,
        "signal": 9, "durationMs": 30000, "timedOut": true
    }));
    check("code_result_timed_out", &timed_out);
    let killed =
        code_result(json!({"command": "yes", "exitCode": null, "signal": 15, "durationMs": 5}));
    check("code_result_signal", &killed);
}

#[test]
fn code_result_with_the_changes_it_made() {
    let value = code_result(json!({
        "command": "bash script.sh", "stdout": "", "stderr": "", "exitCode": 0,
        "durationMs": 12,
        "changes": {"kind": "diff", "summary": "2 changes, +1 \u{2212}0 lines", "data": {
            "path": "/out", "modified": "", "isNew": false, "files": [
                {"path": "/out/new.txt", "modified": "new\n", "isNew": true,
                 "change": "create /out/new.txt (file, 0644, 4 bytes)"},
                {"path": "/out/old.txt", "modified": "", "isNew": false, "isDeleted": true,
                 "change": "delete /out/old.txt"}
            ]}}
    }));
    check("code_result_changes", &value);
}

#[test]
fn tool_error() {
    let error = ToolError::new(
        ToolErrorCode::InvalidArguments,
        "2 problems:\n/path: required\n/mode: not one of [a, b]",
    )
    .with_details(json!({"count": 2}));
    check("tool_error", &error.to_result_value());
    let simple = ToolError::new(ToolErrorCode::FileNotFound, "/work/nope.txt").to_result_value();
    check("tool_error_simple", &simple);
}

// ── hints: hidden and collapsed ──────────────────────────────────────────────────────────

#[test]
fn hidden_renders_nothing() {
    let value = ToolResultValue::text("secret").with_display(view(PreferredView::Hidden));
    assert_eq!(render_result(&value, &RenderStyle::plain(WIDTH)), "");
    let custom =
        ToolResultValue::new("x.internal", json!({})).with_display(view(PreferredView::Hidden));
    assert!(render_lines(&custom, &RenderStyle::plain(WIDTH)).is_empty());
}

#[test]
fn collapsed_shows_the_summary_only() {
    let collapsed = hints(|h| h.collapsed = Some(true));
    let mut out = String::new();
    for value in [
        sample_table().with_display(collapsed.clone()),
        ToolResultValue::text("first line\nsecond").with_display(collapsed.clone()),
        code_result(json!({"command": "ls", "exitCode": 2})).with_display(collapsed.clone()),
        ToolResultValue::new("git.status", json!({"clean": true})).with_display(collapsed.clone()),
    ] {
        out.push_str(&both(&value, RenderStyle::plain(WIDTH)));
    }
    snap("collapsed", out);
}

#[test]
fn summary_lines_of_every_kind() {
    let values = [
        ToolResultValue::text("  \nfirst\nsecond"),
        ToolResultValue::new(
            "diff",
            json!({"path": "/a.rs", "original": "a\n", "modified": "b\nc\n", "isNew": false}),
        ),
        ToolResultValue::new(
            "file_content",
            json!({"path": "/a.rs", "content": "", "size": 0}),
        ),
        ToolResultValue::new(
            "file_list",
            json!({"path": "/", "entries": [{"name": "a", "type": "file"}]}),
        ),
        ToolResultValue::new("table", json!({"columns": [], "rows": [{}, {}]})),
        ToolResultValue::new(
            "image",
            json!({"width": 640, "height": 480, "path": "/i.png"}),
        )
        .with_mime_type("image/png"),
        code_result(json!({"command": "make", "exitCode": 0})),
        ToolError::new(ToolErrorCode::Denied, "no\nmore").to_result_value(),
        ToolResultValue::new("git.status", json!(null)),
        ToolResultValue::text("x").with_summary("given summary\nsecond line"),
        ToolResultValue::text("y")
            .with_summary("a summary far too long for the narrow width we ask for"),
        ToolResultValue::text("z").with_summary("esc \x1b[31m red"),
    ];
    let lines: Vec<String> = values.iter().map(|v| summary_line(v, 40)).collect();
    snap("summary_lines", lines.join("\n"));
}
