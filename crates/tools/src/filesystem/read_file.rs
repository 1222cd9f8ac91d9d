//! `read_file {path, encoding?, offset?, limit?}` → `file_content`; pre-approved.
//!
//! Text (`utf-8`, the default) is read by lines: `offset` lines are skipped and at most `limit`
//! (default 2,000) lines and 256 KiB are returned, with a marker saying how to read on. Binary
//! files (NUL bytes or invalid UTF-8) are refused in utf-8 mode with a hint to use `base64`;
//! in base64 mode `offset` and `limit` count bytes.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::tool::{ManualExecution, PreApprovedTool, ToolContext, ToolInfo};
use golem_protocol::result::FileContentData;
use golem_protocol::{DisplayHints, ToolError, ToolErrorCode, ToolKind, ToolResultValue};
use golem_sandbox::ZonePath;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::content::{Encoding, byte_window, language, mime_type, text_prefix, text_window};
use super::{Fs, blocking};

/// Read a file from the sandbox. Text comes back as UTF-8, a window of lines at a time (large
/// files are truncated with a marker that says how to read on); binary files must be read with
/// encoding "base64".
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// The file.
    path: String,
    /// "utf-8" (default) for text, "base64" for binary files.
    #[serde(default)]
    encoding: Option<Encoding>,
    /// Lines to skip (default 0).
    #[serde(default)]
    offset: Option<u64>,
    /// The most lines to return (default 2000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

/// What the model and the user see of `read_file` (the user may run it too: `/read_file …`
/// in a chat).
static INFO: LazyLock<ToolInfo> = LazyLock::new(|| {
    ToolInfo::new::<ReadFileArgs>(
        "read_file",
        "Read a file from the sandbox (path /<zone>/<path>). Text comes back as UTF-8, at most \
         2000 lines or 256 KiB per call; a truncated read ends with a marker giving the offset \
         to read on. Binary files need encoding \"base64\" (offset and limit then count bytes).",
    )
    .with_kind(ToolKind::Read)
    .with_execution(ManualExecution::both("Read a file", Some("Files")))
    .with_approval_policy("pre-approved")
});

/// The `read_file` tool.
pub struct ReadFile {
    fs: Arc<Fs>,
}

impl ReadFile {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

fn to_usize(n: Option<u64>) -> Option<usize> {
    n.map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn read(fs: &Fs, args: ReadFileArgs) -> Result<ToolResultValue, ToolError> {
    let p = fs.sandbox.resolve(&args.path)?;
    let offset = to_usize(args.offset).unwrap_or(0);
    let limit = to_usize(args.limit);
    match args.encoding.unwrap_or_default() {
        Encoding::Utf8 => read_text(fs, &p, offset, limit),
        Encoding::Base64 => read_base64(fs, &p, offset, limit),
    }
}

fn read_text(
    fs: &Fs,
    p: &ZonePath,
    offset: usize,
    limit: Option<usize>,
) -> Result<ToolResultValue, ToolError> {
    let vpath = p.virtual_path();
    let limits = fs.limits.read;
    // From the top, a prefix is enough (a few bytes more than the limit, so a character cut at
    // the end can be dropped and the window still knows the file goes on); further down, the
    // lines before the offset must be read to be counted.
    let (bytes, size) = if offset == 0 {
        let want = u64::try_from(limits.max_bytes.saturating_add(4)).unwrap_or(u64::MAX);
        fs.sandbox.read_prefix(p, want)?
    } else {
        let bytes = fs.sandbox.read(p)?;
        let size = bytes.len() as u64;
        (bytes, size)
    };
    let complete = bytes.len() as u64 == size;
    let text = if complete {
        super::content::as_text(&bytes)
    } else {
        text_prefix(&bytes)
    };
    let Some(text) = text else {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!(
                "{vpath} is a binary file ({size} bytes; it has NUL bytes or is not valid \
                 UTF-8) and cannot be shown as text; call read_file with encoding \"base64\""
            ),
        ));
    };
    let window = text_window(
        text,
        complete,
        offset,
        limit.unwrap_or(limits.max_lines),
        limits.max_bytes,
    )
    .map_err(|past| {
        ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!(
                "offset {offset} is past the end of {vpath}, which has {} lines; use an \
                 offset below {}",
                past.total, past.total
            ),
        )
    })?;
    let mut content = window.text.to_owned();
    let marker = window.marker(&vpath, size);
    if let Some(marker) = &marker {
        if !content.is_empty() && !content.ends_with('\n') {
            content.push('\n');
        }
        content.push_str(marker);
    }
    let summary = match (window.truncated, window.total_lines) {
        (false, Some(total)) if offset == 0 => format!("{vpath} ({size} bytes, {total} lines)"),
        (truncated, _) => format!(
            "{vpath}: lines {}-{} of {} ({size} bytes){}",
            offset + 1,
            offset + window.lines,
            window
                .total_lines
                .map_or_else(|| "more".to_owned(), |t| t.to_string()),
            if truncated { ", truncated" } else { "" }
        ),
    };
    let mut extra = json!({ "offset": offset, "lines": window.lines });
    if let Some(total) = window.total_lines {
        extra["totalLines"] = json!(total);
    }
    if window.truncated {
        extra["truncated"] = json!(true);
        extra["nextOffset"] = json!(window.next_offset());
    }
    Ok(result(&vpath, content, size, Encoding::Utf8, extra).with_summary(summary))
}

fn read_base64(
    fs: &Fs,
    p: &ZonePath,
    offset: usize,
    limit: Option<usize>,
) -> Result<ToolResultValue, ToolError> {
    let vpath = p.virtual_path();
    let max = fs.limits.read.max_bytes;
    let want = offset.saturating_add(limit.unwrap_or(max).min(max));
    let (bytes, size) = fs
        .sandbox
        .read_prefix(p, u64::try_from(want).unwrap_or(u64::MAX))?;
    // An empty prefix and a non-empty file mean the offset is at or past its end.
    let total = usize::try_from(size).unwrap_or(usize::MAX);
    let window = byte_window(&bytes, offset, limit, max).map_err(|_| {
        ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("offset {offset} is past the end of {vpath}, which has {total} bytes"),
        )
    })?;
    let end = offset + window.len();
    let truncated = end < total;
    let mut extra = json!({ "offset": offset, "bytes": window.len() });
    let mut summary = format!("{vpath} ({size} bytes, base64)");
    if truncated || offset > 0 {
        summary = format!("{vpath}: bytes {offset}-{end} of {size} (base64)");
    }
    if truncated {
        extra["truncated"] = json!(true);
        extra["nextOffset"] = json!(end);
        summary.push_str(&format!(
            ", truncated; call read_file with encoding \"base64\" and offset={end} to read on"
        ));
    }
    let content = Encoding::encode(window);
    Ok(result(&vpath, content, size, Encoding::Base64, extra).with_summary(summary))
}

/// A `file_content` result with extra fields beside the well-known ones.
fn result(
    vpath: &str,
    content: String,
    size: u64,
    encoding: Encoding,
    extra: Value,
) -> ToolResultValue {
    let data = FileContentData {
        path: vpath.to_owned(),
        content,
        size,
        encoding: Some(encoding.as_str().to_owned()),
    };
    let mut value = ToolResultValue::file_content(data);
    if let (Value::Object(map), Value::Object(extra)) = (&mut value.data, extra) {
        map.extend(extra);
    }
    if let Some(mime) = mime_type(vpath) {
        value = value.with_mime_type(mime);
    }
    if let Some(lang) = language(vpath)
        && encoding == Encoding::Utf8
    {
        value = value.with_display(DisplayHints {
            language: Some(lang.to_owned()),
            ..DisplayHints::default()
        });
    }
    value
}

#[async_trait]
impl PreApprovedTool for ReadFile {
    type Args = ReadFileArgs;

    fn info(&self) -> &ToolInfo {
        &INFO
    }

    fn describe(&self, args: &ReadFileArgs) -> String {
        format!("Read {}", args.path)
    }

    async fn execute(
        &self,
        args: ReadFileArgs,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let fs = self.fs.clone();
        blocking(move || read(&fs, args)).await
    }
}
