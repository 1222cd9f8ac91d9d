//! The page's files, embedded in the binary at build time from `crates/web/assets/` (plain ES
//! modules, CSS and the vendored Preact + htm), each with the gzip and Brotli forms `build.rs`
//! made of it then: nothing is read from disk, fetched or compressed at run time. What is
//! served and what the page's weight budget counts (`tests/assets.rs`) both come from here.

use include_dir::{Dir, File, include_dir};

use crate::encoding::{self, Encoding};

static ASSETS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/assets");

/// The gzip form of each file of [`ASSETS`], by the same path (only where it is smaller).
static GZIP: Dir<'static> = include_dir!("$OUT_DIR/encoded/gzip");

/// The Brotli form of each file of [`ASSETS`], by the same path (only where it is smaller).
static BROTLI: Dir<'static> = include_dir!("$OUT_DIR/encoded/br");

/// One file of the page, in every form the server can send it.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    plain: &'static [u8],
    gzip: Option<&'static [u8]>,
    brotli: Option<&'static [u8]>,
    content_type: &'static str,
}

impl Asset {
    /// Its `Content-Type`, from the extension.
    pub fn content_type(&self) -> &'static str {
        self.content_type
    }

    /// The bytes of its form `encoding`: `None` for a compressed form the build did not keep
    /// (one that was not smaller than the file).
    pub fn encoded(&self, encoding: Encoding) -> Option<&'static [u8]> {
        match encoding {
            Encoding::Identity => Some(self.plain),
            Encoding::Gzip => self.gzip,
            Encoding::Brotli => self.brotli,
        }
    }

    /// What a request with `accept_encoding` (see [`encoding::choose`]) gets: the encoding and
    /// its bytes.
    pub fn for_request(&self, accept_encoding: Option<&str>) -> (Encoding, &'static [u8]) {
        let chosen = encoding::choose(accept_encoding, |e| self.encoded(e).is_some());
        (chosen, self.encoded(chosen).unwrap_or(self.plain))
    }
}

/// The file at `path` (relative to the assets folder).
pub fn file(path: &str) -> Option<Asset> {
    let plain = ASSETS.get_file(path)?;
    let same = |dir: &'static Dir<'static>| dir.get_file(plain.path()).map(File::contents);
    Some(Asset {
        plain: plain.contents(),
        gzip: same(&GZIP),
        brotli: same(&BROTLI),
        content_type: content_type(path),
    })
}

/// The path of every embedded file (relative to the assets folder, `/`-separated), sorted.
pub fn paths() -> Vec<String> {
    let mut out = Vec::new();
    collect(&ASSETS, &mut out);
    out.sort();
    out
}

fn collect(dir: &Dir<'static>, out: &mut Vec<String>) {
    for file in dir.files() {
        let path = file.path().components();
        let parts: Vec<String> = path
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        out.push(parts.join("/"));
    }
    for sub in dir.dirs() {
        collect(sub, out);
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        Some("txt" | "md") | None => "text/plain; charset=utf-8",
        Some(_) => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
        assert_eq!(
            content_type("vendor/preact.module.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("LICENSE"), "text/plain; charset=utf-8");
        assert_eq!(content_type("x.wasm"), "application/octet-stream");
    }

    #[test]
    fn paths_outside_the_folder_find_nothing() {
        for path in [
            "../Cargo.toml",
            "/etc/passwd",
            "../src/lib.rs",
            "assets/../../Cargo.toml",
        ] {
            assert!(file(path).is_none(), "{path}");
        }
    }
}
