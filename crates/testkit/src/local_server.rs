//! A local test server's life, shared by the mock model server and the OTLP receiver: bound
//! to a free port on 127.0.0.1, served either as a task on the caller's Tokio runtime or on a
//! thread with a runtime of its own (for tests that are not async), and stopped when the
//! handle ([`Runner`]) is dropped.

use std::future::Future;

use tokio::net::TcpListener;

/// What keeps a server running, and stops it on drop.
pub(crate) enum Runner {
    /// A task on the caller's runtime.
    Task(tokio::task::JoinHandle<()>),
    /// A thread with its own runtime, stopped through the sender.
    Thread {
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        thread: Option<std::thread::JoinHandle<()>>,
    },
}

impl Drop for Runner {
    fn drop(&mut self) {
        match self {
            Runner::Task(task) => task.abort(),
            Runner::Thread { stop, thread } => {
                if let Some(stop) = stop.take() {
                    let _ = stop.send(());
                }
                if let Some(thread) = thread.take() {
                    let _ = thread.join();
                }
            }
        }
    }
}

/// Serves `serve(listener)` as a task on the current runtime; its base URL
/// (`http://127.0.0.1:PORT`) and the runner.
pub(crate) async fn on_this_runtime<Fut>(serve: impl FnOnce(TcpListener) -> Fut) -> (String, Runner)
where
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    (base_url, Runner::Task(tokio::spawn(serve(listener))))
}

/// Serves `serve(listener)` on a thread named `name` with its own current-thread runtime,
/// once it listens; dropping the runner ends the runtime (and the connections it holds). Must
/// not be called from within a Tokio runtime's worker (it blocks until the server listens).
pub(crate) fn on_own_thread<Fut>(
    name: &str,
    serve: impl FnOnce(TcpListener) -> Fut + Send + 'static,
) -> (String, Runner)
where
    Fut: Future<Output = ()>,
{
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let base_url = format!("http://{}", listener.local_addr().unwrap());
                ready_tx.send(base_url).unwrap();
                tokio::select! {
                    () = serve(listener) => {}
                    _ = stop_rx => {}
                }
            });
            // Dropping the runtime here drops what is still being served.
        })
        .unwrap();
    let base_url = ready_rx
        .recv()
        .unwrap_or_else(|_| panic!("the {name} thread failed to start"));
    (
        base_url,
        Runner::Thread {
            stop: Some(stop_tx),
            thread: Some(thread),
        },
    )
}
