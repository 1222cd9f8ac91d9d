//! The browser front end (`golem-forge serve`): an axum server bound to one address that serves
//! an embedded page and bridges one WebSocket per tab to a session host. The page is one more
//! protocol client: display events go out as JSON text frames, action events come back the
//! same way. `log` keeps the session so far for tabs that connect late; `socket` is one tab's
//! WebSocket; `assets` are the embedded files, each also in the compressed forms made at build
//! time, and `encoding` picks the form a request gets. `inbox` serves the project's approval inbox
//! (`serve --inbox`) on a page of its own. Who may connect and the accept loop are
//! `golem-http`'s, shared with the MCP server.

pub mod assets;
pub mod encoding;
pub mod inbox;
pub mod log;
pub mod server;
pub mod socket;

pub use inbox::{Continuation, Continuer, InboxServer};
pub use server::{ServeError, WebServer};
