//! What a jailed program can do: run bash and Python, see the zones at their virtual paths,
//! write where it may, get an exit code, a clean environment, capped output.

use super::*;

#[tokio::test]
async fn bash_runs_in_the_output_zone_and_sees_zones_at_virtual_paths() {
    let env = JailEnv::new();
    let out = env
        .bash("pwd; cat /input/data.txt; echo made > made.txt; ls /; id -u")
        .await;
    assert_exit(&out, 0);
    let lines: Vec<&str> = out.stdout.text.lines().collect();
    assert_eq!(lines[0], "/output");
    assert_eq!(lines[1], "input data");
    assert!(
        lines.contains(&"input") && lines.contains(&"output"),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read_to_string(env.output("made.txt")).unwrap(),
        "made\n"
    );
    // Strict mode: nothing is weakened, but for an ordinary user who may not make cgroups,
    // the run-wide memory limit, which the result says is missing.
    let allowed = |note: &String| {
        !rustix::process::getuid().is_root()
            && note.starts_with("no memory limit for the run as a whole")
    };
    assert!(out.weakened.iter().all(allowed), "{:?}", out.weakened);
}

#[tokio::test]
async fn python_runs_with_arguments_and_the_exit_code_comes_back() {
    let env = JailEnv::new();
    let mut command = script_command(
        "python3",
        "main.py",
        "import sys\nprint(sys.argv[1:])\nsys.exit(3)\n",
        Duration::from_secs(30),
    );
    command.args = vec!["a b".into(), "--flag".into()];
    let out = env
        .jail(JailPolicy::default())
        .run(&command, &CancellationToken::new())
        .await
        .unwrap();
    assert_exit(&out, 3);
    assert_eq!(out.stdout.text, "['a b', '--flag']\n");
}

#[tokio::test]
async fn a_missing_program_exits_127_and_a_non_executable_one_126() {
    let env = JailEnv::new();
    std::fs::write(env.output("plain.txt"), "not a program").unwrap();
    for (program, code, message) in [
        (
            "no-such-program-xyz",
            127,
            "no-such-program-xyz: command not found",
        ),
        ("/output/plain.txt", 126, "/output/plain.txt: cannot run"),
    ] {
        let command = JailCommand {
            program: program.into(),
            script: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd_zone: None,
            timeout: Duration::from_secs(30),
        };
        let out = env
            .jail(JailPolicy::default())
            .run(&command, &CancellationToken::new())
            .await
            .unwrap();
        assert_exit(&out, code);
        assert!(out.stderr.text.starts_with(message), "{}", out.stderr.text);
    }
}

#[tokio::test]
async fn without_a_zone_the_working_directory_is_the_private_tmp() {
    let env = JailEnv::new();
    let mut command = script_command("bash", "main.sh", "pwd; ls", Duration::from_secs(30));
    command.cwd_zone = None;
    let out = env
        .jail(JailPolicy::default())
        .run(&command, &CancellationToken::new())
        .await
        .unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "/tmp\nmain.sh\n");
}

#[tokio::test]
async fn a_large_script_runs_without_hitting_the_argument_limit() {
    let env = JailEnv::new();
    let mut code = String::from("total = 0\n");
    while code.len() < 300_000 {
        code.push_str("total += 1\n");
    }
    code.push_str("print(total)\n");
    let out = env.python(&code).await;
    assert_exit(&out, 0);
    assert_eq!(
        out.stdout.text.trim(),
        (code.lines().count() - 2).to_string()
    );
}

#[tokio::test]
async fn a_signal_death_is_reported_as_the_signal() {
    let env = JailEnv::new();
    let out = env.bash("echo before; kill -SEGV $$").await;
    assert_eq!(out.exit, JailExit::Signal(11), "{:?}", out);
    assert_eq!(out.stdout.text, "before\n");
}

#[tokio::test]
async fn the_cpu_limit_stops_a_busy_loop() {
    let env = JailEnv::new();
    let policy = JailPolicy {
        limits: golem_sandbox::jail::JailLimits {
            cpu_secs: 1,
            ..Default::default()
        },
        ..JailPolicy::default()
    };
    let out = env
        .bash_with(policy, "while :; do :; done", Duration::from_secs(30))
        .await;
    assert_eq!(out.exit, JailExit::Signal(24), "SIGXCPU: {out:?}");
}

#[tokio::test]
async fn an_interrupt_kills_the_run_and_keeps_its_output() {
    let env = JailEnv::new();
    let command = script_command(
        "bash",
        "main.sh",
        "echo working; sleep 30",
        Duration::from_secs(60),
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let out = env
        .jail(JailPolicy::default())
        .run(&command, &cancel)
        .await
        .unwrap();
    assert_eq!(out.exit, JailExit::Interrupted);
    assert_eq!(out.stdout.text, "working\n");
    assert!(out.duration < Duration::from_secs(10));
}

#[tokio::test]
async fn a_zone_named_like_a_system_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(tmp.path(), &[ZoneConfig::new("etc", ZoneMode::Rw)]).unwrap();
    let jail = Jail::new(helper(), sandbox, JailPolicy::default());
    let command = script_command("bash", "main.sh", "true", Duration::from_secs(5));
    let mut command = command;
    command.cwd_zone = None;
    let err = jail
        .run(&command, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("zone `etc` cannot be shown to programs at /etc"),
        "{err}"
    );
}

#[tokio::test]
async fn a_helper_that_cannot_run_is_a_clear_error_in_strict_mode() {
    let env = JailEnv::new();
    let jail = Jail::new(
        PathBuf::from("/nonexistent/golem-jail"),
        env.sandbox.clone(),
        JailPolicy::default(),
    );
    let err = jail.preflight().unwrap_err().to_string();
    assert!(err.starts_with("the jail cannot be built: user namespaces: the jail helper /nonexistent/golem-jail could not run"), "{err}");
}

#[tokio::test]
async fn this_kernel_supports_every_layer() {
    // The CI machine must run the strict jail; if this fails, the escape suite above proved
    // nothing about the missing layer.
    let support = golem_sandbox::jail::KernelSupport::detect(&helper());
    for (name, layer) in support.layers() {
        assert!(layer.is_available(), "{name}: {layer:?}");
    }
}
