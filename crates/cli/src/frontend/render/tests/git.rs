//! Snapshot tests of the git results: the `git.status` tree (every group, a detached head, a
//! repository without commits, plain path lists, clean and folded), and a `diff` of
//! several files as `git_diff` makes it (a rename, a deletion, a binary file).

use golem_protocol::{DisplayHints, PreferredView, ToolResultValue};
use serde_json::{Value, json};

use super::super::RenderStyle;
use super::{WIDTH, check, check_with, hints};

fn status(data: Value, summary: &str) -> ToolResultValue {
    ToolResultValue::new("git.status", data)
        .with_summary(summary)
        .with_display(DisplayHints {
            preferred_view: Some(PreferredView::Tree),
            collapsed: Some(false),
            ..DisplayHints::default()
        })
}

#[test]
fn git_status_every_group() {
    check(
        "git_status_tree",
        &status(
            json!({
                "branch": "main",
                "commit": "abc1234",
                "upstream": "origin/main",
                "ahead": 2,
                "behind": 1,
                "staged": [
                    {"path": "/repo/src/lib.rs", "change": "modified"},
                    {"path": "/repo/new.rs", "change": "renamed", "from": "/repo/old.rs"},
                ],
                "modified": [{"path": "/repo/README.md", "change": "deleted"}],
                "untracked": ["/repo/notes/", "/repo/todo.txt"],
                "conflicts": [{"path": "/repo/Cargo.lock", "change": "both modified"}],
            }),
            "2 staged, 1 modified, 2 untracked, 1 conflicted",
        ),
    );
}

#[test]
fn git_status_clean_detached_and_new() {
    check(
        "git_status_clean",
        &status(
            json!({"branch": "main", "commit": "abc1234", "upstream": "origin/main",
                   "ahead": 0, "behind": 0, "staged": [], "modified": [], "untracked": [],
                   "conflicts": []}),
            "0 staged, 0 modified",
        ),
    );
    check(
        "git_status_detached",
        &status(
            json!({"branch": null, "commit": "abc1234", "ahead": 0, "behind": 0,
                   "staged": [], "modified": [{"path": "/repo/a", "change": "modified"}],
                   "untracked": [], "conflicts": []}),
            "0 staged, 1 modified",
        ),
    );
    check(
        "git_status_no_commits",
        &status(
            json!({"branch": "main", "commit": null, "ahead": 0, "behind": 0,
                   "staged": [{"path": "/repo/first.txt", "change": "added"}],
                   "modified": [], "untracked": [], "conflicts": []}),
            "1 staged, 0 modified",
        ),
    );
}

#[test]
fn git_status_from_seed_003s_plain_lists() {
    check(
        "git_status_seed",
        &status(
            json!({"branch": "dev", "ahead": 1, "behind": 0, "staged": ["a.ts"],
                   "modified": ["b.ts", "c.ts"], "untracked": []}),
            "1 staged, 2 modified",
        ),
    );
}

#[test]
fn git_status_collapsed_folded_and_misshapen() {
    let clean = status(
        json!({"branch": "main", "staged": []}),
        "0 staged, 0 modified",
    )
    .with_display(hints(|h| h.collapsed = Some(true)));
    check("git_status_collapsed", &clean);
    let many: Vec<Value> = (0..30)
        .map(|i| json!({"path": format!("/repo/f{i}.txt"), "change": "modified"}))
        .collect();
    check_with(
        "git_status_folded",
        &status(
            json!({"branch": "main", "modified": many}),
            "0 staged, 30 modified",
        ),
        RenderStyle {
            max_height: Some(8),
            ..RenderStyle::plain(WIDTH)
        },
    );
    check(
        "git_status_misshapen",
        &status(json!([1, 2]), "not a status"),
    );
}

#[test]
fn a_diff_of_several_files() {
    let hunk = |lines: &[&str]| {
        json!({"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 2,
               "lines": lines})
    };
    let files = json!([
        {"path": "/repo/src/a.rs", "modified": "", "isNew": false,
         "hunks": [hunk(&[" fn a() {}", "+fn b() {}"])]},
        {"path": "/repo/new.txt", "from": "/repo/old.txt", "modified": "", "isNew": false,
         "hunks": []},
        {"path": "/repo/gone.txt", "modified": "", "isNew": false, "isDeleted": true,
         "hunks": [{"oldStart": 1, "oldLines": 1, "newStart": 0, "newLines": 0,
                    "lines": ["-bye"]}]},
        {"path": "/repo/logo.png", "modified": "", "isNew": false, "binary": true,
         "hunks": []},
    ]);
    let value = ToolResultValue::new(
        "diff",
        json!({"path": "/repo", "modified": "", "isNew": false, "hunks": [], "files": files,
               "staged": false}),
    )
    .with_summary("4 files, +1 \u{2212}1 lines");
    check("diff_files", &value);
}
