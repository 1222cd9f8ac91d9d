//! A batch on disk: `<program root>/.golem-forge/batches/<id>/` holds `batch.json` (the worker,
//! the input's hash, when it started, the options it was started with), `items.jsonl` (the
//! items, so a resume needs no input file) and `results.jsonl`, where each finished item's
//! result is appended as one line with one write and synced. A reader never trusts a last line
//! without its newline (a write cut by a kill); the next append starts on a fresh line. One
//! process at a time runs a batch (`lock`, held while it runs).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use golem_protocol::{ItemResult, TokenUsage, to_jsonl_line};
use golem_session::{now_rfc3339, time_sortable_id};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::input::BatchItem;
use crate::options::BatchOptions;

/// Why a batch could not be stored or read.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum BatchError {
    /// A file of the batch could not be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file of the batch is not what this program writes.
    #[error("{} is damaged: {reason}", path.display())]
    Damaged { path: PathBuf, reason: String },
    /// No batch has this id (or prefix).
    #[error("no batch `{0}` in this program (`golem-forge batch list` shows them)")]
    Unknown(String),
    /// More than one batch starts with this prefix.
    #[error("`{prefix}` names several batches: {}", candidates.join(", "))]
    Ambiguous {
        prefix: String,
        candidates: Vec<String>,
    },
    /// Another process runs the batch.
    #[error("batch {0} is running in another process")]
    Busy(String),
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BatchError {
    let path = path.to_owned();
    move |source| BatchError::Io {
        action,
        path,
        source,
    }
}

/// What a batch runs: `batch.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchMeta {
    /// The worker file (absolute).
    pub worker: PathBuf,
    /// SHA-256 of the items as run, hex: the same command again finds the batch by it.
    pub input_hash: String,
    /// How many items.
    pub items: usize,
    /// When the batch started, RFC 3339 in UTC.
    pub started: String,
    /// The options every run of it uses; `None` in a batch written before they were recorded
    /// (not recorded: a run uses what it is given, and records that).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<BatchOptions>,
}

impl BatchMeta {
    /// The meta of a batch of `items` of `worker`, starting now, its options not yet set.
    pub fn new(worker: PathBuf, items: &[BatchItem]) -> BatchMeta {
        BatchMeta {
            worker,
            input_hash: hash_items(items),
            items: items.len(),
            started: now_rfc3339(),
            options: None,
        }
    }
}

/// What the runs of a batch have spent so far, all items together.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    /// Tokens of every kind.
    pub usage: TokenUsage,
    /// US dollars, when any item's model has a price.
    pub cost: Option<f64>,
}

impl Spent {
    /// Adds what `result` spent.
    pub fn add(&mut self, result: &ItemResult) {
        self.usage.add(&result.usage);
        if let Some(cost) = result.cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + cost);
        }
    }
}

/// The hash that names a batch's items.
fn hash_items(items: &[BatchItem]) -> String {
    let mut hasher = Sha256::new();
    for item in items {
        if let Ok(line) = serde_json::to_string(item) {
            hasher.update(line.as_bytes());
            hasher.update(b"\n");
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The batches of one program.
#[derive(Debug, Clone)]
pub struct BatchStore {
    dir: PathBuf,
}

impl BatchStore {
    /// The batches of the program at `root`.
    pub fn new(root: &Path) -> BatchStore {
        BatchStore {
            dir: root.join(".golem-forge").join("batches"),
        }
    }

    /// Starts a batch: a fresh id, its meta and items written.
    pub fn create(&self, meta: BatchMeta, items: &[BatchItem]) -> Result<Batch, BatchError> {
        std::fs::create_dir_all(&self.dir).map_err(io("create", &self.dir))?;
        let (id, dir) = loop {
            let id = time_sortable_id();
            let dir = self.dir.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => break (id, dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io("create", &dir)(e)),
            }
        };
        let mut lines = String::new();
        for item in items {
            let line = to_jsonl_line(item).map_err(|e| BatchError::Damaged {
                path: dir.join("items.jsonl"),
                reason: e.to_string(),
            })?;
            lines.push_str(&line);
            lines.push('\n');
        }
        write_whole(&dir.join("items.jsonl"), lines.as_bytes())?;
        // Written last: a batch directory without it was never started.
        write_meta(&dir, &meta)?;
        Ok(Batch { id, dir, meta })
    }

    /// The batch `id`, or the one batch whose id starts with it.
    pub fn open(&self, id: &str) -> Result<Batch, BatchError> {
        let ids = self.ids()?;
        let id = if ids.iter().any(|known| known == id) {
            id.to_owned()
        } else {
            let candidates: Vec<String> = ids
                .into_iter()
                .filter(|known| known.starts_with(id))
                .collect();
            match candidates.as_slice() {
                [] => return Err(BatchError::Unknown(id.to_owned())),
                [one] => one.clone(),
                _ => {
                    return Err(BatchError::Ambiguous {
                        prefix: id.to_owned(),
                        candidates,
                    });
                }
            }
        };
        self.load(&id)
    }

    /// The newest batch of `meta`'s worker and items that still has items to run, if any: the
    /// same command again continues it.
    pub fn unfinished(&self, meta: &BatchMeta) -> Result<Option<Batch>, BatchError> {
        for id in self.ids()?.into_iter().rev() {
            let batch = self.load(&id)?;
            if batch.meta.worker == meta.worker
                && batch.meta.input_hash == meta.input_hash
                && !batch.is_done()?
            {
                return Ok(Some(batch));
            }
        }
        Ok(None)
    }

    /// Every batch, oldest first.
    pub fn list(&self) -> Result<Vec<Batch>, BatchError> {
        self.ids()?.iter().map(|id| self.load(id)).collect()
    }

    /// The ids of the started batches (with a `batch.json`), oldest first.
    fn ids(&self) -> Result<Vec<String>, BatchError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io("read", &self.dir)(e)),
        };
        let mut ids: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().join("batch.json").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        ids.sort();
        Ok(ids)
    }

    fn load(&self, id: &str) -> Result<Batch, BatchError> {
        let dir = self.dir.join(id);
        let path = dir.join("batch.json");
        let text = std::fs::read_to_string(&path).map_err(io("read", &path))?;
        let meta = serde_json::from_str(&text).map_err(|e| BatchError::Damaged {
            path,
            reason: e.to_string(),
        })?;
        Ok(Batch {
            id: id.to_owned(),
            dir,
            meta,
        })
    }
}

/// Writes `meta` as `dir`'s `batch.json`, whole or not at all (a temporary file renamed).
fn write_meta(dir: &Path, meta: &BatchMeta) -> Result<(), BatchError> {
    let path = dir.join("batch.json");
    let text = serde_json::to_string_pretty(meta).map_err(|e| BatchError::Damaged {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    golem_session::replace_file(&path, text.as_bytes()).map_err(io("replace", &path))
}

/// Writes `bytes` as the whole of a new file at `path`, synced.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), BatchError> {
    let mut file = File::create(path).map_err(io("create", path))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io("write", path))
}

/// One batch on disk.
#[derive(Debug, Clone)]
pub struct Batch {
    /// Its id (`20261127-213000-4f2a`).
    pub id: String,
    /// Its directory.
    pub dir: PathBuf,
    /// What it runs.
    pub meta: BatchMeta,
}

impl Batch {
    /// Records `options` as the ones every later run of the batch uses.
    pub fn record_options(&mut self, options: BatchOptions) -> Result<(), BatchError> {
        let meta = BatchMeta {
            options: Some(options),
            ..self.meta.clone()
        };
        write_meta(&self.dir, &meta)?;
        self.meta = meta;
        Ok(())
    }

    /// What every run of the batch has spent: the usage and cost of each result line (each
    /// is one run of an item, and a line is written for every item that ran).
    pub fn spent(&self) -> Result<Spent, BatchError> {
        let mut spent = Spent::default();
        for result in self.results()? {
            spent.add(&result);
        }
        Ok(spent)
    }

    /// Where the results are appended.
    pub fn results_path(&self) -> PathBuf {
        self.dir.join("results.jsonl")
    }

    /// Its items, in input order.
    pub fn items(&self) -> Result<Vec<BatchItem>, BatchError> {
        let path = self.dir.join("items.jsonl");
        let text = std::fs::read_to_string(&path).map_err(io("read", &path))?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                serde_json::from_str(line).map_err(|e| BatchError::Damaged {
                    path: path.clone(),
                    reason: e.to_string(),
                })
            })
            .collect()
    }

    /// Every result line, in the order written; a last line cut by a kill is left out.
    pub fn results(&self) -> Result<Vec<ItemResult>, BatchError> {
        let path = self.results_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io("read", &path)(e)),
        };
        let whole = match text.rfind('\n') {
            Some(end) => &text[..end],
            None => "",
        };
        Ok(whole
            .lines()
            .filter_map(|line| match serde_json::from_str(line) {
                Ok(result) => Some(result),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "a damaged result line is skipped");
                    None
                }
            })
            .collect())
    }

    /// The latest result of each item that has one, by id.
    pub fn latest(&self) -> Result<BTreeMap<String, ItemResult>, BatchError> {
        Ok(self
            .results()?
            .into_iter()
            .map(|result| (result.id.clone(), result))
            .collect())
    }

    /// Whether every item has completed.
    pub fn is_done(&self) -> Result<bool, BatchError> {
        let latest = self.latest()?;
        Ok(self.items()?.iter().all(|item| {
            latest
                .get(&item.id)
                .is_some_and(|r| r.status == golem_protocol::ItemStatus::Completed)
        }))
    }

    /// Holds the batch for this process while the returned guard lives.
    pub fn lock(&self) -> Result<BatchLock, BatchError> {
        let path = self.dir.join("lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io("open", &path))?;
        match file.try_lock() {
            Ok(()) => Ok(BatchLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(BatchError::Busy(self.id.clone())),
            Err(std::fs::TryLockError::Error(e)) => Err(io("lock", &path)(e)),
        }
    }

    /// Opens the results for appending.
    pub fn results_writer(&self) -> Result<ResultWriter, BatchError> {
        ResultWriter::open(&self.results_path())
    }
}

/// A batch held by this process (released on drop).
#[derive(Debug)]
pub struct BatchLock {
    _file: File,
}

/// Appends result lines to a file: one write per line, synced, starting on a fresh line.
#[derive(Debug)]
pub struct ResultWriter {
    file: File,
    path: PathBuf,
}

impl ResultWriter {
    /// Opens (creating) `path` for appending; a last line cut by a kill is ended first.
    pub fn open(path: &Path) -> Result<ResultWriter, BatchError> {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .map_err(io("open", path))?;
        let len = file.metadata().map_err(io("read", path))?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1))
                .and_then(|_| file.read_exact(&mut last))
                .map_err(io("read", path))?;
            if last[0] != b'\n' {
                file.write_all(b"\n").map_err(io("write", path))?;
            }
        }
        Ok(ResultWriter {
            file,
            path: path.to_owned(),
        })
    }

    /// Appends `result` as one line and syncs it.
    pub fn append(&mut self, result: &ItemResult) -> Result<(), BatchError> {
        let mut line = to_jsonl_line(result).map_err(|e| BatchError::Damaged {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(io("write", &self.path))
    }
}

#[cfg(test)]
mod tests {
    use golem_protocol::ItemStatus;

    use super::*;

    fn item(id: &str) -> BatchItem {
        BatchItem {
            id: id.into(),
            input: format!("do {id}"),
            instructions: None,
            line: 1,
        }
    }

    fn result(id: &str, status: ItemStatus) -> ItemResult {
        ItemResult {
            id: id.into(),
            status,
            answer: String::new(),
            output: None,
            usage: Default::default(),
            cost: None,
            session: None,
            error: None,
            attempt: 1,
        }
    }

    #[test]
    fn a_batch_keeps_its_items_and_the_latest_result_of_each() {
        let root = tempfile::tempdir().unwrap();
        let store = BatchStore::new(root.path());
        let items = [item("a"), item("b")];
        let meta = BatchMeta::new("/w/x.worker".into(), &items);
        let batch = store.create(meta.clone(), &items).unwrap();
        assert_eq!(batch.items().unwrap(), items);
        assert!(store.unfinished(&meta).unwrap().is_some());
        let mut writer = batch.results_writer().unwrap();
        writer.append(&result("a", ItemStatus::Failed)).unwrap();
        writer.append(&result("a", ItemStatus::Completed)).unwrap();
        writer.append(&result("b", ItemStatus::Completed)).unwrap();
        let latest = batch.latest().unwrap();
        assert_eq!(latest.len(), 2);
        assert_eq!(latest["a"].status, ItemStatus::Completed);
        assert!(batch.is_done().unwrap());
        assert!(store.unfinished(&meta).unwrap().is_none());
        let opened = store.open(&batch.id[..10]).unwrap();
        assert_eq!(opened.meta, meta);
        assert!(matches!(store.open("nope"), Err(BatchError::Unknown(_))));
    }

    #[test]
    fn a_line_cut_by_a_kill_is_ignored_and_the_next_starts_afresh() {
        let root = tempfile::tempdir().unwrap();
        let store = BatchStore::new(root.path());
        let items = [item("a"), item("b")];
        let batch = store
            .create(BatchMeta::new("/w/x.worker".into(), &items), &items)
            .unwrap();
        batch
            .results_writer()
            .unwrap()
            .append(&result("a", ItemStatus::Completed))
            .unwrap();
        let mut file = OpenOptions::new()
            .append(true)
            .open(batch.results_path())
            .unwrap();
        file.write_all(br#"{"id":"b","status":"compl"#).unwrap();
        assert_eq!(batch.results().unwrap().len(), 1);
        batch
            .results_writer()
            .unwrap()
            .append(&result("b", ItemStatus::Completed))
            .unwrap();
        let ids: Vec<String> = batch.results().unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn an_old_batch_reads_without_options_and_records_them_whole() {
        let root = tempfile::tempdir().unwrap();
        let store = BatchStore::new(root.path());
        let items = [item("a"), item("b")];
        let mut batch = store
            .create(BatchMeta::new("/w/x.worker".into(), &items), &items)
            .unwrap();
        let text = std::fs::read_to_string(batch.dir.join("batch.json")).unwrap();
        assert!(!text.contains("options"), "{text}");
        assert_eq!(store.open(&batch.id).unwrap().meta.options, None);
        let options = crate::GivenOptions {
            model: Some("openai:gpt-4o-mini".into()),
            ..Default::default()
        }
        .to_options();
        batch.record_options(options.clone()).unwrap();
        assert_eq!(store.open(&batch.id).unwrap().meta.options, Some(options));
        let left: Vec<_> = std::fs::read_dir(&batch.dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|entry| entry.file_name())
            .filter(|name| name.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let mut writer = batch.results_writer().unwrap();
        let spent = |tokens: u64, cost: Option<f64>| ItemResult {
            usage: TokenUsage {
                input_tokens: tokens,
                ..TokenUsage::default()
            },
            cost,
            ..result("a", ItemStatus::Failed)
        };
        writer.append(&spent(10, Some(0.25))).unwrap();
        writer.append(&spent(5, None)).unwrap();
        assert_eq!(
            batch.spent().unwrap(),
            Spent {
                usage: TokenUsage {
                    input_tokens: 15,
                    ..TokenUsage::default()
                },
                cost: Some(0.25),
            }
        );
    }

    #[test]
    fn one_process_at_a_time_runs_a_batch() {
        let root = tempfile::tempdir().unwrap();
        let store = BatchStore::new(root.path());
        let items = [item("a")];
        let batch = store
            .create(BatchMeta::new("/w/x.worker".into(), &items), &items)
            .unwrap();
        let held = batch.lock().unwrap();
        assert!(matches!(batch.lock(), Err(BatchError::Busy(_))));
        drop(held);
        batch.lock().unwrap();
    }
}
