//! The browser front end (`golem-forge serve`): an axum server bound to one address that serves
//! an embedded page and bridges one WebSocket per tab to a session host. The page is one more
//! protocol client: display events go out as JSON text frames, action events come back the
//! same way. `guard` decides who may connect (Host, Origin, a per-run token traded for a
//! cookie) and sets the security headers; `log` keeps the session so far for tabs that connect
//! late; `socket` is one tab's WebSocket; `assets` are the embedded files; `listen` is the
//! accept loop of both HTTP front ends (a header-read timeout, and a cap on the connections
//! still waiting to send their first request head).

pub mod assets;
pub mod guard;
pub mod listen;
pub mod log;
pub mod server;
pub mod socket;

pub use server::{ServeError, WebServer};
