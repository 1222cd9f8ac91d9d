//! Writing one entry of a tool cache (custom modules' and MCP servers' tool lists): the
//! directory made when missing, the text written to a temporary file beside the entry and
//! renamed over it, so a reader finds the old entry or the new one, never part of one.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Replaces the file at `path` with `text` as described above; the error names the file.
pub fn replace(path: &Path, text: &str) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let temp = dir.join(format!(".{stem}.{}.{nanos}.tmp", std::process::id()));
    std::fs::write(&temp, text).map_err(|e| format!("{}: {e}", temp.display()))?;
    if let Err(e) = std::fs::rename(&temp, path) {
        let _removed = std::fs::remove_file(&temp);
        return Err(format!("{}: {e}", path.display()));
    }
    Ok(())
}
