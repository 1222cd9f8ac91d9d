//! `rediss://`: a queue behind TLS. The server's certificate is made here by `openssl`, signed
//! by a throwaway authority that only the consumers are told to trust (`SSL_CERT_FILE`, read
//! with the system's roots): with it, a batch is queued and run over TLS; without it, or with
//! `redis://` to the TLS port, the command stops at once with one line and exit 2.

use std::path::Path;
use std::process::Command;

use golem_testkit::mock::MockServer;
use golem_testkit::parts::{REDIS_INSTALL, missing};

use crate::harness::*;
use crate::redis_server::RedisServer;
use golem_testkit::cli::{TestEnv, provider_env};

/// Writes `ca.pem`, and `server.pem` with `server.key` for 127.0.0.1 and localhost, into `dir`.
fn certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let output = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("{e}: {}", missing("openssl", REDIS_INSTALL)));
        assert!(
            output.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=golem-forge test authority",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
}

#[test]
fn a_batch_runs_over_tls_and_an_untrusted_or_plain_connection_is_one_line() {
    let env = TestEnv::new();
    program(&env, "proj", &[("a", "do a"), ("b", "do b")]);
    let certs = env.mkdir("certs");
    certificates(&certs);
    let server = MockServer::start_blocking(vec![]);
    server.set_fallback(WIRE.text("Done."));
    let redis = RedisServer::start_tls(&certs.join("server.pem"), &certs.join("server.key"));
    let url = format!("rediss://localhost:{}/0", redis.port());
    let trusted = |args: &[&str]| {
        env.command()
            .current_dir(env.path().join("proj"))
            .args(args)
            .envs(provider_env(WIRE, &server))
            .env("SSL_CERT_FILE", certs.join("ca.pem"))
            .output()
            .unwrap()
    };
    let queued = trusted(&enqueue_args(&url, "tls"));
    assert_exit(&queued, 0);
    let worked = trusted(&[
        "batch-worker",
        "--queue",
        &url,
        "--name",
        "tls",
        "--until-done",
    ]);
    assert_exit(&worked, 0);
    assert_eq!(completed_by(&worked).len(), 2, "{}", stderr(&worked));
    let results = trusted(&["batch", "results", "tls", "--queue", &url]);
    assert_exit(&results, 0);
    assert_eq!(stdout(&results).lines().count(), 2);

    // Not trusting the server's authority: refused at start, one line.
    let untrusted = golem(
        &env,
        "proj",
        &server,
        &["batch", "status", "tls", "--queue", &url],
    );
    refused_in_one_line(
        &untrusted,
        &[
            "cannot use the queue at rediss://localhost",
            "SSL_CERT_FILE",
        ],
    );
    // Plain text to the TLS port: refused too.
    let plain = format!("redis://localhost:{}/0", redis.port());
    let output = golem(
        &env,
        "proj",
        &server,
        &["batch", "status", "tls", "--queue", &plain],
    );
    refused_in_one_line(&output, &["use rediss://"]);
}
