//! The controller: modes, session memory, project rules, scoped consent, asking through the
//! callback, and the `defer` mode's inbox.

use super::*;
use golem_protocol::Risk;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};

fn request(tool: &str, args: serde_json::Value) -> ApprovalRequest {
    ApprovalRequest {
        request_id: "a1".into(),
        tool_call_id: "t1".into(),
        tool_name: tool.into(),
        tool_kind: golem_protocol::ToolKind::Other,
        args,
        description: "d".into(),
        risk: Risk::Medium,
        preview: None,
        invoked_by: InvokedBy::Model,
        worker: None,
        fields: Vec::new(),
        editable: true,
    }
}

fn answering(response: ApprovalResponse, calls: Arc<AtomicUsize>) -> ApprovalCallback {
    Arc::new(move |_req, _cancel| {
        calls.fetch_add(1, Ordering::SeqCst);
        let response = response.clone();
        Box::pin(async move { Ok(response) })
    })
}

fn unwrap_decided(outcome: ApprovalOutcome) -> (ApprovalResponse, DecidedBy) {
    match outcome {
        ApprovalOutcome::Decided {
            response,
            decided_by,
        } => (response, decided_by),
        ApprovalOutcome::Interrupted => panic!("interrupted"),
        ApprovalOutcome::Deferred { inbox_id } => panic!("deferred as {inbox_id}"),
    }
}

#[tokio::test]
async fn modes() {
    let cancel = CancellationToken::new();
    let (r, by) = unwrap_decided(
        ApprovalController::new(ApprovalMode::ApproveAll)
            .decide(request("w", json!({})), &cancel)
            .await,
    );
    assert!(r.approved);
    assert_eq!(by, DecidedBy::Mode);
    let (r, by) = unwrap_decided(
        ApprovalController::new(ApprovalMode::AutoDeny)
            .decide(request("write_file", json!({})), &cancel)
            .await,
    );
    assert!(!r.approved);
    assert_eq!(by, DecidedBy::Mode);
    assert!(r.note.unwrap().contains("write_file"));
}

#[tokio::test]
async fn scoped_answers_are_kept_per_scope_not_per_request() {
    let cancel = CancellationToken::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut remember = ApprovalResponse::approve("x");
    remember.remember = RememberScope::Session;
    remember.modified_args = Some(json!({"edited": true}));
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(answering(remember, calls.clone()));
    let write = json!({"zone": "work", "operation": "write"});
    let create = json!({"zone": "work", "operation": "create"});
    let delete = json!({"zone": "work", "operation": "delete"});
    let changes = request("run_code", json!({"changes": 2}));
    let both = [write.clone(), create.clone()];
    let (r, by) = unwrap_decided(
        controller
            .decide_scoped(changes.clone(), &both, &cancel)
            .await,
    );
    assert!(r.approved && r.modified_args.is_none(), "nothing to edit");
    assert_eq!(by, DecidedBy::User);
    // Each scope was kept: a later request for one of them (or both, in any order) is
    // approved without asking; one with a scope never approved asks again.
    for scopes in [vec![create.clone()], vec![create.clone(), write.clone()]] {
        let (r, by) = unwrap_decided(
            controller
                .decide_scoped(changes.clone(), &scopes, &cancel)
                .await,
        );
        assert!(r.approved);
        assert_eq!(by, DecidedBy::SessionMemory);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let (_, by) = unwrap_decided(
        controller
            .decide_scoped(changes.clone(), &[write.clone(), delete], &cancel)
            .await,
    );
    assert_eq!(by, DecidedBy::User);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // The request's own arguments were never remembered as a call.
    assert!(
        !controller
            .memory()
            .is_approved("run_code", &json!({"changes": 2}))
    );
}

#[tokio::test]
async fn scoped_requests_follow_rules_and_modes() {
    let cancel = CancellationToken::new();
    let write = json!({"zone": "work", "operation": "write"});
    let delete = json!({"zone": "work", "operation": "delete"});
    let rules = ProjectRules::new(vec![ApprovalRule::for_call("shell", &write)]);
    let denying = ApprovalController::new(ApprovalMode::AutoDeny).with_rules(rules);
    let req = request("shell", json!({}));
    let (r, by) = unwrap_decided(
        denying
            .decide_scoped(req.clone(), std::slice::from_ref(&write), &cancel)
            .await,
    );
    assert!(r.approved);
    assert_eq!(by, DecidedBy::Rule);
    // A rule of another tool does not hold; one scope without a rule leaves it to the mode.
    let other = request("run_code", json!({}));
    for (request, scopes) in [(other, vec![write.clone()]), (req, vec![write, delete])] {
        let (r, by) = unwrap_decided(denying.decide_scoped(request, &scopes, &cancel).await);
        assert!(!r.approved);
        assert_eq!(by, DecidedBy::Mode);
    }
    let (r, _) = unwrap_decided(
        ApprovalController::new(ApprovalMode::ApproveAll)
            .decide_scoped(
                request("shell", json!({})),
                &[json!({"zone": "a"})],
                &cancel,
            )
            .await,
    );
    assert!(r.approved);
}

#[tokio::test]
async fn interactive_without_callback_denies_with_the_headless_message() {
    let cancel = CancellationToken::new();
    let (r, by) = unwrap_decided(
        ApprovalController::new(ApprovalMode::Interactive)
            .decide(request("shell", json!({})), &cancel)
            .await,
    );
    assert!(!r.approved);
    assert_eq!(by, DecidedBy::Mode);
    assert_eq!(
        r.note.as_deref(),
        Some(
            "approval needed for shell but no terminal is attached (use --approval approve_all or auto_deny, or defer to let it wait in the inbox)"
        )
    );
}

#[tokio::test]
async fn session_approvals_are_remembered_and_denials_never() {
    let cancel = CancellationToken::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut remember = ApprovalResponse::approve("x");
    remember.remember = RememberScope::Session;
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(answering(remember, calls.clone()));
    let (r, by) = unwrap_decided(
        controller
            .decide(request("w", json!({"a": 1, "b": 2})), &cancel)
            .await,
    );
    assert!(r.approved && by == DecidedBy::User && r.request_id == "a1");
    let (r, by) = unwrap_decided(
        controller
            .decide(request("w", json!({"b": 2, "a": 1})), &cancel)
            .await,
    );
    assert!(r.approved);
    assert_eq!(by, DecidedBy::SessionMemory);
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // A denial with remember: session is not remembered.
    let mut deny = ApprovalResponse::deny("x", Some("no".into()));
    deny.remember = RememberScope::Session;
    let calls = Arc::new(AtomicUsize::new(0));
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(answering(deny, calls.clone()));
    for _ in 0..2 {
        let (r, by) = unwrap_decided(controller.decide(request("w", json!({})), &cancel).await);
        assert!(!r.approved && by == DecidedBy::User);
        assert_eq!(r.note.as_deref(), Some("no"));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(controller.memory().is_empty());

    // An approval once is not remembered either.
    let calls = Arc::new(AtomicUsize::new(0));
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(answering(ApprovalResponse::approve("x"), calls.clone()));
    controller.decide(request("w", json!({})), &cancel).await;
    controller.decide(request("w", json!({})), &cancel).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

fn notes_rule() -> ProjectRules {
    ProjectRules::new(vec![ApprovalRule {
        tool: "write_file".into(),
        matches: [(
            "path".to_owned(),
            super::super::ArgMatch::Glob("/notes/**".into()),
        )]
        .into(),
    }])
}

#[tokio::test]
async fn order_is_session_memory_then_rule_then_mode() {
    let cancel = CancellationToken::new();
    let controller = ApprovalController::new(ApprovalMode::AutoDeny).with_rules(notes_rule());
    // A rule decides before the mode.
    let (r, by) = unwrap_decided(
        controller
            .decide(
                request("write_file", json!({"path": "/notes/a.md"})),
                &cancel,
            )
            .await,
    );
    assert!(r.approved);
    assert_eq!(by, DecidedBy::Rule);
    // Not matching: the mode.
    let (r, by) = unwrap_decided(
        controller
            .decide(request("write_file", json!({"path": "/out/a.md"})), &cancel)
            .await,
    );
    assert!(!r.approved);
    assert_eq!(by, DecidedBy::Mode);
    // Session memory decides before a rule.
    controller
        .memory()
        .remember("write_file", &json!({"path": "/notes/a.md"}));
    let (_, by) = unwrap_decided(
        controller
            .decide(
                request("write_file", json!({"path": "/notes/a.md"})),
                &cancel,
            )
            .await,
    );
    assert_eq!(by, DecidedBy::SessionMemory);
    // A rule decides before the callback too.
    let calls = Arc::new(AtomicUsize::new(0));
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(answering(ApprovalResponse::approve("x"), calls.clone()))
        .with_rules(notes_rule());
    let (_, by) = unwrap_decided(
        controller
            .decide(request("write_file", json!({"path": "/notes/b"})), &cancel)
            .await,
    );
    assert_eq!(by, DecidedBy::Rule);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn project_answers_add_a_rule_and_denials_never() {
    let cancel = CancellationToken::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let mut always = ApprovalResponse::approve("x");
    always.remember = RememberScope::Project;
    let rules = ProjectRules::new(Vec::new());
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(answering(always, calls.clone()))
        .with_rules(rules.clone());
    let (_, by) = unwrap_decided(
        controller
            .decide(
                request("write_file", json!({"path": "/n/a", "content": "1"})),
                &cancel,
            )
            .await,
    );
    assert_eq!(by, DecidedBy::User);
    assert_eq!(rules.rules()[0].match_json(), json!({"path": "/n/a"}));
    let (_, by) = unwrap_decided(
        controller
            .decide(
                request("write_file", json!({"path": "/n/a", "content": "2"})),
                &cancel,
            )
            .await,
    );
    assert_eq!(by, DecidedBy::Rule);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(controller.memory().is_empty());

    let mut deny = ApprovalResponse::deny("x", None);
    deny.remember = RememberScope::Project;
    let rules = ProjectRules::new(Vec::new());
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(answering(deny, Arc::new(AtomicUsize::new(0))))
        .with_rules(rules.clone());
    let (r, _) = unwrap_decided(controller.decide(request("w", json!({})), &cancel).await);
    assert!(!r.approved);
    assert_eq!(r.remember, RememberScope::None);
    assert!(rules.is_empty());
}

#[tokio::test]
async fn a_call_for_the_user_is_never_decided_by_memory_rules_or_approve_all() {
    let cancel = CancellationToken::new();
    let args = json!({"path": "/notes/a.md"});
    // approve_all without anyone to ask: denied, not approved.
    let controller = ApprovalController::new(ApprovalMode::ApproveAll).with_rules(notes_rule());
    controller.memory().remember("write_file", &args);
    let (r, by) = unwrap_decided(
        controller
            .decide_by_user(request("write_file", args.clone()), &cancel)
            .await,
    );
    assert!(!r.approved);
    assert_eq!(by, DecidedBy::Mode);
    assert!(r.note.unwrap().contains("no terminal"));
    // auto_deny denies.
    let (r, _) = unwrap_decided(
        ApprovalController::new(ApprovalMode::AutoDeny)
            .decide_by_user(request("write_file", args.clone()), &cancel)
            .await,
    );
    assert!(!r.approved);
    // With someone to ask, approve_all asks, and "for the session" or "for the project"
    // is not kept.
    for scope in [RememberScope::Session, RememberScope::Project] {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut answer = ApprovalResponse::approve("x");
        answer.remember = scope;
        let rules = ProjectRules::new(Vec::new());
        let controller = ApprovalController::new(ApprovalMode::ApproveAll)
            .with_callback(answering(answer, calls.clone()))
            .with_rules(rules.clone());
        for _ in 0..2 {
            let (r, by) = unwrap_decided(
                controller
                    .decide_by_user(request("write_file", args.clone()), &cancel)
                    .await,
            );
            assert!(r.approved);
            assert_eq!(by, DecidedBy::User);
            assert_eq!(r.remember, RememberScope::None);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert!(controller.memory().is_empty());
        assert!(rules.is_empty());
    }
}

#[tokio::test]
async fn cancellation_while_asking_is_an_interrupt() {
    let cancel = CancellationToken::new();
    let callback: ApprovalCallback = Arc::new(|_req, _cancel| Box::pin(futures::future::pending()));
    let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
    let canceller = cancel.clone();
    tokio::spawn(async move { canceller.cancel() });
    assert_eq!(
        controller.decide(request("w", json!({})), &cancel).await,
        ApprovalOutcome::Interrupted
    );
}

#[tokio::test]
async fn unavailable_ui_denies_with_its_message() {
    let callback: ApprovalCallback = Arc::new(|_req, _cancel| {
        Box::pin(async { Err(CallbackError::Unavailable("the browser went away".into())) })
    });
    let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
    let (r, by) = unwrap_decided(
        controller
            .decide(request("w", json!({})), &CancellationToken::new())
            .await,
    );
    assert!(!r.approved);
    assert_eq!(by, DecidedBy::Mode);
    assert_eq!(r.note.as_deref(), Some("the browser went away"));
}

/// An inbox in memory: parked requests, and answers by call id.
#[derive(Default)]
struct TestInbox {
    parked: std::sync::Mutex<Vec<ApprovalRequest>>,
    answers: std::sync::Mutex<std::collections::HashMap<String, ApprovalResponse>>,
}

impl ApprovalInbox for TestInbox {
    fn park(&self, request: &ApprovalRequest) -> Result<u64, ParkError> {
        let mut parked = self.parked.lock().unwrap();
        parked.push(request.clone());
        Ok(parked.len() as u64 + 6)
    }
    fn answer(&self, tool_call_id: &str) -> Option<ApprovalResponse> {
        self.answers.lock().unwrap().get(tool_call_id).cloned()
    }
}

fn deferring(inbox: &Arc<TestInbox>, asked: Arc<AtomicUsize>) -> ApprovalController {
    ApprovalController::new(ApprovalMode::Defer)
        .with_inbox(inbox.clone())
        .with_callback(answering(ApprovalResponse::approve("x"), asked))
}

#[tokio::test]
async fn defer_parks_a_call_instead_of_asking() {
    let inbox = Arc::new(TestInbox::default());
    let asked = Arc::new(AtomicUsize::new(0));
    let outcome = deferring(&inbox, asked.clone())
        .decide(
            request("write_file", json!({"path": "a"})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome, ApprovalOutcome::Deferred { inbox_id: 7 });
    assert_eq!(inbox.parked.lock().unwrap()[0].tool_call_id, "t1");
    assert_eq!(asked.load(Ordering::SeqCst), 0, "nobody is asked");
    // Only a person may approve: still parked, not approved by the mode.
    let outcome = deferring(&inbox, asked.clone())
        .decide_by_user(request("write_file", json!({})), &CancellationToken::new())
        .await;
    assert!(matches!(outcome, ApprovalOutcome::Deferred { .. }));
}

#[tokio::test]
async fn an_inbox_answer_is_the_user_s_and_its_memory_is_kept() {
    let inbox = Arc::new(TestInbox::default());
    let mut answer = ApprovalResponse::approve("from the inbox");
    answer.remember = RememberScope::Session;
    inbox.answers.lock().unwrap().insert("t1".into(), answer);
    let asked = Arc::new(AtomicUsize::new(0));
    let controller = deferring(&inbox, asked.clone());
    let args = json!({"path": "a"});
    let (r, by) = unwrap_decided(
        controller
            .decide(
                request("write_file", args.clone()),
                &CancellationToken::new(),
            )
            .await,
    );
    assert!(r.approved);
    assert_eq!(by, DecidedBy::User);
    assert_eq!(r.request_id, "a1", "the answer is about this request");
    assert!(controller.memory().is_approved("write_file", &args));
    assert!(inbox.parked.lock().unwrap().is_empty());
    // In the interactive mode too (a parked session resumed at a terminal), without asking.
    let interactive = ApprovalController::new(ApprovalMode::Interactive)
        .with_inbox(inbox.clone())
        .with_callback(answering(ApprovalResponse::deny("x", None), asked.clone()));
    let (r, by) = unwrap_decided(
        interactive
            .decide(
                request("write_file", json!({"path": "b"})),
                &CancellationToken::new(),
            )
            .await,
    );
    assert!(r.approved);
    assert_eq!(by, DecidedBy::User);
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn defer_denies_what_cannot_wait() {
    let inbox = Arc::new(TestInbox::default());
    let asked = Arc::new(AtomicUsize::new(0));
    let controller = deferring(&inbox, asked.clone());
    let cancel = CancellationToken::new();
    // A delegated worker's call: only the root's turn can continue later.
    let mut delegated = request("write_file", json!({}));
    delegated.worker = Some(golem_protocol::WorkerOrigin {
        name: "helper".into(),
        depth: 1,
        id: "w1".into(),
    });
    let (r, by) = unwrap_decided(controller.decide(delegated, &cancel).await);
    assert!(!r.approved);
    assert_eq!(by, DecidedBy::Mode);
    assert_eq!(
        r.note.as_deref(),
        Some(
            "write_file was denied: approval mode is defer, but a delegated worker's call \
             (helper) cannot wait in the inbox"
        )
    );
    // What a jailed program changed is held only while its call runs.
    let mut effects = request("run_code", json!({}));
    effects.editable = false;
    let scopes = [json!({"zone": "work"})];
    let (r, _) = unwrap_decided(controller.decide_scoped(effects, &scopes, &cancel).await);
    assert!(!r.approved);
    assert_eq!(
        r.note.as_deref(),
        Some(
            "run_code was denied: approval mode is defer, but what a program changed cannot \
             wait in the inbox; its changes were discarded (allow them with a project rule, or \
             run interactively)"
        )
    );
    assert!(inbox.parked.lock().unwrap().is_empty());
    // A call the user invoked is asked: the user is there.
    let mut manual = request("write_file", json!({}));
    manual.invoked_by = InvokedBy::User;
    let (r, _) = unwrap_decided(controller.decide(manual, &cancel).await);
    assert!(r.approved);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn defer_without_an_inbox_denies_saying_why() {
    let (r, _) = unwrap_decided(
        ApprovalController::new(ApprovalMode::Defer)
            .decide(request("write_file", json!({})), &CancellationToken::new())
            .await,
    );
    assert!(!r.approved);
    assert!(r.note.unwrap().contains("no approval inbox"));
}

/// An inbox whose store cannot be written.
struct UnwritableInbox;

impl ApprovalInbox for UnwritableInbox {
    fn park(&self, _request: &ApprovalRequest) -> Result<u64, ParkError> {
        Err(ParkError::Unwritable(
            std::io::Error::other("disk full").into(),
        ))
    }
    fn answer(&self, _tool_call_id: &str) -> Option<ApprovalResponse> {
        None
    }
}

#[tokio::test]
async fn defer_denies_when_the_inbox_fails_naming_its_error() {
    let controller =
        ApprovalController::new(ApprovalMode::Defer).with_inbox(Arc::new(UnwritableInbox));
    let (r, by) = unwrap_decided(
        controller
            .decide(request("write_file", json!({})), &CancellationToken::new())
            .await,
    );
    assert!(!r.approved);
    assert_eq!(by, DecidedBy::Mode);
    assert_eq!(
        r.note.as_deref(),
        Some(
            "write_file was denied: approval mode is defer, but the inbox cannot be written \
             (disk full)"
        )
    );
}
