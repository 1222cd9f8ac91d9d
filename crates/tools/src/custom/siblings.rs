//! The files next to a Python or JavaScript module that it may import: the jail shows a module
//! nothing of the host but its zones, so the source files of the module's own language in its
//! directory (not in subdirectories, no other files: never a `.env`) travel with it, and its
//! adapter writes them into the jail's private `/tmp` and imports from there. Bounded, so a
//! module in a large directory gets a clear error instead of a slow start.

use std::path::Path;

use super::CustomError;
use super::module::ModuleKind;

/// The most bytes of sibling files that travel with a module.
const MAX_BYTES: u64 = 1024 * 1024;
/// The most sibling files that travel with a module.
const MAX_FILES: usize = 200;

/// The extensions a module of `kind` may import from its directory.
fn importable(kind: ModuleKind) -> &'static [&'static str] {
    match kind {
        ModuleKind::Python => &["py"],
        ModuleKind::JavaScript => &["mjs", "js", "cjs", "json"],
        ModuleKind::Executable => &[],
    }
}

/// The source files next to the module at `path` (named `shown` in messages) that it may
/// import, by file name, sorted; none for an executable.
pub fn read(
    path: &Path,
    shown: &str,
    kind: ModuleKind,
) -> Result<Vec<(String, String)>, CustomError> {
    let extensions = importable(kind);
    if extensions.is_empty() {
        return Ok(Vec::new());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let own = path.file_name();
    let entries = std::fs::read_dir(dir).map_err(|source| CustomError::DirectoryUnreadable {
        module: shown.to_owned(),
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut found = Vec::new();
    let mut bytes = 0u64;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        if Some(name.as_os_str()) == own {
            continue;
        }
        let Some(name) = name.to_str() else { continue };
        let wanted = Path::new(name)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e));
        // Regular files only; a link is not followed out of the directory.
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if !wanted || !regular || name.starts_with('.') {
            continue;
        }
        bytes += entry.metadata().map_or(0, |m| m.len());
        if bytes > MAX_BYTES || found.len() >= MAX_FILES {
            return Err(CustomError::TooManySiblings {
                module: shown.to_owned(),
                extensions: extensions.join("/."),
                max_files: MAX_FILES,
                max_kib: MAX_BYTES / 1024,
            });
        }
        let source = std::fs::read_to_string(entry.path()).map_err(|source| {
            CustomError::SiblingUnreadable {
                module: shown.to_owned(),
                name: name.to_owned(),
                source,
            }
        })?;
        found.push((name.to_owned(), source));
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_source_files_of_the_module_s_language_travel() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("tools.py", "import helpers"),
            ("helpers.py", "X = 1"),
            ("notes.txt", "no"),
            (".env", "SECRET=1"),
            (".hidden.py", "no"),
            ("lib.mjs", "export const y = 2;"),
        ] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        std::fs::create_dir(dir.path().join("pkg.py")).unwrap();
        let module = dir.path().join("tools.py");
        let python = read(&module, "./tools.py", ModuleKind::Python).unwrap();
        assert_eq!(python, [("helpers.py".to_owned(), "X = 1".to_owned())]);
        let js = read(
            &dir.path().join("main.mjs"),
            "./main.mjs",
            ModuleKind::JavaScript,
        )
        .unwrap();
        assert_eq!(
            js,
            [("lib.mjs".to_owned(), "export const y = 2;".to_owned())]
        );
        assert!(
            read(&module, "x", ModuleKind::Executable)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn too_much_next_to_a_module_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.py"), vec![b'#'; 1024 * 1024 + 1]).unwrap();
        let error = read(
            &dir.path().join("tools.py"),
            "./tools.py",
            ModuleKind::Python,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "custom tool module ./tools.py: the py files next to it (which it may import, so they \
             travel with it into the jail) come to more than 200 files or 1024 KiB; put the \
             module and its helpers in a directory of their own"
        );
    }
}
