//! `InterruptSignal`: how a UI (Ctrl+C, an `interrupt` action) tells the running turn to stop
//! (docs/protocol.md, Interrupts).
//!
//! The signal only records and broadcasts the wish to stop; it must not stop anything itself.
//! Runtime code checks it between steps, or hands its [`CancellationToken`] to whatever awaits
//! (model requests, approval prompts, running tools) so those end early.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use golem_protocol::ActionEvent;
use tokio_util::sync::CancellationToken;

use crate::bus::UiEventBus;

/// A resettable interrupt flag with cancellation tokens. Clones share the same signal.
#[derive(Debug, Clone, Default)]
pub struct InterruptSignal {
    current: Arc<Mutex<CancellationToken>>,
}

impl InterruptSignal {
    /// A signal that is not interrupted.
    pub fn new() -> Self {
        Self::default()
    }

    fn current(&self) -> MutexGuard<'_, CancellationToken> {
        // Nothing panics while the lock is held; a poisoned lock still holds a valid token.
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Interrupts: cancels every token handed out since the last reset and wakes every
    /// [`InterruptSignal::interrupted`] waiter. Idempotent.
    pub fn interrupt(&self) {
        self.current().cancel();
    }

    /// Clears the interrupt for the next run. Tokens handed out before an interrupt stay
    /// cancelled; tokens handed out from now on are fresh. Without a pending interrupt this
    /// changes nothing (earlier tokens still fire on the next interrupt).
    pub fn reset(&self) {
        let mut current = self.current();
        if current.is_cancelled() {
            *current = CancellationToken::new();
        }
    }

    /// Whether an interrupt happened since the last reset.
    pub fn is_interrupted(&self) -> bool {
        self.current().is_cancelled()
    }

    /// Resolves when the signal is interrupted (at once if it already is).
    pub async fn interrupted(&self) {
        self.token().cancelled_owned().await;
    }

    /// A token cancelled by the next [`InterruptSignal::interrupt`] (already cancelled if the
    /// signal is interrupted now). It is a child token: cancelling it yourself stops only what
    /// you gave it to, not the signal.
    pub fn token(&self) -> CancellationToken {
        self.current().child_token()
    }

    /// Spawns a task that interrupts this signal whenever an `interrupt` action arrives on
    /// `bus`. It subscribes before returning, so no action sent afterwards is missed, and ends
    /// when the bus closes (abort the handle to stop it sooner). Must be called within a Tokio
    /// runtime.
    pub fn interrupt_on_action(&self, bus: &UiEventBus) -> tokio::task::JoinHandle<()> {
        let mut actions = bus.subscribe_actions();
        let signal = self.clone();
        tokio::spawn(async move {
            while let Some(action) = actions.recv().await {
                if let ActionEvent::Interrupt { reason } = action {
                    tracing::debug!(reason = reason.as_deref(), "interrupt requested by the UI");
                    signal.interrupt();
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn starts_clear() {
        let signal = InterruptSignal::new();
        assert!(!signal.is_interrupted());
        assert!(!signal.token().is_cancelled());
        signal.reset();
        assert!(!signal.is_interrupted());
    }

    #[tokio::test]
    async fn interrupt_wakes_every_waiter_and_cancels_tokens() {
        let signal = InterruptSignal::default();
        let token = signal.token();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let signal = signal.clone();
                tokio::spawn(async move { signal.interrupted().await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert!(waiters.iter().all(|w| !w.is_finished()));
        signal.clone().interrupt();
        for waiter in waiters {
            waiter.await.unwrap();
        }
        assert!(token.is_cancelled());
        assert!(signal.is_interrupted());
        assert!(signal.token().is_cancelled());
        // Already interrupted: resolves at once.
        tokio::time::timeout(Duration::from_secs(1), signal.interrupted())
            .await
            .unwrap();
        signal.interrupt();
        assert!(signal.is_interrupted());
    }

    #[tokio::test]
    async fn reset_hands_out_fresh_tokens_old_stay_cancelled() {
        let signal = InterruptSignal::new();
        let old = signal.token();
        signal.interrupt();
        signal.reset();
        assert!(!signal.is_interrupted());
        assert!(old.is_cancelled());
        let fresh = signal.token();
        assert!(!fresh.is_cancelled());
        signal.interrupt();
        assert!(fresh.is_cancelled());
    }

    #[tokio::test]
    async fn reset_without_interrupt_keeps_tokens_live() {
        let signal = InterruptSignal::new();
        let early = signal.token();
        signal.reset();
        signal.interrupt();
        assert!(early.is_cancelled());
    }

    #[tokio::test]
    async fn cancelling_a_token_does_not_interrupt_the_signal() {
        let signal = InterruptSignal::new();
        signal.token().cancel();
        assert!(!signal.is_interrupted());
        assert!(!signal.token().is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn waiter_blocks_until_interrupt() {
        let signal = InterruptSignal::new();
        let waited = tokio::time::timeout(Duration::from_secs(10), signal.interrupted()).await;
        assert!(waited.is_err());
    }

    #[tokio::test]
    async fn interrupt_on_action_interrupts() {
        let bus = UiEventBus::new();
        let signal = InterruptSignal::new();
        let task = signal.interrupt_on_action(&bus);
        let token = signal.token();
        bus.send_action(ActionEvent::UserInput {
            request_id: None,
            content: "hi".into(),
        });
        tokio::task::yield_now().await;
        assert!(!signal.is_interrupted());
        bus.send_action(ActionEvent::Interrupt {
            reason: Some("Ctrl+C".into()),
        });
        signal.interrupted().await;
        assert!(token.is_cancelled());
        // Works again after a reset.
        signal.reset();
        assert!(!signal.is_interrupted());
        bus.send_action(ActionEvent::Interrupt { reason: None });
        signal.interrupted().await;
        assert!(signal.is_interrupted());
        // The task ends when the bus closes.
        drop(bus);
        task.await.unwrap();
    }
}
