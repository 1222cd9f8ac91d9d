//! The cache of what custom modules' `describe` printed,
//! `<program root>/.golem-forge/custom-tools/<sha256 of the module's path>.json`: one file per
//! module, holding the raw `describe` output (the whitelist and every check are applied after
//! reading it, so a changed worker file never needs a new entry) under a key, the SHA-256 of
//! everything the output depends on: this format's number, the module's language and the
//! adapter shipped in this binary for it (a binary with another adapter describes again), the
//! module's path (its `__file__`), its bytes, and the name and bytes of every file next to it
//! that travels with it (`siblings.rs`). An entry of another key is a miss (the module or a
//! sibling changed) and is overwritten, so a module has one file however often it changes.
//! Files are written through a temporary file and a rename; a missing, unreadable or corrupt
//! file is a miss, never an error.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use golem_toolset::time::iso8601;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::module::ModuleKind;

/// The format of cache files and of the key; another number is a miss. Raise it when what a
/// `describe` run prints may change for the same module and adapter (the executable's `sh`
/// wrapper in `module.rs`, how siblings travel).
const FORMAT: u32 = 1;

/// What a module's `describe` output depends on.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The module's file on the host.
    pub path: &'a Path,
    /// How it runs.
    pub kind: ModuleKind,
    /// The adapter it runs in (empty for an executable).
    pub adapter: &'a str,
    /// Its bytes.
    pub source: &'a [u8],
    /// The files next to it that travel with it, by name.
    pub siblings: &'a [(String, String)],
}

impl Inputs<'_> {
    /// The key: a SHA-256 over every input, each prefixed by its length so that no two
    /// different inputs run together into the same bytes.
    fn key(&self) -> String {
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(b"golem-forge custom describe");
        field(&FORMAT.to_le_bytes());
        field(kind_name(self.kind).as_bytes());
        field(self.adapter.as_bytes());
        field(self.path.as_os_str().as_encoded_bytes());
        field(self.source);
        field(&(self.siblings.len() as u64).to_le_bytes());
        for (name, text) in self.siblings {
            field(name.as_bytes());
            field(text.as_bytes());
        }
        hex(&hasher.finalize())
    }
}

/// The kind as stored.
fn kind_name(kind: ModuleKind) -> &'static str {
    match kind {
        ModuleKind::Python => "python",
        ModuleKind::JavaScript => "javascript",
        ModuleKind::Executable => "executable",
    }
}

/// A cache file, as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheFile {
    format: u32,
    key: String,
    /// The module as the worker file that last wrote the entry names it.
    module: String,
    /// Its language.
    kind: String,
    described_at: String,
    /// What `describe` printed, as JSON.
    described: Value,
    /// The tools whose input schemas were checked against the JSON Schema meta-schema (and
    /// compiled) when an entry was written: a launch from the cache need not check them again.
    #[serde(default)]
    checked: Vec<String>,
}

/// Why a cache entry cannot be used or kept.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The file cannot be read or written, or is not a cache file.
    #[error(transparent)]
    File(#[from] golem_toolset::cache_file::CacheFileError),
    /// The file is of another format number.
    #[error("{}: written in another format ({format})", path.display())]
    OtherFormat {
        /// The file.
        path: PathBuf,
        /// Its format number.
        format: u32,
    },
    /// The entry could not be put into JSON.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
}

/// An entry of the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    /// What `describe` printed, as JSON.
    pub described: Value,
    /// The tools whose schemas were checked (see the file's `checked`).
    pub checked: Vec<String>,
}

/// The cache file of one module, and the key an entry must have to be used.
#[derive(Debug)]
pub struct CacheSlot {
    path: PathBuf,
    key: String,
    kind: ModuleKind,
}

impl CacheSlot {
    /// The slot of the module described by `inputs`, in the cache directory `dir`.
    pub fn new(dir: &Path, inputs: &Inputs<'_>) -> CacheSlot {
        let name = hex(&Sha256::digest(inputs.path.as_os_str().as_encoded_bytes()));
        CacheSlot {
            path: dir.join(format!("{name}.json")),
            key: inputs.key(),
            kind: inputs.kind,
        }
    }

    /// The cache file.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What `describe` printed, when the entry is of this key; `Ok(None)` when there is no
    /// entry or one for another version of the module; an error saying why it cannot be used
    /// when it is unreadable, corrupt or of another format.
    pub fn read(&self) -> Result<Option<CacheEntry>, CacheError> {
        let Some(file): Option<CacheFile> =
            golem_toolset::cache_file::read(&self.path, "describe cache file")?
        else {
            return Ok(None);
        };
        if file.format != FORMAT {
            return Err(CacheError::OtherFormat {
                path: self.path.clone(),
                format: file.format,
            });
        }
        if file.key != self.key {
            return Ok(None);
        }
        Ok(Some(CacheEntry {
            described: file.described,
            checked: file.checked,
        }))
    }

    /// Writes `entry` for the module named `shown` (a temporary file renamed over the
    /// entry).
    pub fn write(&self, shown: &str, entry: &CacheEntry) -> Result<(), CacheError> {
        let file = CacheFile {
            format: FORMAT,
            key: self.key.clone(),
            module: shown.to_owned(),
            kind: kind_name(self.kind).to_owned(),
            described_at: iso8601(SystemTime::now()),
            described: entry.described.clone(),
            checked: entry.checked.clone(),
        };
        let text = serde_json::to_string_pretty(&file)?;
        Ok(golem_toolset::cache_file::replace(&self.path, &text)?)
    }
}

/// `bytes` as lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn siblings(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect()
    }

    #[test]
    fn the_key_follows_every_input() {
        let path = Path::new("/p/tools.py");
        let helpers = siblings(&[("helpers.py", "X = 1")]);
        let base = Inputs {
            path,
            kind: ModuleKind::Python,
            adapter: "adapter v1",
            source: b"def f(): pass",
            siblings: &helpers,
        };
        let key = base.key();
        assert_eq!(key, base.key());
        let changed_sibling = siblings(&[("helpers.py", "X = 2")]);
        let renamed_sibling = siblings(&[("other.py", "X = 1")]);
        let split = siblings(&[("helpers.py", "X"), (" = 1", "")]);
        for (what, other) in [
            (
                "the adapter",
                Inputs {
                    adapter: "adapter v2",
                    ..base
                },
            ),
            (
                "the kind",
                Inputs {
                    kind: ModuleKind::JavaScript,
                    ..base
                },
            ),
            (
                "the path",
                Inputs {
                    path: Path::new("/q/tools.py"),
                    ..base
                },
            ),
            (
                "the source",
                Inputs {
                    source: b"def g(): pass",
                    ..base
                },
            ),
            (
                "a sibling's bytes",
                Inputs {
                    siblings: &changed_sibling,
                    ..base
                },
            ),
            (
                "a sibling's name",
                Inputs {
                    siblings: &renamed_sibling,
                    ..base
                },
            ),
            (
                "how the siblings split",
                Inputs {
                    siblings: &split,
                    ..base
                },
            ),
            (
                "no siblings",
                Inputs {
                    siblings: &[],
                    ..base
                },
            ),
        ] {
            assert_ne!(key, other.key(), "{what}");
        }
    }

    #[test]
    fn an_entry_is_used_only_for_its_key_and_a_bad_one_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tools.py");
        let inputs = |source: &'static [u8]| Inputs {
            path: &path,
            kind: ModuleKind::Python,
            adapter: "a",
            source,
            siblings: &[],
        };
        let cache = dir.path().join(".golem-forge/custom-tools");
        let slot = CacheSlot::new(&cache, &inputs(b"v1"));
        assert_eq!(slot.read().unwrap(), None, "no file is a miss");
        let entry = CacheEntry {
            described: json!({"tools": [{"name": "f", "inputSchema": {"type": "object"}}]}),
            checked: vec!["f".to_owned()],
        };
        slot.write("./tools.py", &entry).unwrap();
        assert_eq!(slot.read().unwrap(), Some(entry.clone()));
        let changed = CacheSlot::new(&cache, &inputs(b"v2"));
        assert_eq!(changed.path(), slot.path(), "one file per module");
        assert_eq!(
            changed.read().unwrap(),
            None,
            "another version of the module"
        );
        let names: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 1, "no temporary file is left: {names:?}");
        std::fs::write(slot.path(), "{ not json").unwrap();
        let why = slot.read().unwrap_err();
        assert!(
            why.to_string().starts_with(&format!(
                "{}: not a describe cache file: ",
                slot.path().display()
            )),
            "{why}"
        );
        let text = json!({"format": 99, "key": "k", "module": "m", "kind": "python",
            "describedAt": "x", "described": {}});
        std::fs::write(slot.path(), text.to_string()).unwrap();
        assert_eq!(
            slot.read().unwrap_err().to_string(),
            format!("{}: written in another format (99)", slot.path().display())
        );
    }
}
