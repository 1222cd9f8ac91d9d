//! A kernel without user namespaces, made for real: the helper runs inside a user namespace
//! whose `max_user_namespaces` is 0, so its own `unshare` fails. Strict mode refuses with a
//! message naming the layer; best effort runs with Landlock and seccomp on the host's file tree
//! and says what is missing.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use golem_sandbox::jail::{JailMode, JailPolicy};

use super::*;

/// A helper that cannot create user namespaces.
fn crippled_helper(env: &JailEnv) -> PathBuf {
    let script = env.tmp.path().join("no-userns-helper");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec unshare -Ur sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" \"$@\"' '{}' \"$@\"\n",
            helper().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[tokio::test]
async fn strict_mode_refuses_and_names_the_missing_layer() {
    let env = JailEnv::new();
    let jail = Jail::new(
        crippled_helper(&env),
        env.sandbox.clone(),
        JailPolicy::default(),
    );
    let err = jail.preflight().unwrap_err().to_string();
    assert!(
        err.starts_with("the jail cannot be built: user namespaces: creating user, mount, PID and network namespaces failed"),
        "{err}"
    );
}

#[tokio::test]
async fn best_effort_runs_reports_what_is_missing_and_still_confines_files() {
    let env = JailEnv::new();
    let policy = JailPolicy {
        mode: JailMode::BestEffort,
        ..JailPolicy::default()
    };
    let jail = Jail::new(crippled_helper(&env), env.sandbox.clone(), policy);
    jail.preflight().unwrap();
    let output = env.tmp.path().join("work/output");
    let secret = env.outside("secret.txt");
    let script = format!(
        "cd '{out}' && echo ok > made.txt && cat made.txt\n\
         cat '{secret}' 2>/dev/null && echo READ-SECRET\n\
         echo x > '{outside}' 2>/dev/null && echo WROTE-OUTSIDE\n\
         python3 -c \"import socket; socket.socket()\" 2>/dev/null && echo SOCKET\n\
         true",
        out = output.display(),
        secret = secret.display(),
        outside = env.outside("new.txt").display(),
    );
    let command = script_command("bash", "main.sh", &script, Duration::from_secs(30));
    let out = jail.run(&command, &CancellationToken::new()).await.unwrap();
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "ok\n", "stderr: {}", out.stderr.text);
    assert!(
        out.weakened
            .iter()
            .any(|w| w.starts_with("no user, mount, PID or network namespaces")),
        "{:?}",
        out.weakened
    );
    assert!(!env.outside("new.txt").exists());
}
