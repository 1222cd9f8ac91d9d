//! Worker files: every key and its default, BOM and CRLF, and every error with its exact
//! message and line.

use std::path::{Path, PathBuf};

use golem_core::approval::{ApprovalConfig, ApprovalDecisionType};
use golem_runtime::budget::BudgetLimits;
use golem_runtime::context_settings::{ContextSettings, Threshold};
use golem_runtime::worker::{
    CodeConfig, CodeToolsetConfig, CustomModuleConfig, CustomToolsetConfig,
    FilesystemToolsetConfig, JailMode, ProcessLimitsConfig, ProgramsConfig, ShellConfig, ShellRule,
    ShellToolsetConfig, ToolsetsConfig, WorkerDefinition, WorkerFileError, WorkerMode,
    WorkerOutput, WorkersToolsetConfig, load_worker, parse_worker,
};
use golem_sandbox::{ZoneApproval, ZoneConfig, ZoneMode};

use crate::fixture::dedent;

fn parse(text: &str) -> Result<WorkerDefinition, WorkerFileError> {
    parse_worker(text, Path::new("greeter.worker"))
}

/// A worker whose front matter is `yaml` (line 2 on) and whose body is `body`.
fn worker(yaml: &str, body: &str) -> String {
    format!("---\n{}---\n{body}", dedent(yaml))
}

fn minimal() -> WorkerDefinition {
    WorkerDefinition {
        name: "greeter".into(),
        description: None,
        model: None,
        mode: WorkerMode::Single,
        compatible_models: None,
        max_iterations: 20,
        budget: BudgetLimits::default(),
        context: ContextSettings::default(),
        zones: vec![],
        toolsets: ToolsetsConfig::default(),
        output: None,
        instructions: String::new(),
        path: PathBuf::from("greeter.worker"),
    }
}

/// Parses a worker with front matter `yaml` and compares it with the minimal worker changed
/// by `expected`.
fn check(yaml: &str, expected: impl FnOnce(&mut WorkerDefinition)) {
    let mut want = minimal();
    expected(&mut want);
    let got = parse(&worker(yaml, "")).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    assert_eq!(got, want, "{yaml}");
}

/// Parses a worker with front matter `yaml` and compares the error with `expected`, which
/// starts at `line N:`.
fn check_err(yaml: &str, expected: &str) {
    let err = parse(&worker(yaml, "Hello.")).expect_err(yaml);
    assert_eq!(
        err.to_string(),
        format!("worker file greeter.worker, {expected}"),
        "{yaml}"
    );
}

#[test]
fn minimal_worker_takes_every_default() {
    check("name: greeter\n", |_| {});
    let def = parse("---\nname: greeter\n---\n\n  Say hello.\n\n").unwrap();
    assert_eq!(def.instructions, "Say hello.");
    assert_eq!(def.dir(), Path::new("."));
}

#[test]
fn every_top_level_key() {
    check(
        r#"
        name: greeter
        description: Greets people
        model: anthropic:claude-haiku-4-5
        mode: chat
        compatible_models: ["anthropic:*", "openai:gpt-4*"]
        max_iterations: 3
        "#,
        |w| {
            w.description = Some("Greets people".into());
            w.model = Some("anthropic:claude-haiku-4-5".into());
            w.mode = WorkerMode::Chat;
            w.compatible_models = Some(vec!["anthropic:*".into(), "openai:gpt-4*".into()]);
            w.max_iterations = 3;
        },
    );
    check(
        "name: greeter\nmode: single\nmodel:\ndescription:\n",
        |_| {},
    );
}

#[test]
fn output_schema_is_read_as_json() {
    check(
        r#"
        name: greeter
        output:
          schema: { type: object, properties: { verdict: { enum: [ok, bad] }, reasons: { type: array, items: { type: string } } }, required: [verdict] }
        "#,
        |w| {
            w.output = Some(WorkerOutput {
                schema: serde_json::json!({"type": "object", "properties": {
                    "verdict": {"enum": ["ok", "bad"]},
                    "reasons": {"type": "array", "items": {"type": "string"}}},
                    "required": ["verdict"]}),
            });
        },
    );
    check("name: greeter\noutput:\n  schema: true\n", |w| {
        w.output = Some(WorkerOutput {
            schema: serde_json::Value::Bool(true),
        });
    });
}

/// YAML 1.2's core schema: `n`, `y`, `yes`, `no`, `on` and `off` are strings wherever an
/// untyped value is read; only `true` and `false` are booleans.
#[test]
fn yaml_1_1_booleans_are_strings_in_untyped_values() {
    check(
        r#"
        name: greeter
        output:
          schema: { type: object, properties: { n: { enum: [y, yes, no, on, off, n, Yes, OFF] } }, required: [n] }
        "#,
        |w| {
            w.output = Some(WorkerOutput {
                schema: serde_json::json!({"type": "object", "properties": {
                    "n": {"enum": ["y", "yes", "no", "on", "off", "n", "Yes", "OFF"]}},
                    "required": ["n"]}),
            });
        },
    );
    check("name: greeter\noutput:\n  schema: TRUE\n", |w| {
        w.output = Some(WorkerOutput {
            schema: serde_json::Value::Bool(true),
        });
    });
}

/// A boolean key written the YAML 1.1 way is refused at its line, saying what to write.
#[test]
fn a_yaml_1_1_boolean_for_a_boolean_key_says_to_write_true_or_false() {
    for word in ["yes", "no", "on", "off", "y", "n"] {
        check_err(
            &format!(
                "name: greeter\nsandbox:\n  zones:\n    - {{ name: repo }}\ntoolsets:\n  git:\n    zone: repo\n    hooks: {word}\n"
            ),
            &format!(
                "line 9: `toolsets.git.hooks` must be true or false, found \"{word}\" (YAML 1.2 reads `yes`, `no`, `on` and `off` as text)"
            ),
        );
    }
}

#[test]
fn an_invalid_output_schema_names_the_line_and_key() {
    let mut failures = Vec::new();
    for (yaml, expected) in [
        (
            "name: greeter\noutput:\n  schema: { type: objekt }\n",
            "line 4: `output.schema` must be a valid JSON Schema: \"objekt\" is not valid under any of the schemas listed in the 'anyOf' keyword (at `/type`)",
        ),
        (
            "name: greeter\noutput:\n  schema:\n    type: array\n    minItems: -1\n",
            // A problem inside a block mapping is reported where the schema begins.
            "line 5: `output.schema` must be a valid JSON Schema: -1 is less than the minimum of 0 (at `/minItems`)",
        ),
        (
            "name: greeter\noutput:\n  schema: [a]\n",
            "line 4: `output.schema` must be a JSON Schema (a mapping of keys such as `type`), found [\"a\"]",
        ),
        (
            "name: greeter\noutput:\n  schema:\n",
            "line 4: `output.schema` must be a JSON Schema such as `{ type: object, properties: { … } }`, found nothing",
        ),
        (
            "name: greeter\noutput:\n  shape: {}\n",
            "line 4: unknown key `shape` in `output` (expected one of `schema`)",
        ),
    ] {
        let got = parse(&worker(yaml, "Hello.")).map_err(|e| e.to_string());
        let want = format!("worker file greeter.worker, {expected}");
        if got.as_ref().err() != Some(&want) {
            failures.push(format!("{yaml:?}\n  got:  {got:?}\n  want: {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let err = parse(&worker(
        "name: greeter\noutput:\n  schema: { type: 3 }\n",
        "",
    ))
    .unwrap_err();
    let WorkerFileError::Invalid { line, key, .. } = err else {
        panic!("{err}");
    };
    assert_eq!((line, key.as_deref()), (4, Some("output.schema")));
}

#[test]
fn the_design_example() {
    let text = worker(
        r#"
        name: file_manager
        description: Organises files
        model: anthropic:claude-haiku-4-5
        mode: single
        compatible_models: ["anthropic:*", "openai:gpt-4*"]
        max_iterations: 20
        sandbox:
          zones:
            - name: input
              path: ./input
              mode: ro
            - name: scratch
              mode: rw
              approval: { write: preApproved, delete: preApproved }
            - name: output
              mode: rw
              approval: { create: preApproved, write: ask, delete: blocked }
        toolsets:
          filesystem: {}
          code: { network: false, timeout: 60 }
          shell:
            rules:
              - { pattern: "git status", approval: preApproved }
              - { pattern: "rm -rf", approval: blocked }
              - { pattern: "rm ", approval: ask }
            default: ask
          workers: { allowed_workers: [summarizer] }
          custom:
            module: ./tools.py
            tools: [word_count]
            approval: { default: ask, tools: { word_count: preApproved } }
        "#,
        "You are a careful file organiser.\n",
    );
    let def = parse_worker(&text, Path::new("project/file_manager.worker")).unwrap();
    use ApprovalDecisionType::{Ask, Blocked, PreApproved};
    assert_eq!(def.name, "file_manager");
    assert_eq!(def.dir(), Path::new("project"));
    assert_eq!(
        def.zones,
        vec![
            ZoneConfig::new("input", ZoneMode::Ro).with_path("./input"),
            ZoneConfig::new("scratch", ZoneMode::Rw).with_approval(ZoneApproval {
                create: None,
                write: PreApproved,
                delete: PreApproved
            }),
            ZoneConfig::new("output", ZoneMode::Rw).with_approval(ZoneApproval {
                create: Some(PreApproved),
                write: Ask,
                delete: Blocked
            }),
        ]
    );
    assert_eq!(def.zone_dir(&def.zones[0]), Path::new("project/./input"));
    assert_eq!(def.zone_dir(&def.zones[1]), Path::new("project/scratch"));
    let rule = |pattern: &str, approval| ShellRule {
        pattern: pattern.into(),
        approval,
    };
    assert_eq!(
        def.toolsets,
        ToolsetsConfig {
            filesystem: Some(FilesystemToolsetConfig {}),
            code: Some(CodeToolsetConfig::default()),
            shell: Some(ShellToolsetConfig {
                own: ShellConfig {
                    rules: vec![
                        rule("git status", PreApproved),
                        rule("rm -rf", Blocked),
                        rule("rm ", Ask)
                    ],
                    default: Some(Ask),
                },
                ..ShellToolsetConfig::default()
            }),
            workers: Some(WorkersToolsetConfig {
                allowed_workers: vec!["summarizer".into()]
            }),
            custom: Some(CustomToolsetConfig {
                modules: vec![CustomModuleConfig {
                    tools: Some(vec!["word_count".to_owned()]),
                    approval: ApprovalConfig {
                        default: Some(Ask),
                        tools: [("word_count".to_owned(), PreApproved)].into(),
                    },
                    ..custom_module("./tools.py")
                }],
            }),
            ..ToolsetsConfig::default()
        }
    );
    assert_eq!(def.instructions, "You are a careful file organiser.");
}

#[test]
fn toolset_defaults() {
    use ApprovalDecisionType::{Ask, PreApproved};
    // A toolset is enabled by its key, with or without a value.
    check(
        "name: greeter\ntoolsets:\n  filesystem:\n  code:\n  shell: {}\n",
        |w| {
            w.toolsets.filesystem = Some(FilesystemToolsetConfig {});
            w.toolsets.code = Some(CodeToolsetConfig {
                programs: ProgramsConfig {
                    network: false.into(),
                    timeout: 60,
                    max_timeout: 600,
                    jail: JailMode::Strict,
                    workdir: None,
                    limits: ProcessLimitsConfig::default(),
                },
                own: CodeConfig {
                    approval: PreApproved,
                },
            });
            w.toolsets.shell = Some(ShellToolsetConfig {
                programs: ProgramsConfig {
                    network: false.into(),
                    timeout: 60,
                    max_timeout: 600,
                    jail: JailMode::Strict,
                    workdir: None,
                    limits: ProcessLimitsConfig::default(),
                },
                own: ShellConfig {
                    rules: vec![],
                    default: None,
                },
            });
        },
    );
    check("name: greeter\ntoolsets:\n  workers:\n  custom:\n", |w| {
        w.toolsets.workers = Some(WorkersToolsetConfig::default());
        w.toolsets.custom = Some(CustomToolsetConfig::default());
    });
    check(
        "name: greeter\ntoolsets:\n  code: { network: true, timeout: 5, jail: best_effort }\n  \
         shell: { network: true, timeout: 1, jail: strict, default: blocked }\n",
        |w| {
            w.toolsets.code = Some(CodeToolsetConfig {
                programs: ProgramsConfig {
                    network: true.into(),
                    timeout: 5,
                    jail: JailMode::BestEffort,
                    ..ProgramsConfig::default()
                },
                ..CodeToolsetConfig::default()
            });
            w.toolsets.shell = Some(ShellToolsetConfig {
                own: ShellConfig {
                    default: Some(ApprovalDecisionType::Blocked),
                    ..ShellConfig::default()
                },
                programs: ProgramsConfig {
                    network: true.into(),
                    timeout: 1,
                    ..ProgramsConfig::default()
                },
            });
        },
    );
    check(
        "name: greeter\ntoolsets:\n  code:\n    workdir: out\n    approval: ask\n    max_timeout: 30\n    \
         limits: { cpu_seconds: 5, memory_mb: 512, processes: 16, open_files: 64, file_size_mb: 8, output_kb: 64, \
         run_memory_mb: 1024, tmp_mb: 32, tmp_files: 1000, zone_write_mb: 100, zone_files: 500 }\n",
        |w| {
            w.toolsets.code = Some(CodeToolsetConfig {
                own: CodeConfig { approval: Ask },
                programs: ProgramsConfig {
                    workdir: Some("out".into()),
                    max_timeout: 30,
                    limits: ProcessLimitsConfig {
                        cpu_seconds: Some(5),
                        memory_mb: Some(512),
                        processes: Some(16),
                        open_files: Some(64),
                        file_size_mb: Some(8),
                        output_kb: Some(64),
                        run_memory_mb: Some(1024),
                        tmp_mb: Some(32),
                        tmp_files: Some(1000),
                        zone_write_mb: Some(100),
                        zone_files: Some(500),
                    },
                    ..ProgramsConfig::default()
                },
            });
        },
    );
    check("name: greeter\ntoolsets:\nsandbox:\n", |_| {});
    check(
        "name: greeter\ntoolsets:\n  shell:\n    rules:\n    network:\n    timeout:\n    jail:\n  \
         workers:\n    allowed_workers:\n  custom:\n    - module: ./a.py\n      approval:\n      \
         tools:\n      network:\n    - { module: ./b.mjs, network: true, timeout: 5 }\n",
        |w| {
            w.toolsets.shell = Some(ShellToolsetConfig::default());
            w.toolsets.workers = Some(WorkersToolsetConfig::default());
            w.toolsets.custom = Some(CustomToolsetConfig {
                modules: vec![
                    custom_module("./a.py"),
                    CustomModuleConfig {
                        network: true.into(),
                        timeout: 5,
                        ..custom_module("./b.mjs")
                    },
                ],
            });
        },
    );
    check("name: greeter\nsandbox:\n  zones:\n", |_| {});
}

#[test]
fn bom_and_crlf() {
    let text =
        "\u{feff}---\r\nname: greeter\r\nmax_iterations: 4\r\n---\r\nLine one.\r\nLine two.\r\n";
    let def = parse(text).unwrap();
    assert_eq!(def.max_iterations, 4);
    assert_eq!(def.instructions, "Line one.\nLine two.");
    let err = parse("\u{feff}---\r\nname: greeter\r\n\r\ntoolset: {}\r\n---\r\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "worker file greeter.worker, line 4: unknown key `toolset` (did you mean `toolsets`?)"
    );
}

#[test]
fn errors_name_the_file_line_and_key() {
    let mut failures = Vec::new();
    for (yaml, expected) in [
        // The two examples of the issue.
        (
            "name: greeter\ndescription: x\n\ntoolset: {}\n",
            "line 5: unknown key `toolset` (did you mean `toolsets`?)",
        ),
        (
            "name: greeter\n\n\n\n\nmax_iterations: many\n",
            "line 7: `max_iterations` must be a whole number, found \"many\"",
        ),
        (
            "name: greeter\nmax_iterations: \"many\"\n",
            "line 3: `max_iterations` must be a whole number, found \"many\"",
        ),
        (
            "name: greeter\nmax_iterations: 'many'\n",
            "line 3: `max_iterations` must be a whole number, found \"many\"",
        ),
        // Unknown keys, at every depth.
        (
            "name: greeter\nfoo: 1\n",
            "line 3: unknown key `foo` (expected one of `name`, `description`, `model`, `mode`, `compatible_models`, `max_iterations`, `budget`, `context`, `sandbox`, `toolsets`, `output`)",
        ),
        (
            "name: greeter\ninstructions: hi\n",
            "line 3: unknown key `instructions` (expected one of `name`, `description`, `model`, `mode`, `compatible_models`, `max_iterations`, `budget`, `context`, `sandbox`, `toolsets`, `output`)",
        ),
        (
            "name: greeter\nmax_iteration: 3\n",
            "line 3: unknown key `max_iteration` (did you mean `max_iterations`?)",
        ),
        (
            "name: greeter\ntoolsets:\n  shel: {}\n",
            "line 4: unknown key `shel` in `toolsets` (did you mean `shell`?)",
        ),
        (
            "name: greeter\ntoolsets:\n  filesystem: { root: x }\n",
            "line 4: unknown key `root` in `toolsets.filesystem` (it takes no keys)",
        ),
        (
            "name: greeter\ntoolsets:\n  code: { networks: true }\n",
            "line 4: unknown key `networks` in `toolsets.code` (did you mean `network`?)",
        ),
        (
            "name: greeter\ntoolsets:\n  workers: { allowed: [a] }\n",
            "line 4: unknown key `allowed` in `toolsets.workers` (expected one of `allowed_workers`)",
        ),
        (
            "name: greeter\ntoolsets:\n  custom:\n    approval: { defaults: ask }\n",
            "line 5: unknown key `defaults` in `toolsets.custom.approval` (did you mean `default`?)",
        ),
        (
            "name: greeter\nsandbox:\n  zone: []\n",
            "line 4: unknown key `zone` in `sandbox` (did you mean `zones`?)",
        ),
        // Types.
        (
            "name: greeter\nmax_iterations: -1\n",
            "line 3: `max_iterations` must be a whole number, found \"-1\"",
        ),
        (
            "name: greeter\nmax_iterations: 2.5\n",
            "line 3: `max_iterations` must be a whole number, found \"2.5\"",
        ),
        (
            "name: greeter\nmax_iterations: 0\n",
            "line 3: `max_iterations` must be at least 1, found \"0\"",
        ),
        (
            "name: greeter\nmax_iterations: [1]\n",
            "line 3: `max_iterations` must be a single value, found a list",
        ),
        (
            "name: greeter\nmode: chatty\n",
            "line 3: `mode` must be one of `single`, `chat`, found \"chatty\" (did you mean `chat`?)",
        ),
        (
            "name: greeter\nmode: Chat\n",
            "line 3: `mode` must be one of `single`, `chat`, found \"Chat\" (did you mean `chat`?)",
        ),
        (
            "name: greeter\ndescription:\n  a: b\n",
            "line 4: `description` must be a single value, found a mapping",
        ),
        (
            "name: greeter\ntoolsets: [filesystem]\n",
            "line 3: `toolsets` must be a mapping of keys, found a list",
        ),
        (
            "name: greeter\ntoolsets:\n  code: { network: maybe }\n",
            "line 4: `toolsets.code.network` must be `true`, `false` or `{ allow_private: \
             [10.1.0.0/16] }`, found \"maybe\"",
        ),
        (
            "name: greeter\ntoolsets:\n  code: { network: { allow_private: [intranet] } }\n",
            "line 4: `toolsets.code.network.allow_private`: \"intranet\" is not an IPv4 address or \
             network such as \"10.1.2.3\" or \"10.1.0.0/16\"",
        ),
        (
            "name: greeter\ntoolsets:\n  code: { timeout: 0 }\n",
            "line 4: `toolsets.code.timeout` must be at least 1 (seconds), found \"0\"",
        ),
        (
            "name: greeter\ntoolsets:\n  shell: { timeout: soon }\n",
            "line 4: `toolsets.shell.timeout` must be a whole number, found \"soon\"",
        ),
        (
            "name: greeter\ntoolsets:\n  code: { jail: loose }\n",
            "line 4: `toolsets.code.jail` must be one of `strict`, `best_effort`, found \"loose\"",
        ),
        (
            "name: greeter\ntoolsets:\n  shell: { default: allow }\n",
            "line 4: `toolsets.shell.default` must be one of `preApproved`, `ask`, `blocked`, found \"allow\"",
        ),
        (
            "name: greeter\ntoolsets:\n  workers: { allowed_workers: summarizer }\n",
            "line 4: `toolsets.workers.allowed_workers` must be a list, found \"summarizer\"",
        ),
        (
            "name: greeter\ntoolsets:\n  workers: { allowed_workers: [Summarizer] }\n",
            "line 4: `toolsets.workers.allowed_workers` must list worker names matching `[a-z][a-z0-9_]*` (lowercase letters, digits and `_`, starting with a letter), found \"Summarizer\" (try `summarizer`)",
        ),
        (
            "name: greeter\ncompatible_models: anthropic:*\n",
            "line 3: `compatible_models` must be a list, found \"anthropic:*\"",
        ),
        (
            "name: greeter\nmodel: ''\n",
            "line 3: `model` must name a model as provider:model, found \"\"",
        ),
        // compatible_models: an empty list is an error at load time.
        (
            "name: greeter\ncompatible_models: []\n",
            "line 3: `compatible_models` must list at least one model pattern such as \"anthropic:*\" (remove the key to allow every model)",
        ),
        (
            "name: greeter\ncompatible_models:\n",
            "line 3: `compatible_models` must list at least one model pattern such as \"anthropic:*\" (remove the key to allow every model)",
        ),
        (
            "name: greeter\ncompatible_models: ['']\n",
            "line 3: `compatible_models` must not contain an empty pattern",
        ),
        // name.
        (
            "description: x\n",
            "line 2: missing key `name` (add `name: greeter`)",
        ),
        (
            "name: Greeter\n",
            "line 2: `name` must match `[a-z][a-z0-9_]*` (lowercase letters, digits and `_`, starting with a letter), found \"Greeter\" (try `greeter`)",
        ),
        (
            "name: my-worker\n",
            "line 2: `name` must match `[a-z][a-z0-9_]*` (lowercase letters, digits and `_`, starting with a letter), found \"my-worker\" (try `my_worker`)",
        ),
        (
            "name: 1st\n",
            "line 2: `name` must match `[a-z][a-z0-9_]*` (lowercase letters, digits and `_`, starting with a letter), found \"1st\"",
        ),
        (
            "name: ''\n",
            "line 2: `name` must match `[a-z][a-z0-9_]*` (lowercase letters, digits and `_`, starting with a letter), found \"\"",
        ),
        ("name:\n", "line 2: `name` must be a string, found nothing"),
        (
            "name: greeter\ntoolsets:\n  shell:\n    rules:\n      -\n",
            "line 6: `toolsets.shell.rules[0]` must be a mapping of keys, found nothing",
        ),
        (
            "name: greeter\ntoolsets:\n  shell:\n    rules:\n      - { pattern: a, approval: }\n",
            "line 6: `toolsets.shell.rules[0].approval` must be one of `preApproved`, `ask`, `blocked`, found nothing",
        ),
        (
            "name: greeter\nsandbox:\n  zones:\n    - name:\n",
            "line 5: `sandbox.zones[0].name` must be a string, found nothing",
        ),
        (
            "name: [a]\n",
            "line 2: `name` must be a single value, found a list",
        ),
        (
            "# just a comment\n",
            "line 1: missing key `name` (add `name: greeter`)",
        ),
        // YAML itself.
        (
            "name: greeter\nname: again\n",
            "line 3: duplicate key `name`",
        ),
        (
            "- name: greeter\n",
            "line 2: the front matter must be a mapping of keys, found a list",
        ),
        (
            "name: [greeter\n",
            "line 2: `name` must be a single value, found a list",
        ),
        (
            "name: greeter\nmodel: a: b\n",
            "line 3: invalid YAML: mapping values are not allowed in this context",
        ),
        (
            "name: greeter\ndescription: \"open\n",
            "line 4: invalid YAML: invalid indentation in multiline quoted scalar",
        ),
        (
            "name: greeter\nmodel: *anchor\n",
            "line 3: invalid YAML: reference to unknown value",
        ),
        // The parser's own words, quotes as they are (not `\'[\'`).
        (
            "name: greeter\ncompatible_models: [a, b\n",
            "line 3: invalid YAML: unclosed bracket '['",
        ),
    ] {
        let got = parse(&worker(yaml, "Hello.")).map_err(|e| e.to_string());
        let want = format!("worker file greeter.worker, {expected}");
        if got.as_ref().err() != Some(&want) {
            failures.push(format!("{yaml:?}\n  got:  {got:?}\n  want: {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn errors_deep_in_toolsets_and_zones_have_their_line() {
    let shell = r#"
        name: greeter
        toolsets:
          filesystem: {}
          shell:
            rules:
              - { pattern: "git status", approval: preApproved }
              - pattern: "rm -rf"
                approval: blocked
              - pattern: "rm "
                approval: sometimes
        "#;
    check_err(
        shell,
        "line 11: `toolsets.shell.rules[2].approval` must be one of `preApproved`, `ask`, `blocked`, found \"sometimes\"",
    );
    let err = parse(&worker(shell, "")).unwrap_err();
    let WorkerFileError::Invalid { line, key, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (line, key.as_deref()),
        (11, Some("toolsets.shell.rules[2].approval"))
    );

    check_err(
        "name: greeter\ntoolsets:\n  shell:\n    rules:\n      - { pattern: a, approval: ask }\n      - { approval: ask }\n",
        "line 7: missing key `pattern` in `toolsets.shell.rules[1]`",
    );
    check_err(
        "name: greeter\ntoolsets:\n  shell:\n    rules:\n      - { pattern: '', approval: ask }\n",
        "line 6: `toolsets.shell.rules[0].pattern` must not be empty",
    );
    check_err(
        "name: greeter\ntoolsets:\n  shell:\n    rules:\n      - { pattern: a, approval: ask, note: x }\n",
        "line 6: unknown key `note` in `toolsets.shell.rules[0]` (expected one of `pattern`, `approval`)",
    );

    let zones = r#"
        name: greeter
        sandbox:
          zones:
            - name: input
              mode: ro
            - name: output
              mode: rw
              approval:
                create: preApproved
                remove: blocked
        "#;
    check_err(
        zones,
        "line 11: unknown key `remove` in `sandbox.zones[1].approval` (expected one of `create`, `write`, `delete`)",
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - name: input\n    - name: out\n      mode: wr\n",
        "line 7: `sandbox.zones[1].mode` must be one of `ro`, `rw`, found \"wr\" (did you mean `rw`?)",
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - name: Input\n",
        "line 5: `sandbox.zones[0].name`: invalid zone name `Input`: use lowercase letters, digits and `_`, starting with a letter",
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - { name: a }\n    - { nme: b }\n",
        "line 6: unknown key `nme` in `sandbox.zones[1]` (did you mean `name`?)",
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - { name: a }\n    - { name: a, mode: rw }\n",
        "line 6: `sandbox.zones[1]` must not reuse the zone name `a` (zone names are unique)",
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - name: w\n      mode: rw\n      unprotect:\n        - .git\n        - ../x\n",
        "line 9: `sandbox.zones[0].unprotect[1]` must not contain `.` or `..` segments, found \"../x\"",
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - { name: w, unprotect: .git }\n",
        "line 5: `sandbox.zones[0].unprotect` must be a list, found \".git\"",
    );
}

#[test]
fn zones_of_different_modes_may_not_nest_either_way() {
    let advice = "give the two zones the same mode, or point them at separate directories";
    // A read-write zone inside a read-only one, and the reverse; in both orders in the file.
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - { name: data, mode: ro }\n    - { name: out, mode: rw, path: data/out }\n",
        &format!(
            "line 6: `sandbox.zones[1]` must not lie inside read-only zone `data`: `data` is \
             read-only and could be changed through `out`; {advice}"
        ),
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - { name: out, mode: rw, path: ./data/out }\n    - { name: data, mode: ro }\n",
        &format!(
            "line 6: `sandbox.zones[1]` must not contain read-write zone `out`: `data` is \
             read-only and could be changed through `out`; {advice}"
        ),
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - { name: data, mode: rw }\n    - { name: input, path: data/in }\n",
        &format!(
            "line 6: `sandbox.zones[1]` must not lie inside read-write zone `data`: `input` is \
             read-only and could be changed through `data`; {advice}"
        ),
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - { name: input, path: data/in }\n    - { name: data, mode: rw }\n",
        &format!(
            "line 6: `sandbox.zones[1]` must not contain read-only zone `input`: `input` is \
             read-only and could be changed through `data`; {advice}"
        ),
    );
    check_err(
        "name: greeter\nsandbox:\n  zones:\n    - { name: a, mode: rw, path: common }\n    - { name: b, path: x/../common }\n",
        &format!(
            "line 6: `sandbox.zones[1]` must not use the directory of read-write zone `a`: `b` is \
             read-only and could be changed through `a`; {advice}"
        ),
    );
    let key_of = |yaml: &str| match parse(&worker(yaml, "")) {
        Err(WorkerFileError::Invalid { key, .. }) => key,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        key_of("name: greeter\nsandbox:\n  zones:\n    - { name: data }\n    - { name: out, mode: rw, path: data/out }\n").as_deref(),
        Some("sandbox.zones[1]")
    );
    // Zones of the same mode may nest, and zones side by side are fine.
    for yaml in [
        "name: greeter\nsandbox:\n  zones:\n    - { name: data, mode: rw }\n    - { name: out, mode: rw, path: data/out }\n",
        "name: greeter\nsandbox:\n  zones:\n    - { name: data }\n    - { name: input, path: data/in }\n",
        "name: greeter\nsandbox:\n  zones:\n    - { name: data }\n    - { name: out, mode: rw, path: database }\n",
    ] {
        parse(&worker(yaml, "Hello.")).unwrap();
    }
}

#[test]
fn errors_carry_the_key_and_quote_values_briefly() {
    let key_of = |yaml: &str| match parse(&worker(yaml, "")) {
        Err(WorkerFileError::Invalid { key, .. }) => key,
        other => panic!("{other:?}"),
    };
    assert_eq!(key_of("description: x\n").as_deref(), Some("name"));
    assert_eq!(
        key_of("name: greeter\ntoolsets:\n  shell:\n    rules:\n      - { approval: ask }\n")
            .as_deref(),
        Some("toolsets.shell.rules[0].pattern")
    );
    assert_eq!(
        key_of("name: greeter\ntoolset: {}\n").as_deref(),
        Some("toolset")
    );
    assert_eq!(key_of("name: greeter\nname: again\n"), None);

    let long = "x".repeat(500);
    check_err(
        &format!("name: greeter\nmax_iterations: {long}\n"),
        &format!(
            "line 3: `max_iterations` must be a whole number, found \"{}…\"",
            "x".repeat(60)
        ),
    );
    check_err(
        "name: greeter\nmax_iterations: \"tab\\there\"\n",
        "line 3: `max_iterations` must be a whole number, found \"tab\\\\there\"",
    );
}

#[test]
fn front_matter_errors() {
    for (text, expected) in [
        (
            "",
            "line 1: missing front matter: a worker file starts with a `---` line, then YAML keys such as `name:`, then a closing `---` line, then the instructions",
        ),
        (
            "Hello.\n",
            "line 1: missing front matter: a worker file starts with a `---` line, then YAML keys such as `name:`, then a closing `---` line, then the instructions",
        ),
        (
            "\n\nname: greeter\n---\n",
            "line 3: missing front matter: a worker file starts with a `---` line, then YAML keys such as `name:`, then a closing `---` line, then the instructions",
        ),
        (
            "---\nname: greeter\nHello.\n",
            "line 1: the front matter is not closed: add a `---` line after its keys",
        ),
        (
            "---\n---\nHello.\n",
            "line 1: missing key `name` (add `name: greeter`)",
        ),
        (
            "\n---\n\n---\n",
            "line 2: missing key `name` (add `name: greeter`)",
        ),
    ] {
        let err = parse(text).expect_err(text);
        assert_eq!(
            err.to_string(),
            format!("worker file greeter.worker, {expected}"),
            "{text:?}"
        );
    }
    let err =
        parse_worker("---\n---\n", Path::new("examples/file-sorter/main.worker")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "worker file examples/file-sorter/main.worker, line 1: missing key `name` (add `name: file_sorter`)"
    );
}

#[test]
fn loading_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("greeter.worker");
    std::fs::write(&path, "---\nname: greeter\n---\nHi.\n").unwrap();
    let def = load_worker(&path).unwrap();
    assert_eq!(def.path, path);
    assert_eq!(def.dir(), dir.path());

    let missing = dir.path().join("nope.worker");
    let err = load_worker(&missing).unwrap_err();
    assert!(matches!(err, WorkerFileError::Read { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("cannot read worker file {}: ", missing.display()))
    );

    std::fs::write(&path, b"---\nname: greeter\ndescription: caf\xe9\n---\n").unwrap();
    let err = load_worker(&path).unwrap_err();
    assert_eq!(err.line(), Some(3), "{err}");
    assert!(
        err.to_string()
            .ends_with("line 3: the file is not UTF-8 text"),
        "{err}"
    );
}

#[test]
fn a_budget_takes_each_limit() {
    check(
        "name: greeter\nbudget: {tokens: 20000, cost_usd: 0.5, wall_seconds: 120, max_workers: 0}\n",
        |w| {
            w.budget = BudgetLimits {
                tokens: Some(20_000),
                cost_usd: Some(0.5),
                wall_seconds: Some(120),
                max_workers: Some(0),
            }
        },
    );
    check("name: greeter\nbudget:\n", |_| {});
    check("name: greeter\nbudget: {tokens: 10}\n", |w| {
        w.budget.tokens = Some(10)
    });
}

#[test]
fn context_settings_take_shares_of_the_window_or_never() {
    check(
        "name: greeter\ncontext: {elide_at: 0.5, keep_turns: 2}\n",
        |w| {
            w.context = ContextSettings {
                elide_at: Some(Threshold::Permille(500)),
                compact_at: None,
                keep_turns: Some(2),
            }
        },
    );
    check("name: greeter\ncontext: {compact_at: never}\n", |w| {
        w.context.compact_at = Some(Threshold::Never)
    });
    check("name: greeter\ncontext: {compact_at: 0.75}\n", |w| {
        w.context.compact_at = Some(Threshold::Permille(750))
    });
    check("name: greeter\ncontext: {elide_at: never}\n", |w| {
        w.context.elide_at = Some(Threshold::Never)
    });
    check("name: greeter\ncontext: {elide_at: 1}\n", |w| {
        w.context.elide_at = Some(Threshold::Permille(1000))
    });
    check("name: greeter\ncontext:\n", |_| {});
    let err = |yaml: &str| parse(&worker(yaml, "Hello.")).unwrap_err().to_string();
    for bad in ["1.5", "0", "sometimes"] {
        let message = err(&format!("name: greeter\ncontext:\n  elide_at: {bad}\n"));
        assert!(
            message.ends_with(
                "line 4: `context.elide_at` must be a share of the context window above 0 and \
                 at most 1 (0.6), or `never`"
            ),
            "{message}"
        );
    }
    let message = err("name: greeter\ncontext:\n  elide_at: 0.5\n  compact_at: 2\n");
    assert!(
        message.contains("line 5: `context.compact_at` must be a share"),
        "{message}"
    );
    let unknown = err("name: greeter\ncontext:\n  keep_turn: 3\n");
    assert!(unknown.contains("did you mean `keep_turns`?"), "{unknown}");
}

#[test]
fn budget_errors_name_the_line_and_key() {
    let err = |yaml: &str| parse(&worker(yaml, "Hello.")).unwrap_err().to_string();
    let unknown = err("name: greeter\nbudget:\n  tokens: 100\n  dollars: 2\n");
    assert!(unknown.contains("line 5"), "{unknown}");
    assert!(unknown.contains("dollars"), "{unknown}");
    assert!(
        unknown.contains("cost_usd"),
        "the known keys are listed: {unknown}"
    );
    let zero = err("name: greeter\nbudget:\n  tokens: 0\n");
    assert!(zero.contains("line 4"), "{zero}");
    assert!(zero.contains("budget.tokens"), "{zero}");
    assert!(zero.contains("at least 1"), "{zero}");
    let negative = err("name: greeter\nbudget: {cost_usd: -1}\n");
    assert!(negative.contains("budget.cost_usd"), "{negative}");
    assert!(
        negative.contains("positive number of US dollars"),
        "{negative}"
    );
    let words = err("name: greeter\nbudget: {wall_seconds: soon}\n");
    assert!(words.contains("budget.wall_seconds"), "{words}");
}

/// A custom module with every option at its default.
fn custom_module(module: &str) -> CustomModuleConfig {
    CustomModuleConfig {
        module: module.to_owned(),
        tools: None,
        approval: ApprovalConfig::default(),
        network: false.into(),
        timeout: 60,
        jail: JailMode::Strict,
        limits: ProcessLimitsConfig::default(),
    }
}
