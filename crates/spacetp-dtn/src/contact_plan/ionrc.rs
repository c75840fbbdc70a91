//! The reader of `ionrc` text: the lines `ionadmin` would execute, of which we apply the
//! ones that make the contact plan and count the others.
//!
//! As ionadmin 4.1.3 (ici/utils/ionadmin.c `processLine`): at most 9 tokens a line
//! (`'...'` and `{...}` are one token; ionadmin also says "Too many tokens" of a comment
//! of more than 9 words, and ignores it as a comment, which is what we do); the command is
//! the first character of the first token; `#` starts a comment only as the first token
//! (there are no end-of-line comments: ION reads a trailing `#` as a value); `q` ends the
//! file.
//!
//! Applied: `a contact`, `a range`, `c contact`, `d contact`, `d range`, `@` (reference
//! time), `^` (region: only region 1 may hold contacts here). Counted and not applied:
//! `1` (its node number is kept as the local node), `s`, `x`, `m ...`, `!`, `e`, `v`, `r`,
//! `t`, `h`, `?`, `i`, `l`, `b`. Any other command is an error, as in ionadmin.
//!
//! Where ION would log a warning and go on (an overlapping contact, a malformed time read
//! as 0, a rate read as octal, ...) we stop at the line and say which rule it breaks.

use super::numbers::{self, format_utc};
use super::table::{Builder, Origin};
use super::{Contact, ContactPlan, Range};
use crate::error::PlanError;
use spacetp_proto::{Time, SEC};

/// How to read absolute times and which nodes exist.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// The absolute instant (POSIX seconds, UTC) of the plan's time 0, i.e. the instant
    /// at which ionadmin would read the text: `+ss` times count from it and absolute
    /// times are converted relative to it. None: the first `@ yyyy/mm/dd-hh:mm:ss` line
    /// sets it (the text is read as if loaded at that instant); an absolute time before
    /// any such line is then an error.
    pub epoch: Option<i64>,
    /// The plan's nodes; a contact or range that names another node is an error.
    pub nodes: Option<Vec<u64>>,
}

/// ION's tokenizer (`findToken`): whitespace-separated, quoted tokens whole.
fn tokens(line: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let (tok, after) = match rest.as_bytes()[0] {
            q @ (b'\'' | b'{') => {
                let close = if q == b'\'' { '\'' } else { '}' };
                match rest[1..].find(close) {
                    Some(i) => (&rest[1..1 + i], &rest[2 + i..]),
                    None => (&rest[1..], ""),
                }
            }
            _ => {
                let i = rest.find(char::is_whitespace).unwrap_or(rest.len());
                (&rest[..i], &rest[i..])
            }
        };
        out.push(tok);
        rest = after.trim_start();
    }
    let comment = out.first().is_some_and(|t| t.starts_with('#'));
    if out.len() > 9 && !comment {
        return Err(format!(
            "{} tokens: ionadmin reads at most 9 on a line (\"Too many tokens\"); ION has \
             no end-of-line comments",
            out.len()
        ));
    }
    Ok(out)
}

struct Reader {
    plan: Builder,
    epoch: Option<i64>,
    /// The reference time of relative times (ionadmin's `_referenceTime`), ns from time 0.
    reference: i128,
    region: u64,
    ignored: usize,
}

impl Reader {
    fn time(&self, tok: &str, what: &str) -> Result<Time, String> {
        let t: i128 = if let Some(rel) = tok.strip_prefix('+') {
            self.reference + i128::from(numbers::seconds(rel, what)?)
        } else if tok.contains('/') {
            let abs = numbers::utc(tok)?;
            let Some(epoch) = self.epoch else {
                return Err(format!(
                    "{what} {tok} is absolute but the plan's epoch is unknown: give \
                     ParseOptions::epoch or put an `@ yyyy/mm/dd-hh:mm:ss` line before it"
                ));
            };
            i128::from(abs - epoch) * i128::from(SEC)
        } else {
            return Err(format!(
                "{what} \"{tok}\" is neither +seconds nor yyyy/mm/dd-hh:mm:ss (ION would \
                 fail to read it and use time 0)"
            ));
        };
        if t < 0 {
            let epoch = match self.epoch {
                Some(e) => format!(" ({})", format_utc(e)),
                None => String::new(),
            };
            return Err(format!("{what} {tok} is before the plan's time 0{epoch}"));
        }
        Time::try_from(t).map_err(|_| format!("{what} {tok} is too far in the future"))
    }

    fn at(&mut self, t: &[&str]) -> Result<(), String> {
        let [_, when] = t else {
            return Err("@ takes one time: `@ 0`, `@ +seconds` or `@ yyyy/mm/dd-hh:mm:ss`".into());
        };
        if *when == "0" {
            self.reference = 0;
        } else if let Some(rel) = when.strip_prefix('+') {
            self.reference += i128::from(numbers::seconds(rel, "reference time")?);
        } else {
            let abs = numbers::utc(when)?;
            let epoch = *self.epoch.get_or_insert(abs);
            self.reference = i128::from(abs - epoch) * i128::from(SEC);
        }
        Ok(())
    }

    fn contacts_allowed(&self) -> Result<(), String> {
        if self.region != 1 {
            return Err(format!(
                "contacts of region {}: spacetp reads one contact plan, region 1 (select it \
                 with `^ 1`)",
                self.region
            ));
        }
        Ok(())
    }

    fn add(&mut self, t: &[&str], line: usize) -> Result<(), String> {
        let usage_contact = "`a contact` takes: start end from to rate [confidence]";
        let usage_range = "`a range` takes: start end node node light-time";
        match (t.get(1).copied(), t.len()) {
            (Some("contact"), 7 | 8) => self.add_contact(t, line),
            (Some("contact"), n) => Err(format!("{usage_contact} ({} given)", n - 2)),
            (Some("range"), 7) => self.add_range(t, line),
            (Some("range"), 8) => Err(format!(
                "{usage_range}; ION would ignore the sixth value \"{}\" (there are no \
                 end-of-line comments)",
                t[7]
            )),
            (Some("range"), n) => Err(format!("{usage_range} ({} given)", n - 2)),
            _ => Err("`a` adds a `contact` or a `range`".into()),
        }
    }

    fn add_contact(&mut self, t: &[&str], line: usize) -> Result<(), String> {
        self.contacts_allowed()?;
        let confidence = match t.get(7) {
            Some(c) => numbers::confidence(c)?,
            None => 1.0,
        };
        let (from, to) = (numbers::node(t[4])?, numbers::node(t[5])?);
        match t[2] {
            "-1" => {
                if from != to {
                    return Err(format!(
                        "registration contact (start -1) {from} -> {to}: names one node twice"
                    ));
                }
                self.plan.add_registration(from, Origin::Line(line))
            }
            "0" => self.plan.add_hypothetical(from, to),
            _ => {
                let c = Contact {
                    from,
                    to,
                    start: self.time(t[2], "start")?,
                    end: self.time(t[3], "end")?,
                    rate_bytes_per_s: numbers::rate(t[6])?,
                    confidence,
                };
                self.plan.add_contact(c, Origin::Line(line))
            }
        }
    }

    fn add_range(&mut self, t: &[&str], line: usize) -> Result<(), String> {
        let r = Range {
            from: numbers::node(t[4])?,
            to: numbers::node(t[5])?,
            start: self.time(t[2], "start")?,
            end: self.time(t[3], "end")?,
            owlt: numbers::seconds(t[6], "light time")?,
        };
        self.plan.add_range(r, Origin::Line(line))
    }

    fn change(&mut self, t: &[&str]) -> Result<(), String> {
        if t.get(1) != Some(&"contact") || !(6..=7).contains(&t.len()) {
            return Err("`c contact` takes: start from to rate [confidence]".into());
        }
        self.contacts_allowed()?;
        let start = self.time(t[2], "start")?;
        let (from, to) = (numbers::node(t[3])?, numbers::node(t[4])?);
        let rate = numbers::rate(t[5])?;
        let confidence = t.get(6).map(|c| numbers::confidence(c)).transpose()?;
        self.plan.change_contact(from, to, start, rate, confidence)
    }

    fn delete(&mut self, t: &[&str]) -> Result<(), String> {
        let [_, what, when, a, b] = t else {
            return Err("`d contact` / `d range` take: start|* node node".into());
        };
        let (from, to) = (numbers::node(a)?, numbers::node(b)?);
        let start = |r: &Self| match *when {
            "*" => Ok(None),
            w => r.time(w, "start").map(Some),
        };
        match *what {
            "contact" => {
                self.contacts_allowed()?;
                match *when {
                    "-1" if from == to => self.plan.delete_registration(from),
                    "-1" => Err("a registration contact (-1) names one node twice".into()),
                    "0" => self.plan.delete_hypothetical(from, to),
                    _ => {
                        let s = start(self)?;
                        self.plan.delete_contacts(from, to, s)
                    }
                }
            }
            "range" => {
                let s = start(self)?;
                self.plan.delete_ranges(from, to, s)
            }
            _ => Err("`d` deletes a `contact` or a `range`".into()),
        }
    }

    /// One line; false once `q` has been read.
    fn line(&mut self, t: &[&str], line: usize) -> Result<bool, String> {
        let Some(first) = t.first().and_then(|c| c.chars().next()) else {
            return Ok(true);
        };
        match first {
            '#' => {}
            '@' => self.at(t)?,
            'a' => self.add(t, line)?,
            'c' => self.change(t)?,
            'd' => self.delete(t)?,
            '^' => {
                let [_, n] = t else {
                    return Err("`^` takes one region number".into());
                };
                self.region =
                    n.parse().ok().filter(|r| *r > 0).ok_or_else(|| {
                        format!("region \"{n}\" is not a region number (1 or more)")
                    })?;
            }
            'q' => return Ok(false),
            '1' => {
                if let Some(n) = t.get(1) {
                    self.plan.local_node = Some(numbers::node(n)?);
                }
                self.ignored += 1;
            }
            's' | 'x' | 'm' | '!' | 'e' | 'v' | 'r' | 't' | 'h' | '?' | 'i' | 'l' | 'b' => {
                self.ignored += 1
            }
            _ => {
                return Err(format!(
                    "\"{}\" is not an ionadmin command (ionadmin: \"Invalid command\")",
                    t[0]
                ))
            }
        }
        Ok(true)
    }
}

pub(super) fn parse(text: &str, options: &ParseOptions) -> Result<ContactPlan, PlanError> {
    let mut r = Reader {
        plan: Builder::new(options.nodes.as_deref()),
        epoch: options.epoch,
        reference: 0,
        region: 1,
        ignored: 0,
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = tokens(line).map_err(|m| PlanError::line(n, m))?;
        if !r.line(&t, n).map_err(|m| PlanError::line(n, m))? {
            break;
        }
    }
    Ok(r.plan.finish(r.epoch, r.ignored))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokenizer_keeps_quoted_tokens_whole_and_counts_like_ionadmin() {
        assert_eq!(tokens("  a contact +0 +10 1 2 100 ").unwrap().len(), 7);
        assert_eq!(
            tokens("r 'echo hi there'").unwrap(),
            vec!["r", "echo hi there"]
        );
        assert_eq!(tokens("m alarm {a b}").unwrap(), vec!["m", "alarm", "a b"]);
        assert!(tokens("a contact +0 +10 1 2 100 # the main link")
            .unwrap_err()
            .starts_with("11 tokens"));
        assert!(tokens("").unwrap().is_empty());
        assert_eq!(
            tokens("# a comment of more than nine words is still a comment")
                .unwrap()
                .len(),
            12
        );
    }
}
