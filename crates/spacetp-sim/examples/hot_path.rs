//! The hot-path benchmark: wall-clock nanoseconds per link traversal on scenario D with
//! Scalable TCP (`benches/scenarios/D-scalable.toml`), the figure BENCHMARKS.md tracks.
//!
//! `cargo run --release -p spacetp-sim --example hot_path [-- SCENARIO.toml [REPS]]`
//! prints one line per repetition and the median. `benches/hot_path.py` runs two builds
//! (before and after a change) alternately in one run and reports the ratio.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../benches/scenarios/D-scalable.toml"
        )
        .into()
    });
    let reps: usize = match args.next().map(|r| r.parse()) {
        None => 5,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("hot_path: REPS must be a positive integer");
            std::process::exit(2);
        }
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("hot_path: cannot read {path}: {e}");
        std::process::exit(2);
    });
    let mut per_traversal = Vec::with_capacity(reps);
    for rep in 0..reps {
        let scenario = spacetp_sim::scenario_from_toml(&text).unwrap_or_else(|e| {
            eprintln!("hot_path: {path}: {e}");
            std::process::exit(2);
        });
        let start = Instant::now();
        let out = spacetp_sim::run(scenario, &Default::default()).unwrap_or_else(|e| {
            eprintln!("hot_path: {path}: {e}");
            std::process::exit(2);
        });
        let wall = start.elapsed().as_secs_f64();
        let traversals: u64 = out.summary.links.iter().map(|l| l.delivered_packets).sum();
        let ns = wall * 1e9 / traversals as f64;
        println!("rep {rep}: {wall:.3} s, {traversals} traversals, {ns:.1} ns per traversal");
        per_traversal.push(ns);
    }
    per_traversal.sort_by(f64::total_cmp);
    println!("median {:.1} ns per traversal", per_traversal[reps / 2]);
}
