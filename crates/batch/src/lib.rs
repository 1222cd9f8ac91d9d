//! `golem-forge batch`: a pile of items, each run as a fresh session of one worker, a few at a
//! time. [`input`] reads the items (or [`each`] makes one per matching file), [`store`] keeps
//! a batch's state on disk (its items and the results appended as items finish, so a batch cut
//! off by Ctrl+C or `kill -9` resumes with what is not done) with the [`options`] every run
//! of it shares, and [`runner`] runs them; [`trace`] is a batch's span when tracing is on.

pub mod each;
pub mod input;
pub mod options;
pub mod runner;
pub mod store;
pub mod trace;

pub use each::{EachError, ZoneDir, items_for_each};
pub use input::{BatchItem, ItemProblem, LineProblem, parse_items};
pub use options::{BatchOptions, Difference, FixedOption, GivenOptions};
pub use runner::{BatchBudget, BatchOutcome, BatchSettings, Progress, Report, run_item, run_items};
pub use store::{Batch, BatchError, BatchMeta, BatchStore, Spent};
pub use trace::BatchSpan;
