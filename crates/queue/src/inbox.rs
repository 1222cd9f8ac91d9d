//! The queue's approval inbox: calls parked by items of any batch on the queue, numbered from
//! one counter, listed and answered from any machine (`golem-forge inbox --queue …`). An
//! answer is given once; when it settles the last call its session waited for, the item goes
//! back on its batch's stream and the next free consumer continues it (`crate::travel`). An
//! approval is bound to the call it approves: answering reads the parked transcript, refuses
//! when the session would run another call than the entry shows (or than `inbox --queue show`
//! showed), and keeps the call's digest with the answer for the consumer to check again
//! (`crate::consent`).

use std::collections::HashMap;

use golem_protocol::{InboxAnswer, InboxEntry};

use crate::connect::Queue;
use crate::consent::{self, QueueAnswer, Unbound};
use crate::enqueue::PATIENCE;
use crate::error::QueueError;
use crate::keys::{BatchKeys, INBOX, INBOX_ANSWERS, INBOX_NEXT};
use crate::scripts::ANSWER;

/// What answering did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// The item is back on the queue; a consumer continues it.
    Resumed,
    /// Other calls of the same session still wait for an answer.
    Waiting,
}

/// Every entry, oldest first, each with its answer if given.
pub async fn list(queue: &Queue) -> Result<Vec<InboxEntry>, QueueError> {
    let (entries, answers): (HashMap<u64, String>, HashMap<u64, String>) = queue
        .call("reading the inbox", PATIENCE, |mut con| async move {
            redis::pipe()
                .hgetall(INBOX)
                .hgetall(INBOX_ANSWERS)
                .query_async(&mut con)
                .await
        })
        .await?;
    let mut list = Vec::with_capacity(entries.len());
    for (id, text) in &entries {
        let (entry, answer) = decode(*id, text, answers.get(id).map(String::as_str))?;
        list.push(InboxEntry {
            answer: answer.map(|a| a.answer),
            ..entry
        });
    }
    list.sort_by_key(|entry| entry.id);
    Ok(list)
}

/// Entry `id`, with its answer if given.
pub async fn get(queue: &Queue, id: u64) -> Result<InboxEntry, QueueError> {
    let mut found = fetch(queue, &[id]).await?;
    match found.pop() {
        Some((entry, answer)) => Ok(InboxEntry {
            answer: answer.map(|a| a.answer),
            ..entry
        }),
        None => Err(QueueError::NoEntry(id)),
    }
}

/// The digest of the call `entry` shows, when its parked session (read from the queue now)
/// would run exactly that call; else why not.
pub async fn binding_of(
    queue: &Queue,
    entry: &InboxEntry,
) -> Result<Result<String, Unbound>, QueueError> {
    let Some(item) = &entry.batch else {
        return Err(QueueError::damaged(
            format!("inbox entry {}", entry.id),
            "it names no batch item",
        ));
    };
    let keys = BatchKeys::new(&item.batch)?;
    let transcript: Option<Vec<u8>> = queue
        .call("reading a parked session", PATIENCE, |mut con| {
            let key = keys.transcript(&entry.session);
            async move { redis::cmd("GET").arg(key).query_async(&mut con).await }
        })
        .await?;
    let Some(transcript) = transcript else {
        return Ok(Err(Unbound::NotWaiting {
            call: entry.request.tool_call_id.clone(),
        }));
    };
    let session = entry.session.clone();
    let pending =
        tokio::task::spawn_blocking(move || consent::pending_calls(&session, &transcript))
            .await
            .map_err(|e| QueueError::Travel {
                session: entry.session.clone(),
                reason: e.to_string(),
            })??;
    Ok(consent::binding(&entry.session, &entry.request, &pending))
}

/// Entries `ids` with their answers as the queue keeps them; missing ones are left out.
pub(crate) async fn fetch(
    queue: &Queue,
    ids: &[u64],
) -> Result<Vec<(InboxEntry, Option<QueueAnswer>)>, QueueError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let (entries, answers): (Vec<Option<String>>, Vec<Option<String>>) = queue
        .call("reading the inbox", PATIENCE, |mut con| async move {
            redis::pipe()
                .cmd("HMGET")
                .arg(INBOX)
                .arg(ids)
                .cmd("HMGET")
                .arg(INBOX_ANSWERS)
                .arg(ids)
                .query_async(&mut con)
                .await
        })
        .await?;
    let mut found = Vec::new();
    for ((id, entry), answer) in ids.iter().zip(entries).zip(answers) {
        if let Some(entry) = entry {
            found.push(decode(*id, &entry, answer.as_deref())?);
        }
    }
    Ok(found)
}

/// Entry `id` and its answer, from their JSON.
fn decode(
    id: u64,
    entry: &str,
    answer: Option<&str>,
) -> Result<(InboxEntry, Option<QueueAnswer>), QueueError> {
    let entry = serde_json::from_str(entry)
        .map_err(|e| QueueError::damaged(format!("inbox entry {id}"), e))?;
    let answer = answer
        .map(serde_json::from_str)
        .transpose()
        .map_err(|e| QueueError::damaged(format!("answer to {id}"), e))?;
    Ok((entry, answer))
}

/// Numbers for `count` new entries.
pub(crate) async fn take_numbers(queue: &Queue, count: usize) -> Result<Vec<u64>, QueueError> {
    let last: u64 = queue
        .call("numbering inbox entries", PATIENCE, |mut con| async move {
            redis::cmd("INCRBY")
                .arg(INBOX_NEXT)
                .arg(count)
                .query_async(&mut con)
                .await
        })
        .await?;
    let first = last + 1 - count as u64;
    Ok((first..=last).collect())
}

/// Answers entry `id` with `answer`, once; returns the entry as it was (unanswered) and, for
/// an approval, the digest of the call approved. An approval is given only when the entry's
/// parked session would run exactly the call the entry shows and, with `shown` (the digest
/// `inbox --queue show` printed), that it is still the call shown; nothing is answered
/// otherwise.
pub async fn answer(
    queue: &Queue,
    id: u64,
    answer: &InboxAnswer,
    shown: Option<&str>,
) -> Result<(InboxEntry, Answered, Option<String>), QueueError> {
    let entry = get(queue, id).await?;
    if entry.answer.is_some() {
        return Err(QueueError::AlreadyAnswered(id));
    }
    let Some(item) = entry.batch.clone() else {
        return Err(QueueError::damaged(
            format!("inbox entry {id}"),
            "it names no batch item",
        ));
    };
    let call = if answer.approved {
        match (binding_of(queue, &entry).await?, shown) {
            (Ok(digest), Some(shown)) if shown != digest => {
                return Err(QueueError::ChangedSinceShown {
                    id,
                    reason: format!("its call is now another one (call {digest})"),
                });
            }
            (Ok(digest), _) => Some(digest),
            (Err(unbound), Some(_)) => {
                return Err(QueueError::ChangedSinceShown {
                    id,
                    reason: unbound.to_string(),
                });
            }
            (Err(unbound), None) => {
                return Err(QueueError::NotBound {
                    id,
                    reason: unbound.to_string(),
                });
            }
        }
    } else {
        None
    };
    let kept = QueueAnswer {
        answer: answer.clone(),
        call: call.clone(),
    };
    let keys = BatchKeys::new(&item.batch)?;
    let answer_json = serde_json::to_string(&kept).map_err(|e| QueueError::damaged("answer", e))?;
    let outcome: String = queue
        .call("answering", PATIENCE, |mut con| {
            let mut invocation = ANSWER.key(INBOX);
            invocation
                .key(INBOX_ANSWERS)
                .key(keys.waits(&entry.session))
                .key(keys.items())
                .key(keys.resuming())
                .arg(id)
                .arg(&answer_json)
                .arg(&item.item)
                .arg(&entry.session);
            async move { invocation.invoke_async(&mut con).await }
        })
        .await?;
    match outcome.as_str() {
        "resumed" => Ok((entry, Answered::Resumed, call)),
        "waiting" => Ok((entry, Answered::Waiting, call)),
        "answered" => Err(QueueError::AlreadyAnswered(id)),
        _ => Err(QueueError::NoEntry(id)),
    }
}

/// Removes entries `ids` and their answers (their calls were settled).
pub(crate) async fn remove(queue: &Queue, ids: &[u64]) -> Result<(), QueueError> {
    if ids.is_empty() {
        return Ok(());
    }
    queue
        .call("clearing inbox entries", PATIENCE, |mut con| async move {
            redis::pipe()
                .cmd("HDEL")
                .arg(INBOX)
                .arg(ids)
                .ignore()
                .cmd("HDEL")
                .arg(INBOX_ANSWERS)
                .arg(ids)
                .ignore()
                .query_async::<()>(&mut con)
                .await
        })
        .await
}
