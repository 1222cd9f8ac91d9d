//! `golem-forge serve`: one session of a worker, served to browser tabs by `golem-web`; or, with
//! `--inbox`, the project's approval inbox, whose answered entries are continued here in the
//! background (one at a time, headless, in the `defer` mode) by the code `inbox --resume` uses.
//! The first line on stdout is the address to open, token included; the rest goes to stderr.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Args;
use golem_protocol::{ActionEvent, InboxEntry, ItemStatus, SessionEndReason, TurnStatus};
use golem_runtime::inbox::InboxStore;
use golem_web::{Continuation, Continuer, InboxServer, WebServer};
use tokio::sync::oneshot;

use super::common::{ApprovalArg, TraceLevel, WorkerOptions};
use super::inbox::waits_in;
use super::parked::{Continued, Resume, continue_entry};
use super::run::block_on;
use crate::cli_error::CommandError;
use crate::frontend::clean::clean_text;
use crate::frontend::display::print_trace;
use crate::frontend::screen::Screen;
use crate::session::{SessionChoice, open_host};

/// Serve a worker's session to a browser page
///
/// Prints the address to open, with a fresh token that every request needs. Several tabs (a
/// phone too, with --host) can drive the same session; an approval is decided by the first tab
/// that answers. Ctrl+C ends the session and the server.
///
/// With --inbox (and no worker) the page is the project's approval inbox instead: the calls
/// parked by `--approval defer`, each approved or denied there; its session then continues in
/// the background (a batch item through its batch).
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A .worker file, a directory with main.worker, or a worker name (none with --inbox)
    #[arg(required_unless_present = "inbox", conflicts_with = "inbox")]
    pub worker: Option<String>,

    /// Serve the project's approval inbox instead of a session
    #[arg(long)]
    pub inbox: bool,

    /// The port to listen on (0: any free port)
    #[arg(long, default_value_t = 4777)]
    pub port: u16,

    /// The address to listen on; anything but a loopback address lets other machines reach
    /// the page (they still need the token)
    #[arg(long, value_name = "ADDR", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,

    /// Open the page in the default browser
    #[arg(long)]
    pub open: bool,

    /// Most model requests per turn (default 20)
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<u32>,

    #[command(flatten)]
    pub options: WorkerOptions,
}

/// Runs `golem-forge serve`.
pub fn cmd_serve(args: ServeArgs) -> Result<ExitCode, CommandError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::usage(format!("cannot start the async runtime: {e}")))?;
    match args.worker.clone() {
        Some(worker) => runtime.block_on(serve(args, &worker)),
        None => runtime.block_on(serve_inbox(args)),
    }
}

async fn serve(args: ServeArgs, worker: &str) -> Result<ExitCode, CommandError> {
    let args_worker = worker.to_owned();
    let choice = SessionChoice::Worker(worker);
    let host = open_host(choice, &args.options, args.max_iterations, true)?;
    let worker = host.worker_name().to_owned();
    let session = host.session_id();
    // What the tabs see, also traced on stderr for whoever started the server.
    let (events, ..) = host.attach(false).into_parts();
    let screen = Arc::new(Mutex::new(Screen::stderr()));
    let trace = tokio::spawn(print_trace(events, screen, args.options.trace));
    let addr = SocketAddr::new(args.host, args.port);
    let server = WebServer::bind(host, addr).await.map_err(|e| {
        CommandError::usage(e.to_string())
            .with_hint("Choose another port with --port N, or any free one with --port 0")
    })?;
    let url = server.url();
    println!("{url}");
    eprintln!("serving {worker} at {url}  (Ctrl+C to stop)");
    announce(
        &args,
        &url,
        server.port(),
        server.token(),
        "drive this worker",
    );
    // The first Ctrl+C (or SIGTERM) ends the session once its turn winds down; a second Ctrl+C
    // ends it at once.
    let actions = server.actions();
    let shutdown = async move {
        stop_requested().await;
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                actions.send(ActionEvent::EndSession {
                    reason: Some(SessionEndReason::Interrupted),
                });
            }
        });
    };
    let served = server.run(shutdown).await;
    let _ = trace.await;
    served.map_err(|e| CommandError::usage(e.to_string()))?;
    let root = crate::chat::session_root(&args_worker);
    eprintln!("{}", crate::chat::saved_session(&session, root.as_deref()));
    Ok(ExitCode::SUCCESS)
}

/// Warns when the page is reachable from other machines, and opens it with `--open`.
fn announce(args: &ServeArgs, url: &str, port: u16, token: &str, power: &str) {
    if !args.host.is_loopback() {
        eprintln!(
            "warning: listening on {} — other machines on the network can reach the page; \
             anyone with the token can {power}",
            args.host
        );
        if args.host.is_unspecified() {
            eprintln!(
                "from another device, open http://<this machine's address>:{port}/?token={token}"
            );
        }
    }
    if args.open {
        open_in_browser(url);
    }
}

/// `serve --inbox`: the project's inbox page until Ctrl+C or SIGTERM.
async fn serve_inbox(args: ServeArgs) -> Result<ExitCode, CommandError> {
    let options = &args.options;
    if options.model.is_some()
        || options.approval.is_some()
        || options.record.is_some()
        || options.budget_tokens.is_some()
        || options.budget_cost.is_some()
        || options.budget_time.is_some()
        || args.max_iterations.is_some()
    {
        return Err(CommandError::usage(
            "serve --inbox continues each session as it was started (its model, its budget), \
             in the defer approval mode; only --trace applies",
        ));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
    let root = golem_runtime::config::program_root(&cwd);
    let continuer = background_continuer(root.clone(), options.trace);
    let addr = SocketAddr::new(args.host, args.port);
    let server = InboxServer::bind(&root, addr, continuer)
        .await
        .map_err(|e| {
            CommandError::usage(e.to_string())
                .with_hint("Choose another port with --port N, or any free one with --port 0")
        })?;
    let url = server.url();
    println!("{url}");
    eprintln!(
        "serving the approval inbox of {} at {url}  (Ctrl+C to stop)",
        root.display()
    );
    announce(
        &args,
        &url,
        server.port(),
        server.token(),
        "answer its approvals",
    );
    server
        .run(stop_requested())
        .await
        .map_err(|e| CommandError::usage(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// An entry answered on the page, and where to say how continuing it went.
type Job = (InboxEntry, oneshot::Sender<Result<(), String>>);

/// Continues answered entries on a thread of their own, one at a time (two answers of one
/// session must not run it twice at once), headless and in the `defer` mode, so a further call
/// that needs consent parks again.
fn background_continuer(root: PathBuf, trace: TraceLevel) -> Continuer {
    let (jobs, queue) = std::sync::mpsc::channel::<Job>();
    std::thread::spawn(move || {
        let resume = Resume {
            approval: ApprovalArg::Defer,
            trace,
            answers: false,
            ctrl_c: false,
        };
        for (entry, reply) in queue {
            let _ = reply.send(continue_in_background(&root, &entry, &resume));
        }
    });
    Arc::new(move |entry: InboxEntry| -> Continuation {
        let (reply, outcome) = oneshot::channel();
        let queued = jobs.send((entry, reply));
        Box::pin(async move {
            queued.map_err(|_| "the server is stopping".to_owned())?;
            outcome
                .await
                .unwrap_or_else(|_| Err("the server is stopping".to_owned()))
        })
    })
}

/// Continues `entry`'s session now, saying on stderr how it went; `Err` when it could not.
fn continue_in_background(root: &Path, entry: &InboxEntry, resume: &Resume) -> Result<(), String> {
    // A call settled meanwhile (its session went on by another answer) needs nothing.
    if InboxStore::new(root).get(entry.id).is_err() {
        return Ok(());
    }
    eprintln!(
        "continuing {} for approval {} ({})",
        clean_text(&waits_in(entry)),
        entry.id,
        clean_text(&entry.request.tool_name)
    );
    let outcome = block_on(continue_entry(root, entry, resume))
        .and_then(|continued| continued)
        .map_err(|e| e.message)?;
    let how = match outcome {
        Continued::Turn { end: None, .. } => "ended before its turn did".to_owned(),
        Continued::Turn { end: Some(end), .. } => format!("turn {}", turn_status_name(end.status)),
        Continued::Item(result) => format!("item {}", item_status_name(result.status)),
    };
    eprintln!("{}: {how}", clean_text(&waits_in(entry)));
    Ok(())
}

fn turn_status_name(status: TurnStatus) -> &'static str {
    match status {
        TurnStatus::Completed => "completed",
        TurnStatus::Failed => "failed",
        TurnStatus::Interrupted => "interrupted",
        TurnStatus::BudgetExceeded => "exceeded its budget",
        TurnStatus::WaitingApproval => "parked again, waiting for an approval",
    }
}

fn item_status_name(status: ItemStatus) -> &'static str {
    match status {
        ItemStatus::Completed => "completed",
        ItemStatus::Failed => "failed",
        ItemStatus::Interrupted => "interrupted",
        ItemStatus::BudgetExceeded => "exceeded its budget",
        ItemStatus::WaitingApproval => "parked again, waiting for an approval",
    }
}

/// Returns on the first Ctrl+C or SIGTERM.
async fn stop_requested() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Opens `url` with the desktop's opener; a failure is a warning (the address is printed).
fn open_in_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        eprintln!("warning: could not open a browser ({opener}: {e}); open the address above");
    }
}
