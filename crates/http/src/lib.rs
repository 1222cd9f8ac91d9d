//! What both HTTP front ends (`golem-forge serve`'s page and `golem-forge mcp --http`) share,
//! so that neither depends on the other: who may connect (`guard`: the address rules of the
//! bound address, the per-run token, the security headers) and the accept loop with its
//! header-read timeout and its cap on idle connections (`listen`).

pub mod guard;
pub mod listen;
