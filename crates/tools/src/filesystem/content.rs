//! File content helpers for `read_file` and the write tools: binary detection, the window of
//! lines (or bytes) a read returns with its truncation marker, and MIME type / language hints
//! from file extensions, and the `encoding` argument. Pure: no I/O.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use golem_protocol::{ToolError, ToolErrorCode};
use schemars::JsonSchema;
use serde::Deserialize;

pub use golem_toolset::text::{as_text, cut_at_char_boundary};

/// How file content travels in arguments and results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Encoding {
    /// Text, as UTF-8.
    #[default]
    #[serde(rename = "utf-8")]
    Utf8,
    /// Bytes, base64-encoded (standard alphabet, with padding).
    #[serde(rename = "base64")]
    Base64,
}

impl Encoding {
    /// The name used in arguments and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Base64 => "base64",
        }
    }

    /// The bytes `content` stands for; invalid base64 is `INVALID_ARGUMENTS`.
    pub fn decode(self, content: String) -> Result<Vec<u8>, ToolError> {
        match self {
            Encoding::Utf8 => Ok(content.into_bytes()),
            Encoding::Base64 => STANDARD.decode(content.trim()).map_err(|err| {
                ToolError::new(
                    ToolErrorCode::InvalidArguments,
                    format!(
                        "content is not valid base64 ({err}); send standard base64 with \
                         padding, or use encoding \"utf-8\" for text"
                    ),
                )
            }),
        }
    }

    /// `bytes` as content in this encoding (utf-8 only for text).
    pub fn encode(bytes: &[u8]) -> String {
        STANDARD.encode(bytes)
    }
}

/// How much one `read_file` call returns at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Bytes of file content per call (before base64 encoding).
    pub max_bytes: usize,
    /// Lines per call in utf-8 mode, when the call gives no `limit`.
    pub max_lines: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self {
            max_bytes: 256 * 1024,
            max_lines: 2_000,
        }
    }
}

/// The number of lines of `text`: a final line without a newline counts, an empty text has none.
pub fn line_count(text: &str) -> usize {
    let newlines = text.bytes().filter(|b| *b == b'\n').count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// The part of a text file one read returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextWindow<'a> {
    /// The returned text, without any marker.
    pub text: &'a str,
    /// Lines skipped before `text` (the call's offset).
    pub offset: usize,
    /// Whole or partial lines in `text`.
    pub lines: usize,
    /// Lines in the file, when the whole file was read.
    pub total_lines: Option<usize>,
    /// Whether the last returned line was cut because it alone exceeds the byte limit.
    pub partial_line: bool,
    /// Whether the file goes on after `text` (cut by a limit, not by the end of the file).
    pub truncated: bool,
}

/// Why a window cannot be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetPastEnd {
    /// Lines (or bytes) in the file.
    pub total: usize,
}

/// The lines of `text` after skipping `offset` lines, at most `max_lines` lines and
/// `max_bytes` bytes (cut at a line end, or inside a line that alone is too long). `complete`
/// says whether `text` is the whole file or only a prefix longer than `max_bytes`.
pub fn text_window(
    text: &str,
    complete: bool,
    offset: usize,
    max_lines: usize,
    max_bytes: usize,
) -> Result<TextWindow<'_>, OffsetPastEnd> {
    let total_lines = complete.then(|| line_count(text));
    if let Some(total) = total_lines
        && offset > 0
        && offset >= total
    {
        return Err(OffsetPastEnd { total });
    }
    let mut lines = text.split_inclusive('\n');
    let start: usize = lines.by_ref().take(offset).map(str::len).sum();
    let rest = &text[start..];
    let mut end = 0;
    let mut taken = 0;
    let mut partial_line = false;
    for line in rest.split_inclusive('\n') {
        if taken == max_lines {
            break;
        }
        if end + line.len() > max_bytes {
            if taken == 0 {
                end = cut_at_char_boundary(rest, max_bytes).len();
                taken = 1;
                partial_line = true;
            }
            break;
        }
        end += line.len();
        taken += 1;
    }
    Ok(TextWindow {
        text: &rest[..end],
        offset,
        lines: taken,
        total_lines,
        partial_line,
        truncated: end < rest.len(),
    })
}

/// The longest valid UTF-8 prefix of `bytes` when only a sequence cut at the very end is
/// invalid (a file read up to a byte limit), or `None` when the content is binary.
pub fn text_prefix(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(err) if err.error_len().is_none() => {
            std::str::from_utf8(&bytes[..err.valid_up_to()]).ok()
        }
        Err(_) => None,
    }
}

impl TextWindow<'_> {
    /// The offset that continues the read after this window.
    pub fn next_offset(&self) -> usize {
        if self.partial_line {
            self.offset + self.lines - 1
        } else {
            self.offset + self.lines
        }
    }

    /// The marker appended to a truncated window, telling the model how to read on.
    pub fn marker(&self, path: &str, file_size: u64) -> Option<String> {
        if !self.truncated {
            return None;
        }
        let first = self.offset + 1;
        let last = self.offset + self.lines;
        let shown = self.text.len();
        let of_total = match self.total_lines {
            Some(total) => format!(" of {total}"),
            None => String::new(),
        };
        if self.partial_line {
            return Some(format!(
                "[truncated: line {last} of {path} is longer than {shown} bytes and was cut \
                 (the file has {file_size} bytes). Read it with encoding \"base64\" (offset and \
                 limit then count bytes) to see the whole line, or call read_file with \
                 offset={} to skip it]",
                self.next_offset() + 1,
            ));
        }
        Some(format!(
            "[truncated: showing lines {first}-{last}{of_total} ({shown} of {file_size} bytes). \
             Call read_file with path \"{path}\" and offset={} to read on]",
            self.next_offset(),
        ))
    }
}

/// The bytes one base64 read returns: `offset` and `limit` count bytes.
pub fn byte_window(
    bytes: &[u8],
    offset: usize,
    limit: Option<usize>,
    max_bytes: usize,
) -> Result<&[u8], OffsetPastEnd> {
    if offset > 0 && offset >= bytes.len() {
        return Err(OffsetPastEnd { total: bytes.len() });
    }
    let len = limit.unwrap_or(max_bytes).min(max_bytes);
    let end = offset.saturating_add(len).min(bytes.len());
    Ok(&bytes[offset..end])
}

/// The extension of a path's last component, lower-cased.
fn extension(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    Some(ext.to_ascii_lowercase())
}

/// A MIME type for a file, from its extension.
pub fn mime_type(path: &str) -> Option<&'static str> {
    let mime = match extension(path)?.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        _ => return None,
    };
    Some(mime)
}

/// A language name for syntax highlighting, from the file's extension.
pub fn language(path: &str) -> Option<&'static str> {
    let lang = match extension(path)?.as_str() {
        "rs" => "rust",
        "py" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" | "tsx" => "typescript",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" => "cpp",
        "rb" => "ruby",
        "sh" | "bash" => "bash",
        "json" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "md" | "markdown" => "markdown",
        "html" | "htm" => "html",
        "css" => "css",
        "sql" => "sql",
        _ => return None,
    };
    Some(lang)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_and_refuses_garbage() {
        assert_eq!(
            Encoding::Base64.decode("AAEC/w==".into()).unwrap(),
            vec![0, 1, 2, 255]
        );
        assert_eq!(
            Encoding::Base64.decode(" AAEC/w==\n".into()).unwrap(),
            vec![0, 1, 2, 255]
        );
        assert_eq!(Encoding::encode(&[0, 1, 2, 255]), "AAEC/w==");
        let err = Encoding::Base64.decode("not base64!".into()).unwrap_err();
        assert_eq!(err.code, ToolErrorCode::InvalidArguments);
        assert_eq!(Encoding::Utf8.decode("é".into()).unwrap(), "é".as_bytes());
    }

    #[test]
    fn binary_means_nul_bytes_or_invalid_utf8() {
        assert_eq!(as_text(b"plain\n"), Some("plain\n"));
        assert_eq!(as_text("héllo".as_bytes()), Some("héllo"));
        assert_eq!(as_text(b""), Some(""));
        assert_eq!(as_text(b"a\0b"), None);
        assert_eq!(as_text(&[0xff, 0xfe, b'a']), None);
        // A UTF-8 sequence cut in the middle is invalid too.
        assert_eq!(as_text(&"é".as_bytes()[..1]), None);
    }

    #[test]
    fn line_count_counts_an_unterminated_last_line() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a"), 1);
        assert_eq!(line_count("a\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count("\n\n"), 2);
    }

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_small_file_is_returned_whole() {
        let text = lines(3);
        let w = text_window(&text, true, 0, 2_000, 1_000).unwrap();
        assert_eq!(w.text, text);
        assert!(!w.truncated);
        assert_eq!((w.lines, w.total_lines), (3, Some(3)));
        assert_eq!(w.marker("/s/a", 21), None);
    }

    #[test]
    fn the_line_limit_cuts_at_a_line_end_and_says_how_to_read_on() {
        let text = lines(10);
        let w = text_window(&text, true, 2, 3, 1_000).unwrap();
        assert_eq!(w.text, "line 3\nline 4\nline 5\n");
        assert!(w.truncated);
        assert_eq!(w.next_offset(), 5);
        let marker = w.marker("/s/a.txt", 71).unwrap();
        assert_eq!(
            marker,
            "[truncated: showing lines 3-5 of 10 (21 of 71 bytes). Call read_file with path \
             \"/s/a.txt\" and offset=5 to read on]"
        );
    }

    #[test]
    fn the_byte_limit_cuts_at_a_line_end() {
        let text = lines(10);
        let w = text_window(&text, true, 0, 2_000, 15).unwrap();
        assert_eq!(w.text, "line 1\nline 2\n");
        assert!(w.truncated);
        assert_eq!(w.next_offset(), 2);
    }

    #[test]
    fn a_single_overlong_line_is_cut_inside_and_skippable() {
        let text = format!("{}\nnext\n", "é".repeat(100));
        let w = text_window(&text, true, 0, 2_000, 11).unwrap();
        assert_eq!(w.text, "ééééé");
        assert!(w.partial_line && w.truncated);
        assert_eq!(w.next_offset(), 0);
        assert!(
            w.marker("/s/x", 207)
                .unwrap()
                .contains("offset=1 to skip it")
        );
    }

    #[test]
    fn the_last_window_is_not_truncated() {
        let text = lines(5);
        let w = text_window(&text, true, 3, 2_000, 1_000).unwrap();
        assert_eq!(w.text, "line 4\nline 5\n");
        assert!(!w.truncated);
    }

    #[test]
    fn an_offset_past_the_end_is_refused_with_the_line_count() {
        let text = lines(5);
        assert_eq!(
            text_window(&text, true, 5, 10, 100),
            Err(OffsetPastEnd { total: 5 })
        );
        assert!(text_window("", true, 0, 10, 100).is_ok());
        assert_eq!(
            text_window("", true, 1, 10, 100),
            Err(OffsetPastEnd { total: 0 })
        );
    }

    #[test]
    fn a_prefix_window_does_not_claim_a_line_total() {
        let text = lines(100);
        let w = text_window(&text[..50], false, 0, 3, 40).unwrap();
        assert_eq!(w.total_lines, None);
        assert!(w.truncated);
        let marker = w.marker("/s/a", 5_000).unwrap();
        assert!(
            marker.contains("showing lines 1-3 (21 of 5000 bytes)"),
            "{marker}"
        );
    }

    #[test]
    fn a_prefix_cut_inside_a_character_is_still_text() {
        let bytes = "aé".as_bytes();
        assert_eq!(text_prefix(&bytes[..2]), Some("a"));
        assert_eq!(text_prefix(bytes), Some("aé"));
        assert_eq!(text_prefix(&[b'a', 0xff, b'b']), None);
        assert_eq!(text_prefix(b"a\0"), None);
    }

    #[test]
    fn byte_windows_take_the_smaller_of_limit_and_max() {
        let bytes: Vec<u8> = (0..100).collect();
        assert_eq!(byte_window(&bytes, 0, None, 10).unwrap(), &bytes[..10]);
        assert_eq!(byte_window(&bytes, 95, Some(50), 10).unwrap(), &bytes[95..]);
        assert_eq!(
            byte_window(&bytes, 10, Some(5), 10).unwrap(),
            &bytes[10..15]
        );
        assert_eq!(
            byte_window(&bytes, 100, None, 10),
            Err(OffsetPastEnd { total: 100 })
        );
        assert_eq!(byte_window(&[], 0, None, 10).unwrap(), &[] as &[u8]);
    }

    #[test]
    fn hints_come_from_the_extension_of_the_last_component() {
        assert_eq!(mime_type("/out/report.MD"), Some("text/markdown"));
        assert_eq!(language("/src/main.rs"), Some("rust"));
        assert_eq!(language("/dir.rs/Makefile"), None);
        assert_eq!(mime_type("/s/.bashrc"), None);
        assert_eq!(mime_type("/s/noext"), None);
    }
}
