//! One entry of a tool cache (custom modules' and MCP servers' tool lists) on disk: read as
//! JSON, absent being no error; written with the directory made when missing and the text
//! written to a temporary file beside the entry and renamed over it, so a reader finds the old
//! entry or the new one, never part of one.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Why a cache entry could not be read or written; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum CacheFileError {
    /// Reading, writing or renaming `path` failed (or making its directory).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file (or the directory made for it, or the temporary file).
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The file is not JSON of the entry's shape.
    #[error("{}: not a {what}: {source}", path.display())]
    NotAnEntry {
        /// The file.
        path: PathBuf,
        /// What an entry is (`describe cache file`).
        what: &'static str,
        /// What the parser said.
        source: serde_json::Error,
    },
}

/// The error of an I/O step on `path`.
fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CacheFileError + '_ {
    move |source| CacheFileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The entry at `path` parsed as JSON, `Ok(None)` when there is no file; an error naming the
/// file when it cannot be read or is not `what` (as in "not a describe cache file").
pub fn read<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &'static str,
) -> Result<Option<T>, CacheFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path)(e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|source| CacheFileError::NotAnEntry {
            path: path.to_path_buf(),
            what,
            source,
        })
}

/// Replaces the file at `path` with `text` as described above; the error names the file.
pub fn replace(path: &Path, text: &str) -> Result<(), CacheFileError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let temp = dir.join(format!(".{stem}.{}.{nanos}.tmp", std::process::id()));
    std::fs::write(&temp, text).map_err(io_error(&temp))?;
    if let Err(e) = std::fs::rename(&temp, path) {
        let _removed = std::fs::remove_file(&temp);
        return Err(io_error(path)(e));
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
            err.to_string()
                .starts_with(&format!("{}: not a list: ", path.display())),
            "{err}"
        );
        assert!(
            std::error::Error::source(&err).is_some_and(|e| e.is::<serde_json::Error>()),
            "the parser's error is kept: {err:?}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn an_unwritable_entry_names_the_file_and_keeps_the_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let err = replace(&blocker.join("entry.json"), "[]").unwrap_err();
        let CacheFileError::Io { path, source } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(path, &blocker);
        assert_eq!(err.to_string(), format!("{}: {source}", blocker.display()));
    }
}
