//! `batch-worker`: one consumer of a queued batch. It takes up to `concurrency` items at a
//! time, first entries whose holder let the lease run out (`XAUTOCLAIM`, the holder presumed
//! dead), then new ones (`XREADGROUP`), and runs each as a session (`golem_batch::run_item`)
//! while keeping its lease (`crate::lease`). How an item's run ends decides what is written:
//! a final result is recorded once and the entry acknowledged; a failed run is handed back to
//! be tried again until its deliveries reach the batch's `maxDeliveries`, then it becomes a dead
//! letter with its last error; a run parked for an approval travels to the queue's inbox
//! (`crate::travel`); a run cut off by the consumer stopping is handed back at once; and a run
//! whose lease was lost is dropped, since another consumer has the item. The consumer's own
//! approval mode is the ceiling of what the queue may decide about consent
//! (`crate::consent`): a batch asking for more is refused before anything is taken, and a
//! parked item whose approvals are not bound to the call it would run is not continued. An
//! item that carries a trace context (`crate::trace`) runs as a child of its producer's span
//! and linked to its batch's, here and wherever it is continued.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use golem_batch::BatchItem;
use golem_protocol::{ItemResult, ItemStatus};
use golem_runtime::host::HostOptions;
use redis::streams::{StreamAutoClaimReply, StreamId, StreamPendingCountReply, StreamReadReply};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::connect::Queue;
use crate::consent::Ceiling;
use crate::error::QueueError;
use crate::keys::{BatchKeys, GROUP};
use crate::scripts::LEAVE;
use crate::settle::{hand_back_all, settle};
use crate::state::{DeadLetter, flow};
use crate::trace::ItemTrace;

/// How long a read waits for new entries when nothing runs here.
const IDLE_WAIT: Duration = Duration::from_millis(500);

/// How a consumer runs.
#[derive(Debug, Clone)]
pub struct ConsumerSettings {
    /// The batch's name.
    pub name: String,
    /// This consumer's name in the group (unique among the batch's consumers).
    pub consumer: String,
    /// The program root the worker and the sessions are in.
    pub program_root: PathBuf,
    /// The worker file, found in the program root.
    pub worker: PathBuf,
    /// Each item's session (model, approval mode, … from the batch's settings). Its approval
    /// mode must be within `ceiling` (none: the ceiling's).
    pub session: HostOptions,
    /// This consumer's own approval mode: the most consent the queue may give its sessions.
    pub ceiling: Ceiling,
    /// Items running at once here.
    pub concurrency: usize,
    /// How long an entry may go without renewal before another consumer claims it.
    pub lease: Duration,
    /// Stop once no entry waits or runs anywhere, instead of waiting for new ones.
    pub until_done: bool,
    /// Deliveries after which an item is given up.
    pub max_deliveries: u32,
}

/// What happened to one delivery, as the consumer reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum ConsumerReport {
    /// A run of an item starts here.
    Started {
        /// The item.
        item: String,
        /// Which delivery of its entry this is.
        delivery: u32,
        /// Whether it continues a parked session.
        continues: bool,
    },
    /// Its final result was recorded.
    Recorded(Box<ItemResult>),
    /// It waits for approvals: these inbox entries.
    Parked {
        /// The item.
        item: String,
        /// Its entries in the queue's inbox.
        entries: Vec<u64>,
    },
    /// It failed and goes back on the queue to be tried again.
    Retrying {
        /// The item.
        item: String,
        /// The delivery that failed.
        delivery: u32,
        /// Why.
        error: String,
    },
    /// It was given up after too many deliveries.
    DeadLettered(DeadLetter),
    /// Its result was dropped: another consumer holds it now, or it had a result already.
    Dropped {
        /// The item.
        item: String,
        /// Why.
        why: String,
    },
    /// It was handed back unfinished because this consumer stops.
    Released {
        /// The item.
        item: String,
    },
    /// Its continuing was refused (`crate::consent::check_continuation`): nothing ran, and
    /// these inbox entries wait for a person again.
    Refused {
        /// The item.
        item: String,
        /// Its entries whose answers were withdrawn.
        entries: Vec<u64>,
        /// Why.
        why: String,
    },
}

/// Counts of what this consumer did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsumerTally {
    /// Final results recorded here, by whether they completed.
    pub completed: usize,
    /// Final results that did not complete (dead letters included).
    pub not_completed: usize,
    /// Items parked for approvals.
    pub parked: usize,
    /// Failed runs handed back to be tried again.
    pub retried: usize,
    /// Results dropped (lease lost, recorded before).
    pub dropped: usize,
    /// Runs handed back because this consumer stopped.
    pub released: usize,
    /// Parked items whose continuing was refused here (they wait for an answer again).
    pub refused: usize,
}

impl ConsumerTally {
    fn count(&mut self, report: &ConsumerReport) {
        match report {
            ConsumerReport::Started { .. } => {}
            ConsumerReport::Recorded(result) => {
                if result.status == ItemStatus::Completed {
                    self.completed += 1;
                } else {
                    self.not_completed += 1;
                }
            }
            ConsumerReport::Parked { .. } => self.parked += 1,
            ConsumerReport::Retrying { .. } => self.retried += 1,
            ConsumerReport::DeadLettered(_) => {}
            ConsumerReport::Dropped { .. } => self.dropped += 1,
            ConsumerReport::Released { .. } => self.released += 1,
            ConsumerReport::Refused { .. } => self.refused += 1,
        }
    }
}

/// One entry taken from the stream.
#[derive(Debug, Clone)]
pub(crate) struct Delivery {
    /// The entry's id in the items stream.
    pub(crate) entry: String,
    /// The item's id.
    pub(crate) item_id: String,
    /// What to do.
    pub(crate) what: Work,
    /// Which delivery of the entry this is (1 for the first).
    pub(crate) count: u32,
    /// The item's trace context from its entry (a `resume` entry has none: the parked item
    /// keeps it).
    pub(crate) trace: ItemTrace,
}

/// What a delivery asks for.
#[derive(Debug, Clone)]
pub(crate) enum Work {
    /// A fresh run of the item.
    Run(BatchItem),
    /// Continue parked session `session`, its calls answered.
    Resume(String),
    /// The entry cannot be read.
    Damaged(String),
}

/// What the tasks share.
pub(crate) struct Shared {
    pub(crate) queue: Queue,
    pub(crate) keys: BatchKeys,
    pub(crate) settings: ConsumerSettings,
    /// Cancelled when the consumer stops.
    pub(crate) cancel: CancellationToken,
}

/// Runs the consumer until `cancel` (its running items are handed back) or, with
/// `until_done`, until the batch is drained; `report` hears of every delivery's fate.
pub async fn consume(
    queue: &Queue,
    settings: &ConsumerSettings,
    cancel: &CancellationToken,
    mut report: impl FnMut(&ConsumerReport),
) -> Result<ConsumerTally, QueueError> {
    let keys = BatchKeys::new(&settings.name)?;
    // Nothing is taken for a session the ceiling does not allow.
    let mode =
        crate::consent::session_mode(&settings.name, settings.session.approval, &settings.ceiling)?;
    let mut settings = settings.clone();
    settings.session.approval = Some(mode);
    let settings = &settings;
    let concurrency = settings.concurrency.max(1);
    let gate = golem_llm::rate::install(concurrency);
    let shared = Arc::new(Shared {
        queue: queue.clone(),
        keys: keys.clone(),
        settings: settings.clone(),
        cancel: cancel.clone(),
    });
    let mut tally = ConsumerTally::default();
    let mut running: JoinSet<Vec<ConsumerReport>> = JoinSet::new();
    let mut cursor = "0-0".to_owned();
    let on_done = |joined: Result<Vec<ConsumerReport>, tokio::task::JoinError>,
                   tally: &mut ConsumerTally,
                   report: &mut dyn FnMut(&ConsumerReport)| match joined {
        Ok(reports) => {
            for one in &reports {
                tally.count(one);
                report(one);
            }
        }
        Err(error) => tracing::error!(%error, "an item's task stopped unexpectedly"),
    };
    loop {
        while let Some(joined) = running.try_join_next() {
            on_done(joined, &mut tally, &mut report);
        }
        if cancel.is_cancelled() {
            match running.join_next().await {
                Some(joined) => on_done(joined, &mut tally, &mut report),
                None => break,
            }
            continue;
        }
        let free = concurrency.min(gate.width()).saturating_sub(running.len());
        if free == 0 {
            tokio::select! {
                Some(joined) = running.join_next() => on_done(joined, &mut tally, &mut report),
                () = cancel.cancelled() => {}
            }
            continue;
        }
        let wait = running.is_empty().then_some(IDLE_WAIT);
        let deliveries = tokio::select! {
            taken = take(&shared, free, &mut cursor, wait) => taken?,
            () = cancel.cancelled() => continue,
        };
        if deliveries.is_empty() {
            if running.is_empty() {
                if settings.until_done && drained(queue, &keys).await? {
                    break;
                }
            } else {
                tokio::select! {
                    Some(joined) = running.join_next() => on_done(joined, &mut tally, &mut report),
                    () = tokio::time::sleep(Duration::from_millis(200)) => {}
                    () = cancel.cancelled() => {}
                }
            }
            continue;
        }
        for delivery in deliveries {
            let started = ConsumerReport::Started {
                item: delivery.item_id.clone(),
                delivery: delivery.count,
                continues: matches!(delivery.what, Work::Resume(_)),
            };
            tally.count(&started);
            report(&started);
            let shared = shared.clone();
            running.spawn(async move { settle(&shared, delivery).await });
        }
    }
    if cancel.is_cancelled() {
        // A read cut short by the stop may have delivered entries no run took: hand them
        // back too, so that no delivery waits out a lease for nothing.
        match hand_back_all(&shared).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(
                count,
                "entries taken as the consumer stopped were handed back"
            ),
            Err(error) => {
                tracing::warn!(%error, "held entries could not be handed back; their leases will run out")
            }
        }
    }
    leave(queue, &keys, &settings.consumer).await;
    Ok(tally)
}

/// Leaves the group if this consumer holds nothing, so that `batch status` lists the
/// consumers that run or hold entries; a failure only leaves its name behind.
async fn leave(queue: &Queue, keys: &BatchKeys, consumer: &str) {
    let left: Result<String, _> = queue
        .call(
            "leaving the group",
            Some(Duration::from_secs(5)),
            |mut con| {
                let mut invocation = LEAVE.key(keys.items());
                invocation.arg(GROUP).arg(consumer);
                async move { invocation.invoke_async(&mut con).await }
            },
        )
        .await;
    if let Err(error) = left {
        tracing::debug!(%error, "the consumer's name stays in the group");
    }
}

/// Whether no entry of the batch waits or runs anywhere.
async fn drained(queue: &Queue, keys: &BatchKeys) -> Result<bool, QueueError> {
    let (pending, queued) = flow(queue, keys).await?;
    Ok(pending == 0 && queued == 0)
}

/// Takes up to `count` entries: ones whose lease ran out first, then new ones (waiting up to
/// `wait` for them).
async fn take(
    shared: &Shared,
    count: usize,
    cursor: &mut String,
    wait: Option<Duration>,
) -> Result<Vec<Delivery>, QueueError> {
    let Shared {
        queue,
        keys,
        settings,
        ..
    } = shared;
    let lease_ms = u64::try_from(settings.lease.as_millis()).unwrap_or(u64::MAX);
    let claimed: StreamAutoClaimReply = queue
        .call("claiming expired items", None, |mut con| {
            let cmd = redis::cmd("XAUTOCLAIM")
                .arg(keys.items())
                .arg(GROUP)
                .arg(&settings.consumer)
                .arg(lease_ms)
                .arg(cursor.as_str())
                .arg("COUNT")
                .arg(count)
                .to_owned();
            async move { cmd.query_async(&mut con).await }
        })
        .await?;
    *cursor = claimed.next_stream_id.clone();
    let mut deliveries = Vec::new();
    for entry in &claimed.claimed {
        let pending: StreamPendingCountReply = queue
            .call("reading a delivery count", None, |mut con| {
                let cmd = redis::cmd("XPENDING")
                    .arg(keys.items())
                    .arg(GROUP)
                    .arg(&entry.id)
                    .arg(&entry.id)
                    .arg(1)
                    .to_owned();
                async move { cmd.query_async(&mut con).await }
            })
            .await?;
        let count = pending
            .ids
            .first()
            .map_or(1, |p| u32::try_from(p.times_delivered).unwrap_or(u32::MAX));
        deliveries.push(delivery_of(entry, count));
    }
    let left = count.saturating_sub(deliveries.len());
    if left == 0 {
        return Ok(deliveries);
    }
    let read: Option<StreamReadReply> = queue
        .call("reading new items", None, |mut con| {
            let mut cmd = redis::cmd("XREADGROUP");
            cmd.arg("GROUP")
                .arg(GROUP)
                .arg(&settings.consumer)
                .arg("COUNT")
                .arg(left);
            // Never block while items run here: their leases share the connection.
            if let Some(wait) = wait.filter(|_| deliveries.is_empty()) {
                cmd.arg("BLOCK")
                    .arg(u64::try_from(wait.as_millis()).unwrap_or(500));
            }
            cmd.arg("STREAMS").arg(keys.items()).arg(">");
            async move { cmd.query_async(&mut con).await }
        })
        .await?;
    for stream in read.map(|r| r.keys).unwrap_or_default() {
        for entry in &stream.ids {
            deliveries.push(delivery_of(entry, 1));
        }
    }
    Ok(deliveries)
}

/// A delivery of stream entry `entry`, its `count`th.
fn delivery_of(entry: &StreamId, count: u32) -> Delivery {
    let item_id: Option<String> = entry.get("id");
    let what = match (entry.get::<String>("item"), entry.get::<String>("resume")) {
        (Some(item), _) => match serde_json::from_str::<BatchItem>(&item) {
            Ok(item) => Work::Run(item),
            Err(e) => Work::Damaged(format!("its item is not an item: {e}")),
        },
        (None, Some(session)) => Work::Resume(session),
        (None, None) => Work::Damaged("it holds neither an item nor a session".into()),
    };
    Delivery {
        entry: entry.id.clone(),
        item_id: item_id.unwrap_or_else(|| entry.id.clone()),
        what,
        count,
        trace: ItemTrace::from_field(entry.get::<String>("trace").as_deref()),
    }
}
