//! The page's files (crates/web/assets), checked without a browser: the vendored view library is
//! exactly what `assets/vendor/VERSIONS` names (SHA-256 of each file, and of the package's file
//! for the one changed line), each page (the session page and the inbox page) stays under its
//! weight, counted by the files it loads in the compressed form the server sends them (and
//! under a looser ceiling uncompressed), the server embeds exactly these files and each
//! compressed form decodes to its file, each page's HTML has no inline script or style and
//! loads only the page's own files, nothing points outside the page, the page's
//! own code never builds markup from strings, every `data-testid` hook of PAGE.md exists, and
//! the page speaks the protocol of `crates/protocol/schema/events.schema.json`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use golem_web::encoding::Encoding;

/// The most a page may weigh as a browser receives it: every file it loads — its HTML, its
/// stylesheets, its script and every module that imports, transitively — in the form the
/// server sends to a browser that takes gzip but not Brotli (`Accept-Encoding: gzip,
/// deflate`, as some browsers ask over plain HTTP; Chromium also takes Brotli, which is
/// smaller still), measured for each page apart (the session page `index.html` and the inbox
/// page `inbox.html` share the view library and the renderers, but a browser loads only one of
/// them). The bytes are the server's own (`golem_web::assets`), compressed once at build time
/// by `build.rs`, so this counts exactly what is sent. When it was set the session page came
/// to 52,554 bytes so (45,705 as Brotli; the inbox page 34,381); 60,000 leaves about 7.4 kB,
/// some 21 kB of new source at the page's ratio (a third), before the next feature must make
/// room. It replaced a budget of 153,000 uncompressed bytes, then 200 bytes from full.
const MAX_PAGE_SENT_BYTES: usize = 60 * 1000;

/// The most a page may weigh uncompressed, the same files counted: what the browser parses and
/// keeps, which compression hides. Looser than [`MAX_PAGE_SENT_BYTES`]: the session page's
/// 152,800 bytes have about 47 kB of room, more than the 21 kB that budget lets code of the
/// page's usual ratio add, so this one binds only on growth that compresses unusually well
/// (a large table of data, repeated code) and is cheap to send but not to parse.
const MAX_PAGE_PLAIN_BYTES: usize = 200 * 1000;

/// The pages: the HTML file, the one script it loads, and the stylesheets it links.
const PAGES: &[(&str, &str, &[&str])] = &[
    ("index.html", "app.js", &["style.css"]),
    ("inbox.html", "lib/inbox.js", &["style.css", "inbox.css"]),
];

fn assets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
}

/// Every file under `dir`, as (path relative to `dir` with `/` separators, full path), sorted.
fn files_under(dir: &Path) -> Vec<(String, PathBuf)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("under the root")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((rel, path));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Whether a file is licence or provenance text rather than something the page loads.
fn is_notice(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.starts_with("LICENSE") || name == "VERSIONS"
}

/// The files the page loads: the HTML, the scripts and the styles (and any images).
fn page_files() -> Vec<(String, PathBuf)> {
    files_under(&assets_dir())
        .into_iter()
        .filter(|(rel, _)| !is_notice(rel))
        .collect()
}

/// The page's own scripts (not the vendored library).
fn own_scripts() -> Vec<(String, String)> {
    page_files()
        .into_iter()
        .filter(|(rel, _)| rel.ends_with(".js") && !rel.starts_with("vendor/"))
        .map(|(rel, path)| {
            let text = read(&path);
            (rel, text)
        })
        .collect()
}

// -- SHA-256 (FIPS 180-4), enough to pin a few files without a dependency ------------------------

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

fn sha256_hex(data: &[u8]) -> String {
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut message = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bit_len.to_be_bytes());
    for block in message.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (slot, v) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *slot = slot.wrapping_add(v);
        }
    }
    h.iter().map(|v| format!("{v:08x}")).collect()
}

#[test]
fn sha256_matches_known_digests() {
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    assert_eq!(
        sha256_hex(&[b'a'; 1000]),
        "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
    );
}

// -- the vendored library -----------------------------------------------------------------------

/// `vendor/VERSIONS` as blocks: a file name, then indented `key: value` lines.
fn versions() -> BTreeMap<String, BTreeMap<String, String>> {
    let text = read(&assets_dir().join("vendor/VERSIONS"));
    let mut blocks: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if !line.starts_with(' ') {
            let name = line.trim().to_owned();
            assert!(
                blocks.insert(name.clone(), BTreeMap::new()).is_none(),
                "VERSIONS names {name} twice"
            );
            current = Some(name);
            continue;
        }
        let name = current
            .as_ref()
            .expect("a key line before any file name in VERSIONS");
        let (key, value) = line
            .trim()
            .split_once(": ")
            .unwrap_or_else(|| panic!("VERSIONS: not a `key: value` line: {line:?}"));
        blocks
            .get_mut(name)
            .expect("the current block")
            .insert(key.to_owned(), value.to_owned());
    }
    blocks
}

#[test]
fn vendored_files_are_the_pinned_ones() {
    let vendor = assets_dir().join("vendor");
    let blocks = versions();
    assert!(!blocks.is_empty(), "VERSIONS names no file");
    for (name, block) in &blocks {
        for key in ["package", "version", "from", "licence", "sha256"] {
            assert!(block.contains_key(key), "VERSIONS: {name} has no `{key}`");
        }
        let bytes = fs::read(vendor.join(name))
            .unwrap_or_else(|e| panic!("VERSIONS names {name}, which cannot be read: {e}"));
        assert_eq!(
            sha256_hex(&bytes),
            block["sha256"],
            "vendor/{name} is not the file VERSIONS pins"
        );
        let licence = block["licence"].split_whitespace().next().unwrap_or("");
        assert!(
            vendor.join(licence).is_file(),
            "vendor/{name}: its licence file {licence} is missing"
        );
        // A changed file: undoing the change gives back the package's file.
        match (block.get("upstream-sha256"), block.get("change")) {
            (None, None) => {}
            (Some(upstream), Some(change)) => {
                let (before, after) = change
                    .split_once(" -> ")
                    .unwrap_or_else(|| panic!("VERSIONS: {name}: `change` is not `A -> B`"));
                let text = String::from_utf8(bytes.clone()).expect("a changed file is text");
                assert_eq!(
                    text.matches(after).count(),
                    1,
                    "vendor/{name}: the change should appear exactly once"
                );
                let original = text.replacen(after, before, 1);
                assert_eq!(
                    &sha256_hex(original.as_bytes()),
                    upstream,
                    "vendor/{name} differs from its package's file by more than `{change}`"
                );
            }
            _ => panic!("VERSIONS: {name} needs both `upstream-sha256` and `change`, or neither"),
        }
    }
    for (rel, _) in files_under(&vendor) {
        if !is_notice(&rel) {
            assert!(
                blocks.contains_key(&rel),
                "vendor/{rel} is not named in VERSIONS"
            );
        }
    }
}

// -- weight, HTML, URLs, scripts ----------------------------------------------------------------

/// The files `page` loads (relative to the assets folder): the page, what its `src` and `href`
/// attributes name under `/assets/`, and every module the scripts import, transitively.
fn loaded_by(page: &str) -> Vec<String> {
    let dir = assets_dir().canonicalize().expect("the assets folder");
    let html = read(&dir.join(page));
    let mut todo: Vec<String> = attribute_values(&html, "src")
        .into_iter()
        .chain(attribute_values(&html, "href"))
        .filter_map(|url| url.strip_prefix("/assets/").map(str::to_owned))
        .collect();
    let mut loaded = vec![page.to_owned()];
    while let Some(rel) = todo.pop() {
        if loaded.contains(&rel) {
            continue;
        }
        let path = dir.join(&rel);
        if rel.ends_with(".js") {
            let base = path.parent().expect("a file in a folder").to_owned();
            for spec in import_specifiers(&read(&path)) {
                let target = base.join(&spec).canonicalize().unwrap_or_else(|_| {
                    panic!("{rel} imports {spec:?}, which is not a file of the page")
                });
                let target = target
                    .strip_prefix(&dir)
                    .expect("under the assets")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                todo.push(target);
            }
        }
        loaded.push(rel);
    }
    loaded.sort();
    loaded
}

/// The `Accept-Encoding` of a browser that takes gzip but not Brotli, and of Chromium.
const GZIP_BROWSER: &str = "gzip, deflate";
const BROTLI_BROWSER: &str = "gzip, deflate, br, zstd";

/// How many bytes the server sends for the page file `rel` to a request with `accept`.
fn sent(rel: &str, accept: Option<&str>) -> usize {
    let asset = golem_web::assets::file(rel)
        .unwrap_or_else(|| panic!("{rel} is not embedded in the server"));
    asset.for_request(accept).1.len()
}

#[test]
fn each_page_weighs_less_than_its_budget() {
    let mut used = Vec::new();
    for (page, script, styles) in PAGES {
        let files = loaded_by(page);
        let forms = [None, Some(GZIP_BROWSER), Some(BROTLI_BROWSER)];
        let totals: Vec<usize> = forms
            .iter()
            .map(|accept| files.iter().map(|rel| sent(rel, *accept)).sum())
            .collect();
        let [plain, gzip, brotli] = totals[..] else {
            unreachable!("three forms")
        };
        let list: Vec<String> = files
            .iter()
            .map(|rel| {
                let [p, g, b] = forms.map(|accept| sent(rel, accept));
                format!("{rel}: {p} plain, {g} gzip, {b} br")
            })
            .collect();
        let table = format!(
            "{page}: {plain} bytes plain, {gzip} gzip, {brotli} br\n{}",
            list.join("\n")
        );
        // `--nocapture` shows the weights.
        println!("{table}");
        assert!(
            gzip < MAX_PAGE_SENT_BYTES,
            "{page} sends {gzip} bytes to a gzip browser (budget {MAX_PAGE_SENT_BYTES}):\n{table}"
        );
        assert!(
            plain < MAX_PAGE_PLAIN_BYTES,
            "{page} weighs {plain} bytes uncompressed (ceiling {MAX_PAGE_PLAIN_BYTES}):\n{table}"
        );
        assert!(
            brotli <= gzip && gzip < plain / 2,
            "{page}: the server does not compress it as it should:\n{table}"
        );
        for needed in std::iter::once(script).chain(styles.iter()) {
            assert!(
                files.iter().any(|rel| rel == needed),
                "{page} does not load {needed}"
            );
        }
        used.extend(files);
    }
    // Nothing is embedded that no page loads (it would be weight nobody measures).
    for (rel, _) in page_files() {
        assert!(used.contains(&rel), "{rel} is loaded by no page");
    }
}

/// `body` decoded from `encoding`.
fn decode(encoding: Encoding, body: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    match encoding {
        Encoding::Identity => out.extend_from_slice(body),
        Encoding::Gzip => {
            flate2::read::GzDecoder::new(body)
                .read_to_end(&mut out)
                .expect("a gzip member");
        }
        Encoding::Brotli => {
            brotli_decompressor::Decompressor::new(body, 4096)
                .read_to_end(&mut out)
                .expect("a Brotli stream");
        }
    }
    out
}

#[test]
fn the_server_embeds_every_file_as_it_is_and_its_compressed_forms_decode_to_it() {
    let on_disk = files_under(&assets_dir());
    let embedded = golem_web::assets::paths();
    let mut names: Vec<String> = on_disk.iter().map(|(rel, _)| rel.clone()).collect();
    names.sort();
    assert_eq!(
        embedded, names,
        "the server embeds other files than assets/ has (a stale build?)"
    );
    for (rel, path) in &on_disk {
        let plain = fs::read(path).expect("a page file");
        let asset = golem_web::assets::file(rel).expect("embedded");
        assert!(
            asset.encoded(Encoding::Identity) == Some(&plain[..]),
            "{rel}: the server sends other bytes than the file's"
        );
        for encoding in [Encoding::Gzip, Encoding::Brotli] {
            match asset.encoded(encoding) {
                Some(bytes) => {
                    assert!(
                        bytes.len() < plain.len(),
                        "{rel}: a {encoding:?} form as large"
                    );
                    assert!(
                        decode(encoding, bytes) == plain,
                        "{rel}: its {encoding:?} form is not the file"
                    );
                }
                // Only a file too small to gain from it goes without.
                None => assert!(
                    plain.len() < 200,
                    "{rel} ({} bytes) has no {encoding:?} form",
                    plain.len()
                ),
            }
        }
    }
}

/// The values of attribute `attr` in `html` (quoted with `"`).
fn attribute_values(html: &str, attr: &str) -> Vec<String> {
    let needle = format!("{attr}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(&needle) {
        let before = rest[..at].chars().last();
        rest = &rest[at + needle.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-') {
            continue;
        }
        let end = rest.find('"').expect("a closing quote");
        out.push(rest[..end].to_owned());
        rest = &rest[end..];
    }
    out
}

#[test]
fn each_page_has_no_inline_script_or_style_and_loads_only_its_own_files() {
    for (page, script, styles) in PAGES {
        check_page_html(page, script, styles);
    }
}

/// `page` has no inline script, style or handler, and loads exactly `script` (as a module) and
/// `styles`.
fn check_page_html(page: &str, script: &str, styles: &[&str]) {
    let html = read(&assets_dir().join(page));
    let lower = html.to_ascii_lowercase();
    // Every <script> has a src and nothing inside.
    let mut scripts = 0;
    for (at, _) in lower.match_indices("<script") {
        scripts += 1;
        let tag_end = at + lower[at..].find('>').expect("a closed script tag");
        let tag = &lower[at..tag_end];
        assert!(tag.contains(" src=\""), "an inline script in {page}: {tag}");
        assert!(
            lower[tag_end + 1..].trim_start().starts_with("</script>"),
            "a script with a body in {page}"
        );
    }
    assert_eq!(scripts, 1, "{page} loads one script, {script}");
    assert!(!lower.contains("<style"), "a <style> block in {page}");
    assert!(!lower.contains(" style="), "a style attribute in {page}");
    assert!(
        !lower.contains("javascript:"),
        "a javascript: URL in {page}"
    );
    for (at, _) in lower.match_indices(" on") {
        let word: String = lower[at + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        assert!(
            !lower[at + 1 + word.len()..].starts_with('=') || word.len() < 3,
            "an inline event handler in {page}: {word}"
        );
    }
    let src = format!("/assets/{script}");
    assert_eq!(
        attribute_values(&html, "src"),
        std::slice::from_ref(&src),
        "{page} loads exactly {src}"
    );
    assert!(
        lower.contains(&format!("<script type=\"module\" src=\"{src}\">")),
        "{script} is loaded as a module"
    );
    let hrefs = attribute_values(&html, "href");
    let linked: Vec<String> = styles.iter().map(|s| format!("/assets/{s}")).collect();
    for style in &linked {
        assert!(hrefs.contains(style), "{page} loads {style}");
    }
    for href in hrefs {
        assert!(
            linked.contains(&href) || href == "data:,",
            "{page} links {href}; only {linked:?} (and the empty icon) are expected"
        );
    }
}

/// XML namespace names that only look like URLs (no request is ever made to them).
const NAMESPACES: &[&str] = &[
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1998/Math/MathML",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/1999/xhtml",
];

#[test]
fn nothing_the_page_loads_points_outside_it() {
    for (rel, path) in page_files() {
        let Ok(text) = fs::read_to_string(&path) else {
            continue; // an image
        };
        for scheme in ["http://", "https://"] {
            for (at, _) in text.match_indices(scheme) {
                let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                let line = text[line_start..].lines().next().unwrap_or("").trim_start();
                let in_comment =
                    line.starts_with("//") || line.starts_with("/*") || line.starts_with('*');
                let namespace = NAMESPACES.iter().any(|ns| text[at..].starts_with(ns));
                assert!(
                    in_comment || namespace,
                    "{rel} names an outside address: {}",
                    &text[at..(at + 60).min(text.len())]
                );
            }
        }
        let lower = text.to_ascii_lowercase();
        for pattern in [
            "src=\"//",
            "href=\"//",
            "url(//",
            "url(\"//",
            "url('//",
            "@import",
        ] {
            assert!(!lower.contains(pattern), "{rel} contains {pattern}");
        }
    }
}

/// The module specifiers of the `import` and `export … from` statements of a script: each
/// statement starts a line (or the file) and runs to its `;`.
fn import_specifiers(js: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut starts = vec![0];
    starts.extend(js.match_indices('\n').map(|(i, _)| i + 1));
    for start in starts {
        let line = js[start..].trim_start_matches([' ', '\t']);
        let is_statement = [
            "import ", "import{", "import'", "import\"", "export ", "export{", "export*",
        ]
        .iter()
        .any(|p| line.starts_with(p));
        if !is_statement {
            continue;
        }
        let statement = &line[..line.find(';').unwrap_or(line.len())];
        let tail = match statement.rfind("from") {
            Some(at) => &statement[at + 4..],
            None if statement.starts_with("import") => &statement[6..],
            None => continue,
        };
        let tail = tail.trim_start();
        let Some(quote) = tail.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        if let Some(end) = tail[1..].find(quote) {
            out.push(tail[1..1 + end].to_owned());
        }
    }
    out
}

#[test]
fn every_import_is_a_file_of_the_page() {
    let dir = assets_dir();
    let mut imports = 0;
    for (rel, path) in page_files() {
        if !rel.ends_with(".js") {
            continue;
        }
        let text = read(&path);
        assert!(
            !text.contains("import("),
            "{rel} imports a module at run time"
        );
        let base = Path::new(&rel).parent().unwrap_or(Path::new(""));
        for spec in import_specifiers(&text) {
            imports += 1;
            assert!(
                spec.starts_with("./") || spec.starts_with("../"),
                "{rel} imports {spec:?}: a browser needs a relative path (no import maps under the CSP)"
            );
            let target = dir.join(base).join(&spec);
            let target = target.canonicalize().unwrap_or_else(|_| {
                panic!("{rel} imports {spec:?}, which is not a file of the page")
            });
            assert!(
                target.starts_with(dir.canonicalize().expect("the assets folder")),
                "{rel} imports {spec:?} from outside the assets"
            );
        }
    }
    assert!(
        imports >= 10,
        "only {imports} imports found; is the parser still right?"
    );
}

#[test]
fn the_pages_own_scripts_never_build_markup_from_strings() {
    let scripts = own_scripts();
    assert!(!scripts.is_empty());
    for (rel, text) in &scripts {
        for banned in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "dangerouslySetInnerHTML",
            "eval(",
            "new Function",
            "setTimeout('",
            "setTimeout(\"",
        ] {
            assert!(!text.contains(banned), "{rel} uses {banned}");
        }
        for banned in ["style=\"", "style='", "<style"] {
            assert!(
                !text.contains(banned),
                "{rel} writes an inline style ({banned}); the CSP allows only styles set through the CSSOM"
            );
        }
    }
}

// -- the contract with the tests ----------------------------------------------------------------

/// The hooks in PAGE.md's table (the `DOM hooks` section): every backticked name in the first
/// column, and the hyphenated ones and `data-` attributes the second column names (`deny-confirm`,
/// `approval-submit`, `data-streaming`).
fn page_md_hooks() -> Vec<String> {
    let page = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("PAGE.md"));
    let section = page
        .split("## DOM hooks")
        .nth(1)
        .expect("PAGE.md has a `DOM hooks` section");
    let mut hooks = Vec::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        for (column, cell) in line.split('|').skip(1).take(2).enumerate() {
            for (k, piece) in cell.split('`').enumerate() {
                let named = column == 0 || piece.contains('-');
                if k % 2 == 1 && named && !hooks.iter().any(|h| h == piece) {
                    hooks.push(piece.to_owned());
                }
            }
        }
    }
    hooks
}

#[test]
fn every_hook_of_page_md_is_in_the_page() {
    let js: String = own_scripts()
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join("\n");
    let hooks = page_md_hooks();
    assert!(
        hooks.len() >= 40,
        "too few hooks found in PAGE.md: {hooks:?}"
    );
    let mut checked = 0;
    for hook in &hooks {
        if hook.starts_with("body[") {
            // `body[data-connected="true"]`: set through the dataset.
            let name = hook
                .split("data-")
                .nth(1)
                .and_then(|rest| rest.split('=').next())
                .expect("a data attribute");
            assert!(
                js.contains(&format!("body.dataset.{name} = 'true'"))
                    && js.contains(&format!("body.dataset.{name} = 'false'")),
                "the page never sets body[data-{name}] to true and false"
            );
            checked += 1;
        } else if hook.starts_with("data-") {
            let name = hook.split('=').next().unwrap_or(hook);
            assert!(
                js.contains(&format!("{name}=")),
                "the page never sets the attribute {name} (PAGE.md: {hook})"
            );
            checked += 1;
        } else if hook.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !hook.is_empty() {
            assert!(
                js.contains(&format!("data-testid=\"{hook}\"")),
                "no element has data-testid=\"{hook}\" (PAGE.md's hooks)"
            );
            checked += 1;
        }
    }
    assert!(checked >= 45, "only {checked} hooks checked: {hooks:?}");
    for status in [
        "running",
        "success",
        "error",
        "denied",
        "blocked",
        "interrupted",
    ] {
        assert!(
            js.contains(&format!("{status}:")),
            "the tool card does not know the status {status}"
        );
    }
}

// -- the protocol -------------------------------------------------------------------------------

/// The `type` of every variant of `$defs.NAME` in the protocol's JSON Schema.
fn event_types(name: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../protocol/schema/events.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&read(&path)).expect("the schema is JSON");
    let def = &schema["$defs"][name];
    let variants = def["oneOf"]
        .as_array()
        .or(def["anyOf"].as_array())
        .unwrap_or_else(|| panic!("$defs.{name} has no variants"));
    variants
        .iter()
        .map(|v| {
            v["properties"]["type"]["const"]
                .as_str()
                .unwrap_or_else(|| panic!("a variant of {name} without a `type`: {v}"))
                .to_owned()
        })
        .collect()
}

/// What follows each `open` in `text` up to the next `'`.
fn quoted_after(text: &str, open: &str) -> Vec<String> {
    text.match_indices(open)
        .filter_map(|(at, _)| {
            let rest = &text[at + open.len()..];
            rest.find('\'').map(|end| rest[..end].to_owned())
        })
        .collect()
}

#[test]
fn the_page_speaks_the_protocol() {
    let display = event_types("DisplayEvent");
    let actions = event_types("ActionEvent");
    assert!(
        display.len() >= 15 && actions.len() >= 10,
        "{display:?} {actions:?}"
    );

    // The store takes every display event, and only those.
    let store = read(&assets_dir().join("lib/store.js"));
    let mut handled = quoted_after(&store, "case '");
    handled.sort();
    let mut expected = display.clone();
    expected.sort();
    assert_eq!(
        handled, expected,
        "lib/store.js: the display events `apply` takes"
    );

    // The page sends only actions (a camelCase `type: '…'`, or the name given to `act`), and
    // every one but `endSession` (the session ends with the server).
    let js: String = own_scripts()
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join("\n");
    let mut sent = quoted_after(&js, "type: '");
    sent.retain(|t| t.chars().any(|c| c.is_ascii_uppercase()));
    sent.extend(quoted_after(&js, "act('"));
    for name in &sent {
        assert!(
            actions.contains(name),
            "the page sends `{name}`, not an action event"
        );
    }
    for name in actions.iter().filter(|a| *a != "endSession") {
        assert!(
            js.contains(&format!("'{name}'")),
            "the page never sends the action `{name}`"
        );
    }
}
