//! The accept loop of both HTTP front ends (`serve`'s page and `mcp --http`), in place of
//! `axum::serve`, which lets a connection wait for its request head forever: 1,100 idle
//! connections then use up the process's descriptors and nobody else is answered. [`serve`]
//! runs an axum `Router` on hyper's HTTP/1 connections (WebSocket upgrades included) under two
//! rules:
//!
//! - **Header-read timeout.** A request head must arrive whole within
//!   [`Limits::header_read`] ([`HEADER_READ_TIMEOUT`], 5 s) of the server starting to wait for
//!   it — on a new connection and between the requests of a kept-alive one. Otherwise the
//!   connection is closed. (A response being streamed, such as an SSE stream, is not waiting.)
//! - **A cap on waiting connections.** At most [`Limits::waiting`] ([`MAX_WAITING`], 256)
//!   connections may be waiting for their *first* request head, the one that carries the token
//!   (or not). Accepting one more closes the one that has waited longest. A connection stops
//!   waiting once its first head has been read, whatever the guard then answers. Accepting
//!   never blocks on the cap, so every new connection gets its turn: the token holder's client
//!   sends its head at once and is answered however many idle connections others hold open;
//!   only 256 further connections arriving between its accept and its head could push it out.
//!
//! When accepting fails anyway (out of descriptors, `EMFILE`), the longest-waiting connection is
//! closed too and accepting resumes after [`ACCEPT_RETRY`]. Shutdown is graceful: no more
//! accepts, each connection finishes the request in progress, and [`serve`] returns once every
//! connection has closed (an upgraded WebSocket lives on its own, as under `axum::serve`).

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use futures::future::{AbortHandle, Abortable};
use hyper::service::{Service as _, service_fn};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

/// How long a request head may take to arrive, by default.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How many connections may wait for their first request head at once, by default.
pub const MAX_WAITING: usize = 256;

/// How long accepting pauses after an error that is not the client's (out of descriptors).
pub const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// The two rules of the module header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a request head may take to arrive.
    pub header_read: Duration,
    /// How many connections may wait for their first request head (at least one).
    pub waiting: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read: HEADER_READ_TIMEOUT,
            waiting: MAX_WAITING,
        }
    }
}

/// Serves `router` on `listener`'s connections under `limits` until `shutdown` resolves; then
/// stops accepting, lets each connection finish its request in progress and returns once all
/// have closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read);
    let waiting = Arc::new(Waiting::new(limits.waiting));
    // `stop` tells the connections to finish; each holds a `done` sender, so `done_rx` ends
    // when the last one has closed.
    let (stop_tx, stop_rx) = watch::channel(false);
    let (done_tx, mut done_rx) = mpsc::channel::<()>(1);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        match accepted {
            Ok((stream, _)) => {
                let connection = Connection {
                    stop: stop_rx.clone(),
                    done: done_tx.clone(),
                };
                connection.spawn(&http, &waiting, router.clone(), stream);
            }
            Err(err) if is_the_clients(&err) => {}
            Err(err) => {
                tracing::warn!("accepting a connection failed: {err}");
                waiting.close_oldest();
                tokio::time::sleep(ACCEPT_RETRY).await;
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(done_tx);
    let _ = done_rx.recv().await;
}

/// An accept error about that one connection (it went away before it was accepted).
fn is_the_clients(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// What a connection's task holds of the server's shutdown.
struct Connection {
    /// Becomes `true` when the server stops.
    stop: watch::Receiver<bool>,
    /// Dropped when the connection's task ends.
    done: mpsc::Sender<()>,
}

impl Connection {
    /// Serves `stream` on a task of its own, registered as waiting until its first head is
    /// read.
    fn spawn(
        self,
        http: &hyper::server::conn::http1::Builder,
        waiting: &Arc<Waiting>,
        router: Router,
        stream: TcpStream,
    ) {
        let (abort, registration) = AbortHandle::new_pair();
        let ticket = waiting.admit(abort);
        let service = TowerToHyperService::new(router);
        let service = service_fn(move |request| {
            ticket.head_read();
            service.call(request)
        });
        let connection = http
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        let Connection { mut stop, done } = self;
        let task = async move {
            let _done = done;
            tokio::pin!(connection);
            let stopping = async {
                let _ = stop.wait_for(|stop| *stop).await;
            };
            let served = tokio::select! {
                served = connection.as_mut() => served,
                () = stopping => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = served {
                tracing::debug!("a connection ended: {err}");
            }
        };
        // Aborting (the cap) drops the task, and with it the connection's socket.
        tokio::spawn(Abortable::new(task, registration));
    }
}

/// The connections waiting for their first request head, oldest first; each can be closed
/// through its task's abort handle.
struct Waiting {
    cap: usize,
    queue: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    next: u64,
    entries: BTreeMap<u64, AbortHandle>,
}

impl Waiting {
    fn new(cap: usize) -> Waiting {
        Waiting {
            cap: cap.max(1),
            queue: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a new connection, closing the longest-waiting ones to stay within the cap.
    fn admit(self: &Arc<Self>, abort: AbortHandle) -> Ticket {
        let mut queue = self.lock();
        while queue.entries.len() >= self.cap {
            let Some((_, oldest)) = queue.entries.pop_first() else {
                break;
            };
            oldest.abort();
        }
        let id = queue.next;
        queue.next += 1;
        queue.entries.insert(id, abort);
        Ticket {
            id,
            waiting: Arc::clone(self),
        }
    }

    /// Closes the longest-waiting connection, if any.
    fn close_oldest(&self) {
        if let Some((_, oldest)) = self.lock().entries.pop_first() {
            oldest.abort();
        }
    }

    fn leave(&self, id: u64) {
        self.lock().entries.remove(&id);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().entries.len()
    }
}

/// A connection's place among the waiting; it leaves when its first head is read or it closes.
struct Ticket {
    id: u64,
    waiting: Arc<Waiting>,
}

impl Ticket {
    fn head_read(&self) {
        self.waiting.leave(self.id);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.waiting.leave(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admit(waiting: &Arc<Waiting>) -> (AbortHandle, Ticket) {
        let (abort, _registration) = AbortHandle::new_pair();
        let ticket = waiting.admit(abort.clone());
        (abort, ticket)
    }

    #[test]
    fn a_full_queue_closes_its_longest_waiting_connection() {
        let waiting = Arc::new(Waiting::new(2));
        let (first, _a) = admit(&waiting);
        let (second, _b) = admit(&waiting);
        let (third, _c) = admit(&waiting);
        assert!(first.is_aborted());
        assert!(!second.is_aborted());
        assert!(!third.is_aborted());
        assert_eq!(waiting.len(), 2);
    }

    #[test]
    fn a_connection_whose_head_was_read_is_never_closed_by_the_cap() {
        let waiting = Arc::new(Waiting::new(2));
        let (first, a) = admit(&waiting);
        a.head_read();
        let (second, _b) = admit(&waiting);
        let (third, _c) = admit(&waiting);
        assert!(!first.is_aborted());
        assert!(!second.is_aborted());
        assert!(!third.is_aborted());
        let (_fourth, _d) = admit(&waiting);
        assert!(second.is_aborted());
    }

    #[test]
    fn a_closed_connection_leaves_and_the_oldest_can_be_closed_on_demand() {
        let waiting = Arc::new(Waiting::new(3));
        let (_first, a) = admit(&waiting);
        let (second, _b) = admit(&waiting);
        drop(a);
        assert_eq!(waiting.len(), 1);
        waiting.close_oldest();
        assert!(second.is_aborted());
        assert_eq!(waiting.len(), 0);
        waiting.close_oldest();
    }

    #[test]
    fn the_cap_is_at_least_one() {
        let waiting = Arc::new(Waiting::new(0));
        let (first, _a) = admit(&waiting);
        assert!(!first.is_aborted());
        let (_second, _b) = admit(&waiting);
        assert!(first.is_aborted());
    }
}
