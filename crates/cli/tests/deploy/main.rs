//! The Kubernetes deployment in `deploy/kubernetes/`, checked offline: every manifest (each
//! YAML document of every `*.yaml` there) is valid against the Kubernetes API schemas, with the
//! PyPI validator `kubernetes-validate` from `target/mcp-venv` (which `scripts/test` makes; it
//! ships the schemas); the manifests agree with each other (the Job's queue is the Redis
//! Service, every Secret they read is in the example Secret); and every `golem-forge` command
//! line there is one the binary's own argument parser accepts: the Job's container command, the
//! image's `ENTRYPOINT` and `CMD`, and the README's examples. Each check is also shown to
//! reject: a manifest with a misspelt field and a command line with a misspelt flag.
//!
//! The image is never built here (the project's machines cannot run Docker); the
//! `Containerfile` is only read. `cargo test -p golem-forge --test deploy`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use golem_testkit::parts::{KUBERNETES_VALIDATE_PACKAGE, MCP_PYTHON_INSTALL, missing};
use serde_json::Value;

/// The Kubernetes versions the manifests are validated against: the oldest they need (the
/// pod's `appArmorProfile` field is 1.30's) and the newest the pinned validator ships.
const KUBERNETES_VERSIONS: [&str; 2] = ["1.30.0", "1.37.0"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn deploy_dir() -> PathBuf {
    root().join("deploy/kubernetes")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `deploy/kubernetes/*.yaml`, sorted.
fn manifests() -> Vec<PathBuf> {
    let dir = deploy_dir();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    paths.sort();
    for name in ["job.yaml", "redis.yaml", "secret.example.yaml"] {
        assert!(
            paths.iter().any(|path| path.ends_with(name)),
            "deploy/kubernetes/ has no {name}: {paths:?}"
        );
    }
    paths
}

/// Each YAML document of `path`, as JSON.
fn documents(path: &Path) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(&read(path))
        .unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()))
}

/// The one document of kind `kind` in `deploy/kubernetes/name`.
fn resource(name: &str, kind: &str) -> Value {
    let mut found: Vec<Value> = documents(&deploy_dir().join(name))
        .into_iter()
        .filter(|doc| doc["kind"] == kind)
        .collect();
    assert_eq!(found.len(), 1, "{name} should hold one {kind}");
    found.remove(0)
}

/// The validator of `target/mcp-venv` at the pinned version, checked once.
fn validator() -> &'static Path {
    static VALIDATOR: OnceLock<PathBuf> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = root().join("target/mcp-venv/bin/kubernetes-validate");
        let (_, want) = KUBERNETES_VALIDATE_PACKAGE
            .split_once("==")
            .expect("a pinned package");
        let what =
            format!("The Kubernetes manifest validator {KUBERNETES_VALIDATE_PACKAGE} (PyPI)");
        match Command::new(&path).arg("--version").output() {
            Ok(out)
                if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == want =>
            {
                path
            }
            Ok(out) => panic!(
                "{} is not version {want} ({}{}).\n{}",
                path.display(),
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim(),
                missing(&what, MCP_PYTHON_INSTALL)
            ),
            Err(e) => panic!(
                "cannot run {} ({e}).\n{}",
                path.display(),
                missing(&what, MCP_PYTHON_INSTALL)
            ),
        }
    })
}

/// The validator's verdict on `path` against [`KUBERNETES_VERSIONS`], strict (unknown fields
/// are errors): the number of resources that passed, or everything it said. It only warns, and
/// exits 0, for a kind it has no schema for, so anything it prints besides a resource's
/// "passed" line counts as a failure.
fn validate(path: &Path) -> Result<usize, String> {
    let mut command = Command::new(validator());
    command.arg("--strict");
    for version in KUBERNETES_VERSIONS {
        command.args(["-k", version]);
    }
    let out = command
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", validator().display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let is_pass = |line: &str| line.starts_with("INFO ") && line.contains(" passed for resource ");
    let passed = text.lines().filter(|line| is_pass(line)).count();
    let other = text
        .lines()
        .any(|line| !line.trim().is_empty() && !is_pass(line));
    if out.status.success() && !other {
        Ok(passed)
    } else {
        Err(format!("exit status {}:\n{text}", out.status))
    }
}

/// Kubernetes' expansion of `$(NAME)` in a container's command and args from the variables
/// its `env` gives a plain `value` (`$$` is a literal `$`); a reference it cannot expand here
/// is left as it is.
fn expand(text: &str, env: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some((name, tail)) = after
            .strip_prefix('(')
            .and_then(|inner| inner.split_once(')'))
            && let Some((_, value)) = env.iter().find(|(n, _)| n == name)
        {
            out.push_str(value);
            rest = tail;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The Job's only container.
fn job_container() -> Value {
    let job = resource("job.yaml", "Job");
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("the Job's pod has containers")
        .clone();
    assert_eq!(containers.len(), 1, "the Job's pod has one container");
    containers.into_iter().next().expect("one container")
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item.as_str().expect("a string").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The command line the Job's container runs: its `command` and `args`, expanded as the
/// kubelet does.
fn job_command_line() -> Vec<String> {
    let container = job_container();
    let env: Vec<(String, String)> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|var| {
            Some((
                var["name"].as_str()?.to_owned(),
                var["value"].as_str()?.to_owned(),
            ))
        })
        .collect();
    let argv: Vec<String> = strings(&container["command"])
        .into_iter()
        .chain(strings(&container["args"]))
        .map(|arg| expand(&arg, &env))
        .collect();
    for arg in &argv {
        assert!(
            !arg.contains("$("),
            "the Job's `{arg}` names a variable without a value"
        );
    }
    argv
}

/// The exec-form `instruction` (`ENTRYPOINT` or `CMD`) of the Containerfile.
fn containerfile_exec(instruction: &str) -> Vec<String> {
    let text = read(&deploy_dir().join("Containerfile"));
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix(instruction)?.strip_prefix(' '))
        .collect();
    assert_eq!(lines.len(), 1, "the Containerfile has one {instruction}");
    serde_json::from_str(lines[0].trim())
        .unwrap_or_else(|e| panic!("{instruction} is not in exec form ({e}): {}", lines[0]))
}

/// The words of one shell command line, with quotes removed, cut at the first unquoted
/// operator (`|`, `&`, `;`, `<`, `>`) or comment: each command of the line separately.
fn shell_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' if chars.peek().is_some_and(|n| "\"\\$`".contains(*n)) => {
                            word.extend(chars.next());
                        }
                        _ => word.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            '#' if word.is_none() => break,
            '|' | '&' | ';' | '<' | '>' => {
                let current = commands.last_mut().expect("a command");
                current.extend(word.take());
                if !current.is_empty() {
                    commands.push(Vec::new());
                }
            }
            c if c.is_whitespace() => commands.last_mut().expect("a command").extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    commands.last_mut().expect("a command").extend(word.take());
    commands.retain(|command| !command.is_empty());
    commands
}

/// Every `golem-forge` command line in the ```sh blocks of `markdown`: a command that starts
/// with `golem-forge`, or runs it after `--` (`kubectl exec … -- golem-forge …`). A command that
/// `>` redirects keeps only its words before the redirection.
fn golem_forge_commands(markdown: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    // Inside a fenced block: whether it is a ```sh one.
    let mut block: Option<bool> = None;
    let mut joined = String::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            block = match block {
                None => Some(line.trim() == "```sh"),
                Some(_) => None,
            };
            continue;
        }
        if block != Some(true) {
            continue;
        }
        if let Some(start) = line.strip_suffix('\\') {
            joined.push_str(start);
            continue;
        }
        joined.push_str(line);
        for command in shell_commands(&joined) {
            let start = command
                .iter()
                .enumerate()
                .position(|(i, word)| word == "golem-forge" && (i == 0 || command[i - 1] == "--"));
            if let Some(start) = start {
                found.push(command[start..].to_vec());
            }
        }
        joined.clear();
    }
    found
}

/// Whether `value` has `key: true` anywhere in it.
fn sets_true(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| (k == key && *v == Value::Bool(true)) || sets_true(v, key)),
        Value::Array(items) => items.iter().any(|item| sets_true(item, key)),
        _ => false,
    }
}

/// Every `secretKeyRef` in `value`, as (secret, key).
fn secret_refs(value: &Value, found: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "secretKeyRef" {
                    found.push((
                        v["name"].as_str().expect("a Secret's name").to_owned(),
                        v["key"].as_str().expect("a key").to_owned(),
                    ));
                } else {
                    secret_refs(v, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| secret_refs(item, found)),
        _ => {}
    }
}

#[test]
fn every_manifest_is_valid_against_the_kubernetes_api_schemas() {
    for path in manifests() {
        let resources = documents(&path).len();
        assert!(resources > 0, "{} has no document", path.display());
        match validate(&path) {
            Ok(passed) => assert_eq!(
                passed,
                resources * KUBERNETES_VERSIONS.len(),
                "{}: not every document was validated against every version",
                path.display()
            ),
            Err(output) => panic!("{} is not valid:\n{output}", path.display()),
        }
    }
}

#[test]
fn the_validator_rejects_a_misspelt_field_and_an_unknown_kind() {
    let job = read(&deploy_dir().join("job.yaml"));
    let dir = tempfile::tempdir().expect("a temp dir");
    let misspelt = job.replacen("  backoffLimit:", "  backofLimit:", 1);
    assert_ne!(misspelt, job, "job.yaml has no backoffLimit to misspell");
    let path = dir.path().join("misspelt.yaml");
    std::fs::write(&path, misspelt).expect("write");
    let output = validate(&path).expect_err("a Job with `backofLimit` passed");
    assert!(output.contains("backofLimit"), "{output}");

    // The validator itself only warns about a kind it has no schema for.
    let unknown = job.replacen("kind: Job", "kind: Jobs", 1);
    assert_ne!(unknown, job);
    let path = dir.path().join("unknown.yaml");
    std::fs::write(&path, unknown).expect("write");
    let output = validate(&path).expect_err("a resource of kind `Jobs` passed");
    assert!(output.contains("Jobs"), "{output}");
}

#[test]
fn the_job_runs_a_command_line_golem_forge_accepts() {
    let argv = job_command_line();
    golem_forge::check_command_line(&argv)
        .unwrap_or_else(|e| panic!("the Job's command line {argv:?} is refused:\n{e}"));
    assert_eq!(argv[..2], ["golem-forge", "batch-worker"], "{argv:?}");
    for flag in ["--until-done", "--queue", "--name"] {
        assert!(argv.iter().any(|arg| arg == flag), "{argv:?} has no {flag}");
    }
    let root = argv.iter().position(|arg| arg == "--root").expect("--root");
    assert_eq!(argv[root + 1], "/project", "{argv:?}");
    assert_eq!(
        strings(&job_container()["command"]),
        containerfile_exec("ENTRYPOINT"),
        "the Job's command is not the image's ENTRYPOINT"
    );
}

#[test]
fn a_misspelt_flag_is_refused() {
    let argv: Vec<String> = job_command_line()
        .into_iter()
        .map(|arg| {
            if arg == "--until-done" {
                "--until-finished".to_owned()
            } else {
                arg
            }
        })
        .collect();
    let error =
        golem_forge::check_command_line(&argv).expect_err("`--until-finished` was accepted");
    assert!(error.contains("--until-finished"), "{error}");
}

#[test]
fn the_images_entrypoint_and_cmd_are_a_command_line_golem_forge_accepts() {
    let entrypoint = containerfile_exec("ENTRYPOINT");
    assert_eq!(entrypoint, ["golem-forge"]);
    let argv: Vec<String> = entrypoint
        .into_iter()
        .chain(containerfile_exec("CMD"))
        .collect();
    golem_forge::check_command_line(&argv)
        .unwrap_or_else(|e| panic!("the image's command line {argv:?} is refused:\n{e}"));
}

#[test]
fn the_readmes_golem_forge_commands_are_accepted() {
    let readme = read(&deploy_dir().join("README.md"));
    let commands = golem_forge_commands(&readme);
    for argv in &commands {
        golem_forge::check_command_line(argv)
            .unwrap_or_else(|e| panic!("README.md's `{}` is refused:\n{e}", argv.join(" ")));
    }
    // The walk-through's steps: enqueue, watch, collect, answer, check the kernel.
    for step in [
        ["batch", "analyst"],
        ["batch", "status"],
        ["batch", "results"],
        ["inbox", "approve"],
        ["check", "analyst"],
    ] {
        assert!(
            commands
                .iter()
                .any(|argv| argv.get(1).map(String::as_str) == Some(step[0])
                    && argv.iter().any(|arg| arg == step[1])),
            "README.md shows no `golem-forge {} … {}`: {commands:?}",
            step[0],
            step[1]
        );
    }
    // The splitter sees what a shell sees.
    assert_eq!(
        shell_commands(r#"kubectl exec job/x -- golem-forge check "a b" > out.txt # note"#),
        [
            vec![
                "kubectl",
                "exec",
                "job/x",
                "--",
                "golem-forge",
                "check",
                "a b"
            ],
            vec!["out.txt"]
        ]
    );
}

#[test]
fn the_manifests_agree_on_the_queue_and_the_secret() {
    let argv = job_command_line();
    let queue = argv
        .iter()
        .position(|arg| arg == "--queue")
        .expect("--queue");
    let service = resource("redis.yaml", "Service");
    let name = service["metadata"]["name"]
        .as_str()
        .expect("a Service name");
    let port = service["spec"]["ports"][0]["port"]
        .as_u64()
        .expect("a port");
    assert_eq!(
        argv[queue + 1],
        format!("redis://{name}:{port}/0"),
        "the Job's queue is not redis.yaml's Service"
    );

    let secret = resource("secret.example.yaml", "Secret");
    let secret_name = secret["metadata"]["name"].as_str().expect("a Secret name");
    let values = secret["stringData"].as_object().expect("stringData");
    for value in values.values() {
        let value = value.as_str().expect("a string");
        assert!(
            value.starts_with("REPLACE-ME"),
            "not a placeholder: {value}"
        );
    }
    let mut refs = Vec::new();
    for path in manifests() {
        for doc in documents(&path) {
            secret_refs(&doc, &mut refs);
        }
    }
    assert!(
        refs.iter().any(|(_, key)| key == "redis-password"),
        "{refs:?}"
    );
    for (name, key) in refs {
        assert_eq!(name, secret_name, "a manifest reads another Secret");
        assert!(
            values.contains_key(&key),
            "secret.example.yaml has no {key}"
        );
    }
}

#[test]
fn the_job_is_a_work_queue_the_jail_can_run_in() {
    let job = resource("job.yaml", "Job");
    let spec = &job["spec"];
    assert_eq!(spec["parallelism"], 3);
    assert!(
        spec.get("completions").is_none(),
        "a work queue leaves completions unset"
    );
    assert!(spec["backoffLimit"].is_u64());
    let pod = &spec["template"]["spec"];
    assert!(matches!(
        pod["restartPolicy"].as_str(),
        Some("OnFailure" | "Never")
    ));
    let grace = pod["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("a grace period");
    assert!(
        grace >= 30,
        "{grace}s is too short to hand running items back"
    );
    let security = &pod["securityContext"];
    assert_eq!(security["runAsNonRoot"], true);
    assert_eq!(security["seccompProfile"]["type"], "Unconfined");
    assert_eq!(security["appArmorProfile"]["type"], "Unconfined");
    assert!(
        !sets_true(&job, "privileged"),
        "the Job asks for a privileged container"
    );
    assert_eq!(
        job_container()["securityContext"]["allowPrivilegeEscalation"],
        false
    );
}
