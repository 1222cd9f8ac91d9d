//! Where a queued batch stands, read from any machine: the counts of its items by state, each
//! item in exactly one (a final result, waiting for an answer in the inbox, held by a consumer,
//! waiting for one), its dead letters with their last errors (among the failed results), and
//! its results in input order as the same JSON lines a local batch prints. A parked item whose
//! calls are all answered waits for a consumer, not for an answer: its `resume` entry counts
//! it (`BatchKeys::resuming`).

use std::collections::{BTreeMap, HashSet};

use golem_protocol::ItemResult;
use redis::streams::{StreamInfoConsumersReply, StreamInfoGroupsReply, StreamRangeReply};
use serde::{Deserialize, Serialize};

use crate::connect::Queue;
use crate::enqueue::{PATIENCE, load_meta};
use crate::error::QueueError;
use crate::keys::{BatchKeys, GROUP};
use crate::meta::QueueMeta;
use crate::travel::ParkedItem;

/// An item given up after too many deliveries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetter {
    /// The item.
    pub id: String,
    /// How many times it was delivered.
    pub deliveries: u32,
    /// Its last run's error.
    pub error: String,
}

/// A consumer the batch's group knows, and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsumerState {
    /// Its name (`--consumer`, else host name, process id and a random part).
    pub name: String,
    /// Entries it holds now.
    pub holding: usize,
    /// Milliseconds since it last read or renewed anything.
    pub idle_ms: usize,
}

/// A queued batch's state.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueStatus {
    /// The batch's name.
    pub name: String,
    /// Its settings.
    pub meta: QueueMeta,
    /// Items with a final result, by status (`completed`, `failed`, …).
    pub results: BTreeMap<String, usize>,
    /// Items parked until someone answers in the inbox (an answered one waits for a consumer
    /// and is counted in `in_flight` or `queued`).
    pub waiting_approval: usize,
    /// Items a consumer holds now (a run, or the continuing of an answered parked item).
    pub in_flight: usize,
    /// Items no consumer has taken yet (new ones, and answered parked ones).
    pub queued: usize,
    /// Items given up: they are among the `failed` results.
    pub dead_letters: Vec<DeadLetter>,
    /// The consumers the group knows: running ones, and stopped ones that still hold entries
    /// (a consumer that stops holding nothing leaves the group).
    pub consumers: Vec<ConsumerState>,
}

/// The pending and undelivered entries of `keys`' stream in the group.
pub(crate) async fn flow(queue: &Queue, keys: &BatchKeys) -> Result<(usize, usize), QueueError> {
    let groups: StreamInfoGroupsReply = queue
        .call("reading the queue", PATIENCE, |mut con| {
            let key = keys.items();
            async move {
                redis::cmd("XINFO")
                    .arg("GROUPS")
                    .arg(key)
                    .query_async(&mut con)
                    .await
            }
        })
        .await?;
    flow_of(queue, keys, groups).await
}

/// The pending and undelivered entries of `keys`' stream, from its groups as `XINFO GROUPS`
/// gave them.
async fn flow_of(
    queue: &Queue,
    keys: &BatchKeys,
    groups: StreamInfoGroupsReply,
) -> Result<(usize, usize), QueueError> {
    let Some(group) = groups.groups.into_iter().find(|g| g.name == GROUP) else {
        return Err(QueueError::damaged(
            "items stream",
            "its consumer group is gone",
        ));
    };
    let queued = match group.lag {
        Some(lag) => lag,
        // Redis cannot always count the lag; then count the entries after the last delivered.
        None => {
            let after: StreamRangeReply = queue
                .call("reading the queue", PATIENCE, |mut con| {
                    let key = keys.items();
                    let start = format!("({}", group.last_delivered_id);
                    async move {
                        redis::cmd("XRANGE")
                            .arg(key)
                            .arg(start)
                            .arg("+")
                            .query_async(&mut con)
                            .await
                    }
                })
                .await?;
            after.ids.len()
        }
    };
    Ok((group.pending, queued))
}

/// The parked items of `parked` that wait for an answer: the ones not in `resuming`.
fn unanswered(parked: &[String], resuming: &[String]) -> usize {
    let resuming: HashSet<&String> = resuming.iter().collect();
    parked
        .iter()
        .filter(|item| !resuming.contains(item))
        .count()
}

/// How many items of batch `name` wait for an answer in the queue's inbox.
pub async fn waiting_for_approval(queue: &Queue, name: &str) -> Result<usize, QueueError> {
    let keys = BatchKeys::new(name)?;
    let (parked, resuming): (Vec<String>, Vec<String>) = queue
        .call("reading the parked items", PATIENCE, |mut con| {
            let keys = keys.clone();
            async move {
                redis::pipe()
                    .atomic()
                    .hkeys(keys.parked())
                    .smembers(keys.resuming())
                    .query_async(&mut con)
                    .await
            }
        })
        .await?;
    Ok(unanswered(&parked, &resuming))
}

/// The state of batch `name`, every count read at one instant.
pub async fn status(queue: &Queue, name: &str) -> Result<QueueStatus, QueueError> {
    let keys = BatchKeys::new(name)?;
    let meta = load_meta(queue, name).await?;
    type Read = (
        Vec<String>,
        Vec<String>,
        Vec<String>,
        Vec<String>,
        StreamInfoGroupsReply,
    );
    let (results, parked, resuming, dead, groups): Read = queue
        .call("reading the batch", PATIENCE, |mut con| {
            let keys = keys.clone();
            async move {
                redis::pipe()
                    .atomic()
                    .hvals(keys.results())
                    .hkeys(keys.parked())
                    .smembers(keys.resuming())
                    .lrange(keys.dead(), 0, -1)
                    .cmd("XINFO")
                    .arg("GROUPS")
                    .arg(keys.items())
                    .query_async(&mut con)
                    .await
            }
        })
        .await?;
    let mut counts = BTreeMap::new();
    for text in &results {
        let result: ItemResult =
            serde_json::from_str(text).map_err(|e| QueueError::damaged("result", e))?;
        *counts.entry(result.status.as_str().to_owned()).or_insert(0) += 1;
    }
    let dead_letters = dead
        .iter()
        .map(|text| serde_json::from_str(text).map_err(|e| QueueError::damaged("dead letter", e)))
        .collect::<Result<Vec<DeadLetter>, _>>()?;
    let (in_flight, queued) = flow_of(queue, &keys, groups).await?;
    let consumers: StreamInfoConsumersReply = queue
        .call("reading the consumers", PATIENCE, |mut con| {
            let key = keys.items();
            async move {
                redis::cmd("XINFO")
                    .arg("CONSUMERS")
                    .arg(key)
                    .arg(GROUP)
                    .query_async(&mut con)
                    .await
            }
        })
        .await?;
    let consumers = consumers
        .consumers
        .into_iter()
        .map(|c| ConsumerState {
            name: c.name,
            holding: c.pending,
            idle_ms: c.idle,
        })
        .collect();
    Ok(QueueStatus {
        name: name.to_owned(),
        meta,
        results: counts,
        waiting_approval: unanswered(&parked, &resuming),
        in_flight,
        queued,
        dead_letters,
        consumers,
    })
}

/// Each item's latest result (final, or `waitingApproval` while parked), in input order.
pub async fn results(queue: &Queue, name: &str) -> Result<Vec<ItemResult>, QueueError> {
    let keys = BatchKeys::new(name)?;
    load_meta(queue, name).await?;
    let mut order = Vec::new();
    let mut seen = HashSet::new();
    let mut start = "-".to_owned();
    loop {
        let page: StreamRangeReply = queue
            .call("reading the items", PATIENCE, |mut con| {
                let key = keys.items();
                let start = start.clone();
                async move {
                    redis::cmd("XRANGE")
                        .arg(key)
                        .arg(start)
                        .arg("+")
                        .arg("COUNT")
                        .arg(1000)
                        .query_async(&mut con)
                        .await
                }
            })
            .await?;
        let Some(last) = page.ids.last() else { break };
        start = format!("({}", last.id);
        for entry in &page.ids {
            if entry.map.contains_key("resume") {
                continue;
            }
            if let Some(id) = entry.get::<String>("id")
                && seen.insert(id.clone())
            {
                order.push(id);
            }
        }
    }
    let mut out = Vec::new();
    for chunk in order.chunks(500) {
        let (finals, parked): (Vec<Option<String>>, Vec<Option<String>>) = queue
            .call("reading the results", PATIENCE, |mut con| {
                let keys = keys.clone();
                async move {
                    redis::pipe()
                        .cmd("HMGET")
                        .arg(keys.results())
                        .arg(chunk)
                        .cmd("HMGET")
                        .arg(keys.parked())
                        .arg(chunk)
                        .query_async(&mut con)
                        .await
                }
            })
            .await?;
        for (final_result, parked) in finals.into_iter().zip(parked) {
            if let Some(text) = final_result {
                out.push(
                    serde_json::from_str(&text).map_err(|e| QueueError::damaged("result", e))?,
                );
            } else if let Some(text) = parked {
                let parked: ParkedItem = serde_json::from_str(&text)
                    .map_err(|e| QueueError::damaged("parked item", e))?;
                out.push(parked.result);
            }
        }
    }
    Ok(out)
}
