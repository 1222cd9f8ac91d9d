//! Architecture rules that CI enforces: every Rust file opens with a `//!` header, crate
//! dependencies point only downwards (ARCHITECTURE.md, Invariants), test-support crates are
//! only ever dev-dependencies, and no file of the subcommands, the protocol, the core or the
//! runtime is on an import cycle.
//!
//! One module per concern: the crate graph (`architecture/layers.rs`), what library code may do
//! (`architecture/sources.rs`), the documentation (`architecture/docs.rs`), import cycles
//! (`architecture/imports.rs`), the jail's two sides (`architecture/jail.rs`) and test files
//! no test program declares (`architecture/test_files.rs`).

mod docs;
mod imports;
mod jail;
mod layers;
mod sources;
mod test_files;

use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("target") && !path.ends_with("snapshots") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_starts_with_a_module_header() {
    let mut files = Vec::new();
    rust_files(&workspace_root().join("crates"), &mut files);
    assert!(files.len() > 20, "found only {} files", files.len());
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` header: {missing:#?}"
    );
}
