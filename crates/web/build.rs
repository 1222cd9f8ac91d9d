//! Makes the compressed forms of the page's files, once per build: for every file under
//! `assets/`, its gzip (deflate at the best level) and Brotli (quality 11) forms go to
//! `$OUT_DIR/encoded/gzip/PATH` and `$OUT_DIR/encoded/br/PATH`, where `src/assets.rs` embeds
//! them beside the plain files, so the server never compresses while serving. A form no
//! smaller than its file is not kept (that file is then sent plain). The output is the same
//! for the same files (no time or name in the gzip header), and is made afresh each run, so a
//! file removed from `assets/` leaves no stale form behind.
//!
//! It also makes Cargo rebuild the crate when a file of the page changes: `include_dir!`
//! embeds `assets/`, but on stable Rust it cannot tell Cargo which files it read, so an edited
//! script would otherwise be served stale until something else in the crate changed.

use std::error::Error;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A build failure, with the file it concerns.
type BuildResult<T> = Result<T, Box<dyn Error>>;

fn main() -> BuildResult<()> {
    println!("cargo:rerun-if-changed=assets");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let assets = manifest.join("assets");
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    // Made beside the final folder and renamed over it, so a failed run leaves no half set.
    let fresh = out.join("encoded.new");
    let done = out.join("encoded");
    if fresh.exists() {
        fs::remove_dir_all(&fresh).map_err(|e| context(&fresh, e))?;
    }
    for form in ["gzip", "br"] {
        let dir = fresh.join(form);
        fs::create_dir_all(&dir).map_err(|e| context(&dir, e))?;
    }
    let mut files = Vec::new();
    walk(&assets, &mut files)?;
    // Brotli's best quality is slow in a build script (not optimised): one file per core at
    // a time.
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| -> Result<(), String> {
                    while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                        encode(&assets, path, &fresh).map_err(|e| e.to_string())?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|handle| match handle.join() {
                Ok(result) => result,
                Err(_) => Err("a compressing thread panicked".to_owned()),
            })
    })?;
    if done.exists() {
        fs::remove_dir_all(&done).map_err(|e| context(&done, e))?;
    }
    fs::rename(&fresh, &done).map_err(|e| context(&done, e))?;
    Ok(())
}

/// Writes the compressed forms of `path` (a file under `assets`) under `out`, those smaller than
/// it.
fn encode(assets: &Path, path: &Path, out: &Path) -> BuildResult<()> {
    let rel = path.strip_prefix(assets)?;
    let plain = fs::read(path).map_err(|e| context(path, e))?;
    for (form, bytes) in [("gzip", gzip(&plain)?), ("br", brotli(&plain)?)] {
        if bytes.len() >= plain.len() {
            continue;
        }
        let target = out.join(form).join(rel);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| context(parent, e))?;
        }
        fs::write(&target, bytes).map_err(|e| context(&target, e))?;
    }
    Ok(())
}

/// Every file under `dir`, at any depth (as `include_dir!` embeds them).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> BuildResult<()> {
    for entry in fs::read_dir(dir).map_err(|e| context(dir, e))? {
        let path = entry.map_err(|e| context(dir, e))?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// `error` about `path`, saying which file it was.
fn context(path: &Path, error: std::io::Error) -> Box<dyn Error> {
    format!("{}: {error}", path.display()).into()
}

/// `plain` as a gzip member at the best level, with no name and no time in its header.
fn gzip(plain: &[u8]) -> BuildResult<Vec<u8>> {
    let mut encoder = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::best());
    encoder.write_all(plain)?;
    Ok(encoder.finish()?)
}

/// `plain` as a Brotli stream at the best quality (11) and the default window (4 MiB, far more
/// than any file of the page).
fn brotli(plain: &[u8]) -> BuildResult<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        size_hint: plain.len(),
        ..Default::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &plain[..], &mut out, &params)?;
    Ok(out)
}
