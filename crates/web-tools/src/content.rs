//! What a fetched body becomes: HTML converted to markdown (`text`, `text/markdown`; scripts,
//! styles and other non-content elements dropped), JSON as `structured`, other text as `text`,
//! and binary content refused with its type and size. The type comes from `Content-Type`; a
//! response without one is text when it is UTF-8 without NUL bytes, else binary. Text is
//! decoded by its `charset` (UTF-8 when none is given; invalid bytes replaced).

use golem_protocol::{ToolError, ToolErrorCode, ToolResultValue};

use super::nesting::{MAX_DEPTH, flatten_deep};

/// What a body is, as far as `web_fetch` is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    /// HTML (`text/html`, `application/xhtml+xml`).
    Html,
    /// JSON (`application/json`, `…+json`).
    Json,
    /// Other text.
    Text,
    /// Anything else.
    Binary,
}

/// A `Content-Type` value split into its media type (lowercase) and charset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContentType {
    /// `text/html`, …
    pub mime: String,
    /// The `charset` parameter, if any.
    pub charset: Option<String>,
}

impl ContentType {
    /// Parses a header value; `None` when it names no media type.
    pub(crate) fn parse(value: &str) -> Option<ContentType> {
        let mut parts = value.split(';');
        let mime = parts.next()?.trim().to_ascii_lowercase();
        if mime.is_empty() || !mime.contains('/') {
            return None;
        }
        let charset = parts.find_map(|part| {
            let (key, value) = part.split_once('=')?;
            key.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| value.trim().trim_matches('"').to_owned())
        });
        Some(ContentType { mime, charset })
    }

    /// What a body of this type is.
    pub(crate) fn kind(&self) -> BodyKind {
        let mime = self.mime.as_str();
        let (top, sub) = mime.split_once('/').unwrap_or((mime, ""));
        match (top, sub) {
            ("text", "html") | ("application", "xhtml+xml") => BodyKind::Html,
            ("application", "json") => BodyKind::Json,
            (_, sub) if sub.ends_with("+json") => BodyKind::Json,
            ("text", _) => BodyKind::Text,
            ("application", sub)
                if sub.ends_with("+xml")
                    || matches!(
                        sub,
                        "xml"
                            | "javascript"
                            | "ecmascript"
                            | "x-javascript"
                            | "yaml"
                            | "x-yaml"
                            | "toml"
                            | "x-sh"
                            | "sql"
                            | "graphql"
                            | "x-www-form-urlencoded"
                            | "x-ndjson"
                            | "jsonl"
                    ) =>
            {
                BodyKind::Text
            }
            _ => BodyKind::Binary,
        }
    }
}

/// The kind of a body with no `Content-Type`: text if it is UTF-8 without NUL bytes.
pub(crate) fn sniff(body: &[u8]) -> BodyKind {
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        // A cut in the middle of the last character is still text.
        Err(err) if err.error_len().is_none() => {
            std::str::from_utf8(body.get(..err.valid_up_to()).unwrap_or(&[])).unwrap_or("")
        }
        Err(_) => return BodyKind::Binary,
    };
    if text.contains('\0') {
        return BodyKind::Binary;
    }
    let head = text.trim_start().get(..64).unwrap_or(text.trim_start());
    let head = head.to_ascii_lowercase();
    if head.starts_with("<!doctype html") || head.starts_with("<html") {
        BodyKind::Html
    } else {
        BodyKind::Text
    }
}

/// Decodes text by its charset (UTF-8 by default, a BOM wins); invalid bytes become U+FFFD.
pub(crate) fn decode(body: &[u8], charset: Option<&str>) -> String {
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// HTML as markdown, without scripts, styles and other elements that are not content; markup
/// nested deeper than [`MAX_DEPTH`] is flattened first (`nesting.rs`), and the markdown then
/// ends with a line that says so.
pub(crate) fn html_to_markdown(html: &str) -> String {
    let (html, flattened) = flatten_deep(html, MAX_DEPTH);
    let mut markdown = convert(&html);
    if flattened {
        markdown.push_str(&format!(
            "\n\n[golem-forge: the page nests deeper than {MAX_DEPTH} levels; the markup below \
             that depth was flattened to its text]\n"
        ));
    }
    markdown
}

fn convert(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "head", "svg", "canvas", "iframe", "object",
            "embed", "link", "meta",
        ])
        .scripting_enabled(false)
        .build();
    match converter.convert(html) {
        Ok(markdown) => markdown,
        // htmd reads from a string and never fails; keep the text rather than lose it.
        Err(_) => html.to_owned(),
    }
}

/// A size in words: `812 bytes`, `12.3 kB`, `4.1 MB`.
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// A fetched response, ready to become a result.
#[derive(Debug)]
pub(crate) struct Fetched {
    /// The status code.
    pub code: u16,
    /// `200 OK`, …
    pub status: String,
    /// The media type, when the response named one.
    pub content_type: Option<ContentType>,
    /// The body (empty when a binary body was not read).
    pub body: Vec<u8>,
    /// The size of the body: what was read, or the `Content-Length` of a body left unread.
    pub size: u64,
}

impl Fetched {
    /// The body's kind: from its type, else by looking at it.
    pub(crate) fn kind(&self) -> BodyKind {
        match &self.content_type {
            Some(content_type) => content_type.kind(),
            None => sniff(&self.body),
        }
    }

    /// The media type in words (`unknown type` when none was given).
    pub(crate) fn mime(&self) -> &str {
        self.content_type
            .as_ref()
            .map_or("unknown type", |c| c.mime.as_str())
    }

    /// `200 OK · text/html · 12.3 kB`.
    pub(crate) fn summary(&self) -> String {
        format!("{} · {} · {}", self.status, self.mime(), size(self.size))
    }

    /// The result: markdown, structured JSON or text; binary content is an error.
    pub(crate) fn into_result(self, url: &str) -> Result<ToolResultValue, ToolError> {
        let summary = self.summary();
        let charset = self
            .content_type
            .as_ref()
            .and_then(|c| c.charset.as_deref());
        match self.kind() {
            BodyKind::Binary => Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "{url} is binary content ({}, {}); web_fetch returns HTML, JSON and \
                     other text only",
                    self.mime(),
                    size(self.size)
                ),
            )
            .with_details(serde_json::json!({
                "status": self.status,
                "contentType": self.mime(),
                "bytes": self.size,
            }))),
            BodyKind::Html => {
                let markdown = html_to_markdown(&decode(&self.body, charset));
                Ok(ToolResultValue::markdown(markdown).with_summary(summary))
            }
            BodyKind::Json => {
                let text = decode(&self.body, charset);
                match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(value) => Ok(ToolResultValue::structured(value)
                        .with_summary(summary)
                        .with_mime_type("application/json")),
                    Err(err) => Ok(ToolResultValue::text(text)
                        .with_summary(format!("{summary} · not valid JSON: {err}"))
                        .with_mime_type(self.mime().to_owned())),
                }
            }
            BodyKind::Text => {
                let mime = self.mime().to_owned();
                let text = decode(&self.body, charset);
                let value = ToolResultValue::text(text).with_summary(summary);
                Ok(match self.content_type {
                    Some(_) => value.with_mime_type(mime),
                    None => value,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(content_type: &str) -> BodyKind {
        ContentType::parse(content_type)
            .unwrap_or_else(|| panic!("{content_type}"))
            .kind()
    }

    #[test]
    fn content_types_decide_the_kind() {
        assert_eq!(kind("text/html; charset=utf-8"), BodyKind::Html);
        assert_eq!(kind("TEXT/HTML"), BodyKind::Html);
        assert_eq!(kind("application/xhtml+xml"), BodyKind::Html);
        assert_eq!(kind("application/json"), BodyKind::Json);
        assert_eq!(kind("application/problem+json"), BodyKind::Json);
        assert_eq!(kind("text/plain"), BodyKind::Text);
        assert_eq!(kind("text/csv"), BodyKind::Text);
        assert_eq!(kind("application/xml"), BodyKind::Text);
        assert_eq!(kind("application/atom+xml"), BodyKind::Text);
        assert_eq!(kind("application/javascript"), BodyKind::Text);
        assert_eq!(kind("image/png"), BodyKind::Binary);
        assert_eq!(kind("application/octet-stream"), BodyKind::Binary);
        assert_eq!(kind("application/pdf"), BodyKind::Binary);
        assert_eq!(ContentType::parse(""), None);
        assert_eq!(ContentType::parse("html"), None);
        assert_eq!(
            ContentType::parse("text/html; Charset=\"ISO-8859-1\"")
                .unwrap()
                .charset
                .as_deref(),
            Some("ISO-8859-1")
        );
    }

    #[test]
    fn untyped_bodies_are_sniffed() {
        assert_eq!(sniff(b"hello"), BodyKind::Text);
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x"), BodyKind::Html);
        assert_eq!(sniff(b"<html><body>x"), BodyKind::Html);
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0"), BodyKind::Binary);
        assert_eq!(sniff(b"a\0b"), BodyKind::Binary);
        assert_eq!(sniff(&[b'a', 0xc3]), BodyKind::Text);
        assert_eq!(sniff(&[0xff, 0xfe, 0x00]), BodyKind::Binary);
    }

    #[test]
    fn text_is_decoded_by_its_charset() {
        assert_eq!(decode(b"caf\xe9", Some("iso-8859-1")), "café");
        assert_eq!(decode("café".as_bytes(), None), "café");
        assert_eq!(decode(b"caf\xe9", None), "caf\u{fffd}");
        assert_eq!(decode("café".as_bytes(), Some("no-such-charset")), "café");
    }

    /// Runs `f` on a thread with half the stack of a Tokio worker (1 MiB of its 2 MiB), so that
    /// a converter recursing once per level would overflow it.
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn a_page_nested_without_end_converts_flattened_on_a_small_stack() {
        for (open, close) in [
            ("<div>", "</div>"),
            ("<b>", "</b>"),
            ("<ul><li>", "</li></ul>"),
        ] {
            let html = format!(
                "<html><body>{}deep text{}</body></html>",
                open.repeat(200_000),
                close.repeat(200_000)
            );
            let markdown = on_small_stack(move || html_to_markdown(&html));
            assert!(markdown.contains("deep text"), "{open}");
            assert!(
                markdown.contains("nests deeper than 128 levels"),
                "{open}: {}",
                &markdown[markdown.len().saturating_sub(300)..]
            );
        }
        // Under the limit nothing is flattened or said.
        let html = format!("{}x{}", "<div>".repeat(120), "</div>".repeat(120));
        let markdown = on_small_stack(move || html_to_markdown(&html));
        assert!(!markdown.contains("nests deeper"), "{markdown}");
    }

    #[test]
    fn html_becomes_markdown_without_scripts_and_styles() {
        let html = "<!doctype html><html><head><title>T</title><style>p{color:red}</style>\
                    <script>alert('x')</script></head><body><h1>Title</h1>\
                    <p>Some <b>bold</b> and a <a href=\"https://docs.rs/\">link</a>.</p>\
                    <script>document.write('no')</script><noscript>enable js</noscript>\
                    <ul><li>one</li><li>two</li></ul></body></html>";
        let markdown = html_to_markdown(html);
        assert!(markdown.starts_with("# Title"), "{markdown}");
        assert!(markdown.contains("**bold**"), "{markdown}");
        assert!(markdown.contains("[link](https://docs.rs/)"), "{markdown}");
        assert!(
            markdown.contains("*   one") || markdown.contains("- one"),
            "{markdown}"
        );
        for gone in ["alert", "color:red", "document.write", "enable js"] {
            assert!(!markdown.contains(gone), "{gone}: {markdown}");
        }
    }

    #[test]
    fn sizes_in_words() {
        assert_eq!(size(0), "0 bytes");
        assert_eq!(size(999), "999 bytes");
        assert_eq!(size(12_345), "12.3 kB");
        assert_eq!(size(2_000_000), "2.0 MB");
    }

    #[test]
    fn results_of_each_kind() {
        let fetched = |content_type: Option<&str>, body: &[u8]| Fetched {
            code: 200,
            status: "200 OK".into(),
            content_type: content_type.and_then(ContentType::parse),
            body: body.to_vec(),
            size: body.len() as u64,
        };
        let json = fetched(Some("application/json"), br#"{"a": [1, 2]}"#)
            .into_result("u")
            .unwrap();
        assert_eq!(json.kind, "structured");
        assert_eq!(json.data, serde_json::json!({"a": [1, 2]}));
        assert_eq!(
            json.summary.as_deref(),
            Some("200 OK · application/json · 13 bytes")
        );
        let broken = fetched(Some("application/json"), b"{oops")
            .into_result("u")
            .unwrap();
        assert_eq!(broken.kind, "text");
        assert!(broken.summary.unwrap().contains("not valid JSON"));
        let text = fetched(None, b"plain").into_result("u").unwrap();
        assert_eq!((text.kind.as_str(), text.mime_type), ("text", None));
        let err = fetched(Some("image/png"), &[0u8; 2048])
            .into_result("http://x/p.png")
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert_eq!(
            err.message,
            "http://x/p.png is binary content (image/png, 2.0 kB); web_fetch returns HTML, \
             JSON and other text only"
        );
    }
}
