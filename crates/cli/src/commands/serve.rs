//! `golem-forge serve`: one session of a worker, served to browser tabs by `golem-web`. The
//! first line on stdout is the address to open, token included; the rest goes to stderr.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Args;
use golem_protocol::{ActionEvent, SessionEndReason};
use golem_web::WebServer;

use super::common::WorkerOptions;
use crate::cli_error::CommandError;
use crate::frontend::display::print_trace;
use crate::frontend::screen::Screen;
use crate::session::{SessionChoice, open_host};

/// Serve a worker's session to a browser page
///
/// Prints the address to open, with a fresh token that every request needs. Several tabs (a
/// phone too, with --host) can drive the same session; an approval is decided by the first tab
/// that answers. Ctrl+C ends the session and the server.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,

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
    runtime.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> Result<ExitCode, CommandError> {
    let choice = SessionChoice::Worker(&args.worker);
    let host = open_host(choice, &args.options, args.max_iterations, true)?;
    let worker = host.worker_name().to_owned();
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
    if !args.host.is_loopback() {
        eprintln!(
            "warning: listening on {} — other machines on the network can reach the page; \
             anyone with the token can drive this worker",
            args.host
        );
        if args.host.is_unspecified() {
            eprintln!(
                "from another device, open http://<this machine's address>:{}/?token={}",
                server.port(),
                server.token()
            );
        }
    }
    if args.open {
        open_in_browser(&url);
    }
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
    Ok(ExitCode::SUCCESS)
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
