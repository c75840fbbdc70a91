//! Run a scenario without Python (for profiling and benchmarks):
//! `spacetp-sim SCENARIO.toml [--pcap LINK=FILE]...` prints the summary as JSON on stdout and
//! the wall-clock time, event rate and peak memory on stderr.

use spacetp_sim::{run, scenario_from_toml, RunOptions};
use std::io::Write;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: spacetp-sim SCENARIO.toml [--pcap LINK=FILE]...");
        std::process::exit(2);
    };
    let mut opts = RunOptions::default();
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.next()) {
            ("--pcap", Some(v)) => match v.split_once('=') {
                Some((l, f)) => opts.pcap.push((l.into(), f.into())),
                None => fail(&format!("--pcap {v}: use LINK=FILE")),
            },
            _ => fail(&format!("unexpected argument {a}")),
        }
    }
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    let sc = scenario_from_toml(&text).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    let t0 = Instant::now();
    let out = run(sc, &opts).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    let wall = t0.elapsed().as_secs_f64();
    // A closed pipe (`| head`) ends the output quietly instead of panicking.
    let json = serde_json::to_string_pretty(&out.summary).unwrap_or_default();
    let _ = writeln!(std::io::stdout().lock(), "{json}");
    let ev = out.summary.run.events;
    eprintln!(
        "wall {wall:.4} s, {ev} events, {:.2} M events/s{}",
        ev as f64 / wall / 1e6,
        peak_rss().map_or(String::new(), |kb| format!(", peak RSS {kb} kB"))
    );
}

/// This process's peak resident set (Linux: VmHWM), for the memory benchmarks.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2);
}
