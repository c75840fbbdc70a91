//! Numbers and times as ION's `ionadmin` reads them, and as we write them back.
//!
//! ION 4.1.3 reads node numbers with `strtoull(s, NULL, 0)`, rates and light times with
//! `strtol(s, NULL, 0)`, relative times `+ss` with `strtol` (ici/library/ion.c
//! `readTimestamp`), absolute times with `sscanf("%4d/%2d/%2d-%2d:%2d:%2d")` and `mktime`,
//! and the confidence with `atof` (ici/utils/ionadmin.c `executeAdd`). Those functions
//! accept text that means something else than it seems; checked with ionadmin 4.1.3:
//! `010` is octal (a rate of 8 bytes/s), `1.5` is 1, `12a` is 12, `#` as a confidence is 0,
//! and `mktime` turns 2025/13/01 into 2026/01/01. We refuse each of those with the reason,
//! and we accept one extension: decimals (`+0.25`, a light time of `0.005`), so that plans
//! of short links can be written and read back exactly. ION would truncate them;
//! `ContactPlan::to_ion_strict` refuses to write them.

use spacetp_proto::{Time, SEC};

/// The latest time ION 4.1.3 can hold: `MAX_POSIX_TIME` = 2^31 - 1 seconds after
/// 1970-01-01 (ici/include/platform.h), i.e. 2038/01/19-03:14:07 UTC.
pub const ION_MAX_POSIX_TIME: i64 = 2_147_483_647;

/// The largest rate ION can hold: `xmitRate` is an `unsigned int` in `executeAdd`.
pub const ION_MAX_RATE: f64 = 4_294_967_295.0;

fn leading_zero_rule(s: &str) -> String {
    let octal = s.bytes().all(|b| (b'0'..=b'7').contains(&b));
    let value = if octal {
        format!(" ({})", u64::from_str_radix(s, 8).unwrap_or(0))
    } else {
        String::new()
    };
    format!(
        "\"{s}\": ION reads a whole number that starts with 0 as octal{value}; write it without the leading 0"
    )
}

/// A node number: decimal digits, at least 1.
pub fn node(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "node number \"{s}\" is not a whole number (ipn node numbers are written in decimal)"
        ));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(leading_zero_rule(s));
    }
    let n: u64 = s
        .parse()
        .map_err(|_| format!("node number \"{s}\" does not fit in 64 bits"))?;
    if n == 0 {
        return Err(
            "node number 0 is not a node: ipn node numbers start at 1 (ION refuses 0)".into(),
        );
    }
    Ok(n)
}

/// Split `digits[.digits]`; refuses signs, exponents, leading zeros of whole numbers and
/// anything after the number.
fn decimal_parts<'a>(s: &'a str, what: &str) -> Result<(&'a str, &'a str), String> {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        if s.starts_with('-') {
            return Err(format!("{what} \"{s}\" is negative"));
        }
        return Err(format!(
            "{what} \"{s}\" is not a number (write digits, e.g. 600 or 0.25)"
        ));
    }
    if frac.is_none() && int.len() > 1 && int.starts_with('0') {
        return Err(leading_zero_rule(s));
    }
    Ok((int, frac.unwrap_or("")))
}

/// A number of seconds (a relative time or a one-way light time) as exact nanoseconds.
pub fn seconds(s: &str, what: &str) -> Result<Time, String> {
    let (int, frac) = decimal_parts(s, what)?;
    if frac.len() > 9 {
        return Err(format!(
            "{what} \"{s}\" has more than 9 decimals: times are kept to the nanosecond"
        ));
    }
    let whole: u64 = int
        .parse()
        .ok()
        .filter(|w| *w <= u64::MAX / SEC)
        .ok_or_else(|| format!("{what} \"{s}\" is too large"))?;
    let mut nanos = 0u64;
    for (i, b) in frac.bytes().enumerate() {
        nanos += u64::from(b - b'0') * 10u64.pow(8 - i as u32);
    }
    Ok(whole * SEC + nanos)
}

/// A rate in bytes per second.
pub fn rate(s: &str) -> Result<f64, String> {
    let what = "rate";
    decimal_parts(s, what)?;
    let r: f64 = s
        .parse()
        .map_err(|_| format!("{what} \"{s}\" is not a number"))?;
    if r <= 0.0 {
        return Err(format!(
            "rate {s} bytes/s: a scheduled contact needs a rate above 0 (ION refuses rate 0)"
        ));
    }
    if r > ION_MAX_RATE {
        return Err(format!(
            "rate {s} bytes/s is above 4294967295, the largest rate ION holds (32 bits)"
        ));
    }
    Ok(r)
}

/// A confidence in [0, 1] (ION reads it with `atof`, which turns text into 0).
pub fn confidence(s: &str) -> Result<f64, String> {
    let c: f64 = s
        .parse()
        .ok()
        .filter(|c: &f64| c.is_finite())
        .ok_or_else(|| {
            format!(
                "confidence \"{s}\" is not a number (ION's atof would read it as 0; \
                 ION has no end-of-line comments)"
            )
        })?;
    if !(0.0..=1.0).contains(&c) {
        return Err(format!("confidence {s} is outside [0, 1]"));
    }
    Ok(c)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// An absolute UTC time `yyyy/mm/dd-hh:mm:ss` as seconds since 1970-01-01 (POSIX, no leap
/// seconds, as ION's `mktime`). Fields out of range are refused rather than carried into
/// the next field as `mktime` does; times ION cannot hold (from 2038/01/19-03:14:08) are
/// refused.
pub fn utc(s: &str) -> Result<i64, String> {
    let bad = || format!("time \"{s}\" is neither +seconds nor yyyy/mm/dd-hh:mm:ss (UTC)");
    let (date, clock) = s.split_once('-').ok_or_else(bad)?;
    let field = |t: &str, max_len: usize| -> Result<i64, String> {
        if t.is_empty() || t.len() > max_len || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        t.parse().map_err(|_| bad())
    };
    let d: Vec<&str> = date.split('/').collect();
    let c: Vec<&str> = clock.split(':').collect();
    if d.len() != 3 || c.len() != 3 {
        return Err(bad());
    }
    let (y, mo, day) = (field(d[0], 4)?, field(d[1], 2)?, field(d[2], 2)?);
    let (h, mi, sec) = (field(c[0], 2)?, field(c[1], 2)?, field(c[2], 2)?);
    if !(1..=12).contains(&mo) || !(1..=days_in_month(y, mo)).contains(&day) {
        return Err(format!(
            "time \"{s}\": {y:04}/{mo:02} has no day {day} (ION's mktime would roll it \
             into another date)"
        ));
    }
    if h > 23 || mi > 59 || sec > 59 {
        return Err(format!(
            "time \"{s}\": hours are 0-23, minutes and seconds 0-59 (ION's mktime would \
             roll it into another time)"
        ));
    }
    let t = days_from_civil(y, mo, day) * 86_400 + h * 3600 + mi * 60 + sec;
    if !(0..=ION_MAX_POSIX_TIME).contains(&t) {
        return Err(format!(
            "time \"{s}\" is outside what ION 4.1.3 holds (1970/01/01-00:00:00 to \
             2038/01/19-03:14:07, 32-bit POSIX seconds)"
        ));
    }
    Ok(t)
}

/// `yyyy/mm/dd-hh:mm:ss` of POSIX seconds (UTC), as ION writes it.
pub fn format_utc(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}/{m:02}/{d:02}-{:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Nanoseconds as seconds, exactly: `600`, `0.005`, `1.000000001`.
pub fn format_seconds(ns: Time) -> String {
    let (s, frac) = (ns / SEC, ns % SEC);
    if frac == 0 {
        return s.to_string();
    }
    let f = format!("{frac:09}");
    format!("{s}.{}", f.trim_end_matches('0'))
}

/// A rate or a confidence: whole numbers without a point, others in the shortest form that
/// reads back to the same `f64`.
pub fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_times_match_known_posix_seconds() {
        // External truth: `date -u -d '2000-01-01 00:00:00' +%s` = 946684800; the last
        // second of 32-bit time_t is 2^31 - 1 = 2038-01-19 03:14:07; 2024-02-29 12:00:00
        // is 1709208000 (leap day).
        assert_eq!(utc("2000/01/01-00:00:00"), Ok(946_684_800));
        assert_eq!(utc("2038/01/19-03:14:07"), Ok(2_147_483_647));
        assert_eq!(utc("2024/02/29-12:00:00"), Ok(1_709_208_000));
        assert_eq!(utc("1970/01/01-00:00:00"), Ok(0));
        assert_eq!(
            utc("2024/2/9-1:2:3"),
            Ok(days_from_civil(2024, 2, 9) * 86_400 + 3723)
        );
        for t in [0, 946_684_800, 1_709_208_000, 2_147_483_647, 1_234_567_890] {
            assert_eq!(utc(&format_utc(t)), Ok(t));
        }
        assert_eq!(format_utc(1_234_567_890), "2009/02/13-23:31:30");
    }

    #[test]
    fn utc_times_mktime_would_normalize_are_refused() {
        assert!(utc("2025/13/01-00:00:00").unwrap_err().contains("no day"));
        assert!(utc("2023/02/29-00:00:00")
            .unwrap_err()
            .contains("no day 29"));
        assert!(utc("2025/01/01-24:00:00")
            .unwrap_err()
            .contains("hours are 0-23"));
        assert!(utc("2038/01/19-03:14:08").unwrap_err().contains("2038"));
        assert!(utc("2025/01/01 00:00:00").is_err());
        assert!(utc("2025/01/01-00:00:00x").is_err());
    }

    #[test]
    fn whole_and_decimal_seconds_are_exact_nanoseconds() {
        assert_eq!(seconds("600", "t"), Ok(600 * SEC));
        assert_eq!(seconds("0", "t"), Ok(0));
        assert_eq!(seconds("0.005", "t"), Ok(5_000_000));
        assert_eq!(seconds("1.000000001", "t"), Ok(SEC + 1));
        assert!(seconds("1.0000000001", "t")
            .unwrap_err()
            .contains("9 decimals"));
        assert!(seconds("010", "t").unwrap_err().contains("octal (8)"));
        assert!(seconds("09", "t").unwrap_err().contains("octal;"));
        assert!(seconds("-5", "light time")
            .unwrap_err()
            .contains("negative"));
        assert!(seconds("12a", "t").unwrap_err().contains("not a number"));
        assert!(seconds("1e3", "t").is_err());
        assert_eq!(format_seconds(5_000_000), "0.005");
        assert_eq!(format_seconds(600 * SEC), "600");
        assert_eq!(format_seconds(SEC + 1), "1.000000001");
    }

    #[test]
    fn rates_confidences_and_nodes_follow_ions_limits() {
        assert_eq!(rate("1250000"), Ok(1_250_000.0));
        assert_eq!(rate("187500.5"), Ok(187_500.5));
        assert!(rate("0").unwrap_err().contains("above 0"));
        assert!(rate("4294967296").unwrap_err().contains("32 bits"));
        assert!(rate("010").unwrap_err().contains("octal (8)"));
        assert_eq!(confidence("0.5"), Ok(0.5));
        assert!(confidence("#")
            .unwrap_err()
            .contains("end-of-line comments"));
        assert!(confidence("1.5").unwrap_err().contains("outside [0, 1]"));
        assert!(confidence("nan").is_err());
        assert_eq!(node("42"), Ok(42));
        assert!(node("0").unwrap_err().contains("start at 1"));
        assert!(node("012").unwrap_err().contains("octal (10)"));
        assert!(node("x").is_err());
        assert_eq!(format_number(1_250_000.0), "1250000");
        assert_eq!(format_number(0.1), "0.1");
        assert_eq!(format_number(187_500.5), "187500.5");
    }
}
