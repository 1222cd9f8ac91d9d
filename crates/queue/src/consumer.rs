//! `batch-worker`: one consumer of a queued batch. It takes up to `concurrency` items at a
//! time, first entries whose holder let the lease run out (`XAUTOCLAIM`, the holder presumed
//! dead), then new ones (`XREADGROUP`), and runs each as a session (`golem_batch::run_item`)
//! while keeping its lease (`crate::lease`). How an item's run ends decides what is written:
//! a final result is recorded once and the entry acknowledged; a failed run is handed back to
//! be tried again until its deliveries reach the batch's `maxDeliveries`, then it becomes a dead
//! letter with its last error; a run parked for an approval travels to the queue's inbox
//! (`crate::travel`); a run cut off by the consumer stopping is handed back at once; and a run
//! whose lease was lost is dropped, since another consumer has the item.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use golem_batch::{BatchItem, run_item};
use golem_protocol::{BatchItemRef, ItemResult, ItemStatus, TokenUsage};
use golem_runtime::host::{HostOptions, HostWorker};
use redis::streams::{StreamAutoClaimReply, StreamId, StreamPendingCountReply, StreamReadReply};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::connect::Queue;
use crate::enqueue::PATIENCE;
use crate::error::QueueError;
use crate::inbox;
use crate::keys::{BatchKeys, GROUP, INBOX};
use crate::lease::Held;
use crate::scripts::{FINISH, PARK, RELEASE};
use crate::state::{DeadLetter, flow};
use crate::travel::{self, ParkedItem};

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
    /// Each item's session (model, approval mode, … from the batch's settings).
    pub session: HostOptions,
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
        }
    }
}

/// One entry taken from the stream.
#[derive(Debug, Clone)]
struct Delivery {
    entry: String,
    item_id: String,
    what: Work,
    /// Which delivery of the entry this is (1 for the first).
    count: u32,
}

#[derive(Debug, Clone)]
enum Work {
    /// A fresh run of the item.
    Run(BatchItem),
    /// Continue parked session `session`, its calls answered.
    Resume(String),
    /// The entry cannot be read.
    Damaged(String),
}

/// What the tasks share.
struct Shared {
    queue: Queue,
    keys: BatchKeys,
    settings: ConsumerSettings,
    cancel: CancellationToken,
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
    Ok(tally)
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
    }
}

/// Runs delivery `delivery` and writes what its run came to.
async fn settle(shared: &Shared, delivery: Delivery) -> Vec<ConsumerReport> {
    let held = Held {
        keys: shared.keys.clone(),
        entry: delivery.entry.clone(),
        consumer: shared.settings.consumer.clone(),
    };
    match settle_held(shared, &held, &delivery).await {
        Ok(reports) => reports,
        Err(error) => {
            // The entry stays held; its lease runs out and another consumer (or this one)
            // takes it again.
            tracing::error!(%error, item = %delivery.item_id, "an item's outcome could not be written");
            vec![ConsumerReport::Dropped {
                item: delivery.item_id.clone(),
                why: error.to_string(),
            }]
        }
    }
}

async fn settle_held(
    shared: &Shared,
    held: &Held,
    delivery: &Delivery,
) -> Result<Vec<ConsumerReport>, QueueError> {
    let settings = &shared.settings;
    let item_id = &delivery.item_id;
    if delivery.count > settings.max_deliveries {
        let last: Option<String> = shared
            .queue
            .call("reading an item's last error", None, |mut con| {
                let cmd = redis::cmd("HGET")
                    .arg(shared.keys.errors())
                    .arg(item_id)
                    .to_owned();
                async move { cmd.query_async(&mut con).await }
            })
            .await?;
        let error = last.unwrap_or_else(|| {
            format!(
                "its consumer stopped before finishing it, {} times",
                delivery.count - 1
            )
        });
        return give_up(shared, held, item_id, delivery.count - 1, error, None).await;
    }
    let (item, parked) = match &delivery.what {
        Work::Run(item) => (item.clone(), None),
        Work::Resume(session) => match unpack(shared, item_id, session).await? {
            Some(parked) => (
                BatchItem {
                    id: item_id.clone(),
                    input: String::new(),
                    instructions: None,
                    line: 0,
                },
                Some(parked),
            ),
            None => {
                acknowledge(shared, held).await?;
                return Ok(vec![ConsumerReport::Dropped {
                    item: item_id.clone(),
                    why: "it was continued already".into(),
                }]);
            }
        },
        Work::Damaged(reason) => {
            return give_up(shared, held, item_id, delivery.count, reason.clone(), None).await;
        }
    };
    let options = HostOptions {
        worker: match &parked {
            Some(parked) => HostWorker::Resume {
                program_root: settings.program_root.clone(),
                id: parked.session.clone(),
            },
            None => HostWorker::File(settings.worker.clone()),
        },
        instructions: item.instructions.clone(),
        batch_item: Some(BatchItemRef {
            batch: settings.name.clone(),
            item: item_id.clone(),
        }),
        keeps_history: parked.is_some(),
        ..settings.session.clone()
    };
    let item_cancel = shared.cancel.child_token();
    let stop_lease = CancellationToken::new();
    let lost = CancellationToken::new();
    let keeper = tokio::spawn({
        let (held, queue, lease) = (held.clone(), shared.queue.clone(), settings.lease);
        let (stop, lost, item_cancel) = (stop_lease.clone(), lost.clone(), item_cancel.clone());
        async move {
            held.keep(queue, lease, stop, lost.clone()).await;
            if lost.is_cancelled() {
                item_cancel.cancel();
            }
        }
    });
    let result = run_item(
        options,
        parked.is_some(),
        &item,
        delivery.count,
        &item_cancel,
    )
    .await;
    stop_lease.cancel();
    let _ = keeper.await;
    if lost.is_cancelled() {
        return Ok(vec![ConsumerReport::Dropped {
            item: item_id.clone(),
            why: "its lease ran out and another consumer took it".into(),
        }]);
    }
    let reports = match result.status {
        ItemStatus::Interrupted if shared.cancel.is_cancelled() => {
            release(shared, held, item_id, None).await?;
            vec![ConsumerReport::Released {
                item: item_id.clone(),
            }]
        }
        ItemStatus::Failed => {
            let error = result.error.clone().unwrap_or_else(|| "it failed".into());
            if delivery.count >= settings.max_deliveries {
                give_up(shared, held, item_id, delivery.count, error, Some(result)).await?
            } else {
                release(shared, held, item_id, Some(&error)).await?;
                vec![ConsumerReport::Retrying {
                    item: item_id.clone(),
                    delivery: delivery.count,
                    error,
                }]
            }
        }
        ItemStatus::WaitingApproval => park(shared, held, delivery, result).await?,
        ItemStatus::Completed | ItemStatus::BudgetExceeded | ItemStatus::Interrupted => {
            vec![finish(shared, held, &result, None).await?]
        }
    };
    if let Some(parked) = parked {
        // The calls it waited for were settled (or parked again under new numbers).
        inbox::remove(&shared.queue, &parked.entries).await?;
        if reports.iter().any(|r| {
            matches!(
                r,
                ConsumerReport::Recorded(_) | ConsumerReport::DeadLettered(_)
            )
        }) {
            forget_transcript(shared, &parked.session).await?;
        }
    }
    Ok(reports)
}

/// Reads parked item `item_id`'s session from the queue and unpacks it here; `None` when the
/// item is not parked (continued already).
async fn unpack(
    shared: &Shared,
    item_id: &str,
    session: &str,
) -> Result<Option<ParkedItem>, QueueError> {
    let (parked, transcript): (Option<String>, Option<Vec<u8>>) = shared
        .queue
        .call("reading a parked item", None, |mut con| {
            let pipe = redis::pipe()
                .cmd("HGET")
                .arg(shared.keys.parked())
                .arg(item_id)
                .cmd("GET")
                .arg(shared.keys.transcript(session))
                .to_owned();
            async move { pipe.query_async(&mut con).await }
        })
        .await?;
    let Some(parked) = parked else {
        return Ok(None);
    };
    let parked: ParkedItem =
        serde_json::from_str(&parked).map_err(|e| QueueError::damaged("parked item", e))?;
    if parked.session != session {
        return Ok(None);
    }
    let transcript = transcript.ok_or_else(|| QueueError::Travel {
        session: session.to_owned(),
        reason: "its transcript is not on the queue".into(),
    })?;
    let entries = inbox::fetch(&shared.queue, &parked.entries).await?;
    let root = shared.settings.program_root.clone();
    let worker = shared.settings.worker.clone();
    let owned = session.to_owned();
    tokio::task::spawn_blocking(move || {
        travel::unpack(&root, &worker, &owned, &transcript, &entries)
    })
    .await
    .map_err(|e| QueueError::Travel {
        session: session.to_owned(),
        reason: e.to_string(),
    })??;
    Ok(Some(parked))
}

/// Records `result` as the item's final one (with `dead` when it is given up).
async fn finish(
    shared: &Shared,
    held: &Held,
    result: &ItemResult,
    dead: Option<&DeadLetter>,
) -> Result<ConsumerReport, QueueError> {
    let result_json =
        serde_json::to_string(result).map_err(|e| QueueError::damaged("result", e))?;
    let dead_json = match dead {
        Some(dead) => {
            serde_json::to_string(dead).map_err(|e| QueueError::damaged("dead letter", e))?
        }
        None => String::new(),
    };
    let keys = &shared.keys;
    let outcome: String = shared
        .queue
        .call("recording a result", None, |mut con| {
            let mut invocation = FINISH.key(keys.items());
            invocation
                .key(keys.results())
                .key(keys.results_stream())
                .key(keys.dead())
                .key(keys.parked())
                .arg(&held.args()[..])
                .arg(&result.id)
                .arg(&result_json)
                .arg(&dead_json);
            async move { invocation.invoke_async(&mut con).await }
        })
        .await?;
    Ok(match (outcome.as_str(), dead) {
        ("recorded", Some(dead)) => ConsumerReport::DeadLettered(dead.clone()),
        ("recorded", None) => ConsumerReport::Recorded(Box::new(result.clone())),
        ("duplicate", _) => ConsumerReport::Dropped {
            item: result.id.clone(),
            why: "it has a result already".into(),
        },
        _ => ConsumerReport::Dropped {
            item: result.id.clone(),
            why: "its lease ran out and another consumer took it".into(),
        },
    })
}

/// Gives item `item_id` up after `deliveries`: a failed final result and a dead letter.
async fn give_up(
    shared: &Shared,
    held: &Held,
    item_id: &str,
    deliveries: u32,
    error: String,
    result: Option<ItemResult>,
) -> Result<Vec<ConsumerReport>, QueueError> {
    let dead = DeadLetter {
        id: item_id.to_owned(),
        deliveries,
        error: error.clone(),
    };
    let result = result.unwrap_or_else(|| ItemResult {
        id: item_id.to_owned(),
        status: ItemStatus::Failed,
        answer: String::new(),
        output: None,
        usage: TokenUsage::default(),
        cost: None,
        session: None,
        error: None,
        attempt: deliveries,
    });
    let result = ItemResult {
        error: Some(format!("given up after {deliveries} deliveries: {error}")),
        ..result
    };
    Ok(vec![finish(shared, held, &result, Some(&dead)).await?])
}

/// Hands the entry back for any consumer to take at once (`error`: the failed run's).
async fn release(
    shared: &Shared,
    held: &Held,
    item_id: &str,
    error: Option<&str>,
) -> Result<(), QueueError> {
    let keys = &shared.keys;
    let outcome: String = shared
        .queue
        .call("handing an item back", None, |mut con| {
            let mut invocation = RELEASE.key(keys.items());
            invocation
                .key(keys.errors())
                .arg(&held.args()[..])
                .arg(item_id)
                .arg(error.unwrap_or_default());
            async move { invocation.invoke_async(&mut con).await }
        })
        .await?;
    if outcome != "released" {
        tracing::warn!(item = %item_id, "the item was not handed back: another consumer holds it");
    }
    Ok(())
}

/// Acknowledges the entry without writing anything (nothing is left to do for it).
async fn acknowledge(shared: &Shared, held: &Held) -> Result<(), QueueError> {
    shared
        .queue
        .call("acknowledging an entry", None, |mut con| {
            let cmd = redis::cmd("XACK")
                .arg(shared.keys.items())
                .arg(GROUP)
                .arg(&held.entry)
                .to_owned();
            async move { cmd.query_async::<()>(&mut con).await }
        })
        .await
}

/// Parks the item: its session and calls go to the queue.
async fn park(
    shared: &Shared,
    held: &Held,
    delivery: &Delivery,
    result: ItemResult,
) -> Result<Vec<ConsumerReport>, QueueError> {
    let item_id = &delivery.item_id;
    let Some(session) = result.session.clone() else {
        let error = "it waits for an approval but has no session".to_owned();
        return give_up(shared, held, item_id, delivery.count, error, Some(result)).await;
    };
    let root = shared.settings.program_root.clone();
    let packed = {
        let (root, session) = (root.clone(), session.clone());
        tokio::task::spawn_blocking(move || travel::pack(&root, &session))
            .await
            .map_err(|e| QueueError::Travel {
                session: result.session.clone().unwrap_or_default(),
                reason: e.to_string(),
            })?
    };
    let luggage = match packed {
        Ok(luggage) => luggage,
        Err(error) => {
            return give_up(
                shared,
                held,
                item_id,
                delivery.count,
                error.to_string(),
                Some(result),
            )
            .await;
        }
    };
    let numbers = inbox::take_numbers(&shared.queue, luggage.entries.len()).await?;
    let mut pairs = Vec::new();
    for (entry, number) in luggage.entries.iter().zip(&numbers) {
        let entry = golem_protocol::InboxEntry {
            id: *number,
            answer: None,
            batch: Some(BatchItemRef {
                batch: shared.settings.name.clone(),
                item: item_id.clone(),
            }),
            ..entry.clone()
        };
        let json =
            serde_json::to_string(&entry).map_err(|e| QueueError::damaged("inbox entry", e))?;
        pairs.push((*number, json));
    }
    let parked = ParkedItem {
        result: result.clone(),
        session: session.clone(),
        entries: numbers.clone(),
    };
    let parked_json =
        serde_json::to_string(&parked).map_err(|e| QueueError::damaged("parked item", e))?;
    let keys = &shared.keys;
    let outcome: String = shared
        .queue
        .call("parking an item", None, |mut con| {
            let mut invocation = PARK.key(keys.items());
            invocation
                .key(keys.results())
                .key(keys.parked())
                .key(INBOX)
                .key(keys.waits(&session))
                .key(keys.transcript(&session))
                .arg(&held.args()[..])
                .arg(item_id)
                .arg(&parked_json)
                .arg(&luggage.transcript[..]);
            for (number, json) in &pairs {
                invocation.arg(*number).arg(json);
            }
            async move { invocation.invoke_async(&mut con).await }
        })
        .await?;
    match outcome.as_str() {
        "parked" => {
            travel::forget_local(&root, &luggage);
            Ok(vec![ConsumerReport::Parked {
                item: item_id.clone(),
                entries: numbers,
            }])
        }
        "duplicate" => Ok(vec![ConsumerReport::Dropped {
            item: item_id.clone(),
            why: "it has a result already".into(),
        }]),
        _ => Ok(vec![ConsumerReport::Dropped {
            item: item_id.clone(),
            why: "its lease ran out and another consumer took it".into(),
        }]),
    }
}

/// Deletes parked session `session`'s transcript from the queue (its item has a final result).
async fn forget_transcript(shared: &Shared, session: &str) -> Result<(), QueueError> {
    shared
        .queue
        .call("clearing a parked session", PATIENCE, |mut con| {
            let cmd = redis::cmd("DEL")
                .arg(shared.keys.transcript(session))
                .to_owned();
            async move { cmd.query_async::<()>(&mut con).await }
        })
        .await
}
