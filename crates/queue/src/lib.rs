//! Batches on Redis Streams: `golem-forge batch --queue` puts a batch's items on a stream,
//! `batch-worker` processes on any number of machines take them through one consumer group and
//! run each as a session (`golem_batch::run_item`), and `batch status|results` and `inbox
//! --queue` read and answer from anywhere. [`connect`] is the connection (URLs, the password,
//! retrying a lost connection), [`consent`] bounds what the queue may decide about consent
//! (the consumer's own approval mode is the ceiling; an approval is bound to the call it
//! showed), [`keys`] names what a batch keeps in Redis, [`scripts`] holds
//! the Lua that makes each step atomic, [`enqueue`] starts a batch, [`consumer`] is the
//! consumer loop (`settle` what becomes of each delivery), [`lease`] keeps a claimed item from being taken, [`travel`] carries a parked
//! session between machines, [`trace`] the trace context an item carries with it, [`inbox`] is
//! the queue's approval inbox and [`state`] reads where a batch stands. The contract is docs/queue.md.

pub mod connect;
pub mod consent;
pub mod consumer;
pub mod enqueue;
pub mod error;
pub mod inbox;
pub mod keys;
pub mod lease;
pub mod meta;
pub mod scripts;
mod settle;
pub mod state;
pub mod trace;
pub mod travel;

pub use connect::{Queue, QueueUrl};
pub use consent::Ceiling;
pub use consumer::{ConsumerReport, ConsumerSettings, ConsumerTally, consume};
pub use enqueue::{Enqueued, enqueue, enqueue_traced};
pub use error::QueueError;
pub use meta::{QueueMeta, WorkerNotHere};
pub use state::{DeadLetter, QueueStatus};
