//! How the `golem-forge` binary is linked on Linux, for a fast start with little memory.
//!
//! - Position-dependent (`-no-pie`). A position-independent executable is relocated by the
//!   dynamic loader at every start: about 45,000 relocations, writing some 840 KiB of pointer
//!   tables that every process then holds as a private copy. That was a fifth of a one-turn
//!   `run` (1.7 ms of `golem-forge --version`'s 3.4 ms on the reference machine). Linked at a
//!   fixed address the tables are final in the file and shared from the page cache. The code
//!   is still compiled position-independent; what is given up is the randomized address of the
//!   binary's own code and data (shared libraries, heap, stacks and `mmap` stay randomized), as
//!   Go does for its binaries.
//! - Release builds on x86-64 place the functions a short run executes side by side at the
//!   start of the code (`startup.order`, written by `scripts/startup-order`, given to the
//!   linker as its symbol ordering file). The kernel maps a binary's code in 64 KiB windows
//!   around each page touched; scattered over 25 MB, the 4 MB of code a run executes made it
//!   map 14 MB. Names the file lists that a build no longer has are skipped, so a stale file
//!   only costs start-up time. It needs LLD, Rust's default linker on this target; with
//!   another linker chosen in `RUSTFLAGS` the file is left out.
//!
//! docs/decisions/0010-start-up.md and 0026-start-up-code-order.md have the whole start-up
//! budget; `cargo bench -p golem-forge --bench startup` measures it.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=startup.order");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    println!("cargo:rustc-link-arg-bin=golem-forge=-no-pie");

    let lld_target =
        var("CARGO_CFG_TARGET_ARCH") == "x86_64" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let other_linker = ["fuse-ld", "linker-features", "linker-flavor"]
        .iter()
        .any(|flag| flags.contains(flag));
    if lld_target && !other_linker && var("PROFILE") == "release" {
        let order = format!("{}/startup.order", var("CARGO_MANIFEST_DIR"));
        println!("cargo:rustc-link-arg-bin=golem-forge=-Wl,--symbol-ordering-file={order}");
        println!("cargo:rustc-link-arg-bin=golem-forge=-Wl,--no-warn-symbol-ordering");
    }
}
