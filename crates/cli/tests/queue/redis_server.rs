//! A real Redis server for one test: Debian's `redis-server` on a free port of 127.0.0.1, its
//! data in a temporary directory, stopped when dropped. It can be stopped and started again on
//! the same port with its data (the append-only file, when on). A machine without the server
//! fails the test with the command that installs it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use golem_testkit::parts::{REDIS_INSTALL, missing};

/// A running (or stopped) Redis server.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    password: Option<String>,
    append_only: bool,
    /// TLS only: the server's certificate and key files.
    tls: Option<(PathBuf, PathBuf)>,
}

fn binary() -> PathBuf {
    for candidate in ["/usr/bin/redis-server", "/usr/local/bin/redis-server"] {
        if Path::new(candidate).is_file() {
            return PathBuf::from(candidate);
        }
    }
    panic!(
        "{}",
        missing("redis-server (Debian's Redis server)", REDIS_INSTALL)
    );
}

fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("redis-server did not listen on port {port}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl RedisServer {
    /// A server without a password or persistence.
    pub fn start() -> RedisServer {
        RedisServer::start_with(None, false)
    }

    /// A server requiring `password`, and keeping an append-only file when `append_only`.
    pub fn start_with(password: Option<&str>, append_only: bool) -> RedisServer {
        let mut server = RedisServer {
            child: None,
            port: free_port(),
            dir: tempfile::tempdir().unwrap(),
            password: password.map(str::to_owned),
            append_only,
            tls: None,
        };
        server.run();
        server
    }

    /// A server speaking only TLS, with the certificate `cert` and its key `key`.
    pub fn start_tls(cert: &Path, key: &Path) -> RedisServer {
        let mut server = RedisServer {
            child: None,
            port: free_port(),
            dir: tempfile::tempdir().unwrap(),
            password: None,
            append_only: false,
            tls: Some((cert.to_owned(), key.to_owned())),
        };
        server.run();
        server
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    fn run(&mut self) {
        let mut command = Command::new(binary());
        command
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--bind")
            .arg("127.0.0.1")
            .arg("--dir")
            .arg(self.dir.path())
            .args(["--save", "", "--daemonize", "no", "--loglevel", "warning"])
            .args(["--appendonly", if self.append_only { "yes" } else { "no" }])
            .args(["--appendfsync", "always"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(password) = &self.password {
            command.arg("--requirepass").arg(password);
        }
        if let Some((cert, key)) = &self.tls {
            command
                .args(["--port", "0", "--tls-port", &self.port.to_string()])
                .arg("--tls-cert-file")
                .arg(cert)
                .arg("--tls-key-file")
                .arg(key)
                .args(["--tls-auth-clients", "no"]);
        }
        self.child = Some(command.spawn().unwrap());
        if self.tls.is_some() {
            // Its certificate is not one this process trusts: a listening port will do.
            wait_for_port(self.port);
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(mut connection) = self.client().get_connection()
                && redis::cmd("PING").query::<String>(&mut connection).is_ok()
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not start on port {}", self.port);
    }

    /// The URL consumers are given (with the password, when there is one).
    pub fn url(&self) -> String {
        match &self.password {
            Some(password) => format!("redis://:{password}@127.0.0.1:{}/0", self.port),
            None => self.url_without_password(),
        }
    }

    /// The URL without credentials.
    pub fn url_without_password(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    fn client(&self) -> redis::Client {
        redis::Client::open(self.url()).unwrap()
    }

    /// A connection for looking into the queue.
    pub fn connection(&self) -> redis::Connection {
        self.client().get_connection().unwrap()
    }

    /// Stops the server the way an operator would (SIGTERM: it writes what it holds).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port with the same data.
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
