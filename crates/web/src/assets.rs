//! The page's files, embedded in the binary at build time from `crates/web/assets/` (plain ES
//! modules, CSS and the vendored Preact + htm): nothing is read from disk or fetched at run
//! time.

use include_dir::{Dir, include_dir};

static ASSETS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/assets");

/// The file at `path` (relative to the assets folder) and its content type.
pub fn file(path: &str) -> Option<(&'static [u8], &'static str)> {
    let file = ASSETS.get_file(path)?;
    Some((file.contents(), content_type(path)))
}

/// Every embedded file with its size, for measuring the page's weight.
pub fn files() -> Vec<(String, usize)> {
    let mut out = Vec::new();
    collect(&ASSETS, &mut out);
    out.sort();
    out
}

fn collect(dir: &Dir<'static>, out: &mut Vec<(String, usize)>) {
    for file in dir.files() {
        out.push((file.path().display().to_string(), file.contents().len()));
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
