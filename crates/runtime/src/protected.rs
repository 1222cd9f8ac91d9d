//! The protected files of a worker beyond the sandbox's built-in list (issue 26): the program
//! config's `protected:` patterns, and the worker's own custom-toolset modules with the files
//! next to them that they may import (a Python module imports every `.py` in its directory, so
//! a new `json.py` there would be run next time). `launch` adds them to the worker's sandbox,
//! and `check` shows them.

use std::path::Path;

use golem_sandbox::ProtectedPaths;
use golem_tools::custom::ModuleKind;

use crate::config::ProgramConfig;
use crate::worker::WorkerDefinition;

/// What the program config and `definition` protect beyond the built-in list.
pub fn protected_paths(config: &ProgramConfig, definition: &WorkerDefinition) -> ProtectedPaths {
    let mut paths = ProtectedPaths::new();
    for pattern in &config.protected {
        // Checked when the config was read; a pattern that slipped through protects nothing
        // rather than failing the launch.
        if let Ok(with) = paths.clone().with_pattern(pattern) {
            paths = with;
        }
    }
    let base = definition.path.parent().unwrap_or(Path::new("."));
    let modules = definition
        .toolsets
        .custom
        .iter()
        .flat_map(|custom| custom.modules.iter());
    for module in modules {
        let path = base.join(&module.module);
        if let Some(dir) = path.parent() {
            for pattern in importable(&path) {
                paths = paths.with_host_files(dir, pattern);
            }
        }
        paths = paths.with_host_path(path);
    }
    paths
}

/// The names of the files next to a module that travel with it and that it may import (as
/// `golem_tools::custom`'s `siblings.rs` chooses them), as patterns.
fn importable(module: &Path) -> &'static [&'static str] {
    match ModuleKind::of(module) {
        ModuleKind::Python => &["*.py"],
        ModuleKind::JavaScript => &["*.mjs", "*.js", "*.cjs", "*.json"],
        ModuleKind::Executable => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};

    #[test]
    fn the_config_and_the_worker_s_modules_are_protected() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/mod.py"), "").unwrap();
        let worker = crate::worker::parse_worker(
            "---\nname: w\ntoolsets:\n  custom:\n    - module: ./tools/mod.py\n---\nHi\n",
            &root.join("w.worker"),
        )
        .unwrap();
        let mut config = ProgramConfig::defaults(&root);
        config.protected = vec!["secrets/**".to_owned()];
        let paths = protected_paths(&config, &worker);
        let sandbox = Sandbox::open(
            &root,
            &[ZoneConfig::new("all", ZoneMode::Rw).with_path(".")],
        )
        .unwrap()
        .protect(&paths);
        for (path, protected) in [
            ("/all/tools/mod.py", true),
            ("/all/tools/json.py", true),
            ("/all/tools/notes.md", false),
            ("/all/secrets/key", true),
            ("/all/src/a.py", false),
        ] {
            let p = sandbox.resolve(path).unwrap();
            assert_eq!(sandbox.protection(&p).is_protected(), protected, "{path}");
        }
    }
}
