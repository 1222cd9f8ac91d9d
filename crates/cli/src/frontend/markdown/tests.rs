//! Tests of the streaming markdown renderer: snapshots of the final screen with colour on (escape
//! codes shown as `␛`) and off, and the streaming properties: text shows as it arrives, any split
//! of the input draws the same screen, rows never pass the width, controls are neutralised.

use unicode_width::UnicodeWidthStr;

use super::*;

/// The output of `doc` fed in one delta, then finished.
fn render(doc: &str, color: bool, width: usize) -> String {
    let mut md = MarkdownStream::new(MarkdownStyle { color, width });
    let mut out = md.push(doc);
    out.push_str(&md.finish());
    out
}

/// The output of `doc` fed in deltas of the given sizes (in characters, cycling), then finished.
fn render_split(doc: &str, color: bool, width: usize, sizes: &[usize]) -> String {
    let mut md = MarkdownStream::new(MarkdownStyle { color, width });
    let chars: Vec<char> = doc.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    for size in sizes.iter().cycle() {
        if at >= chars.len() {
            break;
        }
        let end = (at + size.max(&1)).min(chars.len());
        let delta: String = chars[at..end].iter().collect();
        out.push_str(&md.push(&delta));
        at = end;
    }
    out.push_str(&md.finish());
    out
}

/// What a terminal shows after `output`, one string per row with the SGR codes kept: `\n` starts
/// a row, `\r\x1b[2K` empties the current one. Any other control fails the test.
fn screen(output: &str) -> String {
    let mut rows = vec![String::new()];
    let mut rest = output;
    while let Some(c) = rest.chars().next() {
        let row = rows.last_mut().unwrap();
        match c {
            '\n' => rows.push(String::new()),
            '\r' => {
                assert!(rest.starts_with(REDRAW), "bare \\r in {output:?}");
                row.clear();
                rest = &rest[REDRAW.len()..];
                continue;
            }
            '\x1b' => {
                let end = rest.find('m').unwrap();
                let params = &rest[2..end];
                assert!(
                    rest.starts_with("\x1b[")
                        && params.chars().all(|c| c.is_ascii_digit() || c == ';'),
                    "unexpected escape in {output:?}"
                );
                row.push_str(&rest[..=end]);
                rest = &rest[end + 1..];
                continue;
            }
            c => {
                assert!(!c.is_control() || c == '\t', "control {c:?} in {output:?}");
                row.push(c);
            }
        }
        rest = &rest[c.len_utf8()..];
    }
    rows.join("\n")
}

/// `text` without SGR codes.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('\x1b') {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('m').unwrap();
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out
}

/// The final screen of `doc` (fed whole) with colour, escapes made visible, for snapshots.
fn colored(doc: &str, width: usize) -> String {
    screen(&render(doc, true, width)).replace('\x1b', "␛")
}

/// Checks that every row of `screen` fits in `width` columns.
fn assert_fits(screen: &str, width: usize) {
    for row in plain(screen).lines() {
        assert!(row.width() <= width, "row wider than {width}: {row:?}");
    }
}

const HEADINGS: &str = "# Title\n## Section *two*\n###### Six\n####### not a heading\n#hashtag\n";

#[test]
fn headings() {
    insta::assert_snapshot!("headings_color", colored(HEADINGS, 80));
    insta::assert_snapshot!("headings_plain", render(HEADINGS, false, 80));
}

const LISTS: &str = "\
- one
- two with **bold**
  - nested *em*
    * deeper
  continued text under two
1. first
2) second
10. tenth
+ plus
-5 degrees is not an item
";

#[test]
fn nested_lists() {
    insta::assert_snapshot!("lists_color", colored(LISTS, 80));
    assert_eq!(render(LISTS, false, 80), LISTS);
}

const QUOTES: &str = "\
> A quote with `code`
>> nested
> > also nested
> - a list in a quote
>no space
";

#[test]
fn quotes() {
    insta::assert_snapshot!("quotes_color", colored(QUOTES, 80));
    assert_eq!(render(QUOTES, false, 80), QUOTES);
}

const CODE: &str = "\
Some code:
```rust
fn main() {
    let s = \"**not bold**\"; // comment
}
```
After.
~~~
plain ~~~ block
~~~
";

#[test]
fn code_fence_is_highlighted() {
    let out = colored(CODE, 80);
    insta::assert_snapshot!("code_color", out);
    assert!(out.contains("␛[38;2;"), "no highlighting: {out}");
    assert!(out.contains("**not bold**"));
    assert_eq!(render(CODE, false, 80), CODE);
}

#[test]
fn code_is_not_wrapped_and_fence_state_spans_lines() {
    let doc = "```\nlet a_very_long_name = another_very_long_function_name(argument_one, argument_two);\n```\n# after\n";
    let out = render(doc, false, 40);
    assert_eq!(out, doc);
    let colour = screen(&render_split(doc, true, 40, &[3]));
    // The long line overflowed while streaming: it is left as written, the rest is styled.
    assert!(colour.contains(
        "let a_very_long_name = another_very_long_function_name(argument_one, argument_two);"
    ));
    assert!(colour.ends_with("␛[1;4;35mafter␛[0m\n".replace('␛', "\x1b").as_str()));
}

#[test]
fn a_code_line_past_the_width_is_left_plain() {
    let mut md = MarkdownStream::new(MarkdownStyle {
        color: true,
        width: 20,
    });
    let _ = md.push("```rust\nlet x = 1;");
    assert_eq!(
        md.push("\n"),
        "\r\x1b[2K\x1b[38;2;180;142;173mlet\x1b[0m x = \x1b[38;2;208;135;112m1\x1b[0m;\n"
    );
    assert_eq!(md.push("let long_name = 1234"), "let long_name = 1234");
    assert_eq!(md.push("5;"), "5;");
    // The terminal has wrapped the row: no redraw, just the end of the line.
    assert_eq!(md.push("\n"), "\n");
    assert_eq!(md.push("```\n"), "\x1b[90m```\x1b[0m\n");
}

#[test]
fn the_stream_can_move_between_threads() {
    fn send<T: Send>(_: &T) {}
    let md = MarkdownStream::new(MarkdownStyle {
        color: true,
        width: 80,
    });
    send(&md);
    assert!(format!("{md:?}").starts_with("MarkdownStream"));
}

const INLINE: &str = "\
Text with **bold**, *em*, _em too_, ~~gone~~, `code`, ***both***, and \\*escaped\\*.
snake_case_names stay, 2 * 3 * 4 stays, **unclosed stays
";

#[test]
fn inline_styles() {
    insta::assert_snapshot!("inline_color", colored(INLINE, 100));
    assert_eq!(render(INLINE, false, 100), INLINE);
}

const LINKS: &str = "\
See [the docs](https://example.com/docs_(v2)) and [https://a.b](https://a.b).
Not links: [a] (b), [c](d e), ![img](pic.png).
";

#[test]
fn links() {
    insta::assert_snapshot!("links_color", colored(LINKS, 100));
    assert_eq!(render(LINKS, false, 100), LINKS);
}

const WRAPPED: &str = "\
# A heading that is long enough to wrap around
A paragraph with **bold words that run across the row break** and `some code` at width forty, ending here.
- A list item whose text is much longer than the row so it continues indented.
   1. A nested numbered item that also needs a second and a third row.
> A quote that is long enough to be wrapped keeps its bar on every row.
Averyveryveryveryveryverylongwordthatcannotfitinonerow at all.
";

#[test]
fn wrapping_at_width_40() {
    let colour = screen(&render(WRAPPED, true, 40));
    assert_fits(&colour, 40);
    insta::assert_snapshot!("wrapped_color", colour.replace('\x1b', "␛"));
    let plain_out = render(WRAPPED, false, 40);
    assert_fits(&plain_out, 40);
    insta::assert_snapshot!("wrapped_plain", plain_out);
}

#[test]
fn wide_characters_wrap_by_columns() {
    let doc = "日本語のテキストは二列ずつ使うので、二十列の行には十文字しか入らない。 end\n";
    for color in [true, false] {
        let out = screen(&render_split(doc, color, 20, &[1, 2]));
        assert_fits(&out, 20);
        assert_eq!(plain(&out).replace('\n', ""), doc.replace('\n', ""));
    }
}

/// A document touching every feature, for the splitting tests.
fn sample() -> String {
    [
        HEADINGS,
        LISTS,
        QUOTES,
        CODE,
        INLINE,
        LINKS,
        WRAPPED,
        "---\n\n* * *\nlast line without newline",
    ]
    .concat()
}

#[test]
fn any_split_draws_the_same_screen() {
    let doc = sample();
    for width in [40, 80, usize::MAX] {
        let whole = screen(&render(&doc, true, width));
        for sizes in [&[1][..], &[2, 3], &[7, 1, 13], &[50]] {
            let split = screen(&render_split(&doc, true, width, sizes));
            assert_eq!(split, whole, "colour, width {width}, deltas {sizes:?}");
            // Without colour the bytes are the same, not just the screen.
            assert_eq!(
                render_split(&doc, false, width, sizes),
                render(&doc, false, width),
                "plain, width {width}, deltas {sizes:?}"
            );
        }
    }
}

#[test]
fn colour_off_writes_the_source_and_nothing_else() {
    let doc = sample();
    let out = render(&doc, false, usize::MAX);
    assert_eq!(out, format!("{doc}\n"));
    assert!(!render(&doc, false, 40).contains(['\x1b', '\r']));
}

#[test]
fn text_shows_as_it_arrives_and_is_restyled_at_the_newline() {
    let mut md = MarkdownStream::new(MarkdownStyle {
        color: true,
        width: 80,
    });
    assert_eq!(md.push("Hello **wor"), "Hello **wor");
    assert_eq!(md.push("ld** and"), "ld** and");
    assert_eq!(
        md.push(" more\n"),
        "\r\x1b[2KHello \x1b[1mworld\x1b[0m and more\n"
    );
    assert_eq!(md.push("# T"), "# T");
    assert_eq!(md.finish(), "\r\x1b[2K\x1b[1;4;35mT\x1b[0m\n");
    // Whole lines are styled directly, without a redraw.
    assert_eq!(md.push("*a*\n"), "\x1b[3ma\x1b[0m\n");
    assert_eq!(md.finish(), "");
}

#[test]
fn colour_off_holds_a_word_until_it_is_placed() {
    let mut md = MarkdownStream::new(MarkdownStyle {
        color: false,
        width: 20,
    });
    assert_eq!(md.push("Hello"), "Hello");
    assert_eq!(md.push(" wor"), "");
    assert_eq!(md.push("ld "), " world");
    // "long" does not fit: it starts the next row, where it is the first word.
    assert_eq!(md.push("and a long"), " and a\nlong");
    assert_eq!(md.push("er line"), "er");
    assert_eq!(md.finish(), " line\n");
    let mut unbounded = MarkdownStream::new(MarkdownStyle {
        color: false,
        width: usize::MAX,
    });
    assert_eq!(unbounded.push("Hello wor"), "Hello wor");
}

#[test]
fn rows_are_cut_before_they_pass_the_width() {
    let mut md = MarkdownStream::new(MarkdownStyle {
        color: true,
        width: 20,
    });
    assert_eq!(md.push("- one two three four"), "- one two three four");
    // The 21st column: the row is redrawn styled without the last word, which moves down.
    assert_eq!(
        md.push("s"),
        "\r\x1b[2K\x1b[33m•\x1b[0m one two three\n  fours"
    );
    assert_eq!(md.push(" \n"), "\r\x1b[2K  fours\n");
}

#[test]
fn a_space_at_the_row_end_leaves_no_empty_row() {
    let doc = format!("{} \nnext\n", "x".repeat(20));
    for color in [true, false] {
        assert_eq!(
            plain(&screen(&render_split(&doc, color, 20, &[1]))),
            format!("{}\nnext\n", "x".repeat(20))
        );
    }
}

#[test]
fn bold_across_a_row_break_is_styled_on_both_rows() {
    let out = colored("aaa **bold text that runs past the end** of the row\n", 24);
    insta::assert_snapshot!("bold_across_rows", out);
}

#[test]
fn control_characters_are_neutralised() {
    let doc = "evil \x1b]0;title\x07 \x1b[2J\x1b[31mred\u{9b}1m\u{202e}rev \x08\x7f\x00\n```\ncode \x1b[H\n```\n";
    for color in [true, false] {
        for sizes in [&[1][..], &[100]] {
            let out = render_split(doc, color, 80, sizes);
            let shown = plain(&screen(&out));
            assert_eq!(
                shown,
                "evil ␛]0;title␇ ␛[2J␛[31mred\\u{9b}1m\\u{202e}rev ␈␡␀\n```\ncode ␛[H\n```\n",
                "colour {color}"
            );
            if !color {
                assert!(!out.contains(['\x1b', '\r']));
            }
        }
    }
}

#[test]
fn line_ends_crlf_and_lone_cr() {
    let mut md = MarkdownStream::new(MarkdownStyle {
        color: false,
        width: 80,
    });
    let mut out = md.push("a\r\nb\r");
    out.push_str(&md.push("\nc\rd"));
    out.push_str(&md.finish());
    assert_eq!(out, "a\nb\nc\nd\n");
    assert_eq!(render("x\r\r\ny", false, 80), "x\n\ny\n");
}

#[test]
fn tabs_become_spaces_to_the_next_stop() {
    assert_eq!(
        render("a\tb\n```\n\tx\ty\n```\n", false, 80),
        "a   b\n```\n    x   y\n```\n"
    );
}

#[test]
fn preloading_is_harmless() {
    crate::frontend::syntax::preload();
    crate::frontend::syntax::preload();
    assert!(render("```rust\nfn x() {}\n```\n", true, 80).contains("\x1b[38;2;"));
}

#[test]
fn unterminated_code_fence_at_finish() {
    let mut md = MarkdownStream::new(MarkdownStyle {
        color: true,
        width: 80,
    });
    let mut out = md.push("```python\nprint('hi')\nx = 1");
    out.push_str(&md.finish());
    let shown = screen(&out);
    assert!(shown.ends_with("\x1b[0m\n"), "{shown:?}");
    assert_eq!(plain(&shown), "```python\nprint('hi')\nx = 1\n");
    insta::assert_snapshot!("unterminated_fence", shown.replace('\x1b', "␛"));
    // The next message is not inside the block.
    assert_eq!(md.push("**b**\n"), "\x1b[1mb\x1b[0m\n");
    assert_eq!(render("```\nx", false, 80), "```\nx\n");
}

#[test]
fn rules_and_blank_lines() {
    let out = colored("a\n\n---\n* * *\n___\n--\n", 30);
    insta::assert_snapshot!("rules", out);
}

#[test]
fn narrow_widths_and_deep_indents_do_not_break() {
    let doc = format!(
        "{}- deep item with words\n{}\n> > > > > > > > > > > > quoted deeply with words\n{}\n",
        " ".repeat(30),
        "x".repeat(100),
        "日".repeat(30)
    );
    for width in [0, 1, 20, 21] {
        for color in [true, false] {
            let whole = render(&doc, color, width);
            let split = render_split(&doc, color, width, &[1, 4]);
            assert_eq!(plain(&screen(&split)), plain(&screen(&whole)));
            let letters = |s: &str| -> String {
                s.chars()
                    .filter(|c| !c.is_whitespace() && !"│•>-".contains(*c))
                    .collect()
            };
            assert_eq!(letters(&plain(&screen(&whole))), letters(&doc));
        }
    }
}

/// Pseudo-random documents over markdown's special characters, fed in pseudo-random deltas:
/// nothing panics, every split shows the same text, prose rows fit.
#[test]
fn random_documents_and_splits() {
    let alphabet: Vec<char> = "ab  *_`~[]()#>-1. \n\n\t日é\x1b\r!\\".chars().collect();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n
    };
    for _ in 0..300 {
        let len = next(300);
        let doc: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
        let sizes: Vec<usize> = (0..5).map(|_| 1 + next(6)).collect();
        for color in [true, false] {
            let whole = render(&doc, color, 20);
            let split = render_split(&doc, color, 20, &sizes);
            if color {
                assert_eq!(plain(&screen(&split)), plain(&screen(&whole)), "{doc:?}");
            } else {
                assert_eq!(split, whole, "{doc:?}");
            }
        }
    }
}

/// Hostile answers render on a small stack: deep quotes, deep lists, a long run of emphasis
/// markers that never close (once cubic in the markers), nested links. (Their time is in the
/// `render` bench, `markdown_hostile_emphasis`, not asserted here.)
#[test]
fn hostile_nesting_renders_on_a_small_stack() {
    let n = 5_000;
    let docs = [
        ">".repeat(n) + " deep",
        "- ".repeat(n) + "deep",
        "*a ".repeat(n),
        "[".repeat(n) + "x" + &"](u)".repeat(n),
    ];
    for doc in docs {
        let shown = std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(move || render(&doc, true, 80))
            .unwrap()
            .join()
            .unwrap();
        assert!(shown.contains('a') || shown.contains("deep") || shown.contains('x'));
    }
}
