//! What undo costs: an atomic write of a 4 KiB and a 1 MiB file with and without the session's
//! undo journal (each write in a turn of its own, so every one keeps a before-image), and
//! undoing a turn that wrote 100 files. Medians of interleaved runs. Run with
//! `cargo bench -p golem-sandbox --bench undo`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark: a failure is a failed run"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use golem_sandbox::undo::{DEFAULT_UNDO_CAP, UndoJournal, UndoScope};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let zones = [ZoneConfig::new("work", ZoneMode::Rw)];
    let plain = Sandbox::open(tmp.path(), &zones).unwrap();
    let journal = Arc::new(UndoJournal::open(&tmp.path().join("undo"), DEFAULT_UNDO_CAP).unwrap());
    let recorded = plain.with_undo(journal.clone());
    let mut turn = 0;
    for (label, size, runs) in [("4 KiB", 4usize << 10, 200), ("1 MiB", 1 << 20, 40)] {
        let p = plain.resolve("/work/file.bin").unwrap();
        let (mut without, mut with) = (Vec::new(), Vec::new());
        for i in 0..runs {
            // New content every time, so each before-image is a new object.
            let data = vec![(i % 251) as u8; size];
            let start = Instant::now();
            plain.write_atomic(&p, &data, false).unwrap();
            without.push(start.elapsed());
            turn += 1;
            journal.begin_turn(turn);
            let data = vec![((i + 7) % 251) as u8; size];
            let start = Instant::now();
            recorded.write_atomic(&p, &data, false).unwrap();
            with.push(start.elapsed());
        }
        let (without, with) = (median(without), median(with));
        println!(
            "write_atomic {label}: {} without the journal, {} with it (+{})",
            ms(without),
            ms(with),
            ms(with.saturating_sub(without))
        );
    }

    turn += 1;
    journal.begin_turn(turn);
    for i in 0..100 {
        let p = recorded.resolve(&format!("/work/many/f{i}.txt")).unwrap();
        recorded.write_atomic(&p, b"content\n", true).unwrap();
    }
    let start = Instant::now();
    let report = journal.undo(UndoScope::Last(1), false).unwrap();
    println!(
        "undo of a turn that wrote 100 new files: {} ({} paths removed)",
        ms(start.elapsed()),
        report.removed.len()
    );
}
