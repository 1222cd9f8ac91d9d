//! A no-op Python custom tool called through the real orchestrator and the real process jail,
//! once the session has started (the module described, the jail checked): the median and the
//! spread of 50 calls, printed. The target of issue #15 is a median under 5 ms.
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
use golem_tools::custom::{CustomOptions, custom_tools};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALLS: usize = 50;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(std::ffi::OsStr::new(HELPER_ARG)) {
        let code = helper_main(args.collect());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    let module = dir.path().join("tools.py");
    std::fs::write(
        &module,
        "def noop() -> str:\n    \"\"\"Does nothing.\"\"\"\n    return ''\n",
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
    let options = CustomOptions {
        path: module,
        shown: "./tools.py".to_owned(),
        tools: None,
        approval: ApprovalConfig {
            default: Some(ApprovalDecisionType::PreApproved),
            tools: Default::default(),
        },
        timeout: Duration::from_secs(30),
    };
    let tools = custom_tools(call_jail, jail(), options).unwrap();
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool).unwrap();
    }
    let orchestrator = ToolCallOrchestrator::new(
        Arc::new(registry),
        ApprovalController::new(ApprovalMode::Interactive),
        RuntimeUI::new(UiEventBus::new()),
    );
    let mut times = rt.block_on(async {
        let mut times = Vec::with_capacity(CALLS);
        for i in 0..=CALLS {
            let started = Instant::now();
            let outcome = orchestrator
                .call(
                    ToolCall::from_model(format!("c{i}"), "noop", json!({})),
                    &CancellationToken::new(),
                )
                .await;
            let took = started.elapsed();
            assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
            // The first call may find no helper waiting yet; it is part of starting up.
            if i > 0 {
                times.push(took);
            }
            // The next helper is built off the call's path, between calls, as in a session.
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        times
    });
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "custom tool call (no-op Python, one jailed process per call), {CALLS} calls: median \
         {:.1} ms, min {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        ms(times[CALLS / 2]),
        ms(times[0]),
        ms(times[CALLS * 9 / 10]),
        ms(times[CALLS - 1]),
    );
    ExitCode::SUCCESS
}
