//! The inbox server (`serve --inbox`) in-process, over plain HTTP: the token is required, the
//! page (compressed for a browser that takes it) and the list are served, an answer is stored
//! and handed to the continuer (once), and the refusals say why: an unknown entry is `404`, an
//! answered one `409`, a body that is not an answer `400`, one without the JSON content type
//! `415`. Each answer given is listed under `answered`, newest first, with how its session went
//! on as its transcript tells (completed, waiting again with the entries it parked, failed with
//! why it could not continue, unfinished when no transcript says).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers: a failure is a test failure"
)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use golem_protocol::{ApprovalRequest, InboxEntry, InvokedBy, RememberScope, Risk};
use golem_runtime::inbox::{InboxStore, ParkedBy};
use golem_web::{Continuation, Continuer, InboxServer};
use serde_json::{Value, json};

fn request(call: &str) -> ApprovalRequest {
    ApprovalRequest {
        request_id: format!("approval_{call}"),
        tool_call_id: call.into(),
        tool_name: "write_file".into(),
        tool_kind: golem_protocol::ToolKind::Other,
        args: json!({"path": "/out/a.txt", "content": "hi"}),
        description: "Write /out/a.txt".into(),
        risk: Risk::Medium,
        preview: None,
        invoked_by: InvokedBy::Model,
        worker: None,
        fields: Vec::new(),
        editable: true,
    }
}

/// Parks call `call` of session `s1` in the inbox at `root`; returns its number.
fn park(root: &Path, call: &str) -> u64 {
    let by = ParkedBy {
        session: "s1".into(),
        worker: "writer".into(),
        batch: None,
    };
    InboxStore::new(root).park(&by, &request(call)).unwrap()
}

/// The entries handed to the continuer.
type Continued = Arc<Mutex<Vec<InboxEntry>>>;

/// A served inbox at `root` whose continuer records the entries it gets and settles them (as
/// a session that went on would), or fails with `problem`.
async fn serve(root: &Path, problem: Option<&str>) -> (SocketAddr, String, Continued) {
    let continued: Continued = Arc::default();
    let seen = continued.clone();
    let store = InboxStore::new(root);
    let problem = problem.map(str::to_owned);
    let continuer: Continuer = Arc::new(move |entry: InboxEntry| -> Continuation {
        seen.lock().unwrap().push(entry.clone());
        let store = store.clone();
        let problem = problem.clone();
        Box::pin(async move {
            match problem {
                Some(problem) => Err(problem),
                None => store.remove(entry.id).map_err(|e| e.to_string()),
            }
        })
    });
    let server = InboxServer::bind(root, "127.0.0.1:0".parse().unwrap(), continuer)
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let token = server.token().to_owned();
    tokio::spawn(async move { server.run(std::future::pending()).await.unwrap() });
    (addr, token, continued)
}

/// The `Cookie` header a browser sends the inbox at `addr` after the token visit.
fn cookie(addr: SocketAddr, token: &str) -> String {
    format!("{}={token}", golem_http::guard::cookie_name(addr.port()))
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// `POST /api/inbox/{n}/answer` with `body` as JSON, with the cookie; status and JSON answer.
async fn post_answer(addr: SocketAddr, token: &str, n: &str, body: &str) -> (u16, Value) {
    let response = client()
        .post(format!("http://{addr}/api/inbox/{n}/answer"))
        .header("cookie", cookie(addr, token))
        .header("origin", format!("http://{addr}"))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn list(addr: SocketAddr, token: &str) -> Vec<Value> {
    body(addr, token).await["entries"]
        .as_array()
        .unwrap()
        .clone()
}

/// `GET /api/inbox`'s body.
async fn body(addr: SocketAddr, token: &str) -> Value {
    let response = client()
        .get(format!("http://{addr}/api/inbox"))
        .header("cookie", cookie(addr, token))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    response.json().await.unwrap()
}

/// Polls the list until `check` holds (the continuation runs in the background).
async fn wait_for(addr: SocketAddr, token: &str, what: &str, check: impl Fn(&[Value]) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let entries = list(addr, token).await;
        if check(&entries) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}; the list: {entries:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn every_request_needs_the_token_and_the_page_is_the_inbox() {
    let root = tempfile::tempdir().unwrap();
    park(root.path(), "call_1");
    let (addr, token, continued) = serve(root.path(), None).await;
    let client = client();
    for url in ["/", "/api/inbox", "/assets/lib/inbox.js"] {
        let response = client
            .get(format!("http://{addr}{url}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 401, "{url}");
    }
    let (status, _) = {
        let response = client
            .post(format!("http://{addr}/api/inbox/1/answer"))
            .header("content-type", "application/json")
            .body(r#"{"approved": true}"#)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), ())
    };
    assert_eq!(status, 401, "an answer without the token");
    // A page of another origin cannot answer, even with the cookie.
    let response = client
        .post(format!("http://{addr}/api/inbox/1/answer"))
        .header("cookie", cookie(addr, &token))
        .header("origin", "http://evil.example")
        .header("content-type", "application/json")
        .body(r#"{"approved": true}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    assert!(continued.lock().unwrap().is_empty());
    assert!(
        InboxStore::new(root.path())
            .get(1)
            .unwrap()
            .answer
            .is_none()
    );

    let first = client
        .get(format!("http://{addr}/?token={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status().as_u16(), 303);
    let page = client
        .get(format!("http://{addr}/"))
        .header("cookie", cookie(addr, &token))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(
        page.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("default-src 'self'")
    );
    let html = page.text().await.unwrap();
    assert!(html.contains("/assets/lib/inbox.js"), "{html}");

    let entries = list(addr, &token).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["id"], 1);
    assert_eq!(entries[0]["state"], "waiting");
    assert_eq!(entries[0]["request"]["toolName"], "write_file");
}

#[tokio::test]
async fn the_inbox_page_is_sent_compressed_to_a_browser_that_takes_it() {
    use std::io::Read;
    let root = tempfile::tempdir().unwrap();
    let (addr, token, _continued) = serve(root.path(), None).await;
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    for (url, rel) in [
        ("/", "inbox.html"),
        ("/assets/lib/inbox.js", "lib/inbox.js"),
        ("/assets/inbox.css", "inbox.css"),
    ] {
        let plain = std::fs::read(assets.join(rel)).unwrap();
        for (accept, expected) in [
            (Some("gzip, deflate, br, zstd"), Some("br")),
            (Some("gzip"), Some("gzip")),
            (None, None),
        ] {
            let mut request = client()
                .get(format!("http://{addr}{url}"))
                .header("cookie", cookie(addr, &token));
            if let Some(accept) = accept {
                request = request.header("accept-encoding", accept);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200, "{url}");
            let encoding = response
                .headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap().to_owned());
            assert_eq!(encoding.as_deref(), expected, "{url} with {accept:?}");
            assert_eq!(response.headers()["vary"], "accept-encoding", "{url}");
            let body = response.bytes().await.unwrap();
            let mut decoded = Vec::new();
            match expected {
                None => decoded.extend_from_slice(&body),
                Some("gzip") => {
                    flate2::read::GzDecoder::new(&body[..])
                        .read_to_end(&mut decoded)
                        .unwrap();
                }
                Some(_) => {
                    brotli_decompressor::Decompressor::new(&body[..], 4096)
                        .read_to_end(&mut decoded)
                        .unwrap();
                }
            }
            assert!(
                decoded == plain,
                "{url} with {accept:?} is not assets/{rel}"
            );
        }
    }
}

#[tokio::test]
async fn an_answer_is_stored_and_its_session_continued_once() {
    let root = tempfile::tempdir().unwrap();
    park(root.path(), "call_1");
    let second = park(root.path(), "call_2");
    let (addr, token, continued) = serve(root.path(), None).await;

    let (status, entry) = post_answer(
        addr,
        &token,
        "1",
        r#"{"approved": true, "remember": "session"}"#,
    )
    .await;
    assert_eq!(status, 200, "{entry}");
    assert_eq!(entry["answer"]["approved"], true);
    assert_eq!(entry["answer"]["remember"], "session");
    wait_for(addr, &token, "entry 1 settled", |entries| {
        entries.len() == 1 && entries[0]["id"] == second
    })
    .await;
    {
        let continued = continued.lock().unwrap();
        assert_eq!(continued.len(), 1);
        assert_eq!(continued[0].id, 1);
        let answer = continued[0].answer.as_ref().unwrap();
        assert!(answer.approved);
        assert_eq!(answer.remember, RememberScope::Session);
    }

    // A denial keeps its note (trimmed); remember means nothing for it.
    let (status, entry) = post_answer(
        addr,
        &token,
        &second.to_string(),
        r#"{"approved": false, "remember": "project", "note": "  use /out/b.txt  "}"#,
    )
    .await;
    assert_eq!(status, 200, "{entry}");
    assert_eq!(entry["answer"]["approved"], false);
    assert_eq!(entry["answer"]["note"], "use /out/b.txt");
    assert_eq!(entry["answer"]["remember"], "none");
    wait_for(addr, &token, "the inbox emptied", <[Value]>::is_empty).await;
    assert_eq!(continued.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn refusals_say_why() {
    let root = tempfile::tempdir().unwrap();
    park(root.path(), "call_1");
    let (addr, token, continued) = serve(root.path(), Some("the batch is running")).await;

    let (status, body) = post_answer(addr, &token, "7", r#"{"approved": true}"#).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("no approval 7 waits in the inbox"),
        "{body}"
    );
    let (status, body) = post_answer(addr, &token, "x", r#"{"approved": true}"#).await;
    assert_eq!(status, 404, "{body}");

    for bad in [
        "not json",
        "{}",
        r#"{"approved": "yes"}"#,
        r#"{"approved": true, "remember": "forever"}"#,
        r#"{"approved": true, "extra": 1}"#,
    ] {
        let (status, body) = post_answer(addr, &token, "1", bad).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("the answer must be"),
            "{body}"
        );
    }
    let response = client()
        .post(format!("http://{addr}/api/inbox/1/answer"))
        .header("cookie", cookie(addr, &token))
        .body(r#"{"approved": true}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 415);
    assert!(continued.lock().unwrap().is_empty(), "nothing answered yet");

    let (status, body) = post_answer(addr, &token, "1", r#"{"approved": false}"#).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post_answer(addr, &token, "1", r#"{"approved": true}"#).await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("approval 1 was already answered (denied)"),
        "{body}"
    );
    assert_eq!(continued.lock().unwrap().len(), 1, "continued once");
    // The continuation failed: the entry stays, answered, with the problem shown.
    wait_for(addr, &token, "the problem listed", |entries| {
        entries.len() == 1
            && entries[0]["state"] == "answered"
            && entries[0]["problem"] == "the batch is running"
    })
    .await;
}

/// Starts session `id`'s transcript at `root`, as a parked session has one.
fn transcript(root: &Path, id: &str) -> golem_session::SessionWriter {
    golem_session::SessionStore::new(root)
        .create_with_id(
            id,
            golem_session::SessionMeta::new("writer", "writer.worker", "test:mock", "defer"),
        )
        .unwrap()
}

#[tokio::test]
async fn each_answer_is_listed_with_how_its_session_went_on() {
    use golem_protocol::SessionEndReason;
    use golem_session::TranscriptEntry;

    let root = tempfile::tempdir().unwrap();
    let by = |session: &str| ParkedBy {
        session: session.into(),
        worker: "writer".into(),
        batch: None,
    };
    let store = InboxStore::new(root.path());
    // s1 completes; s2 parks again; s3 cannot continue; s4 has no transcript.
    for (session, call) in [("s1", "c1"), ("s2", "c2"), ("s3", "c3"), ("s4", "c4")] {
        store.park(&by(session), &request(call)).unwrap();
        if session != "s4" {
            transcript(root.path(), session);
        }
    }
    let at = root.path().to_owned();
    let continuer: Continuer = Arc::new(move |entry: InboxEntry| -> Continuation {
        let store = InboxStore::new(&at);
        let sessions = golem_session::SessionStore::new(&at);
        Box::pin(async move {
            let end = |reason| {
                let mut writer = sessions.reopen(&entry.session).unwrap();
                writer
                    .append(&TranscriptEntry::Ended {
                        reason,
                        message: None,
                    })
                    .unwrap();
                writer.finish().unwrap();
            };
            match entry.session.as_str() {
                "s1" => end(SessionEndReason::Completed),
                "s2" => {
                    store.park(&by("s2"), &request("c2b")).unwrap();
                    end(SessionEndReason::WaitingApproval);
                }
                "s3" => return Err("the batch is running".to_owned()),
                _ => {}
            }
            store.remove(entry.id).map_err(|e| e.to_string())
        })
    });
    let server = InboxServer::bind(root.path(), "127.0.0.1:0".parse().unwrap(), continuer)
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let token = server.token().to_owned();
    tokio::spawn(async move { server.run(std::future::pending()).await.unwrap() });

    assert_eq!(body(addr, &token).await["answered"], json!([]));
    for (n, approved) in [(1, true), (2, true), (3, false), (4, true)] {
        let (status, _) = post_answer(
            addr,
            &token,
            &n.to_string(),
            &json!({ "approved": approved }).to_string(),
        )
        .await;
        assert_eq!(status, 200);
        // Listed at once, newest first, while it continues (or once it went on).
        let answered = body(addr, &token).await["answered"].clone();
        assert_eq!(answered[0]["id"], n, "{answered}");
        assert_eq!(answered[0]["approved"], approved);
        assert_eq!(answered[0]["toolName"], "write_file");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let answered = loop {
        let answered = body(addr, &token).await["answered"].clone();
        let done = answered
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["outcome"] != "continuing");
        if done {
            break answered;
        }
        assert!(tokio::time::Instant::now() < deadline, "{answered}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let outcome = |n: u64| {
        answered
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(outcome(1)["outcome"], "completed", "{answered}");
    assert_eq!(outcome(1)["session"], "s1");
    assert_eq!(outcome(2)["outcome"], "waiting", "{answered}");
    assert_eq!(outcome(2)["waiting"], json!([5]), "the entry it parked");
    assert_eq!(outcome(3)["outcome"], "failed", "{answered}");
    assert_eq!(outcome(3)["problem"], "the batch is running");
    assert_eq!(outcome(4)["outcome"], "unfinished", "{answered}");
    assert!(
        outcome(4)["problem"]
            .as_str()
            .unwrap()
            .contains("transcript cannot be read"),
        "{answered}"
    );
    let order: Vec<&Value> = answered
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["id"])
        .collect();
    assert_eq!(order, [4, 3, 2, 1]);
}
