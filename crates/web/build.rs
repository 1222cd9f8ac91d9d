//! Rebuilds the crate when a file of the page changes: `include_dir!` embeds `assets/`, but on
//! stable Rust it cannot tell Cargo which files it read, so an edited script would otherwise be
//! served stale until something else in the crate changed.

fn main() {
    println!("cargo:rerun-if-changed=assets");
}
