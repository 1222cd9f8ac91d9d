//! `golem-forge sessions fork`: a new session that starts from user turn N of an old one. The
//! new transcript holds the old one's entries of turns 1 to N (its meta says where it came
//! from), so resuming it replays just that conversation; with input, the fork runs it at once
//! like `sessions resume`. The original transcript is only read. The copied lines keep the
//! times they were first written at; the new meta line (and the end that closes a copy cut
//! before later turns) are written now.

use std::process::ExitCode;

use clap::Args;
use golem_session::{ForkedFrom, SessionMeta, SessionStore, now_rfc3339};

use super::resume::{ResumeArgs, cmd_resume};
use super::{load, print, session_error};
use crate::cli_error::CommandError;
use crate::frontend::clean::clean_text;

/// Start a new session from a user turn of a recorded one
///
/// The new session holds the conversation up to and including turn TURN's exchange. Without
/// input it is only created and its id printed; with input (the words after ID, --input or
/// --file) it runs that input at once, like `sessions resume`.
#[derive(Debug, Args)]
pub struct ForkArgs {
    /// The user turn to fork at: 1 is the first input (default: the last)
    #[arg(long, value_name = "TURN")]
    pub at: Option<usize>,

    #[command(flatten)]
    pub resume: ResumeArgs,
}

/// Runs `golem-forge sessions fork` against `store`.
pub fn cmd_fork(store: &SessionStore, args: ForkArgs) -> Result<ExitCode, CommandError> {
    let original = load(store, &args.resume.id)?;
    let id = original.id.clone();
    let turns = original.turns();
    if turns == 0 {
        return Err(
            CommandError::usage(format!("session `{id}` has no user turns to fork from"))
                .with_hint(format!(
                    "Continue it instead: golem-forge sessions resume {id} \"…\""
                )),
        );
    }
    let turn = args.at.unwrap_or(turns);
    let Some(entries) = original.entries_through_turn_with_times(turn) else {
        let count = if turns == 1 {
            "1 user turn".to_owned()
        } else {
            format!("{turns} user turns")
        };
        return Err(CommandError::usage(format!(
            "session `{id}` has {count}; there is no turn {turn}"
        ))
        .with_hint(format!(
            "Pass --at with a turn from 1 to {turns} (`golem-forge sessions show {id}` shows them)"
        )));
    };
    let meta = SessionMeta {
        started: now_rfc3339(),
        forked_from: Some(ForkedFrom {
            id: id.clone(),
            turn,
        }),
        ..original.meta.clone()
    };
    let mut writer = store.create(meta).map_err(session_error)?;
    let new_id = writer.id().to_owned();
    // Each copied line keeps the time its original was written at.
    for (entry, at) in &entries {
        writer.append_at(entry, *at).map_err(session_error)?;
    }
    writer.finish().map_err(session_error)?;
    tracing::debug!(from = %id, turn, to = %new_id, "session forked");

    let run = &args.resume.run;
    let has_input = !run.input.is_empty() || run.input_text.is_some() || run.file.is_some();
    let note = format!("Forked session {id} at turn {turn} of {turns} as {new_id}");
    if has_input {
        eprintln!("{}", clean_text(&note));
        return cmd_resume(args.resume, &new_id);
    }
    eprintln!(
        "{}",
        clean_text(&format!(
            "{note}\nContinue it: golem-forge sessions resume {new_id} \"your next input\""
        ))
    );
    print(&format!("{new_id}\n"))
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use golem_session::{SessionMeta, SessionStore, TranscriptEntry, now_unix_ms};

    use super::{ForkArgs, cmd_fork};

    #[derive(Parser)]
    struct Fork {
        #[command(flatten)]
        args: ForkArgs,
    }

    /// The copied lines keep their original times; the end that closes the copy is new.
    #[test]
    fn the_copy_keeps_the_times_of_the_original() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let meta = SessionMeta::new("w", "w.worker", "test:default", "chat");
        let mut writer = store.create_with_id("orig", meta).unwrap();
        for (at, content) in [(1000, "one"), (2000, "two")] {
            let entry = TranscriptEntry::Input {
                content: content.into(),
            };
            writer.append_at(&entry, Some(at)).unwrap();
        }
        writer.finish().unwrap();
        let before = now_unix_ms();
        let fork = Fork::try_parse_from(["fork", "orig", "--at", "1"]).unwrap();
        cmd_fork(&store, fork.args).unwrap();
        let after = now_unix_ms();
        let summary = store
            .list()
            .unwrap()
            .into_iter()
            .find(|s| s.id != "orig")
            .unwrap();
        let copy = store.load(&summary.id).unwrap();
        assert_eq!(copy.turns(), 1);
        assert!(matches!(
            copy.entries.as_slice(),
            [TranscriptEntry::Input { .. }, TranscriptEntry::Ended { .. }]
        ));
        assert_eq!(copy.times[0], Some(1000));
        let now = |at: Option<u64>| at.is_some_and(|at| before <= at && at <= after);
        assert!(now(copy.times[1]) && now(copy.meta_at), "{copy:?}");
    }
}
