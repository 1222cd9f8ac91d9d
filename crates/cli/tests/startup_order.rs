//! The start-up code order (docs/decisions/0026-start-up-code-order.md): the file the release
//! link orders functions by is there and whole, and nothing in the build makes its names stop
//! matching. Whether a release build is laid out by it is measured by the start-up benchmark
//! (a release build takes too long for the tests).

use std::collections::HashSet;

use golem_testkit::cli::repo_file;

/// The names of `crates/cli/startup.order`, comments and blank lines left out.
fn order_names() -> Vec<String> {
    repo_file("crates/cli/startup.order")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_order_file_names_the_launch_path_once_each() {
    let names = order_names();
    assert!(names.len() > 1000, "only {} names", names.len());
    let mut seen = HashSet::new();
    for name in &names {
        assert!(
            !name.contains(char::is_whitespace),
            "not one symbol: {name:?}"
        );
        assert!(seen.insert(name), "listed twice: {name}");
    }
    // The entry of every run and the one-turn `run`'s turn, as Rust mangles them (a path of
    // length-prefixed names, then a hash).
    for function in ["11golem_forge4main", "11golem_forge8commands3run8run_turn"] {
        assert!(
            names
                .iter()
                .any(|name| name.starts_with(&format!("_ZN{function}"))),
            "{function} is not in the order file"
        );
    }
    assert!(
        names.iter().any(|name| name.contains("13golem_runtime")),
        "no function of the runtime"
    );
}

#[test]
fn the_release_profile_keeps_the_names_the_order_file_uses() {
    // Stripping the symbol table changes the hashes in every mangled name (Cargo hashes the
    // profile's settings into them), and the generator could not name functions either.
    // Cargo's own default for release (no `strip`) keeps the symbol table.
    let strip = release_strip(&repo_file("Cargo.toml"));
    assert!(
        matches!(
            strip.as_deref(),
            None | Some("\"debuginfo\"" | "false" | "\"none\"")
        ),
        "[profile.release] strip = {strip:?} removes the symbols startup.order names"
    );
    let build = repo_file("crates/cli/build.rs");
    assert!(
        build.contains("--symbol-ordering-file=") && build.contains("startup.order"),
        "crates/cli/build.rs no longer links with startup.order"
    );
}

/// The value of `strip` in the manifest's `[profile.release]` as written (`"debuginfo"` with its
/// quotes), if the key is there.
fn release_strip(manifest: &str) -> Option<String> {
    let section = manifest
        .split("\n[")
        .find(|s| s.starts_with("profile.release]"))
        .expect("Cargo.toml has [profile.release]");
    section.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "strip").then(|| value.trim().to_owned())
    })
}
