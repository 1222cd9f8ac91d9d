//! Program config: keys and defaults, errors with their lines, discovery walking up, and the
//! model precedence.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use golem_core::approval::ApprovalMode;
use golem_llm::pricing::Price;
use golem_llm::resolve::{ProviderDefinition, Wire};
use golem_runtime::config::{
    ApprovalSettings, CONFIG_FILE_NAME, DelegationSettings, ModelChoiceError, ModelRequestSettings,
    ModelSource, NotifySettings, ProgramConfig, STATE_DIR_NAME, UndoSettings, choose_model,
    find_program_root, holds_program, model_choice, program_root,
};
use golem_runtime::context_settings::{ContextSettings, Threshold};
use golem_runtime::worker::{WorkerDefinition, parse_worker};
use golem_sandbox::{ZoneConfig, ZoneMode};

use crate::fixture::dedent;

fn parse(text: &str) -> Result<ProgramConfig, String> {
    ProgramConfig::parse(&dedent(text), Path::new("proj/golem-forge.config.yaml"))
        .map_err(|e| e.to_string())
}

fn defaults() -> ProgramConfig {
    ProgramConfig {
        model: None,
        approval: ApprovalSettings { mode: None },
        delegation: DelegationSettings { max_depth: 5 },
        undo: UndoSettings { max_mb: 256 },
        worker_paths: vec![],
        providers: BTreeMap::new(),
        model_requests: ModelRequestSettings::default(),
        prices: BTreeMap::new(),
        context_windows: BTreeMap::new(),
        context: ContextSettings::default(),
        notify: None,
        zones: Vec::new(),
        protected: Vec::new(),
        telemetry: None,
        root: PathBuf::from("proj"),
        file: Some(PathBuf::from("proj/golem-forge.config.yaml")),
    }
}

fn check(text: &str, expected: impl FnOnce(&mut ProgramConfig)) {
    let mut want = defaults();
    expected(&mut want);
    assert_eq!(parse(text).unwrap(), want, "{text}");
}

#[test]
fn every_key_and_default() {
    check("", |_| {});
    check("# nothing yet\n\n", |_| {});
    check(
        "\u{feff}approval:\r\ndelegation:\r\nworker_paths:\r\nproviders:\r\n",
        |_| {},
    );
    check(
        r#"
        model: anthropic:claude-haiku-4-5
        approval: { mode: auto_deny }
        delegation: { max_depth: 2 }
        undo: { max_mb: 16 }
        worker_paths: [workers, /opt/shared-workers]
        providers:
          local:
            base_url: http://localhost:8080/v1
          proxy:
            base_url: https://proxy.example/v1
            api_key_env: PROXY_KEY
            wire: anthropic
            headers: { x-team: forge }
        "#,
        |c| {
            c.model = Some("anthropic:claude-haiku-4-5".into());
            c.approval.mode = Some(ApprovalMode::AutoDeny);
            c.delegation.max_depth = 2;
            c.undo.max_mb = 16;
            c.worker_paths = vec!["workers".into(), "/opt/shared-workers".into()];
            c.providers.insert(
                "local".into(),
                ProviderDefinition {
                    base_url: "http://localhost:8080/v1".into(),
                    api_key_env: None,
                    wire: Wire::Chat,
                    headers: BTreeMap::new(),
                },
            );
            c.providers.insert(
                "proxy".into(),
                ProviderDefinition {
                    base_url: "https://proxy.example/v1".into(),
                    api_key_env: Some("PROXY_KEY".into()),
                    wire: Wire::Anthropic,
                    headers: [("x-team".to_owned(), "forge".to_owned())].into(),
                },
            );
        },
    );
    check(
        "model_requests: { headers_timeout_secs: 10, wall_limit_secs: 60, max_retries: 2 }\n",
        |c| {
            c.model_requests.headers_timeout_secs = 10;
            c.model_requests.wall_limit_secs = 60;
            c.model_requests.max_retries = 2;
        },
    );
    check(
        "zones:\n  - { name: notes, path: shared/notes, mode: rw }\n  - { name: docs }\n",
        |c| {
            let mut notes = ZoneConfig::new("notes", ZoneMode::Rw);
            notes.path = Some("shared/notes".into());
            c.zones = vec![notes, ZoneConfig::new("docs", ZoneMode::Ro)];
        },
    );
    check("protected: [secrets/**, \"*.pem\"]\n", |c| {
        c.protected = vec!["secrets/**".into(), "*.pem".into()];
    });
    check("notify: { command: [notify-send, golem-forge] }\n", |c| {
        c.notify = Some(NotifySettings {
            command: vec!["notify-send".into(), "golem-forge".into()],
            after_seconds: 10,
        })
    });
    check(
        "prices:\n  \"openai:gpt-4o\": { input: 2.5, output: 10, cache_read: 1.25 }\n  \"local:*\": { input: 0, output: 0 }\n",
        |c| {
            c.prices.insert(
                "openai:gpt-4o".into(),
                Price {
                    input: 2.5,
                    output: 10.0,
                    cache_read: Some(1.25),
                    cache_write: None,
                },
            );
            c.prices.insert(
                "local:*".into(),
                Price {
                    input: 0.0,
                    output: 0.0,
                    cache_read: None,
                    cache_write: None,
                },
            );
        },
    );
    check(
        "context_windows:\n  \"proxy:claude-*\": 200000\n  \"ollama:*\": 32768\n",
        |c| {
            c.context_windows.insert("proxy:claude-*".into(), 200_000);
            c.context_windows.insert("ollama:*".into(), 32_768);
        },
    );
    check(
        "context: {elide_at: 0.7, compact_at: 0.9, keep_turns: 6}\n",
        |c| {
            c.context = ContextSettings {
                elide_at: Some(Threshold::Permille(700)),
                compact_at: Some(Threshold::Permille(900)),
                keep_turns: Some(6),
            }
        },
    );
    for (mode, expected) in [
        ("interactive", ApprovalMode::Interactive),
        ("approve_all", ApprovalMode::ApproveAll),
        ("auto_deny", ApprovalMode::AutoDeny),
    ] {
        check(&format!("approval:\n  mode: {mode}\n"), |c| {
            c.approval.mode = Some(expected)
        });
    }
}

#[test]
fn model_request_defaults_are_the_fault_budgets() {
    let settings = ModelRequestSettings::default().http_settings();
    assert_eq!(settings.headers_timeout, std::time::Duration::from_secs(30));
    assert_eq!(settings.idle_timeout, std::time::Duration::from_secs(90));
    assert_eq!(settings.retry.max_retries, 4);
    assert_eq!(settings.retry.stall_retries, 1);
    assert_eq!(
        settings.retry.wall_limit,
        std::time::Duration::from_secs(180)
    );
    assert_eq!(settings, golem_llm::http::HttpSettings::default());
}

#[test]
fn worker_dirs_are_relative_to_the_root() {
    let config = parse("worker_paths: [workers, ../common, /abs]\n").unwrap();
    assert_eq!(
        config.worker_dirs(),
        [
            Path::new("proj/workers"),
            Path::new("proj/../common"),
            Path::new("/abs")
        ]
    );
    assert_eq!(parse("").unwrap().worker_dirs(), [Path::new("proj")]);
}

#[test]
fn errors_name_the_file_line_and_key() {
    let mut failures = Vec::new();
    for (text, expected) in [
        (
            "worker_path: [a]\n",
            "line 1: unknown key `worker_path` (did you mean `worker_paths`?)",
        ),
        (
            "model: x\nsandbox: {}\n",
            "line 2: unknown key `sandbox` (expected one of `model`, `approval`, `delegation`, `undo`, `worker_paths`, `providers`, `model_requests`, `prices`, `context_windows`, `context`, `notify`, `zones`, `protected`, `telemetry`)",
        ),
        (
            "telemetry:\n  endpoint: http://collector:4318\n  protocl: grpc\n",
            "line 3: unknown key `protocl` in `telemetry` (did you mean `protocol`?)",
        ),
        (
            "telemetry:\n  protocol: http/json\n",
            "line 2: `telemetry.protocol` must be one of `http/protobuf`, `grpc`, found \"http/json\"",
        ),
        (
            "model_requests:\n  headers_timeout_secs: 0\n",
            "line 2: `model_requests.headers_timeout_secs` must be at least 1 (seconds)",
        ),
        (
            "prices:\n  \"openai:gpt-4o\": { input: 2.5, outptu: 10 }\n",
            "line 2: unknown key `outptu` in `prices.openai:gpt-4o` (did you mean `output`?)",
        ),
        (
            "context_windows:\n  \"ollama:*\": 0\n",
            "line 2: `context_windows` must give \"ollama:*\" a window of at least one token",
        ),
        (
            "context_windows:\n  \"ollama:*\": lots\n",
            "line 2: `context_windows.ollama:*` must be a whole number, found \"lots\"",
        ),
        (
            "zones:\n  - { name: notes }\n  - { name: notes, mode: rw }\n",
            "line 3: `zones[1]` must not reuse the zone name `notes` (zone names are unique)",
        ),
        (
            "notify:\n  command: []\n",
            "line 2: `notify.command` must name a program, e.g. [notify-send, golem-forge]",
        ),
        (
            "approval:\n  mode: ask\n",
            "line 2: `approval.mode` must be one of `interactive`, `approve_all`, `auto_deny`, `defer`, found \"ask\"",
        ),
        (
            "approval:\n  mode: approve-all\n",
            "line 2: `approval.mode` must be one of `interactive`, `approve_all`, `auto_deny`, `defer`, found \"approve-all\" (did you mean `approve_all`?)",
        ),
        (
            "approval:\n  modes: auto_deny\n",
            "line 2: unknown key `modes` in `approval` (did you mean `mode`?)",
        ),
        (
            "delegation:\n  max_depth: deep\n",
            "line 2: `delegation.max_depth` must be a whole number, found \"deep\"",
        ),
        (
            "undo:\n  max_mb: lots\n",
            "line 2: `undo.max_mb` must be a whole number, found \"lots\"",
        ),
        (
            "worker_paths: workers\n",
            "line 1: `worker_paths` must be a list, found \"workers\"",
        ),
        (
            "providers:\n  local:\n    url: http://x\n",
            "line 3: unknown key `url` in `providers.local` (expected one of `base_url`, `api_key_env`, `wire`, `headers`)",
        ),
        (
            "providers:\n  local:\n    api_key_env: K\n",
            "line 3: missing key `base_url` in `providers.local`",
        ),
        (
            "providers:\n  local:\n    base_url: http://x\n    wire: grpc\n",
            "line 4: `providers.local.wire` must be one of `chat`, `responses`, `anthropic`, found \"grpc\"",
        ),
        (
            "providers:\n  \"a:b\":\n    base_url: http://x\n",
            "line 2: `providers` must use provider names without `:` or spaces, found \"a:b\"",
        ),
        (
            "protected: 3\n",
            "line 1: `protected` must be a list, found \"3\"",
        ),
        (
            "model: x\nprotected:\n  - secrets/**\n  - a/../b\n",
            "line 4: `protected[1]` must not contain `.` or `..` segments, found \"a/../b\"",
        ),
        (
            "- model\n",
            "line 1: the config must be a mapping of keys, found a list",
        ),
    ] {
        let got = parse(text);
        let want = format!("config file proj/golem-forge.config.yaml, {expected}");
        if got.as_ref().err() != Some(&want) {
            failures.push(format!("{text:?}\n  got:  {got:?}\n  want: {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unreadable_file() {
    let err = ProgramConfig::load(Path::new("/nonexistent/golem-forge.config.yaml")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot read config file /nonexistent/golem-forge.config.yaml: "),
        "{err}"
    );
}

#[test]
fn the_program_root_is_the_config_files_folder_else_the_nearest_state_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let deep = root.join("a/b/c");
    std::fs::create_dir_all(&deep).unwrap();

    // Neither anywhere: the start directory itself.
    assert_eq!(find_program_root(&deep), None);
    assert_eq!(program_root(&deep), deep);
    assert!(!holds_program(&root.join("a")));

    // A program without a config file that has recorded something: its state folder.
    std::fs::create_dir_all(root.join("a").join(STATE_DIR_NAME)).unwrap();
    assert!(holds_program(&root.join("a")));
    assert_eq!(program_root(&deep), root.join("a"));
    assert_eq!(
        ProgramConfig::discover(&deep).unwrap(),
        ProgramConfig::defaults(root.join("a"))
    );

    // A config file wins over a nearer state folder, so it is never hidden.
    std::fs::create_dir_all(root.join("a/b").join(STATE_DIR_NAME)).unwrap();
    assert_eq!(program_root(&deep), root.join("a/b"));
    std::fs::write(root.join(CONFIG_FILE_NAME), "").unwrap();
    assert_eq!(find_program_root(&deep), Some(root.clone()));
    assert_eq!(program_root(&deep), root);
    assert_eq!(ProgramConfig::discover(&deep).unwrap().root, root);

    // The start directory counts, and a relative start is made absolute.
    assert_eq!(program_root(&root.join("a/b")), root);
    assert!(program_root(Path::new(".")).is_absolute());
}

#[test]
fn discovery_walks_up_to_the_nearest_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let deep = root.join("a/b/c");
    std::fs::create_dir_all(&deep).unwrap();

    // None anywhere: the defaults, rooted at the start directory.
    let config = ProgramConfig::discover(&deep).unwrap();
    assert_eq!(config, ProgramConfig::defaults(&deep));
    assert_eq!(
        (config.root.as_path(), config.file.as_deref()),
        (deep.as_path(), None)
    );

    std::fs::write(root.join("a").join(CONFIG_FILE_NAME), "model: test:outer\n").unwrap();
    let config = ProgramConfig::discover(&deep).unwrap();
    assert_eq!(config.model.as_deref(), Some("test:outer"));
    assert_eq!(config.root, root.join("a"));
    assert_eq!(config.file, Some(root.join("a").join(CONFIG_FILE_NAME)));
    assert_eq!(
        ProgramConfig::find(&deep),
        Some(root.join("a").join(CONFIG_FILE_NAME))
    );

    // The nearest file wins, and the start directory itself counts.
    std::fs::write(
        root.join("a/b").join(CONFIG_FILE_NAME),
        "model: test:inner\n",
    )
    .unwrap();
    assert_eq!(
        ProgramConfig::discover(&deep).unwrap().model.as_deref(),
        Some("test:inner")
    );
    assert_eq!(
        ProgramConfig::discover(&root.join("a"))
            .unwrap()
            .model
            .as_deref(),
        Some("test:outer")
    );

    // From a worker file: its directory.
    let worker = deep.join("greeter.worker");
    assert_eq!(
        ProgramConfig::for_worker(&worker).unwrap().root,
        root.join("a/b")
    );

    // A directory named like the file is not a config file.
    std::fs::create_dir_all(deep.join(CONFIG_FILE_NAME)).unwrap();
    assert_eq!(
        ProgramConfig::discover(&deep).unwrap().root,
        root.join("a/b")
    );

    // An invalid file is an error, not a silent default.
    std::fs::write(root.join("a/b").join(CONFIG_FILE_NAME), "modle: x\n").unwrap();
    let err = ProgramConfig::discover(&deep).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "config file {}, line 1: unknown key `modle` (did you mean `model`?)",
            root.join("a/b").join(CONFIG_FILE_NAME).display()
        )
    );
}

fn worker(model: Option<&str>, compatible: Option<&str>) -> WorkerDefinition {
    let mut text = String::from("---\nname: greeter\n");
    if let Some(model) = model {
        text.push_str(&format!("model: {model}\n"));
    }
    if let Some(patterns) = compatible {
        text.push_str(&format!("compatible_models: {patterns}\n"));
    }
    text.push_str("---\n");
    parse_worker(&text, Path::new("greeter.worker")).unwrap()
}

#[test]
fn model_precedence() {
    use ModelSource::{CommandLine, Config, Environment, Worker};
    let with_model = |model: Option<&str>| ProgramConfig {
        model: model.map(str::to_owned),
        ..ProgramConfig::defaults("proj")
    };
    for (cli, own, env, config, expected) in [
        (
            Some("a:cli"),
            Some("a:worker"),
            Some("a:env"),
            Some("a:config"),
            ("a:cli", CommandLine),
        ),
        (
            None,
            Some("a:worker"),
            Some("a:env"),
            Some("a:config"),
            ("a:worker", Worker),
        ),
        (
            None,
            None,
            Some("a:env"),
            Some("a:config"),
            ("a:env", Environment),
        ),
        (None, None, None, Some("a:config"), ("a:config", Config)),
        (Some("a:cli"), None, None, None, ("a:cli", CommandLine)),
        (None, None, Some("a:env"), None, ("a:env", Environment)),
        // Blank values count as absent.
        (
            Some(""),
            None,
            Some("  "),
            Some("a:config"),
            ("a:config", Config),
        ),
        (Some(" a:cli "), None, None, None, ("a:cli", CommandLine)),
    ] {
        let got = model_choice(cli, &worker(own, None), env, &with_model(config)).unwrap();
        assert_eq!(
            (got.0.as_str(), got.1),
            expected,
            "{cli:?} {own:?} {env:?} {config:?}"
        );
    }

    let err = choose_model(None, &worker(None, None), None, &with_model(None)).unwrap_err();
    assert!(matches!(err, ModelChoiceError::NoModel { .. }));
    assert_eq!(
        err.to_string(),
        "no model for worker greeter: pass `--model provider:model`, set `model:` in the worker \
         file or in golem-forge.config.yaml, or set GOLEM_FORGE_MODEL (`--model test:default` \
         runs offline)"
    );

    // The chosen model must fit compatible_models; a lower-precedence one is not tried instead.
    let picky = worker(None, Some("[\"anthropic:*\"]"));
    let config = with_model(Some("anthropic:claude-haiku-4-5"));
    assert_eq!(
        choose_model(None, &picky, None, &config).unwrap(),
        "anthropic:claude-haiku-4-5"
    );
    let err = choose_model(Some("openai:gpt-4o"), &picky, None, &config).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model openai:gpt-4o is not compatible with worker greeter (compatible_models: anthropic:*)"
    );
    assert_eq!(
        choose_model(Some("test:default"), &picky, None, &config).unwrap(),
        "test:default"
    );
}

#[test]
fn a_worker_without_zones_gets_the_programs_default_zones_from_its_root() {
    let config =
        parse("zones:\n  - { name: notes, path: shared/notes, mode: rw }\n  - { name: docs }\n")
            .unwrap();
    let mut bare = parse_worker(
        "---\nname: w\ndescription: d\n---\nHi.\n",
        Path::new("proj/workers/w.worker"),
    )
    .unwrap();
    assert!(config.apply_default_zones(&mut bare));
    let paths: Vec<_> = bare
        .zones
        .iter()
        .map(|z| (z.name.as_str(), z.path.clone().unwrap(), z.mode))
        .collect();
    assert_eq!(
        paths,
        [
            ("notes", PathBuf::from("proj/shared/notes"), ZoneMode::Rw),
            ("docs", PathBuf::from("proj/docs"), ZoneMode::Ro),
        ],
        "relative to the program root, not the worker's folder"
    );
    let mut own = parse_worker(
        "---\nname: w\ndescription: d\nsandbox:\n  zones:\n    - { name: out, mode: rw }\n---\nHi.\n",
        Path::new("proj/workers/w.worker"),
    )
    .unwrap();
    assert!(
        !config.apply_default_zones(&mut own),
        "its own zones are kept"
    );
    assert_eq!(own.zones.len(), 1);
    assert_eq!(own.zones[0].name, "out");
}
