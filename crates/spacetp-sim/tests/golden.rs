//! Nothing changes behaviour unless it says so: every example scenario the core reads as it
//! is, the hand-computed LEO pass, the ns-3 anchor scenario D and three variants of it give
//! exactly the summary stored in `tests/golden/`. (Examples whose links come from an orbit,
//! an ephemeris, a trace or a contact-plan file need the Python front to turn them into
//! schedules; the repository's `tests/test_linksrc_examples.py` checks them against
//! `tests/golden/NAME.txt` at the repository's root.)
//! Coverage is checked too: every example has a golden file (here, or the Python test's),
//! and a golden file here that no case writes (a renamed or removed example) fails as stale.
//! A change that moves any number fails here; if the change is meant, regenerate with
//! `UPDATE_GOLDEN=1 cargo test --profile tests -p spacetp-sim --test golden` (it also
//! removes stale files) and say in the commit what moved and why.

use spacetp_sim::{run, scenario_from_toml, RunOptions};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (name, scenario text) of every example, and whether its links need the Python front.
fn examples() -> Vec<(String, String, bool)> {
    let mut paths: Vec<_> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&p).unwrap();
            let sc = scenario_from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let python_side = |l: &spacetp_sim::config::LinkCfg| {
                l.orbit.is_some()
                    || l.ephemeris.is_some()
                    || l.trace.is_some()
                    || l.contacts.as_ref().is_some_and(|c| c.file.is_some())
            };
            let python = sc.constellation.is_some() || sc.links.iter().any(python_side);
            (name, text, python)
        })
        .collect()
}

/// (name, scenario text) of every case.
fn cases() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = examples()
        .into_iter()
        .filter(|(_, _, python)| !python)
        .map(|(name, text, _)| (name, text))
        .collect();
    let leo = std::fs::read_to_string(root().join("benches/scenarios/leo-hand.toml")).unwrap();
    out.push(("leo-hand".into(), leo));
    let d = std::fs::read_to_string(root().join("benches/scenarios/D.toml")).unwrap();
    out.push(("D".into(), d.clone()));
    out.push(("D-seed2".into(), d.replace("seed = 1", "seed = 2")));
    out.push((
        "D-scalable".into(),
        d.replace("protocol = \"newreno\"", "protocol = \"scalable\""),
    ));
    out.push((
        "D-sack-prr".into(),
        d.replace(
            "protocol = \"newreno\"",
            "protocol = \"sack\"\ntcp = { prr = true }",
        ),
    ));
    // Every protocol profile over a lossier GEO link, and SCPS-TP across the outages of the
    // hand-computed LEO pass and the Mars link: the paths of the connection that the examples leave quiet
    // (SNACK, BETS, corruption policy, rate control, persist mode, Peach+ NIL segments).
    let geo = std::fs::read_to_string(root().join("examples/geo.toml"))
        .unwrap()
        .replace("errors = { ber = 1e-7 }", "errors = { ber = 1e-6 }");
    for profile in PROFILES {
        out.push((
            format!("geo-{profile}"),
            geo.replace(
                "protocol = \"newreno\"",
                &format!("protocol = \"{profile}\""),
            ),
        ));
    }
    for (name, file) in [
        ("leo-hand", "benches/scenarios/leo-hand.toml"),
        ("mars", "examples/mars.toml"),
    ] {
        let text = std::fs::read_to_string(root().join(file))
            .unwrap()
            .replace("protocol = \"newreno\"", "protocol = \"scps-tp\"");
        out.push((format!("{name}-scps-tp"), text));
    }
    out
}

/// The profiles the GEO variants run (newreno and scalable are covered above).
const PROFILES: [&str; 22] = [
    "tahoe",
    "reno",
    "sack",
    "fack",
    "peach+",
    "vegas",
    "westwood",
    "highspeed",
    "hybla",
    "bic",
    "cubic",
    "bbr",
    "linux-reno",
    "linux-cubic",
    "linux-bbr",
    "bbr3",
    "scps-tp",
    "scps-nucc",
    "scps-1b",
    "scps-1c",
    "scps-2a",
    "scps-2b",
];

#[test]
fn every_example_and_scenario_d_give_their_stored_summaries() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut differ = Vec::new();
    let cases = cases();
    for (name, text) in &cases {
        let sc = scenario_from_toml(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let out = run(sc, &RunOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let json = serde_json::to_string_pretty(&out.summary).unwrap() + "\n";
        let path = dir.join(format!("{name}.json"));
        if update {
            std::fs::write(&path, &json).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("{}: missing; run with UPDATE_GOLDEN=1", path.display()));
        if json != want {
            differ.push(name);
        }
    }
    // A golden file no case writes: its example (or case) is gone or renamed.
    let names: std::collections::BTreeSet<&str> = cases.iter().map(|(n, _)| n.as_str()).collect();
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = entry.path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|x| x == "json") && !names.contains(stem.as_str()) {
            if update {
                std::fs::remove_file(&path).unwrap();
            } else {
                stale.push(stem);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale golden files (no case writes them; UPDATE_GOLDEN=1 removes them): {stale:?}"
    );
    assert!(differ.is_empty(), "summaries changed: {differ:?}");
}

#[test]
fn every_example_has_a_golden_file() {
    // The examples the core reads as they are are cases above; the others must have the
    // Python golden test's file (tests/test_linksrc_examples.py, SPACETP_BLESS=1 writes it).
    let python_golden = root().join("tests/golden");
    let mut missing = Vec::new();
    for (name, _, python) in examples() {
        if python && !python_golden.join(format!("{name}.txt")).is_file() {
            missing.push(format!("tests/golden/{name}.txt"));
        }
    }
    assert!(
        missing.is_empty(),
        "examples that need the Python front have no golden file: {missing:?}"
    );
    // And the Python side's files are of such examples only.
    let python: Vec<String> = examples()
        .into_iter()
        .filter(|(_, _, p)| *p)
        .map(|(n, _, _)| n)
        .collect();
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(&python_golden).unwrap().flatten() {
        let path = entry.path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|x| x == "txt") && !python.contains(&stem) {
            stale.push(stem);
        }
    }
    assert!(stale.is_empty(), "stale files in tests/golden: {stale:?}");
}
