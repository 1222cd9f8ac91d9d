//! One tab's WebSocket at `/ws`: it gets the session so far and then every display event, one
//! JSON event per text frame, and sends action events the same way. A frame that is not an
//! action event gets a `status` error back (to that tab only) and ends nothing. The socket
//! closes when the session ends.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use futures::{SinkExt, StreamExt};
use golem_protocol::{ActionEvent, DisplayEvent, StatusLevel};
use golem_runtime::host::ActionSender;
use tokio::sync::mpsc;

use crate::log::{Frame, SessionLog, frame};

/// The largest frame a tab may send (a big edited file in an approval still fits).
const MAX_FRAME: usize = 8 << 20;

/// What every tab's socket shares.
pub struct Tabs {
    /// The session so far and the live feed.
    pub log: Arc<SessionLog>,
    /// Where actions go.
    pub actions: ActionSender,
}

/// `GET /ws`: upgrades to a WebSocket for one tab.
pub async fn upgrade(State(tabs): State<Arc<Tabs>>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| tab(socket, tabs))
}

async fn tab(socket: WebSocket, tabs: Arc<Tabs>) {
    let (mut sink, mut stream) = socket.split();
    let feed = tabs.log.connect();
    let (own, mut own_rx) = mpsc::unbounded_channel::<Frame>();
    let writer = tokio::spawn(async move {
        let mut live = feed.live;
        for frame in feed.snapshot {
            if sink.send(text(frame)).await.is_err() {
                return;
            }
        }
        loop {
            let next = tokio::select! {
                frame = live.recv() => frame,
                Some(frame) = own_rx.recv() => Some(frame),
            };
            let Some(frame) = next else {
                // The session is over.
                let _ = sink.send(Message::Close(None)).await;
                return;
            };
            if sink.send(text(frame)).await.is_err() {
                return;
            }
        }
    });
    while let Some(message) = stream.next().await {
        let problem = match message {
            Ok(Message::Text(body)) => match serde_json::from_str::<ActionEvent>(body.as_str()) {
                Ok(action) => {
                    tabs.actions.send(action);
                    None
                }
                Err(e) => Some(format!(
                    "the page sent a frame that is not an action event: {e}"
                )),
            },
            Ok(Message::Binary(_)) => {
                Some("the page sent a binary frame; send JSON text".to_owned())
            }
            Ok(Message::Ping(_) | Message::Pong(_)) => None,
            Ok(Message::Close(_)) | Err(_) => break,
        };
        if let Some(problem) = problem {
            tracing::debug!(%problem, "a malformed frame from a tab");
            let status = DisplayEvent::Status {
                level: StatusLevel::Error,
                message: problem,
            };
            if let Some(frame) = frame(&status) {
                let _ = own.send(frame);
            }
        }
    }
    writer.abort();
}

fn text(frame: Frame) -> Message {
    Message::Text(Utf8Bytes::from(frame.as_ref()))
}
