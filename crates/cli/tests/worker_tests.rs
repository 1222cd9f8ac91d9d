//! `golem-forge test` (issue #48, docs/testing.md): test cases of a worker run offline with
//! scripted model replies in scratch zones. A passing case exits 0; a case that meets a blocked
//! call, writes a file that does not match or answers wrong fails with a message naming the
//! expectation and what happened (exit 1); a bad test file, no cases or bad arguments exit 2.
//! The user's real zone and `.golem-forge/` are never read or written. `--json` prints test
//! events of the protocol's schema, `--junit` well-formed JUnit XML.

use std::process::Output;

use golem_testkit::cli::{TestEnv, assert_exit, stderr, stdout};
use serde_json::Value;

/// The worker under test: zone `notes` (read-write; writes ask, deletes are blocked) and the
/// filesystem tools, in `proj/`.
const WORKER: &str = "---\nname: keeper\ndescription: keeps notes\nsandbox:\n  zones:\n    \
     - name: notes\n      mode: rw\n      approval: { write: ask, create: ask, delete: blocked }\n\
     toolsets:\n  filesystem: {}\n---\nYou keep notes.\n";

/// A case that writes a note (approved), answers, and expects all of it.
const PASSING: &str = r#"cases:
  - name: greets and keeps a note
    input: "hello, I am Ada"
    files: { /notes/greeted.md: "Bob\n" }
    model:
      - tool_calls: [{ name: write_file, args: { path: /notes/greeted.md, content: "Bob\nAda\n" } }]
      - text: "Hello Ada!"
    approve: { write_file: yes, delete_file: no }
    expect:
      status: completed
      answer: { contains: "Ada" }
      calls: [{ tool: write_file, args: { path: /notes/greeted.md } }]
      not_called: [delete_file]
      asked: [write_file]
      blocked: []
      files: { /notes/greeted.md: { equals: "Bob\nAda\n" } }
      max_cost_usd: 0.01
      max_tokens: 5000
"#;

fn project(env: &TestEnv, tests: &str) {
    env.write(
        "proj/golem-forge.config.yaml",
        "approval:\n  mode: approve_all\n",
    );
    env.mkdir("proj/notes");
    env.write("proj/keeper.worker", WORKER);
    env.write("proj/keeper.test.yaml", tests);
}

fn test(env: &TestEnv, args: &[&str]) -> Output {
    env.command().arg("test").args(args).output().unwrap()
}

#[test]
fn a_passing_case_exits_0_with_a_progress_line_and_a_summary() {
    let env = TestEnv::new();
    project(&env, PASSING);
    let out = test(&env, &["proj"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(
        text.contains("✓ keeper · greets and keeps a note ("),
        "{text}"
    );
    assert!(text.contains("CASE"), "{text}");
    assert!(text.contains("passed"), "{text}");
    assert!(text.ends_with("1 passed, 0 failed\n"), "{text}");
    // The default PATH is the program root, found from the current directory.
    let out = env
        .command()
        .current_dir(env.path().join("proj"))
        .arg("test")
        .output()
        .unwrap();
    assert_exit(&out, 0);
}

#[test]
fn a_blocked_call_fails_a_case_that_expects_none_and_says_which() {
    let env = TestEnv::new();
    project(
        &env,
        r#"cases:
  - name: tidies up
    files: { /notes/old.md: "old\n" }
    model:
      - tool_calls: [{ name: delete_file, args: { path: /notes/old.md } }]
      - text: "Done."
    expect:
      blocked: []
      files: { /notes/old.md: { equals: "old\n" } }
"#,
    );
    let out = test(&env, &["proj/keeper.worker"]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    assert!(text.contains("✗ keeper · tidies up ("), "{text}");
    assert!(text.contains("FAILED keeper · tidies up"), "{text}");
    assert!(
        text.contains("expect.blocked: expected blocked calls of none, blocked were delete_file"),
        "{text}"
    );
    assert!(
        text.contains(r#"1. delete_file {"path":"/notes/old.md"} → blocked"#),
        "{text}"
    );
    assert!(text.ends_with("0 passed, 1 failed\n"), "{text}");
}

#[test]
fn a_file_that_differs_fails_with_a_diff_and_a_missing_one_says_so() {
    let env = TestEnv::new();
    project(
        &env,
        r#"cases:
  - name: writes the wrong name
    files: { /notes/greeted.md: "Bob\n" }
    model:
      - tool_calls: [{ name: write_file, args: { path: /notes/greeted.md, content: "Bob\nEve\n" } }]
      - text: "Hello!"
    approve: { write_file: yes }
    expect:
      files:
        /notes/greeted.md: { equals: "Bob\nAda\n" }
        /notes/log.md: { contains: "Ada" }
"#,
    );
    let out = test(&env, &["proj/keeper.test.yaml"]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    assert!(
        text.contains("expect.files./notes/greeted.md: expected a file that equals"),
        "{text}"
    );
    assert!(text.contains("--- expected /notes/greeted.md"), "{text}");
    assert!(text.contains("+++ actual /notes/greeted.md"), "{text}");
    assert!(text.contains("-Ada\n"), "{text}");
    assert!(text.contains("+Eve\n"), "{text}");
    assert!(
        text.contains("expect.files./notes/log.md: expected a file that contains \"Ada\"; the file does not exist"),
        "{text}"
    );
}

#[test]
fn a_run_that_writes_outside_what_the_case_expects_fails_naming_each_file() {
    // `expect.files` names only greeted.md: the stray note and the changed fixture are each a
    // failure; the fixture left as it was is not.
    let env = TestEnv::new();
    project(
        &env,
        r#"cases:
  - name: keeps only the greeting
    files: { /notes/greeted.md: "Bob
", /notes/todo.md: "buy milk
", /notes/old.md: "x
" }
    model:
      - tool_calls:
          - { name: write_file, args: { path: /notes/greeted.md, content: "Bob
Ada
" } }
          - { name: write_file, args: { path: /notes/stray.md, content: "oops
" } }
          - { name: write_file, args: { path: /notes/todo.md, content: "buy eggs
" } }
      - text: "Done."
    approve: { write_file: yes }
    expect:
      files: { /notes/greeted.md: { equals: "Bob
Ada
" } }
  - name: names every file it writes
    files: { /notes/greeted.md: "Bob
" }
    model:
      - tool_calls: [{ name: write_file, args: { path: /notes/greeted.md, content: "Bob
Ada
" } }]
      - text: "Done."
    approve: { write_file: yes }
    expect:
      files: { /notes/greeted.md: { equals: "Bob
Ada
" } }
"#,
    );
    let out = test(&env, &["proj/keeper.test.yaml"]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    for (what, path) in [
        ("created", "/notes/stray.md"),
        ("changed", "/notes/todo.md"),
    ] {
        assert!(
            text.contains(&format!(
                "expect.files: the run {what} {path}, which `expect.files` does not name"
            )),
            "{what} {path}:\n{text}"
        );
    }
    assert!(
        !text.contains("/notes/old.md"),
        "an untouched fixture is fine:\n{text}"
    );
    assert!(text.contains("1 passed, 1 failed"), "{text}");
}

#[test]
fn an_answer_that_misses_fails_with_the_answer_and_a_denied_write_is_not_asked_again() {
    let env = TestEnv::new();
    project(
        &env,
        r#"cases:
  - name: greets the wrong person
    model:
      - tool_calls: [{ name: write_file, args: { path: /notes/x.md, content: "x" } }]
      - text: "Hello Bob"
    expect:
      answer: { regex: "Ada|Alice" }
      calls: [{ tool: write_file, args: { path: /notes/x.md } }]
      asked: [write_file]
      files: { /notes/x.md: { absent: true } }
"#,
    );
    let out = test(&env, &["proj"]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    assert!(
        text.contains(
            "expect.answer: expected an answer that matches /Ada|Alice/, the answer was \"Hello Bob\""
        ),
        "{text}"
    );
    // `approve:` does not name write_file: it was asked and denied, so the file is absent,
    // and these expectations hold.
    assert!(!text.contains("expect.files"), "{text}");
    assert!(!text.contains("expect.asked"), "{text}");
    assert!(!text.contains("expect.calls"), "{text}");
}

#[test]
fn a_case_runs_in_scratch_zones_and_never_touches_the_real_ones() {
    let env = TestEnv::new();
    project(
        &env,
        r#"cases:
  - name: only sees its fixtures
    files: { /notes/greeted.md: "fixture\n" }
    model:
      - tool_calls:
          - { name: read_file, args: { path: /notes/secret.md } }
          - { name: write_file, args: { path: /notes/greeted.md, content: "changed\n" } }
          - { name: write_file, args: { path: /notes/new.md, content: "new\n" } }
      - text: "Done."
    approve: { write_file: yes }
    expect:
      calls:
        - { tool: read_file, args: { path: /notes/secret.md } }
      files:
        /notes/secret.md: { absent: true }
        /notes/greeted.md: { equals: "changed\n" }
        /notes/new.md: { equals: "new\n" }
"#,
    );
    let secret: &[u8] = b"only in the real zone\n\xff\x00";
    let greeted: &[u8] = b"REAL greeted\r\n";
    std::fs::write(env.path().join("proj/notes/secret.md"), secret).unwrap();
    std::fs::write(env.path().join("proj/notes/greeted.md"), greeted).unwrap();
    let out = test(&env, &["--json", "proj"]);
    assert_exit(&out, 0);
    let finished = events(&out)
        .into_iter()
        .find(|e| e["type"] == "testFinished")
        .unwrap();
    assert_eq!(finished["passed"], true, "{finished}");
    // The real zone is byte for byte as it was, with nothing added.
    assert_eq!(
        std::fs::read(env.path().join("proj/notes/secret.md")).unwrap(),
        secret
    );
    assert_eq!(
        std::fs::read(env.path().join("proj/notes/greeted.md")).unwrap(),
        greeted
    );
    let mut names: Vec<String> = std::fs::read_dir(env.path().join("proj/notes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["greeted.md", "secret.md"]);
    // No session of the program was recorded, and no inbox or undo journal was made.
    let state = env.path().join("proj/.golem-forge");
    for sub in ["sessions", "inbox", "undo"] {
        assert!(!state.join(sub).exists(), "{sub} was written");
    }
}

#[test]
fn bad_input_exits_2_and_a_bad_file_names_file_line_and_key() {
    let env = TestEnv::new();
    project(
        &env,
        "cases:\n  - name: a\n    expect:\n      answer: { regex: \"(unclosed\" }\n",
    );
    let out = test(&env, &["proj"]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    let file = env.path().join("proj/keeper.test.yaml");
    assert!(
        err.contains(&format!(
            "test file {}, line 4: `cases[0].expect.answer.regex` must be a regular expression",
            file.display()
        )),
        "{err}"
    );
    env.write(
        "proj/keeper.test.yaml",
        "cases:\n  - name: a\n    files:\n      /notes/../../x: oops\n",
    );
    let err = stderr(&test(&env, &["proj"]));
    assert!(
        err.contains("line 4: `cases[0].files./notes/../../x` must be a plain path inside a zone"),
        "{err}"
    );
    env.write(
        "proj/keeper.test.yaml",
        "cases:\n  - name: a\n    expect:\n      files: { /elsewhere/x: { absent: true } }\n",
    );
    let err = stderr(&test(&env, &["proj"]));
    assert!(
        err.contains(
            "must be in one of the worker's zones, found \"/elsewhere/x\" (its zones are /notes)"
        ),
        "{err}"
    );
    // No cases: an empty directory, and a pattern that matches none.
    env.mkdir("empty");
    let out = test(&env, &["empty"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("no test cases found"),
        "{}",
        stderr(&out)
    );
    env.write("proj/keeper.test.yaml", PASSING);
    let out = test(&env, &["proj", "-k", "nothing like it"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("no test case matches -k"),
        "{}",
        stderr(&out)
    );
    assert_exit(&test(&env, &["--bogus"]), 2);
    assert_exit(&test(&env, &["proj/missing.worker"]), 2);
    // -k selects by name.
    let out = test(&env, &["proj", "-k", "keeps a note"]);
    assert_exit(&out, 0);
}

/// The JSON lines of stdout.
fn events(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn json_prints_test_events_of_the_protocol_schema() {
    let env = TestEnv::new();
    project(
        &env,
        &format!(
            "{PASSING}  - name: misses\n    model:\n      - text: \"Hi\"\n    expect:\n      answer: {{ equals: \"Hello\" }}\n"
        ),
    );
    let out = test(&env, &["--json", "proj"]);
    assert_exit(&out, 1);
    let events = events(&out);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "testStarted",
            "testFinished",
            "testStarted",
            "testFinished",
            "testsEnded"
        ]
    );
    let schema: Value =
        serde_json::from_str(&golem_protocol::schema::protocol_schema_json()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for event in &events {
        assert!(validator.is_valid(event), "not of the schema: {event}");
    }
    assert_eq!(events[0]["case"], "greets and keeps a note");
    assert_eq!(events[0]["run"], 1);
    assert_eq!(events[1]["passed"], true);
    assert!(events[1]["usage"]["inputTokens"].as_u64().unwrap() > 0);
    assert_eq!(events[3]["passed"], false);
    assert_eq!(
        events[3]["failures"][0],
        "expect.answer: expected an answer that equals \"Hello\", the answer was \"Hi\""
    );
    assert_eq!(events[4]["passed"], 1);
    assert_eq!(events[4]["failed"], 1);
}

#[test]
fn junit_writes_well_formed_xml_with_the_counts() {
    let env = TestEnv::new();
    project(
        &env,
        &format!(
            "{PASSING}  - name: \"<misses> & 'quotes'\"\n    model:\n      - text: \"Hi\"\n    expect:\n      answer: {{ contains: \"]]> <b>\" }}\n"
        ),
    );
    // A report that cannot be written is bad input, and leaves nothing behind.
    let out = test(&env, &["proj", "--junit", "out/report.xml"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("cannot write out/report.xml"),
        "{}",
        stderr(&out)
    );
    assert!(!env.path().join("out").exists());
    env.mkdir("out");
    let out = test(&env, &["proj", "--junit", "out/report.xml"]);
    assert_exit(&out, 1);
    let xml = env.read("out/report.xml").unwrap();
    let left: Vec<_> = std::fs::read_dir(env.path().join("out")).unwrap().collect();
    assert_eq!(left.len(), 1, "a temp file was left beside the report");
    // Read to the end: a malformed document (an unescaped `<`, a tag left open) is an error.
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut suites, mut cases, mut failures) = (Vec::new(), 0, 0);
    loop {
        let tag = match reader.read_event().unwrap() {
            quick_xml::events::Event::Start(tag) | quick_xml::events::Event::Empty(tag) => tag,
            quick_xml::events::Event::Eof => break,
            _ => continue,
        };
        let name = tag.name().as_ref().to_owned();
        let attr = |key: &str| {
            let value = tag.try_get_attribute(key).unwrap().unwrap().value;
            value.into_owned()
        };
        match name.as_str() {
            "testcase" => cases += 1,
            "failure" => failures += 1,
            "testsuites" => suites.push((attr("tests"), attr("failures"))),
            _ => {}
        }
    }
    assert_eq!(suites, [("2".to_owned(), "1".to_owned())]);
    assert_eq!(cases, 2);
    assert_eq!(failures, 1, "{xml}");
    assert!(
        xml.contains("name=\"&lt;misses&gt; &amp; &apos;quotes&apos;\""),
        "{xml}"
    );
    assert!(xml.contains("]]&gt; &lt;b&gt;"), "{xml}");
}

#[test]
fn schema_test_prints_the_committed_test_file_schema() {
    let env = TestEnv::new();
    let out = test_schema(&env);
    assert_exit(&out, 0);
    let committed = std::fs::read_to_string(
        golem_testkit::cli::repo_root().join("docs/schema/worker-test.schema.json"),
    )
    .unwrap();
    assert_eq!(stdout(&out), committed);
    let schema: Value = serde_json::from_str(&committed).unwrap();
    assert_eq!(schema["title"], "Golem Forge worker test file");
}

fn test_schema(env: &TestEnv) -> Output {
    env.command().args(["schema", "test"]).output().unwrap()
}

#[test]
fn a_worker_that_wants_more_replies_than_scripted_fails_and_says_so() {
    let env = TestEnv::new();
    project(
        &env,
        "cases:\n  - name: runs out\n    model:\n      - tool_calls: [{ name: list_files, args: { path: /notes } }]\n",
    );
    let out = test(&env, &["proj"]);
    assert_exit(&out, 1);
    let text = stdout(&out);
    assert!(
        text.contains(
            "expect.status: expected completed, the turn ended failed (the worker asked the model \
             for reply 2 but the case scripts only 1"
        ),
        "{text}"
    );
}

/// Evals (`--model`, `--runs`, `--min-pass`, `--budget-cost`, `--update`) against the mock
/// OpenAI server: every reply uses 10 input and 5 output tokens.
mod evals {
    use golem_testkit::Wire;
    use golem_testkit::cli::{TestEnv, assert_exit, model_for, provider_env, stderr, stdout};
    use golem_testkit::mock::MockServer;
    use serde_json::json;
    use std::process::Output;

    const WIRE: Wire = Wire::OpenAi;

    /// A case with no scripted replies: it runs only against a model.
    const GREETS: &str = "cases:\n  - name: greets Ada\n    input: \"hello, I am Ada\"\n    expect:\n      answer: { contains: Ada }\n";

    /// The keeper project, its config pricing the mock model at $0.02 a reply.
    fn project(env: &TestEnv, tests: &str) {
        super::project(env, tests);
        env.write(
            "proj/golem-forge.config.yaml",
            "prices:\n  \"openai:gpt-mock\": {input: 1000, output: 2000}\n",
        );
    }

    fn eval(env: &TestEnv, server: &MockServer, args: &[&str]) -> Output {
        env.command()
            .arg("test")
            .args(["--model", model_for(WIRE)])
            .args(args)
            .envs(provider_env(WIRE, server))
            .output()
            .unwrap()
    }

    #[test]
    fn model_replies_come_from_the_model_and_a_case_without_replies_needs_one() {
        let env = TestEnv::new();
        project(&env, GREETS);
        let server = MockServer::start_blocking(vec![WIRE.text("Hello Ada!")]);
        let out = eval(&env, &server, &["proj"]);
        assert_exit(&out, 0);
        let text = stdout(&out);
        assert!(text.contains("✓ keeper · greets Ada ("), "{text}");
        assert!(text.contains("1/1"), "{text}");
        assert!(text.contains("$0.0200"), "{text}");
        assert_eq!(server.requests().len(), 1);
        let server = MockServer::start_blocking(vec![WIRE.text("Hello Bob!")]);
        let out = eval(&env, &server, &["proj"]);
        assert_exit(&out, 1);
        let text = stdout(&out);
        assert!(
            text.contains("expect.answer: expected an answer that contains \"Ada\", the answer was \"Hello Bob!\""),
            "{text}"
        );
        assert!(text.contains("0/1"), "{text}");
        // Offline, the case cannot run: a load error naming the file and the case.
        let out = super::test(&env, &["proj"]);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "test file {}: case `greets Ada` has no `model:` replies, so it cannot run offline",
                env.path().join("proj/keeper.test.yaml").display()
            )),
            "{err}"
        );
    }

    #[test]
    fn runs_give_a_pass_rate_that_min_pass_judges() {
        let env = TestEnv::new();
        project(&env, GREETS);
        let (ada, bob) = (WIRE.text("Hi Ada"), WIRE.text("Hi Bob"));
        let server = MockServer::start_blocking(vec![
            ada.clone(),
            bob.clone(),
            ada.clone(),
            ada,
            bob,
            WIRE.text("Hi Ada"),
        ]);
        let out = eval(
            &env,
            &server,
            &[
                "proj",
                "--runs",
                "3",
                "--min-pass",
                "0.6",
                "--junit",
                "report.xml",
            ],
        );
        assert_exit(&out, 0);
        let text = stdout(&out);
        assert!(text.contains("2/3"), "{text}");
        assert!(text.contains("67%"), "{text}");
        assert!(text.contains("$0.0600"), "{text}");
        assert!(
            text.contains("2 of 3 runs passed; 1 passed, 0 failed"),
            "{text}"
        );
        let xml = env.read("report.xml").unwrap();
        assert_eq!(xml.matches("<testcase ").count(), 3, "{xml}");
        for run in 1..=3 {
            assert!(xml.contains(&format!("greets Ada (run {run})")), "{xml}");
        }
        let out = eval(
            &env,
            &server,
            &["proj", "--runs", "3", "--min-pass", "0.9", "--json"],
        );
        assert_exit(&out, 1);
        let events = super::events(&out);
        let mut runs: Vec<u64> = events
            .iter()
            .filter(|e| e["type"] == "testFinished")
            .map(|e| e["run"].as_u64().unwrap())
            .collect();
        runs.sort_unstable();
        assert_eq!(runs, [1, 2, 3]);
        let passed = events
            .iter()
            .filter(|e| e["type"] == "testFinished" && e["passed"] == true)
            .count();
        assert_eq!(passed, 2);
        assert_eq!(server.requests().len(), 6);
    }

    #[test]
    fn a_spent_cost_budget_starts_no_new_run_and_exits_3() {
        let env = TestEnv::new();
        project(&env, GREETS);
        let server = MockServer::start_blocking(Vec::new());
        server.set_fallback(WIRE.text("Hello Ada!"));
        let out = eval(
            &env,
            &server,
            &["proj", "--runs", "6", "--budget-cost", "0.01"],
        );
        assert_exit(&out, 3);
        let text = stdout(&out);
        assert!(
            text.contains(
                "the cost budget of $0.0100 is spent ($0.0800 so far): 2 of 6 runs did not start"
            ),
            "{text}"
        );
        // Four ran at once, and nothing after them.
        assert_eq!(server.requests().len(), 4);
    }

    /// A test file with comments, odd spacing and flow mappings, whose first case has no
    /// replies and whose second has old ones.
    const HAND_WRITTEN: &str = "# Cases of the keeper, kept by hand.\ncases:\n    # the first: written by the model\n  -   name:   greets Ada     # odd spacing\n      input: 'hello, I am Ada'\n      approve: {write_file: yes}\n      expect:\n          answer: { contains: Ada }   # keep me\n          files: { /notes/greeted.md: { equals: \"Ada\\n\" } }\n\n  # between the cases\n  - name: says bye\n    model:    # will be replaced\n      - text: \"old\"    # gone\n    expect: { answer: { contains: \"Bye\" } }\n# the end\n";

    #[test]
    fn update_writes_the_replies_that_then_pass_offline_and_keeps_the_rest() {
        let env = TestEnv::new();
        project(&env, HAND_WRITTEN);
        let server = MockServer::start_blocking(vec![
            WIRE.tool_calls(&[(
                "call_1",
                "write_file",
                json!({"path": "/notes/greeted.md", "content": "Ada\n"}),
            )]),
            WIRE.text("Hello \"Ada\": #1!"),
            WIRE.text("Bye\nfor now"),
        ]);
        let file = env.path().join("proj/keeper.test.yaml");
        let out = eval(&env, &server, &["proj", "--update", "-k", "greets Ada"]);
        assert_exit(&out, 0);
        let once = std::fs::read_to_string(&file).unwrap();
        // Inserted after the case's last line; every other byte as it was.
        let at = HAND_WRITTEN.find("\n\n  # between").unwrap();
        assert!(once.starts_with(&HAND_WRITTEN[..at]), "{once}");
        assert!(once.ends_with(&HAND_WRITTEN[at..]), "{once}");
        let inserted = &once[at..once.len() - (HAND_WRITTEN.len() - at)];
        assert!(
            inserted.starts_with("\n      model:\n        - tool_calls:\n"),
            "{inserted}"
        );
        let out = eval(&env, &server, &["proj", "--update", "-k", "says bye"]);
        // The mock's "Bye\nfor now" passes `contains: Bye`.
        assert_exit(&out, 0);
        let twice = std::fs::read_to_string(&file).unwrap();
        let from = once.find("model:    # will be replaced").unwrap();
        let to = once
            .find("\n    expect: { answer: { contains: \"Bye\" } }")
            .unwrap();
        assert!(twice.starts_with(&once[..from]), "{twice}");
        assert!(twice.ends_with(&once[to..]), "{twice}");
        assert_eq!(
            &twice[from..twice.len() - (once.len() - to)],
            "model:\n      - text: \"Bye\\nfor now\""
        );
        // Offline, the written replies pass.
        let out = super::test(&env, &["proj"]);
        assert_exit(&out, 0);
        assert!(
            stdout(&out).ends_with("2 passed, 0 failed\n"),
            "{}",
            stdout(&out)
        );
        assert_eq!(server.requests().len(), 3);
        let left: Vec<_> = std::fs::read_dir(env.path().join("proj"))
            .unwrap()
            .collect();
        assert_eq!(
            left.len(),
            4,
            "a temp file was left beside the test file: {left:?}"
        );
    }

    #[test]
    fn bad_combinations_exit_2_and_say_why() {
        let env = TestEnv::new();
        project(&env, GREETS);
        let out = super::test(&env, &["proj", "--update"]);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("--update needs --model"),
            "{}",
            stderr(&out)
        );
        for rate in ["2", "-0.1", "most"] {
            let out = super::test(&env, &["proj", &format!("--min-pass={rate}")]);
            assert_exit(&out, 2);
            assert!(
                stderr(&out).contains("must be a pass rate between 0 and 1"),
                "{}",
                stderr(&out)
            );
        }
        let server = MockServer::start_blocking(Vec::new());
        let out = eval(&env, &server, &["proj", "--update", "--runs", "2"]);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("--update runs each case once, but --runs is 2"),
            "{}",
            stderr(&out)
        );
        for args in [["--runs", "0"], ["--budget-cost", "0"]] {
            assert_exit(&eval(&env, &server, &["proj", args[0], args[1]]), 2);
        }
        assert!(server.requests().is_empty());
    }
}

#[test]
fn a_sub_worker_with_its_own_model_takes_the_scripted_replies_too() {
    // The helper names a model of its own (a provider with no key here): inside a case it
    // still takes the next scripted reply, so the case stays offline.
    let env = TestEnv::new();
    env.write(
        "proj/golem-forge.config.yaml",
        "delegation:\n  max_depth: 2\n",
    );
    env.write(
        "proj/lead.worker",
        "---\nname: lead\ntoolsets:\n  workers:\n    allowed_workers: [helper]\n---\nDelegate.\n",
    );
    env.write(
        "proj/helper.worker",
        "---\nname: helper\ndescription: helps\nmodel: anthropic:claude-sonnet-4-5\n---\nHelp.\n",
    );
    env.write(
        "proj/lead.test.yaml",
        r#"cases:
  - name: the helper answers from the script
    input: "go"
    model:
      - tool_calls: [{ name: helper, args: { input: "help me" } }]
      - text: "helped offline"
      - text: "The helper said: helped offline"
    approve: { helper: yes }
    expect:
      calls: [{ tool: helper }]
      answer: { equals: "The helper said: helped offline" }
"#,
    );
    let out = env
        .command()
        .arg("test")
        .arg("proj")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_exit(&out, 0);
    assert!(
        stdout(&out).contains("1 passed, 0 failed"),
        "{}",
        stdout(&out)
    );
}
