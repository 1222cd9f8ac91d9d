//! The processes a browser test starts: `golem-forge serve` against the mock model, and a
//! local chromedriver (a free port, its own process group, with the browsers it starts). Each
//! is killed, with its process group, when its guard drops, also when a test panics.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use golem_testkit::mock::MockServer;

use super::{LIMIT, WIRE};
use golem_testkit::cli::{TestEnv, model_for, provider_env};

/// Where Debian's packages put the browser and its WebDriver.
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
use golem_testkit::parts::{CHROMIUM_INSTALL as INSTALL, missing};

/// Kills the process group `pgid` (a child started with `process_group(0)`, and whatever it
/// started); an error (already gone) is ignored.
fn kill_group(pgid: u32) {
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// A free TCP port on 127.0.0.1 (free when asked; the caller binds it right away).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The last `limit` bytes of the file at `path` (lossy), for failure messages.
pub fn tail(path: &Path, limit: usize) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let from = bytes.len().saturating_sub(limit);
    String::from_utf8_lossy(&bytes[from..]).into_owned()
}

/// `golem-forge serve` running in the background; killed (with its process group) on drop.
#[allow(missing_docs)] // fields are named for what they hold
pub struct Serve {
    child: Child,
    /// The first line it printed: `http://HOST:PORT/?token=TOKEN`.
    pub url: String,
    /// `http://HOST:PORT` (no trailing slash).
    pub origin: String,
    /// `HOST:PORT`, as the `Host` header names it.
    pub authority: String,
    /// The address it listens on.
    pub addr: SocketAddr,
    pub token: String,
    /// Where its stderr goes.
    pub stderr: PathBuf,
}

impl Serve {
    /// `golem-forge serve WORKER --port 0 --model …` plus `extra`, in `env`'s clean
    /// environment with the OpenAI wire pointed at `server`; waits for the URL line.
    pub fn start(env: &TestEnv, server: &MockServer, worker: &str, extra: &[&str]) -> Self {
        let mut args = vec!["serve", worker, "--port", "0", "--model", model_for(WIRE)];
        args.extend_from_slice(extra);
        Self::start_with(env, &provider_env(WIRE, server), &args)
    }

    /// `golem-forge ARGS` with `envs` added to `env`'s clean environment; waits for the URL
    /// line on stdout.
    pub fn start_with(env: &TestEnv, envs: &[(&str, String)], args: &[&str]) -> Self {
        Self::start_in(env, env.path(), envs, args)
    }

    /// [`Serve::start_with`] in the directory `dir` (`serve --inbox` serves the inbox of the
    /// project it runs in).
    pub fn start_in(env: &TestEnv, dir: &Path, envs: &[(&str, String)], args: &[&str]) -> Self {
        let stderr = env.path().join(format!(
            "serve-{}.stderr",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ));
        let stderr_file = std::fs::File::create(&stderr).expect("serve's stderr file");
        let mut child = env
            .std_command()
            .current_dir(dir)
            .args(args)
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr_file)
            .process_group(0)
            .spawn()
            .expect("golem-forge starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(first)) = lines.next() {
                let _ = tx.send(first);
            }
            // The contract: nothing else goes to stdout; drain it anyway.
            for _ in lines {}
        });
        let first = match rx.recv_timeout(LIMIT) {
            Ok(line) => line,
            Err(e) => {
                kill_group(child.id());
                let _ = child.wait();
                panic!(
                    "`golem-forge {}` printed no URL on stdout ({e}); its stderr:\n{}",
                    args.join(" "),
                    tail(&stderr, 4000)
                );
            }
        };
        let (origin, token) = parse_url(&first).unwrap_or_else(|| {
            kill_group(child.id());
            panic!(
                "the first line on stdout is not http://HOST:PORT/?token=TOKEN: {first:?}; stderr:\n{}",
                tail(&stderr, 4000)
            )
        });
        let authority = origin.trim_start_matches("http://").to_owned();
        let addr: SocketAddr = authority
            .parse()
            .unwrap_or_else(|e| panic!("{authority}: not an address ({e})"));
        Self {
            child,
            url: first.clone(),
            origin,
            authority,
            addr,
            token,
            stderr,
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it wrote to stderr so far (the end of it).
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr, 6000)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}

/// `http://HOST:PORT/?token=TOKEN` → (`http://HOST:PORT`, `TOKEN`).
fn parse_url(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("http://")?;
    let (authority, query) = rest.split_once("/?token=")?;
    if authority.is_empty() || query.is_empty() || query.contains(['&', '#', ' ']) {
        return None;
    }
    Some((format!("http://{authority}"), query.to_owned()))
}

/// Fails with how to install them when Chromium or chromedriver is missing.
pub fn require_browser() {
    for (path, what) in [(CHROMIUM, "Chromium"), (CHROMEDRIVER, "chromedriver")] {
        assert!(
            Path::new(path).exists(),
            "{}",
            missing(
                &format!("{what} ({path}), which the browser tests drive,"),
                INSTALL
            )
        );
    }
}

/// chromedriver on a free port, in its own process group (with the browsers it starts); the
/// group is killed on drop.
pub(super) struct Driver {
    child: Child,
    pub(super) url: String,
    pub(super) log: PathBuf,
}

impl Driver {
    /// Starts chromedriver on a free port and waits until its `/status` says it is ready for
    /// sessions. A port taken between choosing and binding it (chromedriver exits) is retried
    /// on another port.
    pub(super) fn start(dir: &Path) -> Self {
        require_browser();
        let log = dir.join("chromedriver.log");
        let deadline = Instant::now() + LIMIT;
        loop {
            match Self::try_start(&log, deadline) {
                Ok(driver) => return driver,
                Err(why) if Instant::now() < deadline => {
                    eprintln!("chromedriver: {why}; trying another port");
                }
                Err(why) => panic!("{why}:\n{}", tail(&log, 4000)),
            }
        }
    }

    fn try_start(log: &Path, deadline: Instant) -> Result<Self, String> {
        let port = free_port();
        let log_file = std::fs::File::create(log).expect("chromedriver log file");
        let mut child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("log file"))
            .stderr(log_file)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{CHROMEDRIVER} does not start ({e}); reinstall with `{INSTALL}`")
            });
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        // A bare TCP connect is not proof: another process may hold the port for a moment, or
        // a connect to a free local port can meet itself. Only chromedriver answers `/status`
        // with `"ready": true`.
        while !driver_ready(addr) {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!(
                    "{CHROMEDRIVER} exited ({status}) before it was ready"
                ));
            }
            if Instant::now() > deadline {
                kill_group(child.id());
                let _ = child.wait();
                return Err(format!(
                    "{CHROMEDRIVER} was not ready on {addr} within {LIMIT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Self {
            child,
            url: format!("http://127.0.0.1:{port}/"),
            log: log.to_path_buf(),
        })
    }
}

/// Whether the WebDriver server at `addr` answers `GET /status` with `"ready": true`.
fn driver_ready(addr: SocketAddr) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    // chromedriver keeps the connection open despite `Connection: close`: read until the body
    // parses (or the read times out).
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
        }
        let text = String::from_utf8_lossy(&answer);
        let Some((_, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(body) {
            return value["value"]["ready"].as_bool().unwrap_or(false);
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.wait();
    }
}
