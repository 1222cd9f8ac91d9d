//! The walk spread over threads, with exactly the sequential walk's output (depth-first,
//! name-sorted, cut at the same entry). The top levels are read first into a plan: a sequence
//! of entries and pending subtrees in output order. Worker threads walk the subtrees (each
//! sequentially, opened `O_NOFOLLOW` from its parent's descriptor, like the sequential walk);
//! then the plan is assembled in order. A worker skips a subtree once everything before it
//! already fills the limit, so a small limit on a huge tree stays cheap.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rustix::fs::Dir;

use crate::entry::{EntryInfo, EntryKind};
use crate::walk::{join, open_child, open_subdir, read_entries, walk_dir};

/// How many levels are read into the plan at most.
const PLAN_DEPTH: usize = 3;
/// Subtrees per thread the plan aims for, so uneven subtrees still balance.
const SUBTREES_PER_THREAD: usize = 16;

/// A directory not yet walked: its parent's descriptor, its name, and its path prefix.
struct Pending {
    parent: Arc<OwnedFd>,
    name: Vec<u8>,
    prefix: String,
}

/// One step of the output, in order.
enum Unit {
    Entry(String, EntryInfo),
    Tree(Pending),
}

/// A walked subtree: its entries and whether its own limit cut it short.
type Walked = (Vec<(String, EntryInfo)>, bool);

/// Walks the directory open at `fd` into `out` (paths prefixed by `prefix`); returns whether
/// `limit` (on the length of `out`) cut it short.
pub(crate) fn walk_tree(
    fd: OwnedFd,
    prefix: String,
    include_hidden: bool,
    limit: usize,
    out: &mut Vec<(String, EntryInfo)>,
) -> io::Result<bool> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(4);
    let mut plan = Vec::new();
    expand(Arc::new(fd), &prefix, include_hidden, &mut plan)?;
    for _ in 1..PLAN_DEPTH {
        let trees = plan.iter().filter(|u| matches!(u, Unit::Tree(_))).count();
        if trees == 0 || trees >= threads * SUBTREES_PER_THREAD || plan.len() >= limit {
            break;
        }
        let mut next = Vec::with_capacity(plan.len() * 2);
        for unit in plan {
            match unit {
                Unit::Entry(..) => next.push(unit),
                Unit::Tree(pending) => {
                    let opened = open_subdir(pending.parent.as_fd(), &pending.name);
                    // Not enterable: listed (its entry is already in the plan) but not entered.
                    if let Ok(child) = opened {
                        expand(Arc::new(child), &pending.prefix, include_hidden, &mut next)?;
                    }
                }
            }
        }
        plan = next;
    }
    let trees: Vec<&Pending> = plan
        .iter()
        .filter_map(|unit| match unit {
            Unit::Tree(pending) => Some(pending),
            Unit::Entry(..) => None,
        })
        .collect();
    let results = run_workers(&plan, &trees, threads, include_hidden, limit, out.len());
    assemble(plan, results, include_hidden, limit, out)
}

/// Reads the directory at `fd` into `plan`: each entry, followed by a pending subtree for each
/// directory.
fn expand(
    fd: Arc<OwnedFd>,
    prefix: &str,
    include_hidden: bool,
    plan: &mut Vec<Unit>,
) -> io::Result<()> {
    let mut dir = Dir::read_from(fd.as_fd())?;
    let entries = read_entries(&mut dir, include_hidden)?;
    for (name, info) in entries.into_iter().rev() {
        let path = join(prefix, &name);
        let is_dir = info.kind == EntryKind::Directory;
        if is_dir {
            let mut child_prefix = path.clone();
            child_prefix.push('/');
            plan.push(Unit::Entry(path, info));
            plan.push(Unit::Tree(Pending {
                parent: fd.clone(),
                name,
                prefix: child_prefix,
            }));
        } else {
            plan.push(Unit::Entry(path, info));
        }
    }
    Ok(())
}

/// Walks one pending subtree sequentially (at most `limit` entries).
fn walk_pending(pending: &Pending, include_hidden: bool, limit: usize) -> Option<Walked> {
    let (dir, entries) = open_child(pending.parent.as_fd(), &pending.name, include_hidden)?;
    let mut out = Vec::new();
    let truncated = walk_dir(
        dir,
        entries,
        pending.prefix.clone(),
        include_hidden,
        limit,
        &mut out,
    );
    Some((out, truncated))
}

/// Walks the subtrees on `threads` threads (this one included). Returns, per subtree, its
/// result: `None` when it was skipped (everything before it already fills the limit) or could
/// not be entered.
fn run_workers(
    plan: &[Unit],
    trees: &[&Pending],
    threads: usize,
    include_hidden: bool,
    limit: usize,
    base: usize,
) -> Vec<Option<Walked>> {
    // Entries of the plan that come before each subtree.
    let mut before = Vec::with_capacity(trees.len());
    let mut entries = base;
    for unit in plan {
        match unit {
            Unit::Entry(..) => entries += 1,
            Unit::Tree(_) => before.push(entries),
        }
    }
    let results: Vec<Mutex<Option<Walked>>> = trees.iter().map(|_| Mutex::new(None)).collect();
    let done: Mutex<Vec<Option<usize>>> = Mutex::new(vec![None; trees.len()]);
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(pending) = trees.get(i) else { break };
            let filled = done
                .lock()
                .map(|done| before[i] + done[..i].iter().flatten().sum::<usize>())
                .unwrap_or(0);
            if filled >= limit {
                continue;
            }
            let walked = walk_pending(pending, include_hidden, limit);
            if let Ok(mut done) = done.lock() {
                done[i] = Some(walked.as_ref().map_or(0, |(entries, _)| entries.len()));
            }
            if let Ok(mut slot) = results[i].lock() {
                *slot = walked;
            }
        }
    };
    if trees.len() < 2 || threads < 2 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 1..threads.min(trees.len()) {
                scope.spawn(work);
            }
            work();
        });
    }
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        })
        .collect()
}

/// Appends the plan to `out` in order, with each subtree's result, up to `limit`.
fn assemble(
    plan: Vec<Unit>,
    results: Vec<Option<Walked>>,
    include_hidden: bool,
    limit: usize,
    out: &mut Vec<(String, EntryInfo)>,
) -> io::Result<bool> {
    let mut results = results.into_iter();
    for unit in plan {
        match unit {
            Unit::Entry(path, info) => {
                if out.len() >= limit {
                    return Ok(true);
                }
                out.push((path, info));
            }
            Unit::Tree(pending) => {
                let remaining = limit.saturating_sub(out.len());
                let walked = match results.next().flatten() {
                    Some(walked) => Some(walked),
                    // Skipped because the limit was reached before it, or not enterable: walk
                    // it now if there is room, so the output never depends on timing.
                    None if remaining > 0 => walk_pending(&pending, include_hidden, limit),
                    None => None,
                };
                let Some((entries, truncated)) = walked else {
                    continue;
                };
                if entries.len() > remaining || (truncated && entries.len() >= remaining) {
                    out.extend(entries.into_iter().take(remaining));
                    return Ok(true);
                }
                out.extend(entries);
            }
        }
    }
    Ok(false)
}
