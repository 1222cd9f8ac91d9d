//! An MCP `tools/call` result as a [`ToolResultValue`]: a single text block → `text`, an image
//! → `image`, an embedded resource → `file_content` (text or base64) or `text`,
//! `structuredContent` → `structured`; text blocks beside a single other block become its
//! summary, several non-text blocks a `structured` list of each block's result; `isError` → an
//! `EXECUTION_ERROR` carrying the server's text.

use golem_protocol::result::{FileContentData, ImageData};
use golem_protocol::{ToolError, ToolErrorCode, ToolResultValue};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};

/// The result of a call of `what` (`everything__echo`, for messages).
pub fn map_result(what: &str, result: CallToolResult) -> Result<ToolResultValue, ToolError> {
    if result.is_error == Some(true) {
        let text = texts(&result.content);
        let message = if text.is_empty() {
            format!("{what} failed (the server gave no message)")
        } else {
            format!("{what} failed: {text}")
        };
        return Err(ToolError::new(ToolErrorCode::ExecutionError, message));
    }
    if let Some(structured) = result.structured_content {
        return Ok(ToolResultValue::structured(structured));
    }
    let text = texts(&result.content);
    let mut others: Vec<ToolResultValue> = result
        .content
        .into_iter()
        .filter(|b| !matches!(b, ContentBlock::Text(_)))
        .map(block)
        .collect();
    match others.len() {
        0 => Ok(ToolResultValue::text(text)),
        // One image or resource among texts: that block, the texts its summary (and an
        // image's alternative text).
        1 => {
            let mut value = others.remove(0);
            if !text.is_empty() {
                if value.kind == "image"
                    && let Some(data) = value.data.as_object_mut()
                {
                    data.insert("alt".to_owned(), Value::String(text.clone()));
                }
                value = value.with_summary(text);
            }
            Ok(value)
        }
        n => {
            let mut blocks: Vec<Value> = others
                .iter()
                .map(|b| serde_json::to_value(b).unwrap_or(Value::Null))
                .collect();
            if !text.is_empty() {
                blocks.insert(
                    0,
                    serde_json::to_value(ToolResultValue::text(text)).unwrap_or(Value::Null),
                );
            }
            Ok(ToolResultValue::structured(json!({ "content": blocks }))
                .with_summary(format!("{n} content blocks")))
        }
    }
}

/// The text blocks of `content`, joined.
fn texts(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One content block.
fn block(block: ContentBlock) -> ToolResultValue {
    match block {
        ContentBlock::Text(text) => ToolResultValue::text(text.text),
        ContentBlock::Image(image) => ToolResultValue::image(
            ImageData {
                base64: Some(image.data),
                ..ImageData::default()
            },
            image.mime_type,
        ),
        ContentBlock::Audio(audio) => ToolResultValue::new(
            "audio",
            json!({ "base64": audio.data, "mimeType": audio.mime_type }),
        )
        .with_mime_type(audio.mime_type),
        ContentBlock::Resource(embedded) => resource(embedded.resource),
        ContentBlock::ResourceLink(link) => {
            ToolResultValue::text(format!("resource {} ({})", link.name, link.uri))
        }
        other => ToolResultValue::structured(serde_json::to_value(&other).unwrap_or(Value::Null)),
    }
}

/// An embedded resource: its contents as a file named by its URI.
fn resource(contents: ResourceContents) -> ToolResultValue {
    match contents {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => {
            let size = text.len() as u64;
            let value = ToolResultValue::file_content(FileContentData {
                path: uri,
                content: text,
                size,
                encoding: None,
            });
            match mime_type {
                Some(mime) => value.with_mime_type(mime),
                None => value,
            }
        }
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let size = (blob.len() as u64 / 4) * 3;
            let value = ToolResultValue::file_content(FileContentData {
                path: uri,
                content: blob,
                size,
                encoding: Some("base64".to_owned()),
            });
            match mime_type {
                Some(mime) => value.with_mime_type(mime),
                None => value,
            }
        }
        other => ToolResultValue::structured(serde_json::to_value(&other).unwrap_or(Value::Null)),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ContentBlock, EmbeddedResource, TextContent};

    use super::*;

    fn result(content: Vec<ContentBlock>) -> CallToolResult {
        serde_json::from_value(json!({ "content": content })).unwrap()
    }

    fn text(text: &str) -> ContentBlock {
        ContentBlock::Text(TextContent::new(text))
    }

    #[test]
    fn each_kind_of_content_is_mapped() {
        let value = map_result("s__t", result(vec![text("a"), text("b")])).unwrap();
        assert_eq!(
            (value.kind.as_str(), &value.data["content"]),
            ("text", &json!("a\nb"))
        );

        let image: ContentBlock = serde_json::from_value(
            json!({"type": "image", "data": "iVBO", "mimeType": "image/png"}),
        )
        .unwrap();
        let value = map_result("s__t", result(vec![text("the logo"), image])).unwrap();
        assert_eq!(value.kind, "image");
        assert_eq!(value.mime_type.as_deref(), Some("image/png"));
        assert_eq!(value.data["base64"], "iVBO");
        assert_eq!(value.data["alt"], "the logo");

        let file = ContentBlock::Resource(EmbeddedResource::new(ResourceContents::text(
            "hello",
            "file:///a.txt",
        )));
        let value = map_result("s__t", result(vec![file])).unwrap();
        assert_eq!(value.kind, "file_content");
        assert_eq!(value.data["path"], "file:///a.txt");
        assert_eq!(value.data["content"], "hello");

        let mut structured = result(vec![text("{\"t\":1}")]);
        structured.structured_content = Some(json!({"t": 1}));
        let value = map_result("s__t", structured).unwrap();
        assert_eq!(
            (value.kind.as_str(), &value.data),
            ("structured", &json!({"t": 1}))
        );
    }

    #[test]
    fn is_error_is_an_error_result_with_the_servers_text() {
        let mut failed = result(vec![text("no such city")]);
        failed.is_error = Some(true);
        let error = map_result("weather__get", failed).unwrap_err();
        assert_eq!(error.code, ToolErrorCode::ExecutionError);
        assert_eq!(error.message, "weather__get failed: no such city");
    }
}
