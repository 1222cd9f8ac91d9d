//! The queue's approval inbox: calls parked by items of any batch on the queue, numbered from
//! one counter, listed and answered from any machine (`golem-forge inbox --queue …`). An
//! answer is given once; when it settles the last call its session waited for, the item goes
//! back on its batch's stream and the next free consumer continues it (`crate::travel`).

use std::collections::HashMap;

use golem_protocol::{InboxAnswer, InboxEntry};

use crate::connect::Queue;
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
        list.push(InboxEntry { answer, ..entry });
    }
    list.sort_by_key(|entry| entry.id);
    Ok(list)
}

/// Entry `id`, with its answer if given.
pub async fn get(queue: &Queue, id: u64) -> Result<InboxEntry, QueueError> {
    let mut found = fetch(queue, &[id]).await?;
    match found.pop() {
        Some((entry, answer)) => Ok(InboxEntry { answer, ..entry }),
        None => Err(QueueError::NoEntry(id)),
    }
}

/// Entries `ids` with their answers; missing ones are left out.
pub(crate) async fn fetch(
    queue: &Queue,
    ids: &[u64],
) -> Result<Vec<(InboxEntry, Option<InboxAnswer>)>, QueueError> {
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
) -> Result<(InboxEntry, Option<InboxAnswer>), QueueError> {
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

/// Answers entry `id` with `answer`, once; returns the entry as it was (unanswered).
pub async fn answer(
    queue: &Queue,
    id: u64,
    answer: &InboxAnswer,
) -> Result<(InboxEntry, Answered), QueueError> {
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
    let keys = BatchKeys::new(&item.batch)?;
    let answer_json =
        serde_json::to_string(answer).map_err(|e| QueueError::damaged("answer", e))?;
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
        "resumed" => Ok((entry, Answered::Resumed)),
        "waiting" => Ok((entry, Answered::Waiting)),
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
