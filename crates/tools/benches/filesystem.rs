//! Benchmarks of the filesystem tools, every call through the real orchestrator and sandbox:
//! `list_files` recursive over a generated tree of 100,000 files (first compared, in the same
//! run, with `find <dir> | wc -l`: the target is within 2× of `find`), and read/write
//! throughput for 1 MB and 100 MB files.
//!
//! Run with `cargo bench -p golem-tools --bench filesystem`. The tree and the files are made
//! once in a temporary directory (a few seconds) and removed at the end.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "benchmark setup: a failure is a bug in the benchmark"
)]

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use divan::Bencher;
use divan::counter::BytesCount;
use golem_core::approval::{ApprovalController, ApprovalDecisionType, ApprovalMode};
use golem_core::bus::UiEventBus;
use golem_core::orchestrator::{ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{ToolResultValue, ToolStatus};
use golem_sandbox::{Sandbox, ZoneApproval, ZoneConfig, ZoneMode};
use golem_tools::filesystem::{FilesystemLimits, ReadLimits, filesystem_tools_with};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

const TREE_FILES: usize = 100_000;
const MB: usize = 1 << 20;

/// The worker directory: zone `tree` (ro, 100,000 files) and zone `work` (rw, pre-approved).
struct World {
    dir: TempDir,
    rt: tokio::runtime::Runtime,
    /// Default limits (listings truncated at 10,000 entries, reads at 256 KiB).
    default: ToolCallOrchestrator,
    /// Limits raised so a listing or a read returns everything.
    unlimited: ToolCallOrchestrator,
}

static WORLD: LazyLock<World> = LazyLock::new(World::new);

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().expect("temp dir");
        let started = Instant::now();
        make_tree(&dir.path().join("tree"));
        eprintln!("generated {TREE_FILES} files in {:.1?}", started.elapsed());
        std::fs::create_dir(dir.path().join("work")).unwrap();
        for (name, size) in [("1mb.txt", MB), ("100mb.txt", 100 * MB)] {
            std::fs::write(dir.path().join("work").join(name), text_of(size, 'a')).unwrap();
        }
        let pre = ApprovalDecisionType::PreApproved;
        let zones = [
            ZoneConfig::new("tree", ZoneMode::Ro),
            ZoneConfig::new("work", ZoneMode::Rw).with_approval(ZoneApproval::uniform(pre)),
        ];
        let sandbox = Sandbox::open(dir.path(), &zones).expect("sandbox");
        let unlimited = FilesystemLimits {
            read: ReadLimits {
                max_bytes: 200 * MB,
                max_lines: usize::MAX,
            },
            max_list_entries: usize::MAX,
            ..FilesystemLimits::default()
        };
        World {
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            default: orchestrator(sandbox.clone(), FilesystemLimits::default()),
            unlimited: orchestrator(sandbox, unlimited),
            dir,
        }
    }

    fn call(
        &self,
        orchestrator: &ToolCallOrchestrator,
        tool: &str,
        args: Value,
    ) -> ToolResultValue {
        let outcome = self.rt.block_on(orchestrator.call(
            ToolCall::from_model("bench", tool, args),
            &CancellationToken::new(),
        ));
        assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
        outcome.value
    }
}

fn orchestrator(sandbox: Sandbox, limits: FilesystemLimits) -> ToolCallOrchestrator {
    let mut registry = ToolRegistry::new();
    for tool in filesystem_tools_with(sandbox, limits) {
        registry.register(tool).expect("register");
    }
    ToolCallOrchestrator::new(
        Arc::new(registry),
        ApprovalController::new(ApprovalMode::ApproveAll),
        RuntimeUI::new(UiEventBus::new()),
    )
}

/// 10 × 10 directories of 1,000 small files each.
fn make_tree(root: &Path) {
    for a in 0..10 {
        for b in 0..10 {
            let dir = root.join(format!("d{a}")).join(format!("e{b}"));
            std::fs::create_dir_all(&dir).unwrap();
            for c in 0..TREE_FILES / 100 {
                std::fs::write(dir.join(format!("file{c:04}.txt")), "x").unwrap();
            }
        }
    }
}

/// `size` bytes of text in 64-byte lines.
fn text_of(size: usize, fill: char) -> String {
    let line: String = std::iter::repeat_n(fill, 63).chain(['\n']).collect();
    line.repeat(size / 64)
}

/// How many times each case of the comparison runs.
const RUNS: usize = 7;

/// The median and the fastest of `runs` timings of `f`.
fn timings(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    (times[runs / 2], times[0])
}

/// Runs `sh -c script` and returns its trimmed stdout.
fn shell(script: &str) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .output()
        .expect("sh");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `list_files` recursive over the whole tree against `find <dir> | wc -l`, one line per case:
/// `find`, `find` that also stats every entry (as the listing must, for sizes and times), the
/// sandbox's walk alone, and the listing through the orchestrator without and with the default
/// entry limit.
fn compare_with_find() {
    let world = &*WORLD;
    let tree = world.dir.path().join("tree");
    let mut find_count = String::new();
    let find = timings(RUNS, || {
        find_count = shell(&format!("find '{}' | wc -l", tree.display()))
    });
    let find_stat = timings(RUNS, || {
        shell(&format!(
            "find '{}' -printf '%s %T@ %y %p\\n' | wc -l",
            tree.display()
        ));
    });
    let sandbox =
        Sandbox::open(world.dir.path(), &[ZoneConfig::new("tree", ZoneMode::Ro)]).expect("sandbox");
    let start = sandbox.resolve("/tree").expect("resolves");
    let mut walked = 0;
    let walk = timings(RUNS, || {
        walked = divan::black_box(sandbox.walk(&start, false, usize::MAX).expect("walks"))
            .0
            .len();
    });
    let mut listed = 0;
    let full = timings(RUNS, || {
        let value = world.call(
            &world.unlimited,
            "list_files",
            json!({"path": "/tree", "recursive": true}),
        );
        listed = value.data["entries"].as_array().map_or(0, Vec::len);
    });
    let mut capped_listed = 0;
    let capped = timings(RUNS, || {
        let value = world.call(
            &world.default,
            "list_files",
            json!({"path": "/tree", "recursive": true}),
        );
        capped_listed = value.data["entries"].as_array().map_or(0, Vec::len);
    });
    let line = |case: &str, (median, fastest): (Duration, Duration), what: String| {
        let ratio = median.as_secs_f64() / find.0.as_secs_f64();
        println!(
            "  {case:<44} median {median:>9.2?}  fastest {fastest:>9.2?}  {ratio:>5.2}x find  {what}"
        );
    };
    println!();
    println!("list_files recursive vs find, {TREE_FILES} files, {RUNS} runs per case:");
    line("find <dir> | wc -l", find, format!("({find_count} lines)"));
    line(
        "find <dir> -printf size,mtime,type | wc -l",
        find_stat,
        String::new(),
    );
    line("Sandbox::walk alone", walk, format!("({walked} entries)"));
    line(
        "list_files full (no entry limit)",
        full,
        format!("({listed} entries)"),
    );
    line(
        "list_files capped (default 10,000 entries)",
        capped,
        format!("({capped_listed} entries)"),
    );
    println!();
}

fn main() {
    compare_with_find();
    divan::main();
}

/// The whole tree through `list_files` (no entry limit).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn list_files_recursive_100k(bencher: Bencher) {
    let world = &*WORLD;
    bencher.bench_local(|| {
        world.call(
            &world.unlimited,
            "list_files",
            json!({"path": "/tree", "recursive": true}),
        )
    });
}

/// Reading a whole file through `read_file` (limits raised so nothing is truncated).
#[divan::bench(args = [1, 100], sample_count = 10, sample_size = 1)]
fn read_file_whole(bencher: Bencher, megabytes: usize) {
    let world = &*WORLD;
    let args = json!({"path": format!("/work/{megabytes}mb.txt")});
    bencher
        .counter(BytesCount::new(megabytes * MB))
        .bench_local(|| world.call(&world.unlimited, "read_file", args.clone()));
}

/// `read_file` with the default limits: the first 256 KiB window of a large file.
#[divan::bench(args = [1, 100], sample_count = 20)]
fn read_file_first_window(bencher: Bencher, megabytes: usize) {
    let world = &*WORLD;
    let args = json!({"path": format!("/work/{megabytes}mb.txt")});
    bencher.bench_local(|| world.call(&world.default, "read_file", args.clone()));
}

/// Writing a new file (atomic: temporary file, fsync, rename) and its diff result.
#[divan::bench(args = [1, 100], sample_count = 10, sample_size = 1)]
fn write_file_new(bencher: Bencher, megabytes: usize) {
    let world = &*WORLD;
    let path = world.dir.path().join("work/new.txt");
    let args = json!({"path": "/work/new.txt", "content": text_of(megabytes * MB, 'b')});
    bencher
        .counter(BytesCount::new(megabytes * MB))
        .with_inputs(|| {
            let _ = std::fs::remove_file(&path);
            args.clone()
        })
        .bench_local_values(|args| world.call(&world.default, "write_file", args));
}

/// Overwriting a file with one line changed in the middle: read the original, write, diff.
#[divan::bench(args = [1, 100], sample_count = 10, sample_size = 1)]
fn write_file_overwrite_one_line(bencher: Bencher, megabytes: usize) {
    let world = &*WORLD;
    let path = world.dir.path().join("work/over.txt");
    let original = text_of(megabytes * MB, 'c');
    let mut changed = original.clone();
    let middle = changed.len() / 2 / 64 * 64;
    changed.replace_range(middle..middle + 5, "CHANG");
    let args = json!({"path": "/work/over.txt", "content": changed});
    bencher
        .counter(BytesCount::new(megabytes * MB))
        .with_inputs(|| {
            std::fs::write(&path, &original).unwrap();
            args.clone()
        })
        .bench_local_values(|args| world.call(&world.default, "write_file", args));
}
