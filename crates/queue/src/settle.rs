//! Settling one delivery of a consumer (`crate::consumer`): running its item as a session
//! while keeping its lease, then writing what the run came to, each write one script that
//! first checks the entry is still this consumer's (`crate::scripts`). A final result is
//! recorded once; a failed run is handed back or, at its last delivery, dead-lettered; a run
//! parked for an approval travels to the queue (`crate::travel`); a run cut off by the
//! consumer stopping is handed back; a run whose lease was lost is dropped. A parked item is
//! continued only when every approval it carries is bound to the call its transcript would run
//! and this consumer takes approvals at all (`crate::consent`); else nothing runs, and the
//! refused approvals wait for a person again.

use std::time::Duration;

use golem_batch::{BatchItem, run_item};
use golem_protocol::{BatchItemRef, ItemResult, ItemStatus};
use golem_runtime::host::{HostOptions, HostWorker};
use redis::streams::StreamPendingCountReply;
use tokio_util::sync::CancellationToken;

use crate::consent::{self, Refusal};
use crate::consumer::{ConsumerReport, Delivery, Shared, Work};
use crate::enqueue::PATIENCE;
use crate::error::QueueError;
use crate::inbox;
use crate::keys::{GROUP, INBOX, INBOX_ANSWERS};
use crate::lease::Held;
use crate::scripts::{FINISH, PARK, RELEASE, WITHDRAW};
use crate::state::DeadLetter;
use crate::trace::ItemTrace;
use crate::travel::{self, ParkedItem};

/// Runs delivery `delivery` and writes what its run came to.
pub(crate) async fn settle(shared: &Shared, delivery: Delivery) -> Vec<ConsumerReport> {
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
            Unpacked::Refused(refusal) => {
                return withdraw(shared, held, item_id, session, refusal).await;
            }
            Unpacked::Parked(parked) => (
                BatchItem {
                    id: item_id.clone(),
                    input: String::new(),
                    instructions: None,
                    line: 0,
                },
                Some(*parked),
            ),
            Unpacked::Gone => {
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
    // The trace context the item came with: its entry's, or the one its parking kept.
    let trace = match &parked {
        Some(parked) if delivery.trace.is_empty() => parked.trace.clone(),
        Some(_) | None => delivery.trace.clone(),
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
        // Under the item's span: a continued session's next run is the child of its parked
        // run (its transcript says which), in the same trace.
        trace: trace.origin(&settings.session.trace),
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
    // A continued item's runs go on counting from its parked one.
    let attempt = parked.as_ref().map_or(0, |p| p.result.attempt) + delivery.count;
    let result = run_item(options, parked.is_some(), &item, attempt, &item_cancel).await;
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
        ItemStatus::WaitingApproval => park(shared, held, delivery, result, trace).await?,
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

/// What reading a parked item for its continuing found.
enum Unpacked {
    /// Its session is unpacked here, ready to resume.
    Parked(Box<ParkedItem>),
    /// It is not parked (continued already).
    Gone,
    /// Its answers are not taken here: nothing was unpacked.
    Refused(Refusal),
}

/// Reads parked item `item_id`'s session from the queue, checks its answers against its
/// transcript and this consumer's ceiling, and unpacks it here.
async fn unpack(shared: &Shared, item_id: &str, session: &str) -> Result<Unpacked, QueueError> {
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
        return Ok(Unpacked::Gone);
    };
    let parked: ParkedItem =
        serde_json::from_str(&parked).map_err(|e| QueueError::damaged("parked item", e))?;
    if parked.session != session {
        return Ok(Unpacked::Gone);
    }
    let transcript = transcript.ok_or_else(|| QueueError::Travel {
        session: session.to_owned(),
        reason: "its transcript is not on the queue".into(),
    })?;
    let entries = inbox::fetch(&shared.queue, &parked.entries).await?;
    let root = shared.settings.program_root.clone();
    let worker = shared.settings.worker.clone();
    let ceiling = shared.settings.ceiling.clone();
    let owned = session.to_owned();
    let checked = tokio::task::spawn_blocking(move || {
        // What the session would run first, read from the very bytes unpacked below.
        let pending = consent::pending_calls(&owned, &transcript)?;
        if let Err(refusal) = consent::check_continuation(&ceiling, &owned, &entries, &pending) {
            return Ok(Err(refusal));
        }
        travel::unpack(&root, &worker, &owned, &transcript, &entries).map(Ok)
    })
    .await
    .map_err(|e| QueueError::Travel {
        session: session.to_owned(),
        reason: e.to_string(),
    })??;
    Ok(match checked {
        Ok(()) => Unpacked::Parked(Box::new(parked)),
        Err(refusal) => Unpacked::Refused(refusal),
    })
}

/// Refuses to continue parked item `item_id` (its session `session`): `refusal`'s answers are
/// withdrawn and their entries wait for a person again; nothing ran.
async fn withdraw(
    shared: &Shared,
    held: &Held,
    item_id: &str,
    session: &str,
    refusal: Refusal,
) -> Result<Vec<ConsumerReport>, QueueError> {
    let keys = &shared.keys;
    let outcome: String = shared
        .queue
        .call("withdrawing refused answers", None, |mut con| {
            let mut invocation = WITHDRAW.key(keys.items());
            invocation
                .key(INBOX_ANSWERS)
                .key(keys.waits(session))
                .key(keys.resuming())
                .arg(&held.args()[..])
                .arg(item_id);
            for entry in &refusal.entries {
                invocation.arg(*entry);
            }
            async move { invocation.invoke_async(&mut con).await }
        })
        .await?;
    if outcome != "withdrawn" {
        return Ok(vec![ConsumerReport::Dropped {
            item: item_id.to_owned(),
            why: "its lease ran out and another consumer took it".into(),
        }]);
    }
    Ok(vec![ConsumerReport::Refused {
        item: item_id.to_owned(),
        entries: refusal.entries,
        why: refusal.reason,
    }])
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
                .key(keys.resuming())
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
    let result = result.unwrap_or_else(|| ItemResult::failed(item_id, deliveries));
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
    release_within(shared, held, item_id, error, None).await
}

/// [`release`], trying for at most `patience` while the connection is lost.
async fn release_within(
    shared: &Shared,
    held: &Held,
    item_id: &str,
    error: Option<&str>,
    patience: Option<Duration>,
) -> Result<(), QueueError> {
    let keys = &shared.keys;
    let outcome: String = shared
        .queue
        .call("handing an item back", patience, |mut con| {
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

/// Hands back every entry this consumer still holds (as it stops): ones whose runs were
/// handed back already are no longer its, and what remains are entries a read delivered as
/// the consumer was told to stop, before any run of them started. Returns how many.
pub(crate) async fn hand_back_all(shared: &Shared) -> Result<usize, QueueError> {
    let held: StreamPendingCountReply = shared
        .queue
        .call("listing held items", PATIENCE, |mut con| {
            let cmd = redis::cmd("XPENDING")
                .arg(shared.keys.items())
                .arg(GROUP)
                .arg("-")
                .arg("+")
                .arg(10_000)
                .arg(&shared.settings.consumer)
                .to_owned();
            async move { cmd.query_async(&mut con).await }
        })
        .await?;
    for pending in &held.ids {
        let entry = Held {
            keys: shared.keys.clone(),
            entry: pending.id.clone(),
            consumer: shared.settings.consumer.clone(),
        };
        release_within(shared, &entry, &pending.id, None, PATIENCE).await?;
    }
    Ok(held.ids.len())
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

/// Parks the item: its session and calls go to the queue, with the trace context its run
/// had (`trace`).
async fn park(
    shared: &Shared,
    held: &Held,
    delivery: &Delivery,
    result: ItemResult,
    trace: ItemTrace,
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
        trace,
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
                .key(keys.resuming())
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
