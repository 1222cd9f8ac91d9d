//! Landlock for the jailed program: read (and execute) the system paths and read-only zones,
//! read and write the read-write zones and `/tmp`, use the device nodes, nothing else. With the
//! network off, TCP bind and connect are refused too (a second layer under the empty network
//! namespace and seccomp). Signals and abstract UNIX sockets are scoped to the jail. Prepared
//! by stage 2 before the run is known and applied to itself before the program starts.

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::mounts::View;

/// The newest Landlock ABI this code was written and tested against; the kernel may offer
/// less (then fewer rights are handled and the result says so) or more (ignored).
const ABI_USED: ABI = ABI::V6;

fn rules<'a>(
    paths: &'a [std::path::PathBuf],
    access: BitFlags<AccessFs>,
) -> impl Iterator<Item = Result<PathBeneath<PathFd>, landlock::RulesetError>> + 'a {
    paths.iter().filter_map(move |path| {
        // A path that vanished since the view was built grants nothing; skip it.
        let fd = PathFd::new(path).ok()?;
        let access = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(ABI_USED)
        };
        Some(Ok(PathBeneath::new(fd, access)))
    })
}

/// Why Landlock is not in force.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LandlockError {
    /// Building or enforcing the ruleset failed.
    #[error("Landlock could not be applied: {0}")]
    Apply(#[from] landlock::RulesetError),
    /// The kernel enforces none of it.
    #[error("Landlock is not available ({0:?}): files outside the zones would be reachable")]
    NotAvailable(landlock::LandlockStatus),
}

/// The ruleset for `view`, built but not yet in force (building opens every path of the view,
/// so it is done before the run is known; see [`restrict`]).
pub(crate) fn prepare(view: &View, network: bool) -> Result<RulesetCreated, LandlockError> {
    let read = AccessFs::from_read(ABI_USED);
    let all = AccessFs::from_all(ABI_USED);
    let device = AccessFs::from_file(ABI_USED);
    let mut ruleset = Ruleset::default().handle_access(all)?;
    if !network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_USED))?;
    }
    Ok(ruleset
        .scope(Scope::from_all(ABI_USED))?
        .create()?
        .add_rules(rules(&view.read_only, read))?
        .add_rules(rules(&view.read_write, all))?
        .add_rules(rules(&view.devices, device))?
        .add_rules(rules(&view.list_only, AccessFs::ReadDir.into()))?)
}

/// Restricts this process (and what it `exec`s) to the prepared ruleset. Returns notes on what
/// the kernel could not enforce; an error when Landlock is not available at all.
pub(crate) fn restrict(created: RulesetCreated) -> Result<Vec<String>, LandlockError> {
    let status = created.restrict_self()?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(Vec::new()),
        RulesetStatus::PartiallyEnforced => Ok(vec![format!(
            "Landlock is only partly enforced (kernel {:?}; this jail uses ABI {}): some \
             rights (network, signal or socket scoping, file truncation) are not restricted",
            status.landlock, ABI_USED as u32
        )]),
        RulesetStatus::NotEnforced => Err(LandlockError::NotAvailable(status.landlock)),
    }
}
