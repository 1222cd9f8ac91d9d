//! UTC wall-clock time for sessions: RFC 3339 timestamps, the time part of session ids, and
//! the Unix milliseconds every transcript line is stamped with. Civil dates come from
//! `golem_core::calendar` (no time-zone database, UTC only).

use std::time::{SystemTime, UNIX_EPOCH};

use golem_core::calendar::{civil_from_days, days_from_civil};

/// A UTC calendar time, to the millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UtcTime {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    millis: u32,
}

impl UtcTime {
    /// The current time; a clock set before 1970 reads as the epoch.
    pub(crate) fn now() -> Self {
        Self::from_unix_millis(i64::try_from(now_unix_ms()).unwrap_or(i64::MAX))
    }

    /// The calendar time of `millis` milliseconds after 1970-01-01T00:00:00Z.
    pub(crate) fn from_unix_millis(millis: i64) -> Self {
        Self {
            // In 0..1000, so it fits in u32.
            millis: millis.rem_euclid(1000) as u32,
            ..Self::from_unix(millis.div_euclid(1000))
        }
    }

    /// The calendar time of `secs` seconds after 1970-01-01T00:00:00Z.
    pub(crate) fn from_unix(secs: i64) -> Self {
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        // `rem` is in 0..86_400, so these fit in u32.
        let rem = rem as u32;
        Self {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
            millis: 0,
        }
    }

    /// `2026-11-22T02:45:12.345Z`: milliseconds, so that sessions started within one second
    /// (a chat's `/new`) still sort in the order they were started.
    pub(crate) fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.millis
        )
    }

    /// `20261122-024512`, the time part of a session id.
    pub(crate) fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// A fresh time-sortable id: UTC time and 4 random hex digits (`20261122-024512-7f3a`), as
/// sessions and batches are named.
pub fn time_sortable_id() -> String {
    format!("{}-{:04x}", UtcTime::now().compact(), rand::random::<u16>())
}

/// The current UTC time as RFC 3339 (`2026-11-22T02:45:12.345Z`), for [`SessionMeta::started`].
///
/// [`SessionMeta::started`]: super::SessionMeta::started
pub fn now_rfc3339() -> String {
    UtcTime::now().rfc3339()
}

/// The current time in milliseconds since 1970-01-01T00:00:00Z, as every transcript line's
/// `at` holds it. A clock set before 1970 reads as 0; it is the wall clock, so it is not
/// monotonic (a clock set back gives a later line an earlier time).
pub fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Seconds since `rfc3339` (as [`now_rfc3339`] writes it, `2026-11-22T02:45:12.345Z`), for
/// showing an age; `None` when it is not such a time or lies in the future.
pub fn seconds_since(rfc3339: &str) -> Option<u64> {
    let then = unix_ms_of(rfc3339)? / 1000;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    now.checked_sub(then)
}

/// The Unix milliseconds of `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (as [`now_rfc3339`] writes it;
/// older transcripts have whole seconds); `None` for anything else or a time before 1970.
pub fn unix_ms_of(text: &str) -> Option<u64> {
    let (date, time) = text.strip_suffix('Z')?.split_once('T')?;
    let number = |s: &str, digits: usize| {
        (s.len() == digits && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<i64>().ok())
            .flatten()
    };
    let mut date = date.split('-');
    let year = number(date.next()?, 4)?;
    let month = number(date.next()?, 2)?;
    let day = number(date.next()?, 2)?;
    if date.next().is_some() {
        return None;
    }
    let (clock, fraction) = match time.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (time, None),
    };
    let mut clock = clock.split(':');
    let hour = number(clock.next()?, 2)?;
    let minute = number(clock.next()?, 2)?;
    let second = number(clock.next()?, 2)?;
    if clock.next().is_some()
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let millis = match fraction {
        None => 0,
        Some(f) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{f:0<3}")[..3].parse::<i64>().ok()?
        }
        Some(_) => return None,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    u64::try_from(seconds.checked_mul(1000)?.checked_add(millis)?).ok()
}

#[cfg(test)]
mod tests {
    use super::{UtcTime, now_rfc3339, now_unix_ms, seconds_since, unix_ms_of};

    #[test]
    fn reads_back_what_it_writes() {
        for secs in [0_i64, 951_782_400, 1_795_000_000, 4_102_444_799] {
            let text = UtcTime::from_unix(secs).rfc3339();
            assert_eq!(unix_ms_of(&text), Some(secs as u64 * 1000), "{text}");
        }
        assert_eq!(unix_ms_of("2026-13-01T00:00:00Z"), None);
        assert_eq!(unix_ms_of("yesterday"), None);
        assert!(seconds_since(&now_rfc3339()).is_some_and(|s| s < 5));
    }

    #[test]
    fn formats_known_instants() {
        let check = |secs: i64, rfc: &str, compact: &str| {
            let t = UtcTime::from_unix(secs);
            assert_eq!(t.rfc3339(), rfc, "{secs}");
            assert_eq!(t.compact(), compact, "{secs}");
        };
        check(0, "1970-01-01T00:00:00.000Z", "19700101-000000");
        check(951_782_400, "2000-02-29T00:00:00.000Z", "20000229-000000");
        check(1_700_000_000, "2023-11-14T22:13:20.000Z", "20231114-221320");
        check(1_795_315_512, "2026-11-22T02:45:12.000Z", "20261122-024512");
        check(4_102_444_799, "2099-12-31T23:59:59.000Z", "20991231-235959");
        check(-1, "1969-12-31T23:59:59.000Z", "19691231-235959");
    }

    #[test]
    fn milliseconds_keep_instants_within_a_second_in_order() {
        let a = UtcTime::from_unix_millis(1_795_315_512_009).rfc3339();
        let b = UtcTime::from_unix_millis(1_795_315_512_010).rfc3339();
        assert_eq!(a, "2026-11-22T02:45:12.009Z");
        assert!(a < b, "{a} < {b}");
        assert_eq!(
            UtcTime::from_unix_millis(-1).rfc3339(),
            "1969-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn now_is_after_the_code_was_written() {
        assert!(UtcTime::now().rfc3339().as_str() > "2025-01-01");
        // 2025-01-01T00:00:00Z in milliseconds.
        assert!(now_unix_ms() > 1_735_689_600_000);
    }

    #[test]
    fn unix_milliseconds_and_the_calendar_time_agree() {
        let before = UtcTime::now().rfc3339();
        let ms = now_unix_ms();
        let after = UtcTime::now().rfc3339();
        let at = UtcTime::from_unix_millis(i64::try_from(ms).unwrap()).rfc3339();
        assert!(before <= at && at <= after, "{before} <= {at} <= {after}");
    }

    #[test]
    fn started_times_read_with_and_without_milliseconds() {
        assert_eq!(unix_ms_of("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_ms_of("2026-11-22T02:45:12Z"), Some(1_795_315_512_000));
        assert_eq!(
            unix_ms_of("2026-11-22T02:45:12.345Z"),
            Some(1_795_315_512_345)
        );
        assert_eq!(
            unix_ms_of("2026-11-22T02:45:12.3Z"),
            Some(1_795_315_512_300)
        );
        for bad in [
            "",
            "2026-11-22T02:45:12",
            "2026-11-22 02:45:12Z",
            "2026-13-22T02:45:12Z",
            "2026-11-22T02:45:12.Z",
            "2026-11-22T02:45:12+01:00",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(unix_ms_of(bad), None, "{bad}");
        }
    }
}
