//! `golem-forge test --junit FILE` writes JUnit XML that CI systems read: the file, for passing
//! and failing cases alike (and text that needs escaping), validates against the JUnit schema
//! Jenkins checks reports with (`tests/fixtures/junit/junit-10.xsd`), by the Python
//! `xmlschema` package of `target/mcp-venv`. Without that package the test fails with the
//! command that installs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use golem_testkit::cli::{TestEnv, repo_root};
use golem_testkit::parts::{MCP_PYTHON_INSTALL, XMLSCHEMA_PACKAGE, missing};

/// The committed JUnit schema.
fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit/junit-10.xsd")
}

/// The Python of `target/mcp-venv`, with `xmlschema` at the pinned version, checked once.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let python = repo_root().join("target/mcp-venv/bin/python");
        let (name, want) = XMLSCHEMA_PACKAGE
            .split_once("==")
            .expect("a pinned package");
        let what = format!("The XML Schema validator {XMLSCHEMA_PACKAGE} (PyPI)");
        let out = Command::new(&python)
            .args([
                "-c",
                &format!(
                    "import importlib.metadata as m\ntry: print(m.version('{name}'))\n\
                     except m.PackageNotFoundError: print('not installed')"
                ),
            ])
            .output();
        match out {
            Ok(out)
                if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == want =>
            {
                python
            }
            Ok(out) => panic!(
                "{} has no {name} {want} ({}{}).\n{}",
                python.display(),
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim(),
                missing(&what, MCP_PYTHON_INSTALL)
            ),
            Err(e) => panic!(
                "cannot run {} ({e}).\n{}",
                python.display(),
                missing(&what, MCP_PYTHON_INSTALL)
            ),
        }
    })
}

/// Every problem the schema finds in `xml` (empty when it is valid).
fn problems(xml: &Path) -> Vec<String> {
    let script = "import sys, xmlschema\n\
                  schema = xmlschema.XMLSchema(sys.argv[1])\n\
                  for e in schema.iter_errors(sys.argv[2]):\n    \
                  print(str(e).replace('\\n', ' '))\n";
    let out = Command::new(python())
        .args(["-c", script])
        .arg(schema())
        .arg(xml)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "xmlschema could not read {}: {}",
        xml.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

const WORKER: &str = "---\nname: keeper\nsandbox:\n  zones:\n    - name: notes\n      mode: rw\n      \
     approval: { write: ask, create: ask, delete: blocked }\ntoolsets:\n  filesystem: {}\n---\n\
     You keep notes.\n";

/// Two cases that pass and two that fail, one with text that needs escaping and a control
/// character in its name and failure.
const CASES: &str = r#"cases:
  - name: keeps a note
    model:
      - tool_calls: [{ name: write_file, args: { path: /notes/a.md, content: "a\n" } }]
      - text: "Kept."
    approve: { write_file: yes }
    expect:
      files: { /notes/a.md: { equals: "a\n" } }
  - name: answers
    model: [{ text: "hi" }]
    expect: { answer: { equals: "hi" } }
  - name: "<tidies> & \"deletes\" \u001b[31m"
    files: { /notes/old.md: "old\n" }
    model:
      - tool_calls: [{ name: delete_file, args: { path: /notes/old.md } }]
      - text: "]]> <done> & \u0007"
    expect:
      blocked: []
      answer: { contains: "finished" }
  - name: writes the wrong thing
    model:
      - tool_calls: [{ name: write_file, args: { path: /notes/a.md, content: "b\n" } }]
      - text: "Kept."
    approve: { write_file: yes }
    expect:
      files: { /notes/a.md: { equals: "a\n" } }
"#;

fn project(env: &TestEnv) {
    env.mkdir("proj/notes");
    env.write(
        "proj/golem-forge.config.yaml",
        "approval:\n  mode: interactive\n",
    );
    env.write("proj/keeper.worker", WORKER);
    env.write("proj/keeper.test.yaml", CASES);
}

#[test]
fn junit_of_passing_and_failing_cases_validates_against_the_junit_schema() {
    let env = TestEnv::new();
    project(&env);

    let passing = env.path().join("passing.xml");
    let out = env
        .command()
        .args(["test", "proj", "-k", "keeps a note"])
        .arg("--junit")
        .arg(&passing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let xml = std::fs::read_to_string(&passing).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 1, "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");

    let all = env.path().join("all.xml");
    let out = env
        .command()
        .args(["test", "proj"])
        .arg("--junit")
        .arg(&all)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let xml = std::fs::read_to_string(&all).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 4, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 2, "{xml}");

    for file in [&passing, &all] {
        let found = problems(file);
        assert!(
            found.is_empty(),
            "{} does not validate: {found:#?}\n{}",
            file.display(),
            std::fs::read_to_string(file).unwrap()
        );
    }
}

/// The check is real: a document the schema refuses (a `testsuite` without `tests`, a
/// `testcase` without `name`) is reported.
#[test]
fn the_junit_schema_refuses_what_ci_systems_cannot_read() {
    let env = TestEnv::new();
    let bad = env.write(
        "bad.xml",
        "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"x\"><testcase classname=\"c\"/>\
         </testsuite></testsuites>\n",
    );
    let found = problems(&bad);
    assert!(found.iter().any(|p| p.contains("tests")), "{found:#?}");
    assert!(found.iter().any(|p| p.contains("name")), "{found:#?}");
}
