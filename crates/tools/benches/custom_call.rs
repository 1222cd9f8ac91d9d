//! No-op custom tools, Python and JavaScript, called through the real orchestrator and the
//! real process jail once the session has started (the modules described, the jail checked,
//! and the first call of each, which starts the module's long-lived process, left out): the
//! median, p95 and spread of 100 calls each, printed. The target of issue #15 is a median
//! under 5 ms.
//!
//! Run with `cargo bench -p golem-tools --bench custom_call`. The bench binary is its own jail
//! helper (`<binary> __jail …`), so it has its own `main` (`harness = false`).

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "benchmark: a failure is a bug in the benchmark, and it prints its numbers"
)]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use golem_core::approval::{
    ApprovalConfig, ApprovalController, ApprovalDecisionType, ApprovalMode,
};
use golem_core::bus::UiEventBus;
use golem_core::orchestrator::{ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::ToolStatus;
use golem_sandbox::jail::{HELPER_ARG, Jail, JailPolicy, helper_main};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use golem_tools::custom::{CustomModuleConfig, CustomOptions, custom_tools};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALLS: usize = 100;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(std::ffi::OsStr::new(HELPER_ARG)) {
        let code = helper_main(args.collect());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    let python = dir.path().join("tools.py");
    std::fs::write(
        &python,
        "def noop() -> str:\n    \"\"\"Does nothing.\"\"\"\n    return ''\n",
    )
    .unwrap();
    let javascript = dir.path().join("tools.mjs");
    std::fs::write(
        &javascript,
        "export function noop_js() { return ''; }\nexport const noop_jsSchema = { type: 'object' };\n",
    )
    .unwrap();
    let sandbox = Sandbox::open(dir.path(), &[ZoneConfig::new("work", ZoneMode::Rw)]).unwrap();
    let jail = || {
        Jail::new(
            std::env::current_exe().unwrap(),
            sandbox.clone(),
            JailPolicy::default(),
        )
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let call_jail = jail();
    rt.block_on(async { call_jail.preflight().unwrap() });
    let mut registry = ToolRegistry::new();
    for (path, shown) in [(python, "./tools.py"), (javascript, "./tools.mjs")] {
        let options = CustomOptions {
            config: CustomModuleConfig {
                approval: ApprovalConfig {
                    default: Some(ApprovalDecisionType::PreApproved),
                    tools: Default::default(),
                },
                timeout: 30,
                ..CustomModuleConfig::new(shown)
            },
            path,
            cache_dir: None,
            notice: None,
        };
        for tool in custom_tools(call_jail.clone(), jail(), options).unwrap() {
            registry.register(tool).unwrap();
        }
    }
    let orchestrator = ToolCallOrchestrator::new(
        Arc::new(registry),
        ApprovalController::new(ApprovalMode::Interactive),
        RuntimeUI::new(UiEventBus::new()),
    );
    for (tool, what) in [("noop", "no-op Python"), ("noop_js", "no-op JavaScript")] {
        let (first, mut times) = rt.block_on(measure(&orchestrator, tool));
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "custom tool call ({what}, long-lived process), {CALLS} calls after the first \
             ({:.1} ms, starting the process): median {:.2} ms, p95 {:.2} ms, min {:.2} ms, \
             max {:.2} ms",
            ms(first),
            ms(times[CALLS / 2]),
            ms(times[CALLS * 95 / 100]),
            ms(times[0]),
            ms(times[CALLS - 1]),
        );
    }
    ExitCode::SUCCESS
}

/// The time of the first call of `tool`, and of the [`CALLS`] after it.
async fn measure(orchestrator: &ToolCallOrchestrator, tool: &str) -> (Duration, Vec<Duration>) {
    let mut first = Duration::ZERO;
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..=CALLS {
        let started = Instant::now();
        let outcome = orchestrator
            .call(
                ToolCall::from_model(format!("c{i}"), tool, json!({})),
                &CancellationToken::new(),
            )
            .await;
        let took = started.elapsed();
        assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
        if i == 0 {
            first = took;
        } else {
            times.push(took);
        }
    }
    (first, times)
}
