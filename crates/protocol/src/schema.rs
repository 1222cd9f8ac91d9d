//! The JSON Schema of the event protocol, generated from the types with schemars. The committed
//! copy (`crates/protocol/schema/events.schema.json`) is checked by a test to be current.

use crate::events::{PROTOCOL_VERSION, ProtocolEvent};

/// The JSON Schema describing every display and action event and the events of
/// `batch --json` and `test --json`, as pretty JSON with a trailing newline.
pub fn protocol_schema_json() -> String {
    let mut schema = schemars::schema_for!(ProtocolEvent);
    schema.insert(
        "$id".into(),
        format!("https://golem-forge.dev/schema/events-{PROTOCOL_VERSION}.json").into(),
    );
    schema.insert("title".into(), "Golem Forge event protocol".into());
    schema.insert("x-protocol-version".into(), PROTOCOL_VERSION.into());
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
