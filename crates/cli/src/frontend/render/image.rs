//! The `image` view: a summary line (type, dimensions, size, path or URL) and the alt text,
//! plus the image itself when the terminal speaks the kitty or iTerm2 graphics protocol and
//! the result carries base64 bytes. The base64 is checked character by character before it
//! goes into an escape sequence, so the payload cannot smuggle in other sequences.

use golem_protocol::result::ImageData;
use serde::Deserialize;
use serde_json::Value;

use super::Ctx;
use super::canvas::{Line, palette};
use super::layout::{human_size, truncate, wrap};

/// Largest base64 payload shown inline (bigger images get the summary only).
const MAX_INLINE_BASE64: usize = 8 * 1024 * 1024;
/// Bytes of base64 per kitty graphics chunk (the protocol's limit).
const KITTY_CHUNK: usize = 4096;
/// Pixels per terminal column assumed when sizing an inline image.
const PIXELS_PER_COLUMN: u32 = 8;

/// An inline image protocol of the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageProtocol {
    /// The kitty graphics protocol (kitty, Ghostty); PNG only.
    Kitty,
    /// iTerm2's inline images (iTerm2, WezTerm).
    Iterm2,
}

/// The inline image protocol the terminal speaks, judged from environment variables read
/// through `var` (pass `|k| std::env::var(k).ok()`): `TERM=xterm-kitty`, `KITTY_WINDOW_ID` or
/// Ghostty → kitty; `TERM_PROGRAM=iTerm.app` or `WezTerm` → iTerm2. `None` inside tmux or
/// screen, which do not pass the sequences through by default.
pub fn detect_image_protocol(var: impl Fn(&str) -> Option<String>) -> Option<ImageProtocol> {
    let term = var("TERM").unwrap_or_default();
    let program = var("TERM_PROGRAM").unwrap_or_default();
    if var("TMUX").is_some()
        || var("STY").is_some()
        || term.starts_with("screen")
        || term.starts_with("tmux")
    {
        return None;
    }
    if term == "xterm-kitty"
        || var("KITTY_WINDOW_ID").is_some()
        || term == "xterm-ghostty"
        || program.eq_ignore_ascii_case("ghostty")
    {
        return Some(ImageProtocol::Kitty);
    }
    if program == "iTerm.app" || program == "WezTerm" {
        return Some(ImageProtocol::Iterm2);
    }
    None
}

/// The base64 payload of `image`: its `base64`, or the data of a `data:…;base64,` URL.
fn payload(image: &ImageData) -> Option<&str> {
    if let Some(b64) = image.base64.as_deref() {
        return Some(b64);
    }
    let url = image.url.as_deref()?;
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    meta.ends_with(";base64").then_some(data)
}

/// `image/png · 640×480 · 12 KiB · /shots/a.png`.
pub(super) fn summary(data: &Value, mime_type: Option<&str>) -> String {
    parts(data, mime_type).join(" · ")
}

/// The type (`image` when unknown), dimensions, size and path or URL of an image.
fn parts(data: &Value, mime_type: Option<&str>) -> Vec<String> {
    let image = ImageData::deserialize(data).unwrap_or_default();
    let mut parts = vec![mime_type.unwrap_or("image").to_owned()];
    if let (Some(w), Some(h)) = (image.width, image.height) {
        parts.push(format!("{w}×{h}"));
    }
    if let Some(b64) = payload(&image) {
        let padding = b64.bytes().rev().take_while(|b| *b == b'=').count();
        let bytes = (b64.len() / 4 * 3).saturating_sub(padding);
        parts.push(human_size(bytes as u64));
    }
    match (&image.path, &image.url) {
        (Some(path), _) => parts.push(path.clone()),
        (None, Some(url)) if !url.starts_with("data:") => parts.push(url.clone()),
        _ => {}
    }
    parts
}

/// An `image` result, or `None` when `data` is not an object.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    data.as_object()?;
    let image = ImageData::deserialize(data).ok()?;
    let parts = parts(data, ctx.mime_type);
    let mut header = Line::new();
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            header.push(palette::bold(), part);
        } else {
            header
                .push(palette::dim(), " · ")
                .push(palette::dim(), part);
        }
    }
    let mut out = vec![truncate(&header, ctx.width)];
    if let Some(alt) = image.alt.as_deref().filter(|a| !a.trim().is_empty()) {
        out.extend(wrap(&Line::plain(alt), ctx.width));
    }
    if let (Some(protocol), Some(b64)) = (ctx.inline_images, payload(&image)) {
        match inline(protocol, b64, ctx.mime_type, &image, ctx.width) {
            Ok(graphic) => out.push(Line {
                spans: Vec::new(),
                graphic: Some(graphic),
            }),
            Err(reason) => out.push(Line::styled(palette::dim(), &format!("({reason})"))),
        }
    }
    Some(out)
}

/// The escape sequence that draws the image, or why it cannot be shown inline.
fn inline(
    protocol: ImageProtocol,
    b64: &str,
    mime_type: Option<&str>,
    image: &ImageData,
    width: usize,
) -> Result<String, &'static str> {
    let b64: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if b64.is_empty()
        || !b64
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
    {
        return Err("image data is not valid base64");
    }
    if b64.len() > MAX_INLINE_BASE64 {
        return Err("image too large to show inline");
    }
    let columns = image.width.map_or(width, |w| {
        (w.div_ceil(PIXELS_PER_COLUMN) as usize).clamp(1, width)
    });
    match protocol {
        ImageProtocol::Kitty => {
            // The kitty protocol takes PNG as is; other formats would need decoding.
            let is_png = mime_type.is_some_and(|m| m.eq_ignore_ascii_case("image/png"))
                || b64.starts_with("iVBORw0KGgo");
            if !is_png {
                return Err("only PNG images are shown inline in this terminal");
            }
            Ok(kitty(&b64, columns))
        }
        ImageProtocol::Iterm2 => {
            if mime_type.is_some_and(|m| m.eq_ignore_ascii_case("image/svg+xml")) {
                return Err("SVG images are not shown inline");
            }
            let padding = b64.bytes().rev().take_while(|b| *b == b'=').count();
            let size = (b64.len() / 4 * 3).saturating_sub(padding);
            Ok(format!(
                "\x1b]1337;File=inline=1;size={size};width={columns};preserveAspectRatio=1:{b64}\x07"
            ))
        }
    }
}

/// The kitty graphics sequence for a PNG in base64: transmitted and shown (`a=T`), quietly
/// (`q=2`), `columns` cells wide, in chunks of at most [`KITTY_CHUNK`] bytes.
fn kitty(b64: &str, columns: usize) -> String {
    let chunks: Vec<&[u8]> = b64.as_bytes().chunks(KITTY_CHUNK).collect();
    let mut out = String::with_capacity(b64.len() + chunks.len() * 16 + 32);
    for (i, chunk) in chunks.iter().enumerate() {
        let more = u8::from(i + 1 < chunks.len());
        // Invariant: the payload was checked to be ASCII, so every chunk is valid UTF-8.
        let chunk = std::str::from_utf8(chunk).unwrap_or_default();
        if i == 0 {
            out.push_str(&format!(
                "\x1b_Ga=T,f=100,q=2,c={columns},m={more};{chunk}\x1b\\"
            ));
        } else {
            out.push_str(&format!("\x1b_Gm={more};{chunk}\x1b\\"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |key| {
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn detects_protocols_from_the_environment() {
        assert_eq!(
            detect_image_protocol(env(&[("TERM", "xterm-kitty")])),
            Some(ImageProtocol::Kitty)
        );
        assert_eq!(
            detect_image_protocol(env(&[("TERM_PROGRAM", "iTerm.app")])),
            Some(ImageProtocol::Iterm2)
        );
        assert_eq!(
            detect_image_protocol(env(&[("TERM", "xterm-256color")])),
            None
        );
        assert_eq!(
            detect_image_protocol(env(&[("TERM", "xterm-kitty"), ("TMUX", "/tmp/x")])),
            None
        );
        assert_eq!(detect_image_protocol(env(&[])), None);
    }

    #[test]
    fn kitty_payload_is_chunked() {
        let b64 = "A".repeat(KITTY_CHUNK * 2 + 4);
        let seq = kitty(&b64, 10);
        assert_eq!(seq.matches("\x1b_G").count(), 3);
        assert!(seq.starts_with("\x1b_Ga=T,f=100,q=2,c=10,m=1;"));
        assert!(seq.ends_with("\x1b_Gm=0;AAAA\x1b\\"));
    }

    #[test]
    fn payload_with_escape_sequences_is_refused() {
        let image = ImageData::default();
        let bad = "iVBORw0KGgo\x1b]0;pwned\x07";
        assert!(inline(ImageProtocol::Kitty, bad, Some("image/png"), &image, 40).is_err());
        assert!(inline(ImageProtocol::Iterm2, "QUJD\x07", None, &image, 40).is_err());
        assert!(inline(ImageProtocol::Iterm2, "QUJD\nRA==", None, &image, 40).is_ok());
    }
}
