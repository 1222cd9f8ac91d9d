//! Building a custom Python toolset, as a worker's launch does: the module read, its tools
//! described (a jailed `python3` with the adapter, the module and its sibling), and one tool
//! per exposed tool built; the long-lived process is not started (it starts on the first
//! call). Cold: no cache, `describe` runs every time (every launch before the describe
//! cache). Warm: the describe cache holds the module's entry, so no process is started.
//! Issue 25 asks for a warm start of 10 ms or less.
//!
//! Run with `cargo bench -p golem-tools --bench custom_start`. The bench binary is its own
//! jail helper (`<binary> __jail …`), so it has its own `main`, which hands over to divan.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "benchmark: a failure is a bug in the benchmark"
)]

use std::path::PathBuf;
use std::sync::LazyLock;

use divan::Bencher;
use golem_sandbox::jail::{HELPER_ARG, Jail, JailPolicy, helper_main};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use golem_tools::custom::{CustomModuleConfig, CustomOptions, custom_tools};
use tempfile::TempDir;

/// A module of three tools (type hints, a `_schema` dict, a tool object) importing its sibling.
const MODULE: &str = r#"
from typing import Annotated, Literal, Optional
import helpers

def fibonacci(n: Annotated[int, "Which Fibonacci number"]) -> dict:
    """Computes the nth Fibonacci number."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return {"n": n, "value": a}

def word_count(text: str, unit: Literal["words", "chars"] = "words", note: Optional[str] = None) -> str:
    """Counts the words of a text."""
    return helpers.count(text, unit)

report = {
    "name": "report",
    "description": "A report of a custom kind.",
    "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}},
    "execute": lambda args: {"kind": "acme.report", "data": {"title": args["title"]}},
}
"#;

const HELPERS: &str = r#"
def count(text, unit):
    return str(len(text.split()) if unit == "words" else len(text))
"#;

/// The worker's directory: the zone `work`, the module and its helper in `tools/`, the
/// describe cache in `.golem-forge/custom-tools/`.
struct World {
    dir: TempDir,
    sandbox: Sandbox,
}

static WORLD: LazyLock<World> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    std::fs::create_dir_all(dir.path().join("tools")).unwrap();
    std::fs::write(dir.path().join("tools/tools.py"), MODULE).unwrap();
    std::fs::write(dir.path().join("tools/helpers.py"), HELPERS).unwrap();
    let sandbox = Sandbox::open(dir.path(), &[ZoneConfig::new("work", ZoneMode::Rw)]).unwrap();
    World { dir, sandbox }
});

impl World {
    fn jail(&self) -> Jail {
        Jail::new(
            std::env::current_exe().unwrap(),
            self.sandbox.clone(),
            JailPolicy::default(),
        )
    }

    fn cache_dir(&self) -> PathBuf {
        self.dir.path().join(".golem-forge/custom-tools")
    }

    /// Builds the toolset, with the describe cache in `cache_dir` (`None`: no cache).
    fn build(&self, cache_dir: Option<PathBuf>) -> usize {
        let options = CustomOptions {
            config: CustomModuleConfig {
                timeout: 30,
                ..CustomModuleConfig::new("./tools/tools.py")
            },
            path: self.dir.path().join("tools/tools.py"),
            cache_dir,
            notice: None,
        };
        let tools = custom_tools(self.jail(), self.jail(), options).unwrap();
        assert_eq!(tools.len(), 3);
        tools.len()
    }
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(std::ffi::OsStr::new(HELPER_ARG)) {
        let code = helper_main(args.collect());
        std::process::exit(code);
    }
    divan::main();
}

/// No cache: `describe` runs in the jail at every build.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn cold(bencher: Bencher) {
    let world = &*WORLD;
    bencher.bench(|| world.build(None));
}

/// The cache holds the module's entry: no process is started.
#[divan::bench(sample_count = 200, sample_size = 1)]
fn warm(bencher: Bencher) {
    let world = &*WORLD;
    world.build(Some(world.cache_dir()));
    bencher.bench(|| world.build(Some(world.cache_dir())));
}
