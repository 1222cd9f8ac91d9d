//! The zone approval table (every zone config × operation), capability before consent, and
//! the narrowing rules for sub-workers.

use golem_policy::{ApprovalDecisionType, ApprovalRequirement};
use golem_protocol::ToolErrorCode;
use golem_sandbox::{Sandbox, SandboxError, ZoneApproval, ZoneConfig, ZoneMode, ZoneOperation};

use ApprovalDecisionType::{Ask, Blocked, PreApproved};
use ZoneOperation::{Create, Delete, Write};

fn expect(decision: ApprovalDecisionType, zone: &str, op: ZoneOperation) -> ApprovalRequirement {
    match decision {
        PreApproved => ApprovalRequirement::PreApproved,
        Ask => ApprovalRequirement::Ask,
        Blocked => {
            ApprovalRequirement::blocked(format!("{} is blocked in zone {zone}", op.as_str()))
        }
    }
}

#[test]
fn every_config_and_operation() {
    let decisions = [None, Some(PreApproved), Some(Ask), Some(Blocked)];
    let mut configs = Vec::new();
    for create in decisions {
        for write in decisions {
            for delete in decisions {
                configs.push((create, write, delete));
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let zones: Vec<ZoneConfig> = configs
        .iter()
        .enumerate()
        .map(|(i, (create, write, delete))| {
            // Built from JSON as a worker file would be, so absent keys take their defaults.
            let mut approval = serde_json::Map::new();
            for (key, value) in [("create", create), ("write", write), ("delete", delete)] {
                if let Some(value) = value {
                    approval.insert(key.into(), serde_json::to_value(value).unwrap());
                }
            }
            serde_json::from_value(serde_json::json!({
                "name": format!("z{i}"), "mode": "rw", "approval": approval,
            }))
            .unwrap()
        })
        .collect();
    let sandbox = Sandbox::open(tmp.path(), &zones).unwrap();
    for (i, (create, write, delete)) in configs.iter().enumerate() {
        let zone = format!("z{i}");
        let path = sandbox.resolve(&format!("/{zone}/f.txt")).unwrap();
        let write_decision = write.unwrap_or(Ask);
        let table = [
            (Create, create.unwrap_or(write_decision)),
            (Write, write_decision),
            (Delete, delete.unwrap_or(Ask)),
        ];
        for (op, decision) in table {
            assert_eq!(
                sandbox.requirement(&path, op),
                expect(decision, &zone, op),
                "{zone} {create:?}/{write:?}/{delete:?} {op}"
            );
        }
    }
}

#[test]
fn design_example_zones() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("input")).unwrap();
    let zones: Vec<ZoneConfig> = serde_json::from_value(serde_json::json!([
        {"name": "input", "path": "./input", "mode": "ro"},
        {"name": "scratch", "mode": "rw", "approval": {"write": "preApproved", "delete": "preApproved"}},
        {"name": "output", "mode": "rw", "approval": {"create": "preApproved", "write": "ask", "delete": "blocked"}},
    ]))
    .unwrap();
    let s = Sandbox::open(tmp.path(), &zones).unwrap();
    let p = |v: &str| s.resolve(v).unwrap();
    assert_eq!(
        s.requirement(&p("/scratch/t.txt"), Write),
        ApprovalRequirement::PreApproved
    );
    assert_eq!(
        s.requirement(&p("/scratch/t.txt"), Create),
        ApprovalRequirement::PreApproved
    );
    assert_eq!(
        s.requirement(&p("/output/r.md"), Create),
        ApprovalRequirement::PreApproved
    );
    assert_eq!(
        s.requirement(&p("/output/r.md"), Write),
        ApprovalRequirement::Ask
    );
    assert_eq!(
        s.requirement(&p("/output/r.md"), Delete),
        ApprovalRequirement::blocked("delete is blocked in zone output")
    );
    assert_eq!(
        s.requirement(&p("/input/a"), Write),
        ApprovalRequirement::Ask
    );
    assert!(matches!(
        s.requirement(&p("/"), Write),
        ApprovalRequirement::Blocked { .. }
    ));
}

#[test]
fn read_only_is_refused_before_any_approval() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("input")).unwrap();
    let s = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("input", ZoneMode::Ro)
                .with_approval(ZoneApproval::uniform(PreApproved)),
            ZoneConfig::new("out", ZoneMode::Rw),
        ],
    )
    .unwrap();
    let ro = s.resolve("/input/x.txt").unwrap();
    let err = s.check_writable(&ro).unwrap_err();
    assert_eq!(err.code, ToolErrorCode::PermissionDenied);
    assert!(
        err.message.contains("zone input is read-only"),
        "{}",
        err.message
    );
    assert_eq!(
        s.check_writable(&s.resolve("/").unwrap()).unwrap_err().code,
        ToolErrorCode::PermissionDenied
    );
    s.check_writable(&s.resolve("/out/x").unwrap()).unwrap();
    // Every mutating operation enforces it too, whatever the caller checked.
    assert_eq!(
        s.write_atomic(&ro, b"x", true).unwrap_err().code,
        ToolErrorCode::PermissionDenied
    );
    assert_eq!(
        s.remove_file(&ro).unwrap_err().code,
        ToolErrorCode::PermissionDenied
    );
    assert!(!tmp.path().join("input/x.txt").exists());
}

#[test]
fn narrow_only_narrows() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("input")).unwrap();
    let parent = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("input", ZoneMode::Ro),
            ZoneConfig::new("out", ZoneMode::Rw).with_approval(ZoneApproval {
                create: None,
                write: PreApproved,
                delete: Blocked,
            }),
        ],
    )
    .unwrap();
    // Fewer zones, rw → ro, the child's `path` ignored: same directory as the parent's.
    let child = parent
        .narrow(&[ZoneConfig::new("out", ZoneMode::Ro).with_path("/etc")])
        .unwrap();
    assert_eq!(child.zones().len(), 1);
    assert_eq!(child.zones()[0].mode(), ZoneMode::Ro);
    assert!(parent.same_directory(&child, "out"));
    assert_eq!(
        child
            .check_writable(&child.resolve("/out/x").unwrap())
            .unwrap_err()
            .code,
        ToolErrorCode::PermissionDenied
    );
    let err = child.resolve("/input/x").unwrap_err();
    assert!(
        err.message.contains("unknown zone `input`") && err.message.contains("/out"),
        "{}",
        err.message
    );

    // Approvals: the stricter of parent and child per operation.
    let child = parent
        .narrow(&[
            ZoneConfig::new("out", ZoneMode::Rw).with_approval(ZoneApproval {
                create: Some(Ask),
                write: PreApproved,
                delete: PreApproved,
            }),
        ])
        .unwrap();
    let p = child.resolve("/out/f").unwrap();
    assert_eq!(child.requirement(&p, Create), ApprovalRequirement::Ask);
    assert_eq!(
        child.requirement(&p, Write),
        ApprovalRequirement::PreApproved
    );
    assert_eq!(
        child.requirement(&p, Delete),
        ApprovalRequirement::blocked("delete is blocked in zone out")
    );
    child.write_atomic(&p, b"from child", false).unwrap();
    assert_eq!(
        std::fs::read(tmp.path().join("out/f")).unwrap(),
        b"from child"
    );

    let err = parent
        .narrow(&[ZoneConfig::new("input", ZoneMode::Rw)])
        .unwrap_err();
    assert!(matches!(err, SandboxError::Widening { .. }), "{err}");
    let err = parent
        .narrow(&[ZoneConfig::new("secrets", ZoneMode::Ro)])
        .unwrap_err();
    assert!(matches!(err, SandboxError::UnknownZone { .. }), "{err}");
    assert!(err.to_string().contains("/input, /out"), "{err}");
    let err = parent
        .narrow(&[
            ZoneConfig::new("out", ZoneMode::Ro),
            ZoneConfig::new("out", ZoneMode::Ro),
        ])
        .unwrap_err();
    assert!(matches!(err, SandboxError::DuplicateZone { .. }), "{err}");
    // Narrowing a narrowed sandbox can never bring a zone back.
    let grandchild_err = parent
        .narrow(&[ZoneConfig::new("out", ZoneMode::Ro)])
        .unwrap()
        .narrow(&[ZoneConfig::new("out", ZoneMode::Rw)])
        .unwrap_err();
    assert!(matches!(grandchild_err, SandboxError::Widening { .. }));
    assert!(parent.narrow(&[]).unwrap().zones().is_empty());

    // Making a nested zone read-only while its container stays writable is refused too.
    std::fs::create_dir_all(tmp.path().join("out/sub")).unwrap();
    let nested = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("out", ZoneMode::Rw),
            ZoneConfig::new("sub", ZoneMode::Rw).with_path("out/sub"),
        ],
    )
    .unwrap();
    let err = nested
        .narrow(&[
            ZoneConfig::new("out", ZoneMode::Rw),
            ZoneConfig::new("sub", ZoneMode::Ro),
        ])
        .unwrap_err();
    assert!(
        matches!(err, SandboxError::ReadOnlyInsideWritable { .. }),
        "{err}"
    );
    // And the container read-only while the nested zone stays writable.
    let err = nested
        .narrow(&[
            ZoneConfig::new("out", ZoneMode::Ro),
            ZoneConfig::new("sub", ZoneMode::Rw),
        ])
        .unwrap_err();
    assert!(
        matches!(err, SandboxError::WritableInsideReadOnly { .. }),
        "{err}"
    );
    nested
        .narrow(&[
            ZoneConfig::new("out", ZoneMode::Ro),
            ZoneConfig::new("sub", ZoneMode::Ro),
        ])
        .unwrap();
}

#[test]
fn paths_from_another_sandbox_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Sandbox::open(
        tmp.path(),
        &[
            ZoneConfig::new("one", ZoneMode::Rw),
            ZoneConfig::new("two", ZoneMode::Rw),
        ],
    )
    .unwrap();
    let b = a.narrow(&[ZoneConfig::new("two", ZoneMode::Rw)]).unwrap();
    let from_a = a.resolve("/one/x").unwrap();
    assert_eq!(
        b.write_atomic(&from_a, b"x", false).unwrap_err().code,
        ToolErrorCode::InvalidPath
    );
    let from_a_two = a.resolve("/two/x").unwrap();
    assert_eq!(
        b.write_atomic(&from_a_two, b"x", false).unwrap_err().code,
        ToolErrorCode::InvalidPath
    );
}
