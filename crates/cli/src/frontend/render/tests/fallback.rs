//! Snapshot tests of the fallback chain for unknown kinds (docs/tools.md, Rendering results)
//! (`preferredView`, then `mimeType`, then the data's shape, then JSON), of well-known kinds whose
//! data does not match their shape, and a sweep over odd data, widths and heights that must never
//! panic or overflow the width.

use golem_protocol::{PreferredView, ToolResultValue, WELL_KNOWN_KINDS};
use serde_json::{Value, json};

use super::super::{MIN_WIDTH, RenderStyle, render};
use super::{WIDTH, both, check, snap, view};

fn custom(data: Value) -> ToolResultValue {
    ToolResultValue::new("acme.report", data).with_summary("acme report")
}

#[test]
fn preferred_view_text_markdown_and_code() {
    check(
        "fallback_view_text",
        &custom(json!({"content": "a\n  b"})).with_display(view(PreferredView::Text)),
    );
    check(
        "fallback_view_markdown",
        &custom(json!("# Hi\n- **x**")).with_display(view(PreferredView::Markdown)),
    );
    let mut code = view(PreferredView::Code);
    code.language = Some("rust".to_owned());
    check(
        "fallback_view_code",
        &custom(json!({"content": "fn x() -> u8 { 1 }"})).with_display(code),
    );
}

#[test]
fn preferred_view_diff_table_tree_image_raw() {
    let diff = json!({"path": "/a.txt", "original": "a\n", "modified": "b\n", "isNew": false});
    check(
        "fallback_view_diff",
        &custom(diff).with_display(view(PreferredView::Diff)),
    );
    let table = json!({"columns": [{"key": "k"}], "rows": [{"k": "v"}]});
    check(
        "fallback_view_table",
        &custom(table).with_display(view(PreferredView::Table)),
    );
    let rows = json!([{"name": "a", "size": 1}, {"name": "b", "extra": true}]);
    check(
        "fallback_view_table_rows",
        &custom(rows).with_display(view(PreferredView::Table)),
    );
    check(
        "fallback_view_tree",
        &custom(json!({"a": {"b": [1, 2]}})).with_display(view(PreferredView::Tree)),
    );
    let image = json!({"path": "/x.gif", "width": 10, "height": 20});
    check(
        "fallback_view_image",
        &custom(image).with_display(view(PreferredView::Image)),
    );
    check(
        "fallback_view_raw",
        &custom(json!({"a": [1, 2]})).with_display(view(PreferredView::Raw)),
    );
}

#[test]
fn a_view_that_does_not_fit_the_data_falls_through() {
    // A table view over an object: no table, no MIME type, no tabular shape → JSON.
    let value = custom(json!({"not": "rows"})).with_display(view(PreferredView::Table));
    check("fallback_view_mismatch", &value);
    // ... and to the MIME type when there is one.
    let value = custom(json!("plain words"))
        .with_display(view(PreferredView::Diff))
        .with_mime_type("text/plain");
    check("fallback_view_mismatch_mime", &value);
}

#[test]
fn mime_types() {
    check(
        "fallback_mime_text",
        &custom(json!({"text": "from text/plain"})).with_mime_type("text/plain"),
    );
    check(
        "fallback_mime_markdown",
        &custom(json!("## Heading\ntext")).with_mime_type("text/markdown"),
    );
    check(
        "fallback_mime_json",
        &custom(json!({"k": [true, null]})).with_mime_type("application/json"),
    );
    check(
        "fallback_mime_image",
        &custom(json!({"url": "https://x.test/a.png"})).with_mime_type("image/png"),
    );
    check(
        "fallback_mime_unknown",
        &custom(json!({"k": 1})).with_mime_type("application/octet-stream"),
    );
}

#[test]
fn data_shapes_and_plain_json() {
    check("fallback_shape_string", &custom(json!("just a string")));
    check(
        "fallback_shape_rows",
        &custom(json!([{"a": 1, "b": "x"}, {"a": 22}])),
    );
    check(
        "fallback_json",
        &custom(json!({"nested": {"list": [1, 2]}, "s": "x"})),
    );
    check(
        "fallback_json_no_summary",
        &ToolResultValue::new("acme.other", json!([1, "two", null])),
    );
}

#[test]
fn misshapen_well_known_kinds_fall_back_to_json() {
    let cases = [
        ("diff", json!("oops")),
        ("table", json!({"columns": 3})),
        ("file_list", json!({"path": "/", "entries": "x"})),
        ("file_content", json!({})),
        ("code_result", json!({"stdout": "no command"})),
        ("tool_error", json!(5)),
        ("image", json!("not an object")),
        ("text", json!({"content": 7})),
    ];
    let mut out = String::new();
    for (kind, data) in cases {
        out.push_str(&format!("=== {kind}\n"));
        out.push_str(&both(
            &ToolResultValue::new(kind, data),
            RenderStyle::plain(WIDTH),
        ));
    }
    snap("misshapen", out);
}

/// Odd data under every kind, at odd widths and heights: no panic, no row wider than the
/// width the views lay out for (inline images aside).
#[test]
fn never_panics_and_respects_the_width() {
    let long = "x".repeat(500);
    let datas = [
        json!(null),
        json!(0),
        json!(""),
        json!("\n\n\n"),
        json!([]),
        json!({}),
        json!([[[[[[[[1]]]]]]]]),
        json!({"content": long, "path": "/p.rs", "size": 1, "columns": [{"key": "a"}], "rows": [{"a": long}]}),
        json!({"path": long, "entries": [{"name": long, "type": "directory"}, {"name": format!("{long}/a/b"), "type": "file", "size": 1}]}),
        json!({"path": "/x", "modified": format!("{long}\n\t日本語\n"), "original": "", "isNew": false}),
        json!({"path": "/x", "modified": "", "isNew": false, "hunks": [{"oldStart": 4_000_000_000u32, "oldLines": 0, "newStart": 4_000_000_000u32, "newLines": 1, "lines": ["", "+", long]}]}),
        json!({"command": long, "stdout": long, "stderr": "\u{1b}", "exitCode": -1, "weakened": [long]}),
        json!({"code": long, "message": long, "details": {"k": long}}),
    ];
    let mut kinds: Vec<&str> = WELL_KNOWN_KINDS.to_vec();
    kinds.extend(["code_result", "tool_error", "acme.x"]);
    let views = [
        None,
        Some(PreferredView::Table),
        Some(PreferredView::Code),
        Some(PreferredView::Markdown),
    ];
    for kind in kinds {
        for data in &datas {
            for preferred in views {
                for width in [0, 7, 33, 200] {
                    for max_height in [None, Some(0), Some(3)] {
                        let mut value =
                            ToolResultValue::new(kind, data.clone()).with_mime_type("image/png");
                        if let Some(v) = preferred {
                            value = value.with_display(view(v));
                        }
                        let style = RenderStyle {
                            color: width == 33,
                            width,
                            max_height,
                            inline_images: Some(super::ImageProtocol::Iterm2),
                        };
                        let limit = width.max(MIN_WIDTH);
                        for line in render(&value, &style) {
                            if line.graphic.is_none() {
                                assert!(
                                    line.width() <= limit,
                                    "{kind} {preferred:?} width {width}: {:?} is {} wide",
                                    line.text(),
                                    line.width()
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
