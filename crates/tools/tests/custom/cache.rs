//! The describe cache (`.golem-forge/custom-tools/` under the program root): a second build
//! of a module's toolset reads its tools from the cache and starts no process (its describe
//! jail cannot run anything, and the entry's own description is used); the whitelist applies
//! to the cached tools; a changed module or a changed or new sibling is described again, its
//! entry rewritten in place of the old one; a corrupt or unusable entry is ignored and
//! rewritten, through a temporary file and a rename.

use super::*;

/// A module whose tool's description comes from its sibling, so that the sibling changes what
/// `describe` prints.
const MODULE: &str = r#"
import helpers

def greet(name: str) -> str:
    return helpers.hello(name)

greet.__doc__ = helpers.DOC
"#;

const HELPERS: &str = r#"
DOC = "Greets someone."

def hello(name):
    return "Hello, " + name + "!"
"#;

impl Fixture {
    /// The describe cache directory, under the fixture as the program root.
    fn cache_dir(&self) -> PathBuf {
        golem_tools::custom::cache_dir(self.dir.path())
    }

    /// The toolset of `modules/tools.py` with the describe cache, described (on a miss)
    /// through `describe_jail`.
    fn cached(
        &self,
        whitelist: Option<&[&str]>,
        describe_jail: Jail,
    ) -> Result<Vec<Arc<dyn Tool>>, CustomError> {
        let options = CustomOptions {
            config: CustomModuleConfig {
                tools: whitelist.map(|w| w.iter().map(|s| (*s).to_owned()).collect()),
                approval: config(Some(ApprovalDecisionType::PreApproved), &[]),
                timeout: SECS.as_secs(),
                ..CustomModuleConfig::new("./tools.py")
            },
            path: self.dir.path().join("modules/tools.py"),
            cache_dir: Some(self.cache_dir()),
            notice: None,
        };
        custom_tools(self.jail(), describe_jail, options)
    }

    /// A jail that cannot start anything: its helper does not exist.
    fn broken_jail(&self) -> Jail {
        Jail::new(
            self.dir.path().join("no-such-helper"),
            self.sandbox.clone(),
            JailPolicy::default(),
        )
    }

    /// The only cache entry, as JSON, and its path.
    fn entry(&self) -> (PathBuf, Value) {
        let files: Vec<PathBuf> = std::fs::read_dir(self.cache_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "one entry and nothing else: {files:?}");
        let text = std::fs::read_to_string(&files[0]).unwrap();
        (files[0].clone(), serde_json::from_str(&text).unwrap())
    }
}

fn description(tools: &[Arc<dyn Tool>]) -> String {
    assert_eq!(tools.len(), 1);
    tools[0].description().to_owned()
}

pub fn a_warm_build_starts_no_process() {
    let f = Fixture::new();
    f.module("helpers.py", HELPERS);
    f.module("tools.py", MODULE);
    // Without the cache, the broken jail fails the build: a describe run would show.
    let options = CustomOptions {
        config: CustomModuleConfig {
            timeout: SECS.as_secs(),
            ..CustomModuleConfig::new("./tools.py")
        },
        path: f.dir.path().join("modules/tools.py"),
        cache_dir: None,
        notice: None,
    };
    let err = custom_tools(f.jail(), f.broken_jail(), options)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("reading its tools failed"), "{err}");
    assert!(!f.cache_dir().exists());

    let tools = f.cached(None, f.jail()).unwrap();
    assert_eq!(description(&tools), "Greets someone.");
    let (path, mut entry) = f.entry();
    assert_eq!(entry["module"], "./tools.py");
    assert_eq!(
        entry["described"]["tools"][0]["description"],
        "Greets someone."
    );
    // The entry's own description shows that the second build read it, and the broken jail
    // that it ran nothing.
    entry["described"]["tools"][0]["description"] = json!("From the cache.");
    std::fs::write(&path, entry.to_string()).unwrap();
    let tools = f.cached(None, f.broken_jail()).unwrap();
    assert_eq!(description(&tools), "From the cache.");
    assert_eq!(f.entry().1, entry, "a hit leaves the entry alone");
    // The whitelist applies to the cached tools, without describing again.
    assert_eq!(
        f.cached(Some(&["greet"]), f.broken_jail()).unwrap().len(),
        1
    );
    let err = f
        .cached(Some(&["nope"]), f.broken_jail())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("has no tool `nope`") && err.contains("it has: greet"),
        "{err}"
    );
    // The tools built from the cache call the module (its long-lived process starts now).
    let session = Session::new(tools);
    block_on(async {
        let outcome = session.ok("greet", json!({"name": "Ada"})).await;
        assert_eq!(
            outcome.value,
            golem_protocol::ToolResultValue::text("Hello, Ada!")
        );
    });
}

pub fn a_changed_module_or_sibling_is_described_again() {
    let f = Fixture::new();
    f.module("helpers.py", HELPERS);
    f.module("tools.py", MODULE);
    assert_eq!(
        description(&f.cached(None, f.jail()).unwrap()),
        "Greets someone."
    );
    let key = |f: &Fixture| f.entry().1["key"].as_str().unwrap().to_owned();
    let first = key(&f);

    f.module(
        "tools.py",
        &MODULE.replace("helpers.DOC", "\"Says hello.\""),
    );
    assert_eq!(
        description(&f.cached(None, f.jail()).unwrap()),
        "Says hello.",
        "a changed module"
    );
    let second = key(&f);
    assert_ne!(first, second);

    f.module("tools.py", MODULE);
    f.module(
        "helpers.py",
        &HELPERS.replace("Greets someone.", "Greets anyone."),
    );
    assert_eq!(
        description(&f.cached(None, f.jail()).unwrap()),
        "Greets anyone.",
        "a changed sibling"
    );
    let third = key(&f);
    assert!(third != first && third != second);

    // A new file next to the module travels with it, so it is described again; a file that
    // does not travel (not Python) changes nothing.
    f.module("more.py", "X = 1\n");
    f.cached(None, f.jail()).unwrap();
    let fourth = key(&f);
    assert_ne!(third, fourth, "a new sibling");
    f.module("notes.txt", "not Python\n");
    f.cached(None, f.broken_jail()).unwrap();
    assert_eq!(key(&f), fourth, "a file that does not travel");
}

pub fn a_bad_entry_is_ignored_and_rewritten_atomically() {
    let f = Fixture::new();
    f.module("helpers.py", HELPERS);
    f.module("tools.py", MODULE);
    f.cached(None, f.jail()).unwrap();
    let (path, good) = f.entry();

    // Corrupt: ignored, described again, and rewritten by a rename: the old file (still
    // reachable through a second link) is left as it was, never written in place.
    std::fs::write(&path, "{ not json").unwrap();
    let kept = f.dir.path().join("kept.json");
    std::fs::hard_link(&path, &kept).unwrap();
    assert_eq!(
        description(&f.cached(None, f.jail()).unwrap()),
        "Greets someone."
    );
    let (_, rewritten) = f.entry();
    assert_eq!(rewritten["key"], good["key"]);
    assert_eq!(rewritten["described"], good["described"]);
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "{ not json");

    // Valid JSON of the right key that is not a tool list: ignored and rewritten too.
    let mut odd = good.clone();
    odd["described"] = json!({"tool": "greet"});
    std::fs::write(&path, odd.to_string()).unwrap();
    assert_eq!(
        description(&f.cached(None, f.jail()).unwrap()),
        "Greets someone."
    );
    assert_eq!(f.entry().1["described"], good["described"]);

    // An entry that cannot be read or replaced (a directory in its place) fails nothing.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    assert_eq!(
        description(&f.cached(None, f.jail()).unwrap()),
        "Greets someone."
    );
    let leftovers: Vec<_> = std::fs::read_dir(f.cache_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| name.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
