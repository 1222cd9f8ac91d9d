//! Links the `golem-forge` binary as a position-dependent executable on Linux.
//!
//! A position-independent one is relocated by the dynamic loader at every start: about 45,000
//! relocations, writing some 840 KiB of pointer tables that every process then holds as a
//! private copy. That was a fifth of a one-turn `run` (1.7 ms of `golem-forge --version`'s
//! 3.4 ms on the reference machine; `cargo bench -p golem-forge --bench startup`). Linked at
//! a fixed address the tables are final in the file and shared from the page cache. The code
//! is still compiled position-independent; what is given up is the randomized address of the
//! binary's own code and data (shared libraries, heap, stacks and `mmap` stay randomized), as
//! Go does for its binaries. docs/decisions/0010-start-up.md has the whole start-up budget.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=golem-forge=-no-pie");
    }
}
