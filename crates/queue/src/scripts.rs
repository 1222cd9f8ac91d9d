//! The Lua scripts that make each step on the queue atomic. Every step that settles a claimed
//! item first checks that the calling consumer still holds it (it is in the group's pending
//! list under that consumer's name): a consumer whose lease ran out, and whose item another
//! consumer claimed, can neither record a result nor keep the lease, so a result is recorded
//! once whatever dies when.

use std::sync::LazyLock;

use redis::Script;

/// The part every settling script starts with: `KEYS[1]` the items stream, `ARGV[1]` the
/// group, `ARGV[2]` the entry id, `ARGV[3]` the consumer. Returns `lost` when the entry is not
/// the consumer's.
const HOLDS: &str = r"
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if #pending == 0 or pending[1][2] ~= ARGV[3] then return 'lost' end
";

fn with_holds(body: &str) -> Script {
    Script::new(&format!("{HOLDS}{body}"))
}

/// Starts a batch: `KEYS[1]` meta, `KEYS[2]` items stream; `ARGV[1]` the group, `ARGV[2]` the
/// meta JSON, then triples of item id, item JSON and the item's trace JSON
/// (`crate::trace::ItemTrace`; empty: none, and the entry has no `trace` field). Returns the
/// meta already there, if any (nothing is added then), else nothing.
pub static ENQUEUE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('XGROUP', 'CREATE', KEYS[2], ARGV[1], '0', 'MKSTREAM')
for i = 3, #ARGV, 3 do
  if ARGV[i + 2] ~= '' then
    redis.call('XADD', KEYS[2], '*', 'id', ARGV[i], 'item', ARGV[i + 1], 'trace', ARGV[i + 2])
  else
    redis.call('XADD', KEYS[2], '*', 'id', ARGV[i], 'item', ARGV[i + 1])
  end
end
redis.call('SET', KEYS[1], ARGV[2])
return false
",
    )
});

/// Keeps a held entry's lease: resets its idle time without counting a delivery. Keys and
/// arguments as [`HOLDS`]. Returns `held` or `lost`.
pub static RENEW: LazyLock<Script> = LazyLock::new(|| {
    with_holds(
        r"
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[3], 0, ARGV[2], 'JUSTID')
return 'held'
",
    )
});

/// Hands a held entry back for any consumer to claim at once (a failed run to be tried
/// again, or one interrupted by a stopping consumer): its idle time is set past any lease.
/// `KEYS[2]` errors hash; `ARGV[4]` item id, `ARGV[5]` the run's error (empty: none).
/// Returns `released` or `lost`.
pub static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    with_holds(
        r"
if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], ARGV[4], ARGV[5]) end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[3], 0, ARGV[2], 'IDLE', 864000000, 'JUSTID')
return 'released'
",
    )
});

/// Records a held item's final result once and acknowledges its entry. `KEYS[2]` results
/// hash, `KEYS[3]` results stream, `KEYS[4]` dead-letter list, `KEYS[5]` parked hash,
/// `KEYS[6]` resuming set;
/// `ARGV[4]` item id, `ARGV[5]` result JSON, `ARGV[6]` dead-letter JSON (empty: not dead).
/// Returns `recorded`, `duplicate` (the item had a result; the entry is acknowledged) or
/// `lost`.
pub static FINISH: LazyLock<Script> = LazyLock::new(|| {
    with_holds(
        r"
if redis.call('HEXISTS', KEYS[2], ARGV[4]) == 1 then
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
  return 'duplicate'
end
redis.call('HSET', KEYS[2], ARGV[4], ARGV[5])
redis.call('XADD', KEYS[3], '*', 'id', ARGV[4], 'result', ARGV[5])
if ARGV[6] ~= '' then redis.call('RPUSH', KEYS[4], ARGV[6]) end
redis.call('HDEL', KEYS[5], ARGV[4])
redis.call('SREM', KEYS[6], ARGV[4])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return 'recorded'
",
    )
});

/// Parks a held item waiting for approvals: its session's transcript, its inbox entries and
/// its waiting result are stored and its entry acknowledged (an answer adds a `resume` entry).
/// `KEYS[2]` results hash, `KEYS[3]` parked hash, `KEYS[4]` inbox hash, `KEYS[5]` the
/// session's waits set, `KEYS[6]` its transcript, `KEYS[7]` the resuming set (a continued item
/// parked again waits for an answer again); `ARGV[4]` item id, `ARGV[5]` `ParkedItem`
/// JSON, `ARGV[6]` the transcript, then pairs of inbox number and entry JSON. Returns
/// `parked`, `duplicate` or `lost`.
pub static PARK: LazyLock<Script> = LazyLock::new(|| {
    with_holds(
        r"
if redis.call('HEXISTS', KEYS[2], ARGV[4]) == 1 then
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
  return 'duplicate'
end
redis.call('DEL', KEYS[5])
for i = 7, #ARGV, 2 do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  redis.call('SADD', KEYS[5], ARGV[i])
end
redis.call('SET', KEYS[6], ARGV[6])
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
redis.call('SREM', KEYS[7], ARGV[4])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return 'parked'
",
    )
});

/// Answers inbox entry `ARGV[1]` once: `KEYS[1]` inbox hash, `KEYS[2]` answers hash,
/// `KEYS[3]` the session's waits set, `KEYS[4]` the batch's items stream, `KEYS[5]` its
/// resuming set; `ARGV[2]` the answer JSON, `ARGV[3]` the item id, `ARGV[4]` the session. When
/// it was the session's last unanswered entry, the item goes back on the stream to be
/// continued, and into the resuming set (it no longer waits for an answer). Returns `missing`,
/// `answered` (before), `waiting` (other entries of the session wait) or `resumed`.
pub static ANSWER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 'missing' end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 'answered' end
redis.call('SREM', KEYS[3], ARGV[1])
if redis.call('SCARD', KEYS[3]) > 0 then return 'waiting' end
redis.call('XADD', KEYS[4], '*', 'id', ARGV[3], 'resume', ARGV[4])
redis.call('SADD', KEYS[5], ARGV[3])
return 'resumed'
",
    )
});

/// Refuses to continue a held parked item (`crate::consent::check_continuation`): the refused
/// answers are withdrawn, their entries wait for a person again, the item leaves the resuming
/// set (it waits for an answer, not for a consumer) and its `resume` entry is acknowledged; the
/// item stays parked with its transcript. `KEYS[2]` the inbox's answers hash, `KEYS[3]` the
/// session's waits set, `KEYS[4]` the resuming set; `ARGV[4]` item id, then the entry numbers.
/// Returns `withdrawn` or `lost`.
pub static WITHDRAW: LazyLock<Script> = LazyLock::new(|| {
    with_holds(
        r"
for i = 5, #ARGV do
  redis.call('HDEL', KEYS[2], ARGV[i])
  redis.call('SADD', KEYS[3], ARGV[i])
end
redis.call('SREM', KEYS[4], ARGV[4])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return 'withdrawn'
",
    )
});

/// Removes a stopping consumer from the group when it holds nothing (removing one that holds
/// entries would drop them from the pending list, and no one could claim them again): `KEYS[1]`
/// the items stream; `ARGV[1]` the group, `ARGV[2]` the consumer. Returns `left` or `holds`.
pub static LEAVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local held = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #held > 0 then return 'holds' end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 'left'
",
    )
});
