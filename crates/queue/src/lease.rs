//! A claimed item's lease: while the item runs, the consumer resets the entry's idle time every
//! third of the lease, so that no other consumer claims it. Renewing checks that the entry is
//! still this consumer's: when it is not (the consumer was stalled past its lease and another
//! claimed the item), the run is cancelled and its result will be dropped.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::connect::Queue;
use crate::keys::{BatchKeys, GROUP};
use crate::scripts::RENEW;

/// A held stream entry: which batch, which entry, whose.
#[derive(Debug, Clone)]
pub struct Held {
    /// The batch's keys.
    pub keys: BatchKeys,
    /// The entry's id in the items stream.
    pub entry: String,
    /// The consumer holding it.
    pub consumer: String,
}

impl Held {
    /// The script arguments every settling step starts with.
    pub(crate) fn args(&self) -> [&str; 3] {
        [GROUP, &self.entry, &self.consumer]
    }

    /// Keeps the lease of `lease` on the entry until `stop` is cancelled; cancels `lost` when
    /// the entry is no longer this consumer's.
    pub async fn keep(
        self,
        queue: Queue,
        lease: Duration,
        stop: CancellationToken,
        lost: CancellationToken,
    ) {
        let every = (lease / 3).max(Duration::from_millis(100));
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            let renewed: Result<String, _> = queue
                .call("renewing a lease", Some(lease), |mut con| {
                    let mut invocation = RENEW.key(self.keys.items());
                    invocation.arg(&self.args()[..]);
                    async move { invocation.invoke_async(&mut con).await }
                })
                .await;
            match renewed.as_deref() {
                Ok("held") => {}
                Ok(_) => {
                    tracing::warn!(entry = %self.entry, "the lease was lost: another consumer took the item");
                    lost.cancel();
                    return;
                }
                Err(error) => {
                    tracing::warn!(%error, entry = %self.entry, "the lease could not be renewed");
                }
            }
        }
    }
}
