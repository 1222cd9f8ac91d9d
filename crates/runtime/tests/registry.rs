//! Finding workers by name and from the command line, and refusing duplicate names.

use std::path::{Path, PathBuf};

use golem_runtime::config::{CONFIG_FILE_NAME, ProgramConfig};
use golem_runtime::registry::{RegistryError, WorkerRegistry, resolve_worker_arg};
use golem_runtime::worker::WorkerFileError;

/// A temporary program: files given as `(path, contents)`; a worker file's contents may be
/// just its name.
struct Program {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Program {
    fn new(files: &[(&str, &str)]) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        for (path, contents) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let text =
                if path.extension().is_some_and(|e| e == "worker") && !contents.contains('\n') {
                    format!("---\nname: {contents}\n---\nInstructions of {contents}.\n")
                } else {
                    (*contents).to_owned()
                };
            std::fs::write(path, text).unwrap();
        }
        Self { _tmp: tmp, root }
    }

    fn registry(&self, start: &str) -> Result<WorkerRegistry, RegistryError> {
        let start = self.root.join(start);
        let config = ProgramConfig::discover(&start).unwrap();
        WorkerRegistry::discover(&config, &start)
    }

    /// `path` relative to the root, or the error with the root shown as `$ROOT`.
    fn show(&self, result: Result<PathBuf, RegistryError>) -> String {
        match result {
            Ok(path) => path.strip_prefix(&self.root).unwrap().display().to_string(),
            Err(err) => err
                .to_string()
                .replace(&self.root.display().to_string(), "$ROOT"),
        }
    }
}

#[test]
fn lookup_by_name() {
    let program = Program::new(&[
        (CONFIG_FILE_NAME, "worker_paths: [workers, more, absent]\n"),
        ("workers/greeter.worker", "greeter"),
        ("workers/sorter/main.worker", "sorter"),
        ("workers/sorter/helper.worker", "sorter_helper"),
        ("more/odd-file-name.worker", "custom_name"),
        ("more/misnamed.worker", "declared_otherwise"),
        ("more/.hidden/secret.worker", "secret"),
        ("more/target/built.worker", "built"),
        ("more/a/b/too_deep.worker", "too_deep"),
        ("elsewhere/stray.worker", "stray"),
    ]);
    let registry = program.registry("").unwrap();
    let names: Vec<&str> = registry.workers().map(|w| w.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "custom_name",
            "declared_otherwise",
            "greeter",
            "sorter",
            "sorter_helper"
        ]
    );
    for (name, expected) in [
        ("greeter", "workers/greeter.worker"),
        ("sorter", "workers/sorter/main.worker"),
        ("sorter_helper", "workers/sorter/helper.worker"),
        ("custom_name", "more/odd-file-name.worker"),
        // The file name finds a worker whatever it declares.
        ("misnamed", "more/misnamed.worker"),
        ("declared_otherwise", "more/misnamed.worker"),
        (
            "greter",
            "no worker named `greter`: looked for greter.worker, greter/main.worker and \
             `name: greter` in $ROOT, $ROOT/workers, $ROOT/more, $ROOT/absent (missing) \
             (did you mean `greeter`?)",
        ),
        (
            "secret",
            "no worker named `secret`: looked for secret.worker, secret/main.worker and `name: secret` in $ROOT, $ROOT/workers, $ROOT/more, $ROOT/absent (missing)",
        ),
        (
            "built",
            "no worker named `built`: looked for built.worker, built/main.worker and `name: built` in $ROOT, $ROOT/workers, $ROOT/more, $ROOT/absent (missing)",
        ),
        (
            "stray",
            "no worker named `stray`: looked for stray.worker, stray/main.worker and `name: stray` in $ROOT, $ROOT/workers, $ROOT/more, $ROOT/absent (missing)",
        ),
        (
            "too_deep",
            "no worker named `too_deep`: looked for too_deep.worker, too_deep/main.worker and `name: too_deep` in $ROOT, $ROOT/workers, $ROOT/more, $ROOT/absent (missing)",
        ),
    ] {
        assert_eq!(program.show(registry.find(name)), expected, "{name}");
    }
    let sorter = registry.load("sorter").unwrap();
    assert_eq!(sorter.instructions, "Instructions of sorter.");
    assert_eq!(
        registry.load("misnamed").unwrap().name,
        "declared_otherwise"
    );
    assert!(registry.broken().is_empty());
}

#[test]
fn without_worker_paths_the_root_is_searched() {
    let program = Program::new(&[
        (CONFIG_FILE_NAME, "model: test:default\n"),
        ("greeter.worker", "greeter"),
        ("team/main.worker", "team"),
        ("team/summarizer.worker", "summarizer"),
    ]);
    // From a subdirectory: its own workers first, then the program root's.
    let registry = program.registry("team").unwrap();
    assert_eq!(program.show(registry.find("greeter")), "greeter.worker");
    assert_eq!(
        program.show(registry.find("summarizer")),
        "team/summarizer.worker"
    );
    assert_eq!(program.show(registry.find("team")), "team/main.worker");
    assert_eq!(
        registry.roots(),
        [program.root.join("team"), program.root.clone()]
    );
}

#[test]
fn duplicate_names_are_an_error_naming_both_files() {
    let program = Program::new(&[("a.worker", "helper"), ("tools/helper.worker", "helper")]);
    let err = program.registry("").unwrap_err();
    assert!(matches!(&err, RegistryError::Duplicate { name, .. } if name == "helper"));
    assert_eq!(
        program.show(Err(err)),
        "two workers are named helper: $ROOT/a.worker and $ROOT/tools/helper.worker"
    );

    // One file reached through two overlapping directories is not a duplicate.
    let program = Program::new(&[
        (CONFIG_FILE_NAME, "worker_paths: [., ./]\n"),
        ("x.worker", "x"),
    ]);
    let registry = program.registry("").unwrap();
    assert_eq!(registry.workers().count(), 1);
}

#[test]
fn broken_files_are_kept_aside() {
    let program = Program::new(&[
        ("good.worker", "good"),
        ("bad.worker", "---\nname: bad\ntoolset: {}\n---\n"),
    ]);
    let registry = program.registry("").unwrap();
    assert_eq!(registry.workers().count(), 1);
    assert_eq!(registry.broken().len(), 1);
    // Asked for by its file name, a broken worker reports its own error.
    let err = registry.load("bad").unwrap_err();
    assert!(
        matches!(
            err,
            RegistryError::Worker(WorkerFileError::Invalid { line: 3, .. })
        ),
        "{err}"
    );
    assert_eq!(
        program.show(Err(err)),
        "worker file $ROOT/bad.worker, line 3: unknown key `toolset` (did you mean `toolsets`?)"
    );
}

#[test]
fn command_line_argument() {
    let program = Program::new(&[
        (CONFIG_FILE_NAME, "worker_paths: [workers]\n"),
        ("workers/greeter.worker", "greeter"),
        ("workers/sorter/main.worker", "sorter"),
        ("loose/one.worker", "one"),
        ("loose/two.worker", "two"),
        ("README.md", "# hi\n"),
    ]);
    let cwd = program.root.clone();
    let resolve = |arg: &str, cwd: &Path| program.show(resolve_worker_arg(arg, cwd));
    for (arg, expected) in [
        // Paths.
        ("workers/greeter.worker", "workers/greeter.worker"),
        ("./workers/greeter.worker", "workers/greeter.worker"),
        ("workers/sorter", "workers/sorter/main.worker"),
        ("workers/sorter/", "workers/sorter/main.worker"),
        ("README.md", "README.md"),
        (
            "workers/greter.worker",
            "no worker file at $ROOT/workers/greter.worker (did you mean $ROOT/workers/greeter.worker?)",
        ),
        (
            "nowhere/x.worker",
            "no worker file at $ROOT/nowhere/x.worker",
        ),
        (
            "loose",
            "directory $ROOT/loose has no main.worker (it has one.worker, two.worker; pass one of them)",
        ),
        (
            "workers/",
            "directory $ROOT/workers has no main.worker (it has greeter.worker; pass one of them)",
        ),
        // Names, through the program config of the current directory.
        ("greeter", "workers/greeter.worker"),
        ("sorter", "workers/sorter/main.worker"),
        (
            "greter",
            "no worker named `greter`: looked for greter.worker, greter/main.worker and `name: greter` in $ROOT, $ROOT/workers (did you mean `greeter`?)",
        ),
        ("Greeter", "no worker file at $ROOT/Greeter"),
        // `.` parts are not kept in what is found or said.
        ("./workers/./greeter.worker", "workers/greeter.worker"),
    ] {
        assert_eq!(resolve(arg, &cwd), expected, "{arg}");
    }
    // An absolute path ignores the current directory.
    let absolute = program.root.join("loose/one.worker");
    assert_eq!(
        resolve_worker_arg(absolute.to_str().unwrap(), Path::new("/")).unwrap(),
        absolute
    );
    // From a subdirectory, names still resolve through the config found walking up.
    assert_eq!(
        resolve("greeter", &program.root.join("loose")),
        "workers/greeter.worker"
    );
    assert_eq!(
        resolve("one", &program.root.join("loose")),
        "loose/one.worker"
    );
    // A name is looked up through the program config, which must be valid.
    std::fs::write(
        program.root.join(CONFIG_FILE_NAME),
        "worker_paths: workers\n",
    )
    .unwrap();
    assert_eq!(
        resolve("greeter", &cwd),
        "config file $ROOT/golem-forge.config.yaml, line 1: `worker_paths` must be a list, \
         found \"workers\""
    );
    assert_eq!(
        resolve("workers/greeter.worker", &cwd),
        "workers/greeter.worker"
    );
}

#[test]
fn a_discovered_worker_is_handed_out_parsed_by_its_path() {
    let program = Program::new(&[
        ("greeter.worker", "greeter"),
        ("broken.worker", "---\nname: [\n"),
    ]);
    let registry = program.registry(".").unwrap();
    let file = program.root.join("greeter.worker");
    let parsed = registry.parsed(&file).expect("discovery parsed it");
    assert_eq!(parsed.name, "greeter");
    // Through another spelling of the same file too.
    let spelled = program.root.join(".").join("greeter.worker");
    assert_eq!(
        registry.parsed(&spelled).map(|w| w.name.as_str()),
        Some("greeter")
    );
    assert!(
        registry
            .parsed(&program.root.join("broken.worker"))
            .is_none()
    );
    assert!(
        registry
            .parsed(&program.root.join("absent.worker"))
            .is_none()
    );
}
