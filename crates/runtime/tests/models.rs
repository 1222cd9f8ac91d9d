//! `compatible_models`: the glob table and the compatibility check.

use std::path::Path;

use golem_runtime::worker::{glob_matches, parse_worker};

#[test]
fn glob_table() {
    for (pattern, text, expected) in [
        ("*:*sonnet*", "anthropic:claude-sonnet-4", true),
        (
            "*:*sonnet*",
            "openrouter:anthropic/claude-sonnet-4:beta",
            true,
        ),
        ("*:*sonnet*", "anthropic:claude-haiku-4-5", false),
        ("openai:gpt-4*", "openai:gpt-4o", true),
        ("openai:gpt-4*", "openai:gpt-4", true),
        ("openai:gpt-4*", "openai:gpt-3.5", false),
        ("openai:gpt-4*", "azure:openai:gpt-4o", false),
        ("anthropic:*", "anthropic:claude-haiku-4-5", true),
        ("anthropic:*", "anthropic:", true),
        ("anthropic:*", "anthropics:x", false),
        // `*` crosses `:` and `/`.
        ("*", "openrouter:openai/gpt-4o:free", true),
        ("*gpt-4o*", "openrouter:openai/gpt-4o:free", true),
        ("openrouter:*:free", "openrouter:openai/gpt-4o:free", true),
        // Dots and every other character are literal.
        ("a.c", "abc", false),
        ("a.c", "a.c", true),
        ("gpt-3.5*", "gpt-3x5-turbo", false),
        ("a?c", "abc", false),
        ("a?c", "a?c", true),
        ("[ab]", "a", false),
        // Anchored at both ends.
        ("gpt", "gpt-4", false),
        ("gpt", "xgpt", false),
        // Several stars and backtracking.
        ("**", "", true),
        ("*", "", true),
        ("", "", true),
        ("", "a", false),
        ("a*b*c", "aXbYc", true),
        ("a*b*c", "abcbc", true),
        ("a*b*c", "acb", false),
        ("*aab", "aaaab", true),
        ("*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
        ("é*", "éclair", true),
        ("*ü", "zü", true),
    ] {
        assert_eq!(glob_matches(pattern, text), expected, "{pattern} vs {text}");
    }
}

#[test]
fn compatibility_check() {
    let worker = parse_worker(
        "---\nname: greeter\ncompatible_models: [\"anthropic:*\", \"*:*sonnet*\"]\n---\n",
        Path::new("greeter.worker"),
    )
    .unwrap();
    worker
        .check_compatible("anthropic:claude-haiku-4-5")
        .unwrap();
    worker
        .check_compatible("openrouter:anthropic/claude-sonnet-4")
        .unwrap();
    let err = worker.check_compatible("openai:gpt-4o").unwrap_err();
    assert_eq!(
        err.to_string(),
        "model openai:gpt-4o is not compatible with worker greeter \
         (compatible_models: anthropic:*, *:*sonnet*)"
    );
    // The offline stand-ins run every worker.
    for stand_in in ["test:default", "replay:session.jsonl", "test"] {
        worker.check_compatible(stand_in).unwrap();
    }
    assert!(!worker.is_compatible("tester:x"));

    let open = parse_worker("---\nname: open\n---\n", Path::new("open.worker")).unwrap();
    assert!(open.is_compatible("anything:at-all"));
}
