//! One entry of a tool cache (custom modules' and MCP servers' tool lists) on disk: read as
//! JSON, absent being no error; written with the directory made when missing and the text
//! written to a temporary file beside the entry and renamed over it, so a reader finds the old
//! entry or the new one, never part of one.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// The entry at `path` parsed as JSON, `Ok(None)` when there is no file; an error naming the
/// file when it cannot be read or is not `what` (as in "not a describe cache file").
pub fn read<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Result<Option<T>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}: not a {what}: {e}", path.display()))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_absent_is_none_and_garbage_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache/entry.json");
        assert_eq!(read::<Vec<u32>>(&path, "list").unwrap(), None);
        replace(&path, "[1, 2]").unwrap();
        assert_eq!(read::<Vec<u32>>(&path, "list").unwrap(), Some(vec![1, 2]));
        replace(&path, "{half").unwrap();
        let err = read::<Vec<u32>>(&path, "list").unwrap_err();
        assert!(
            err.starts_with(&format!("{}: not a list: ", path.display())),
            "{err}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }
}
