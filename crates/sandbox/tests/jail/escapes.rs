//! The escape suite: each case tries to get out of the jail and asserts that it held. No case
//! ever sends a packet off this machine: where the jail must refuse a socket, the program stops
//! as soon as the socket exists instead of connecting.

mod limits;
mod metadata;
mod setid;
mod sockets;

use std::time::{Duration, Instant};

use golem_sandbox::jail::{JailLimits, JailPolicy};

use super::*;

#[tokio::test]
async fn no_tcp_connection_to_loopback_with_the_network_off() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let out = env_python(&format!(
        "import socket\n\
         try:\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    print('CONNECTED')\n\
         except OSError as e:\n    print('refused', e.errno)\n"
    ))
    .await;
    assert_exit(&out, 0);
    assert!(
        out.stdout.text.starts_with("refused"),
        "{}",
        out.stdout.text
    );
    assert!(listener.accept().is_err(), "the listener saw a connection");
}

#[tokio::test]
async fn no_internet_socket_at_all_with_the_network_off() {
    // Creating the socket must fail; if it ever succeeds the program stops there, so a broken
    // jail still sends nothing anywhere.
    let out = env_python(
        "import socket\n\
         for family in (socket.AF_INET, socket.AF_INET6):\n\
         \x20   try:\n        socket.socket(family, socket.SOCK_STREAM)\n        print('SOCKET-CREATED')\n\
         \x20   except OSError as e:\n        print('refused', e.errno)\n",
    )
    .await;
    assert_exit(&out, 0);
    assert_eq!(
        out.stdout.text, "refused 1\nrefused 1\n",
        "EPERM from seccomp"
    );
}

#[tokio::test]
async fn unix_sockets_still_work_with_the_network_off() {
    let out = env_python(
        "import socket\na, b = socket.socketpair()\na.send(b'ok')\nprint(b.recv(2).decode())\n",
    )
    .await;
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "ok\n");
}

/// Listeners on the host's loopback and on every address; what a jailed program with the
/// network on (and `allow_private`) reaches of them, one line per target.
async fn reach(allow_private: &[&str], targets: &[(String, u16)]) -> (String, usize) {
    let env = JailEnv::new();
    let policy = JailPolicy {
        network: true,
        allow_private: allow_private
            .iter()
            .map(|n| golem_sandbox::jail::Ipv4Network::parse(n).unwrap())
            .collect(),
        ..JailPolicy::default()
    };
    let code = format!(
        "import socket\n\
         for host, port in {targets:?}:\n\
         \x20   try:\n\
         \x20       socket.create_connection((host, port), timeout=3).close()\n\
         \x20       print(host, 'reached')\n\
         \x20   except OSError as err:\n\
         \x20       print(host, 'refused', type(err).__name__)\n"
    );
    let command = script_command("python3", "main.py", &code, Duration::from_secs(60));
    let out = env
        .jail(policy)
        .run(&command, &CancellationToken::new())
        .await
        .unwrap();
    assert_exit(&out, 0);
    let reached = out.stdout.text.matches(" reached").count();
    (out.stdout.text, reached)
}

/// Connections that arrived at `listener` (non-blocking).
fn arrived(listener: &std::net::TcpListener) -> usize {
    listener.set_nonblocking(true).unwrap();
    std::iter::from_fn(|| listener.accept().ok()).count()
}

#[tokio::test]
async fn with_the_network_on_the_hosts_own_services_are_out_of_reach() {
    let loopback = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let everywhere = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let (lo, all) = (
        loopback.local_addr().unwrap().port(),
        everywhere.local_addr().unwrap().port(),
    );
    let mut targets = vec![
        ("127.0.0.1".to_owned(), lo),
        ("127.0.0.1".to_owned(), all),
        // The user-mode stack's gateway, which could stand for the host's loopback.
        ("10.0.2.2".to_owned(), lo),
        ("10.0.2.2".to_owned(), all),
        // Cloud metadata services live here.
        ("169.254.169.254".to_owned(), 80),
    ];
    let own = golem_sandbox::jail::host_addresses();
    assert!(
        own.len() >= 2,
        "the host has a loopback and another address: {own:?}"
    );
    targets.extend(own.iter().map(|addr| (addr.to_string(), all)));
    let (said, reached) = reach(&[], &targets).await;
    assert_eq!(reached, 0, "the jail reached the host:\n{said}");
    assert_eq!(said.lines().count(), targets.len(), "{said}");
    assert_eq!(arrived(&loopback) + arrived(&everywhere), 0, "{said}");
}

#[tokio::test]
async fn with_the_network_on_a_listed_private_network_is_reachable() {
    let everywhere = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = everywhere.local_addr().unwrap().port();
    let host = golem_sandbox::jail::host_addresses()
        .into_iter()
        .find(|addr| !addr.is_loopback())
        .expect("an address besides the loopback");
    let listed = host.to_string();
    let (said, reached) = reach(&[&listed], &[(listed.clone(), port)]).await;
    assert_eq!(reached, 1, "{said}");
    assert_eq!(arrived(&everywhere), 1, "{said}");
}

#[tokio::test]
async fn writes_outside_the_rw_zones_fail() {
    let env = JailEnv::new();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let repo = env!("CARGO_MANIFEST_DIR");
    let host_tmp_marker = format!("/tmp/golem-jail-escape-{}", std::process::id());
    let outside = env.outside("written.txt");
    let targets = [
        format!("{home}/golem-escape.txt"),
        format!("{repo}/golem-escape.txt"),
        "/etc/golem-escape.txt".to_owned(),
        "/usr/golem-escape.txt".to_owned(),
        "/golem-escape.txt".to_owned(),
        "/input/golem-escape.txt".to_owned(),
        "/input/data.txt".to_owned(),
        outside.display().to_string(),
    ];
    let mut script = String::new();
    for target in &targets {
        script.push_str(&format!(
            "if echo x > '{target}' 2>/dev/null; then echo 'WROTE {target}'; else echo refused; fi\n"
        ));
    }
    script.push_str(&format!(
        "echo x > '{host_tmp_marker}' && echo private-tmp-ok\n"
    ));
    let out = env.bash(&script).await;
    assert_exit(&out, 0);
    assert!(!out.stdout.text.contains("WROTE"), "{}", out.stdout.text);
    assert_eq!(out.stdout.text.matches("refused").count(), targets.len());
    // /tmp inside is private: the write worked there and nothing appeared on the host.
    assert!(out.stdout.text.contains("private-tmp-ok"));
    assert!(!std::path::Path::new(&host_tmp_marker).exists());
    assert!(!outside.exists());
    assert!(!std::path::Path::new(&format!("{repo}/golem-escape.txt")).exists());
    assert_eq!(
        std::fs::read_to_string(env.tmp.path().join("work/input/data.txt")).unwrap(),
        "input data\n"
    );
}

#[tokio::test]
async fn files_outside_the_zones_cannot_be_read() {
    let env = JailEnv::new();
    let secret = env.outside("secret.txt");
    // A link planted in a zone that points outside resolves inside the jail's own tree.
    std::os::unix::fs::symlink(&secret, env.output("link")).unwrap();
    let repo_file = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let script = format!(
        "for f in '{}' /output/link '{repo_file}' /etc/shadow /root/.bashrc /proc/1/root/etc/hostname; do\n\
         \x20 if cat \"$f\" 2>/dev/null; then echo \" READ $f\"; else echo refused; fi\n\
         done\n",
        secret.display()
    );
    let out = env.bash(&script).await;
    assert_exit(&out, 0);
    assert!(!out.stdout.text.contains(SECRET), "{}", out.stdout.text);
    assert!(!out.stdout.text.contains("READ"), "{}", out.stdout.text);
}

#[tokio::test]
async fn no_hard_link_to_a_file_outside_the_rw_zones_can_be_made_in_one() {
    // A hard link in /output to a read-only or system file would let a later write through
    // /output change that file (Landlock checks the path used, and the zone layer cannot tell
    // such a link from a real file). Every visible tree is a mount of its own, so the kernel
    // refuses links across them (EXDEV).
    let env = JailEnv::new();
    let sources = [
        "/input/data.txt",
        "/etc/passwd",
        "/usr/bin/bash",
        "/tmp/mine",
    ];
    let mut script = String::from("echo mine > /tmp/mine\n");
    for (i, source) in sources.iter().enumerate() {
        script.push_str(&format!(
            "if ln '{source}' /output/link{i} 2>/dev/null; then echo 'LINKED {source}'; else echo refused; fi\n"
        ));
    }
    script.push_str(
        "echo in-zone > /output/own && ln /output/own /output/own2 && echo same-zone-ok\n",
    );
    let out = env.bash(&script).await;
    assert_exit(&out, 0);
    assert!(!out.stdout.text.contains("LINKED"), "{}", out.stdout.text);
    assert_eq!(
        out.stdout.text.matches("refused").count(),
        sources.len(),
        "{}",
        out.stdout.text
    );
    // Links within one rw zone are ordinary files of that zone, and still work.
    assert!(
        out.stdout.text.contains("same-zone-ok"),
        "{}",
        out.stdout.text
    );
    for i in 0..sources.len() {
        assert!(!env.output(&format!("link{i}")).exists());
    }
    assert_eq!(
        std::fs::read_to_string(env.tmp.path().join("work/input/data.txt")).unwrap(),
        "input data\n"
    );
}

#[tokio::test]
async fn only_the_jails_own_processes_are_visible() {
    let env = JailEnv::new();
    let out = env
        .bash("ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/1/cmdline | tr '\\0' ' '")
        .await;
    assert_exit(&out, 0);
    let count: u32 = out
        .stdout
        .text
        .lines()
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(count <= 5, "saw {count} processes: {}", out.stdout.text);
    assert!(
        out.stdout.text.contains("--stage2"),
        "PID 1 is the jail's init: {}",
        out.stdout.text
    );
}

#[tokio::test]
async fn a_fork_bomb_is_contained_by_the_process_limit() {
    let env = JailEnv::new();
    let policy = JailPolicy {
        limits: JailLimits {
            processes: 32,
            ..JailLimits::default()
        },
        ..JailPolicy::default()
    };
    let code = "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('stopped', n, e.errno)\n";
    let command = script_command("python3", "main.py", code, Duration::from_secs(30));
    let out = env
        .jail(policy.clone())
        .run(&command, &CancellationToken::new())
        .await
        .unwrap();
    assert_exit(&out, 0);
    let words: Vec<&str> = out.stdout.text.split_whitespace().collect();
    assert_eq!(words[0], "stopped", "{}", out.stdout.text);
    let forked: u32 = words[1].parse().unwrap();
    assert!(forked < 32, "forked {forked}");
    assert_eq!(words[2], "11", "EAGAIN");
    // The classic bash bomb ends at the timeout, and the call returns.
    let started = Instant::now();
    let out = env
        .bash_with(policy, ":(){ :|:& };:", Duration::from_secs(3))
        .await;
    assert!(
        matches!(out.exit, JailExit::TimedOut | JailExit::Code(_)),
        "{:?}",
        out.exit
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test]
async fn allocating_4_gb_fails_under_the_memory_limit() {
    let out = env_python(
        "try:\n    b = bytearray(4 << 30)\n    print('ALLOCATED', len(b))\nexcept MemoryError:\n    print('MemoryError')\n",
    )
    .await;
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "MemoryError\n");
}

#[tokio::test]
async fn an_infinite_loop_and_its_background_child_die_at_the_timeout() {
    let env = JailEnv::new();
    // The child even leaves the process group (setsid); the PID namespace still ends it.
    let script = "setsid bash -c 'while :; do date +%s%N > /output/beat; sleep 0.05; done' &\n\
                  echo started\nwhile :; do :; done\n";
    let started = Instant::now();
    let out = env
        .bash_with(JailPolicy::default(), script, Duration::from_secs(2))
        .await;
    assert_eq!(out.exit, JailExit::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.stdout.text, "started\n", "partial output is kept");
    let beat = env.output("beat");
    std::thread::sleep(Duration::from_millis(300));
    let before = std::fs::read_to_string(&beat).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        std::fs::read_to_string(&beat).unwrap(),
        before,
        "the child still runs"
    );
}

#[tokio::test]
async fn ptrace_of_another_process_fails() {
    let out = env_python(
        "import ctypes, os, subprocess\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         child = subprocess.Popen(['sleep', '30'])\n\
         r = libc.ptrace(16, child.pid, 0, 0)\n\
         print(r, ctypes.get_errno())\n\
         child.kill()\n",
    )
    .await;
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "-1 1\n", "PTRACE_ATTACH gets EPERM");
}

#[tokio::test]
async fn descriptors_of_other_processes_cannot_be_copied_or_opened() {
    // `pidfd_getfd` (438) copies a descriptor out of a process as `ptrace` would read it; the
    // jail's PID 1 holds the parent's pipes, and nothing in the jail may open them.
    let out = env_python(
        "import ctypes, os, subprocess\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         child = subprocess.Popen(['sleep', '30'])\n\
         pidfd = os.pidfd_open(child.pid)\n\
         print(libc.syscall(438, pidfd, 0, 0), ctypes.get_errno())\n\
         child.kill()\n\
         opened = []\n\
         for n in range(64):\n\
         \x20   try:\n\
         \x20       os.close(os.open('/proc/1/fd/%d' % n, os.O_WRONLY | os.O_NONBLOCK))\n\
         \x20       opened.append(n)\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         print(opened)\n",
    )
    .await;
    assert_exit(&out, 0);
    assert_eq!(
        out.stdout.text, "-1 1\n[]\n",
        "pidfd_getfd gets EPERM; none of PID 1's descriptors opens"
    );
}

#[tokio::test]
async fn namespaces_mounts_and_io_uring_are_refused() {
    let env = JailEnv::new();
    let out = env
        .bash(
            "unshare -U true 2>/dev/null && echo UNSHARED || echo refused\n\
             unshare -r true 2>/dev/null && echo UNSHARED || echo refused\n\
             mount -t tmpfs none /output 2>/dev/null && echo MOUNTED || echo refused\n",
        )
        .await;
    assert_exit(&out, 0);
    assert_eq!(out.stdout.text, "refused\nrefused\nrefused\n");
    let out = env_python(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n\
         params = ctypes.create_string_buffer(120)\n\
         print(libc.syscall(425, 8, params), ctypes.get_errno())\n",
    )
    .await;
    assert_eq!(out.stdout.text, "-1 1\n", "io_uring_setup gets EPERM");
}

#[tokio::test]
async fn output_of_100_mb_is_capped() {
    let env = JailEnv::new();
    let out = env
        .bash("head -c 100000000 /dev/zero | tr '\\0' x; echo done >&2")
        .await;
    assert_exit(&out, 0);
    assert_eq!(out.stdout.total_bytes, 100_000_000);
    assert!(out.stdout.truncated);
    let cap = JailLimits::default().output_bytes;
    assert!(
        out.stdout.text.len() < cap + 200,
        "kept {}",
        out.stdout.text.len()
    );
    assert!(
        out.stdout
            .text
            .ends_with("[… output truncated: 99.0 MB more not shown, 100.0 MB in all]")
    );
    assert_eq!(out.stderr.text, "done\n");
}

#[tokio::test]
async fn the_environment_holds_only_the_allow_list_and_the_calls_own_variables() {
    assert!(
        std::env::var("CARGO_MANIFEST_DIR").is_ok(),
        "the test process has variables"
    );
    let env = JailEnv::new();
    let mut command = script_command(
        "bash",
        "main.sh",
        "env | cut -d= -f1 | sort",
        Duration::from_secs(30),
    );
    command.env.insert("GREETING".into(), "hi".into());
    let out = env
        .jail(JailPolicy::default())
        .run(&command, &CancellationToken::new())
        .await
        .unwrap();
    assert_exit(&out, 0);
    let allowed = [
        "GREETING",
        "HOME",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "OLDPWD",
        "PATH",
        "PWD",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "SHLVL",
        "TERM",
        "TMPDIR",
        "TZ",
        "_",
    ];
    for name in out.stdout.text.lines() {
        assert!(allowed.contains(&name), "unexpected variable {name}");
    }
    assert!(out.stdout.text.contains("GREETING"));
}

async fn env_python(code: &str) -> JailOutput {
    JailEnv::new().python(code).await
}
