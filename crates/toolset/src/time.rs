//! ISO 8601 timestamps (UTC, millisecond precision, as JavaScript's `toISOString`) for file
//! listings, file info and the tool-list caches. Pure: no I/O; dates from `golem_core::calendar`.

use std::time::{SystemTime, UNIX_EPOCH};

use golem_core::calendar::civil_from_days;

/// `time` as `YYYY-MM-DDTHH:MM:SS.mmmZ`, in UTC.
pub fn iso8601(time: SystemTime) -> String {
    // i64 milliseconds reach 292 million years either side of 1970; beyond, saturate.
    let millis: i64 = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
    };
    let days = millis.div_euclid(86_400_000);
    let in_day = millis.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (month, day) = (i64::from(month), i64::from(day));
    let (h, rest) = (in_day / 3_600_000, in_day % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    let (s, ms) = (rest / 1_000, rest % 1_000);
    if !(0..=9_999).contains(&year) {
        return format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z");
    }
    // The common case without the formatting machinery: listings format one per entry.
    let mut out = String::with_capacity(24);
    for (value, width, separator) in [
        (year, 4, '-'),
        (month, 2, '-'),
        (day, 2, 'T'),
        (h, 2, ':'),
        (m, 2, ':'),
        (s, 2, '.'),
        (ms, 3, 'Z'),
    ] {
        push_digits(&mut out, value, width);
        out.push(separator);
    }
    out
}

/// Appends the `width` lowest decimal digits of `value` (non-negative), zero-padded.
fn push_digits(out: &mut String, value: i64, width: u32) {
    let mut divisor = 10i64.pow(width - 1);
    while divisor > 0 {
        let digit = u8::try_from((value / divisor) % 10).unwrap_or(0);
        out.push(char::from(b'0' + digit));
        divisor /= 10;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(at(951_782_400, 0)), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(at(1_700_000_000, 123)), "2023-11-14T22:13:20.123Z");
        assert_eq!(iso8601(at(4_102_444_799, 999)), "2099-12-31T23:59:59.999Z");
    }

    #[test]
    fn formats_years_outside_four_digits() {
        let far = UNIX_EPOCH + Duration::from_secs(253_402_300_800); // 10000-01-01
        assert_eq!(iso8601(far), "10000-01-01T00:00:00.000Z");
    }

    #[test]
    fn formats_instants_before_the_epoch() {
        assert_eq!(
            iso8601(UNIX_EPOCH - Duration::from_millis(1)),
            "1969-12-31T23:59:59.999Z"
        );
        assert_eq!(
            iso8601(UNIX_EPOCH - Duration::from_secs(86_400 * 365)),
            "1969-01-01T00:00:00.000Z"
        );
    }
}
