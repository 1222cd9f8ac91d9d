//! The inbox store: numbers given once, the same call parked once, answers kept until settled.

use super::*;
use golem_protocol::{InvokedBy, Risk};
use serde_json::json;

fn request(call: &str) -> ApprovalRequest {
    ApprovalRequest {
        request_id: format!("approval_{call}"),
        tool_call_id: call.into(),
        tool_name: "write_file".into(),
        tool_kind: golem_protocol::ToolKind::Other,
        args: json!({"path": "/work/a.txt", "content": "hi"}),
        description: "Write /work/a.txt".into(),
        risk: Risk::Medium,
        preview: None,
        invoked_by: InvokedBy::Model,
        worker: None,
        fields: Vec::new(),
        editable: true,
    }
}

fn by(session: &str) -> ParkedBy {
    ParkedBy {
        session: session.into(),
        worker: "writer".into(),
        batch: None,
    }
}

fn bound(store: &InboxStore, session: &str) -> Arc<SessionInbox> {
    let inbox = SessionInbox::new(store.clone(), None);
    inbox.bind(session, "writer");
    inbox
}

#[test]
fn numbers_are_given_once_and_never_reused() {
    let root = tempfile::tempdir().unwrap();
    let store = InboxStore::new(root.path());
    let first = store.park(&by("s1"), &request("c1")).unwrap();
    let second = store.park(&by("s1"), &request("c2")).unwrap();
    assert_eq!((first, second), (1, 2));
    store.remove(second).unwrap();
    let third = store.park(&by("s2"), &request("c1")).unwrap();
    assert_eq!(third, 3, "a removed entry's number is not given again");
    let ids: Vec<u64> = store.list().unwrap().iter().map(|e| e.id).collect();
    assert_eq!(ids, vec![1, 3]);
}

#[test]
fn the_same_call_parked_again_keeps_its_entry_and_its_answer() {
    let root = tempfile::tempdir().unwrap();
    let store = InboxStore::new(root.path());
    let id = store.park(&by("s1"), &request("c1")).unwrap();
    store
        .answer(id, true, RememberScope::Session, None)
        .unwrap();
    assert_eq!(store.park(&by("s1"), &request("c1")).unwrap(), id);
    let entry = store.get(id).unwrap();
    assert!(entry.answer.as_ref().unwrap().approved);
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn an_entry_is_answered_once_and_a_denial_keeps_no_memory() {
    let root = tempfile::tempdir().unwrap();
    let store = InboxStore::new(root.path());
    let id = store.park(&by("s1"), &request("c1")).unwrap();
    let entry = store
        .answer(id, false, RememberScope::Project, Some("not there".into()))
        .unwrap();
    let answer = entry.answer.unwrap();
    assert_eq!(answer.remember, RememberScope::None);
    assert_eq!(answer.note.as_deref(), Some("not there"));
    let again = store
        .answer(id, true, RememberScope::None, None)
        .unwrap_err();
    assert!(
        matches!(again, InboxError::AlreadyAnswered { .. }),
        "{again}"
    );
    assert!(matches!(
        store.answer(99, true, RememberScope::None, None),
        Err(InboxError::NotFound(99))
    ));
}

#[test]
fn a_lost_counter_never_hands_out_a_number_in_use() {
    let root = tempfile::tempdir().unwrap();
    let store = InboxStore::new(root.path());
    store.park(&by("s1"), &request("c1")).unwrap();
    store.park(&by("s1"), &request("c2")).unwrap();
    std::fs::remove_file(root.path().join(".golem-forge/inbox/next-id")).unwrap();
    assert_eq!(store.park(&by("s1"), &request("c3")).unwrap(), 3);
}

#[test]
fn a_corrupt_file_is_skipped_in_the_listing_and_named_when_read() {
    let root = tempfile::tempdir().unwrap();
    let store = InboxStore::new(root.path());
    store.park(&by("s1"), &request("c1")).unwrap();
    std::fs::write(root.path().join(".golem-forge/inbox/7.json"), "{not json").unwrap();
    assert_eq!(store.list().unwrap().len(), 1);
    let error = store.get(7).unwrap_err().to_string();
    assert!(
        error.contains("7.json") && error.contains("not an inbox entry"),
        "{error}"
    );
}

#[test]
fn a_session_takes_its_answers_and_settling_removes_the_entry() {
    let root = tempfile::tempdir().unwrap();
    let store = InboxStore::new(root.path());
    let inbox = bound(&store, "s1");
    let id = inbox.park(&request("c1")).unwrap();
    assert_eq!(inbox.answer("c1"), None, "not answered yet");
    store
        .answer(id, false, RememberScope::None, Some("use b.txt".into()))
        .unwrap();
    // A new process resuming the session finds its entry.
    let resumed = bound(&store, "s1");
    let answer = resumed.answer("c1").unwrap();
    assert!(!answer.approved);
    assert_eq!(answer.note.as_deref(), Some("use b.txt"));
    assert_eq!(resumed.answer("other"), None);
    // Another session's view does not see it.
    assert_eq!(bound(&store, "s2").answer("c1"), None);
    resumed.settled("c1");
    assert!(matches!(store.get(id), Err(InboxError::NotFound(_))));
}

#[test]
fn parking_from_many_threads_gives_distinct_numbers() {
    let root = tempfile::tempdir().unwrap();
    let store = InboxStore::new(root.path());
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            std::thread::spawn(move || {
                store
                    .park(&by(&format!("s{i}")), &request(&format!("c{i}")))
                    .unwrap()
            })
        })
        .collect();
    let mut ids: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=8).collect::<Vec<_>>());
}
