//! Capturing a child's output up to a cap: what fits is kept, the rest is read and counted so
//! the child never blocks on a full pipe, and a marker line says how much was dropped.
//! Runs in the golem-forge process.

use tokio::io::{AsyncRead, AsyncReadExt};

/// One stream's captured output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    /// What was kept, as UTF-8 (invalid sequences replaced), with a marker line appended when
    /// the output was cut.
    pub text: String,
    /// Every byte the stream produced, kept or not.
    pub total_bytes: u64,
    /// Whether bytes were dropped.
    pub truncated: bool,
}

impl CapturedOutput {
    /// Builds the captured output from what was kept and how much there was.
    pub(crate) fn new(kept: &[u8], total_bytes: u64) -> Self {
        let mut text = String::from_utf8_lossy(kept).into_owned();
        let dropped = total_bytes.saturating_sub(kept.len() as u64);
        if dropped > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[… output truncated: {} more not shown, {} in all]",
                human_bytes(dropped),
                human_bytes(total_bytes)
            ));
        }
        Self {
            text,
            total_bytes,
            truncated: dropped > 0,
        }
    }
}

impl CapturedOutput {
    /// Appends a line of the jail's own (a limit the run reached) after what was captured.
    pub(crate) fn push_note(&mut self, note: &str) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push_str(note);
        self.text.push('\n');
    }
}

/// `1.5 MB`, `312 bytes`.
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} bytes");
    }
    let mut value = n as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Reads `stream` to its end, keeping at most `cap` bytes.
pub(crate) async fn capture(mut stream: impl AsyncRead + Unpin, cap: usize) -> CapturedOutput {
    let mut kept = Vec::new();
    let mut total: u64 = 0;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    CapturedOutput::new(&kept, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_up_to_the_cap_and_counts_the_rest() {
        let data = vec![b'x'; 10_000];
        let out = capture(&data[..], 100).await;
        assert_eq!(out.total_bytes, 10_000);
        assert!(out.truncated);
        assert!(out.text.starts_with(&"x".repeat(100)));
        assert!(
            out.text
                .ends_with("[… output truncated: 9.9 KB more not shown, 10.0 KB in all]"),
            "{}",
            out.text
        );
    }

    #[tokio::test]
    async fn short_output_is_kept_whole_without_a_marker() {
        let out = capture(&b"hello\n"[..], 100).await;
        assert_eq!(out.text, "hello\n");
        assert!(!out.truncated);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let out = CapturedOutput::new(b"a\xffb", 3);
        assert_eq!(out.text, "a\u{fffd}b");
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(999), "999 bytes");
        assert_eq!(human_bytes(1_500_000), "1.5 MB");
        assert_eq!(human_bytes(100_000_000), "100.0 MB");
    }
}
